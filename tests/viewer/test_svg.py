"""nardy.svg: every registered variant, checkers where the position says, both seats, valid SVG."""

from __future__ import annotations

import random
import re
import sys
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nardy.core import Position, game_variant_names, load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import Game
from nardy.core.notation import BAR, parse_steps
from nardy.svg import board

SVG = "{http://www.w3.org/2000/svg}"


def other_seat(point: int, geometry: str) -> int:
    """RULES.md §1.2, written out independently of nardy.core.position.opposite_point."""
    if geometry == "opposite":
        return 25 - point
    return point + 12 if point <= 12 else point - 12


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)  # valid XML, or this raises
    assert root.tag == f"{SVG}svg"
    return root


def checkers(root: ET.Element, colour: str) -> list[ET.Element]:
    """Every checker of ``colour``, a pinned one (class ``pinned``, plakoto) included."""
    return [
        e
        for e in root.iter()
        if e.get("class") in (f"checker {colour}", f"checker {colour} pinned")
    ]


def counts(root: ET.Element, colour: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for e in checkers(root, colour):
        found[e.get("data-point", "?")] = found.get(e.get("data-point", "?"), 0) + 1
    return found


def expected(position: Position, seat: int, geometry: str) -> tuple[dict[str, int], dict[str, int]]:
    """Checkers per printed point of (the mover, the opponent) on a board drawn from ``seat``
    (0 = the mover's, 1 = the opponent's): each seat numbers the points in its own coordinates."""
    mover: dict[str, int] = {}
    opponent: dict[str, int] = {}
    for index, count in enumerate(position.points):
        point = index + 1 if seat == 0 else other_seat(index + 1, geometry)
        if count > 0:
            mover[str(point)] = count
        elif count < 0:
            opponent[str(point)] = -count
    for p in position.pinned:  # one checker of the side that does not own the stack
        point = str(p if seat == 0 else other_seat(p, geometry))
        target = opponent if position.points[p - 1] > 0 else mover
        target[point] = target.get(point, 0) + 1
    for side, target in ((0, mover), (1, opponent)):
        if position.bar[side]:
            target["bar"] = position.bar[side]
        if position.off[side]:
            target["off"] = position.off[side]
    return mover, opponent


def point_columns(root: ET.Element) -> dict[str, tuple[float, float, float, float]]:
    """data-point -> (x min, x max, y min, y max) of each point's triangle."""
    out = {}
    for e in root.iter(f"{SVG}polygon"):
        if "point" in (e.get("class") or "").split():
            xs, ys = zip(
                *(
                    (float(a), float(b))
                    for a, b in (c.split(",") for c in e.get("points", "").split())
                ),
                strict=True,
            )
            out[e.get("data-point", "")] = (min(xs), max(xs), min(ys), max(ys))
    return out


def check_board(position: Position, variant_name: str, flipped: bool) -> None:
    variant = load_variant(variant_name)
    geometry = variant.rules.geometry
    root = parse(board(position, variant, flipped=flipped, mover="white"))
    mover, opponent = expected(position, 1 if flipped else 0, geometry)
    assert counts(root, "white") == mover
    assert counts(root, "black") == opponent
    total = sum(variant.rules.layout.points.values())
    assert len(checkers(root, "white")) == len(checkers(root, "black")) == total
    # Placement: every checker on a point is drawn over that point's triangle, in its half of
    # the board (top row 13…24, bottom row 12…1 of the seat's coordinates).
    columns = point_columns(root)
    assert sorted(columns, key=int) == [str(p) for p in range(1, 25)]
    height = float(root.get("viewBox", "0 0 0 0").split()[3])
    for e in checkers(root, "white") + checkers(root, "black"):
        point = e.get("data-point", "")
        if point in ("bar", "off"):
            continue
        x0, x1, _, _ = columns[point]
        cx, cy = float(e.get("cx", "nan")), float(e.get("cy", "nan"))
        assert x0 <= cx <= x1
        assert (cy < height / 2) == (int(point) >= 13)
    desc = root.find(f"{SVG}desc")
    assert desc is not None and desc.text is not None
    assert re.search(r"nardy position (\S+)", desc.text).group(1) == position.id()  # type: ignore[union-attr]
    assert root.get("data-position") == position.id()


@pytest.mark.parametrize("name", game_variant_names())
@pytest.mark.parametrize("flipped", [False, True])
def test_start_position_of_every_variant(name: str, flipped: bool) -> None:
    check_board(load_variant(name).start_position(), name, flipped)


@pytest.mark.parametrize("name", game_variant_names())
def test_positions_along_a_game_of_every_variant(name: str) -> None:
    variant = load_variant(name)
    game = Game(variant, SeededDice(11))
    rng = random.Random(5)
    checked = 0
    while game.decision is not None and checked < 60:
        decision = game.decision
        position = decision.position
        for flipped in (False, True):
            check_board(position, name, flipped)
        checked += 1
        plays = getattr(decision, "plays", None)
        if plays is not None:
            game.decide(rng.randrange(len(plays)))
        elif hasattr(decision, "beaver_allowed"):
            game.decide("take")
        else:
            game.decide(False)
    assert checked > 5


@st.composite
def positions(draw: st.DrawFn, hits: bool) -> Position:
    """Any position: 15 checkers a side spread over free points, the bar (with hitting) and off."""
    points = [0] * 24
    sides = []
    for sign in (1, -1):
        free = [i for i in range(24) if points[i] == 0]
        chosen = draw(st.lists(st.sampled_from(free), min_size=1, max_size=6, unique=True))
        bar = draw(st.integers(0, 3)) if hits else 0
        off = draw(st.integers(0, 15 - bar - len(chosen)))
        left = 15 - bar - off
        split = sorted(
            draw(st.lists(st.integers(0, left), min_size=len(chosen) - 1, max_size=len(chosen) - 1))
        )
        sizes = [b - a for a, b in zip([0, *split], [*split, left], strict=True)]
        for index, size in zip(chosen, sizes, strict=True):
            points[index] = sign * size
        sides.append((bar, off))
    # A point may have drawn 0 checkers; the position is still valid.
    return Position(tuple(points), (sides[0][0], sides[1][0]), (sides[0][1], sides[1][1]))


@settings(max_examples=60, deadline=None)
@given(position=positions(hits=True), flipped=st.booleans())
def test_any_backgammon_position(position: Position, flipped: bool) -> None:
    position.validate()
    check_board(position, "backgammon", flipped)


@settings(max_examples=60, deadline=None)
@given(position=positions(hits=False), flipped=st.booleans())
def test_any_long_position(position: Position, flipped: bool) -> None:
    position.validate()
    check_board(position, "long", flipped)


def test_same_direction_geometry_puts_the_heads_diagonally() -> None:
    """Long nardy from White's seat: White's head is his 24 (top right), Black's head is White's
    12 (bottom left); from Black's seat the picture is the same with the colours swapped."""
    long = load_variant("long")
    start = long.start_position()
    for flipped, bottom_right_colour in ((False, "white"), (True, "black")):
        root = parse(board(start, long, flipped=flipped))
        columns = point_columns(root)
        heads = [
            e
            for e in root.iter()
            if "head" in (e.get("class") or "").split() and e.tag == f"{SVG}polygon"
        ]
        assert sorted(e.get("data-point") for e in heads) == ["12", "24"]
        on_24 = [e for e in checkers(root, bottom_right_colour) if e.get("data-point") == "24"]
        assert len(on_24) == 15
        assert columns["24"][0] > columns["13"][0]  # 24 is at the right end of the top row
        assert columns["12"][0] < columns["1"][0]  # 12 at the left end of the bottom row


def test_opposite_geometry_trays_and_bar() -> None:
    """Backgammon: borne-off checkers lie in the trays beside each side's home, both on the
    right (home boards face each other); bar checkers on the bar."""
    bg = load_variant("backgammon")
    position = Position.from_sides({6: 5, 5: 5}, {19: 3, 20: 2}, bar=(1, 2), off=(4, 8))
    root = parse(board(position, bg))
    off_white = [e for e in checkers(root, "white") if e.get("data-point") == "off"]
    off_black = [e for e in checkers(root, "black") if e.get("data-point") == "off"]
    assert len(off_white) == 4 and len(off_black) == 8
    width = float(root.get("viewBox", "").split()[2])
    assert all(float(e.get("x", "0")) > width * 0.8 for e in off_white + off_black)
    height = float(root.get("viewBox", "").split()[3])
    assert all(float(e.get("y", "0")) > height / 2 for e in off_white)
    assert all(float(e.get("y", "0")) < height / 2 for e in off_black)
    bar = [e for e in root.iter() if e.get("data-point") == "bar"]
    assert len(bar) == 3


def test_long_opponent_tray_is_beyond_his_home() -> None:
    long = load_variant("long")
    position = Position.from_sides({3: 10}, {15: 12}, off=(5, 3))  # opponent's home = my 13…18
    root = parse(board(position, long))
    width = float(root.get("viewBox", "").split()[2])
    off_black = [e for e in checkers(root, "black") if e.get("data-point") == "off"]
    assert len(off_black) == 3 and all(float(e.get("x", "0")) < width * 0.2 for e in off_black)


def test_dice_cube_arrows_and_classes() -> None:
    bg = load_variant("backgammon")
    root = parse(
        board(bg.start_position(), bg, dice=(6, 5), cube=(4, "opponent"), last_play="13/7 13/8")
    )
    dice = [e for e in root.iter() if (e.get("class") or "").startswith("die ")]
    assert [e.get("data-value") for e in dice] == ["6", "5"]
    cube = [e for e in root.iter() if (e.get("class") or "").startswith("cube")]
    assert (
        len(cube) == 1
        and cube[0].get("data-value") == "4"
        and "opponent" in cube[0].get("class", "")
    )
    arrows = [e for e in root.iter() if e.get("class") == "arrow"]
    assert sorted(e.get("data-step") for e in arrows) == ["13/7", "13/8"]
    classes = {e.get("data-point"): e.get("class", "") for e in root.iter(f"{SVG}polygon")}
    assert "last-from" in classes["13"] and "last-to" in classes["7"] and "last-to" in classes["8"]


def test_size_scales_and_repr_svg() -> None:
    bg = load_variant("backgammon")
    svg = board(bg.start_position(), bg, size=400)
    root = parse(svg)
    assert root.get("width") == "400"
    assert svg._repr_svg_() == str(svg)


class _Formatter:
    def __init__(self) -> None:
        self.by_name: dict[tuple[str, str], object] = {}

    def for_type_by_name(self, module: str, name: str, function: object) -> None:
        self.by_name[module, name] = function


def test_ipython_shows_a_position_as_a_board(monkeypatch: pytest.MonkeyPatch) -> None:
    """The package registers the display by the type's name with a running IPython shell (the
    kernel has no ``_repr_svg_``: it knows nothing of drawing)."""
    import types

    import nardy

    formatter = _Formatter()
    shell = types.SimpleNamespace(
        display_formatter=types.SimpleNamespace(formatters={"image/svg+xml": formatter})
    )
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    nardy._show_positions_as_boards()
    show = formatter.by_name["nardy.core.position", "Position"]
    position = load_variant("backgammon").start_position()
    assert type(position).__module__ == "nardy.core.position"
    assert type(position).__name__ == "Position"
    assert parse(show(position)).get("data-position") == position.id()  # type: ignore[operator]
    # Outside IPython (no shell), nothing is registered and nothing fails.
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: None))
    nardy._show_positions_as_boards()


def test_hostile_text_is_escaped_by_the_xml_writer() -> None:
    # Nothing a user types goes into a board except the variant's own name; the id is escaped
    # by ElementTree like any attribute. A custom colour with markup stays an attribute value.
    bg = load_variant("backgammon")
    svg = board(bg.start_position(), bg, colours={"field": '"><script>alert(1)</script>'})
    assert "<script>" not in svg
    parse(svg)


def test_nardy_show_svg_to_stdout_and_to_a_file(tmp_path) -> None:
    from click.testing import CliRunner

    from nardy.cli import cli

    runner = CliRunner()
    out = runner.invoke(
        cli, ["show", "------/-----o/------/-----O", "--variant", "long", "--svg", "-"]
    )
    assert out.exit_code == 0, out.output
    root = parse(out.output)
    assert (
        root.get("data-variant") == "long"
        and root.get("data-position") == "------/-----o/------/-----O"
    )
    assert len(checkers(root, "white")) == 15
    target = tmp_path / "board.svg"
    flipped = runner.invoke(
        cli,
        [
            "show",
            "b----E/-C---e/E---c-/e----B",
            "--side",
            "opponent",
            "--mover",
            "black",
            "--svg",
            str(target),
        ],
    )
    assert flipped.exit_code == 0, flipped.output
    root = parse(target.read_text())
    assert root.get("data-mover") == "black" and root.get("data-viewer") == "white"
    bad = runner.invoke(
        cli, ["show", "b----E/-C---e/E---c-/e----B", "--svg", str(tmp_path / "no" / "x.svg")]
    )
    assert bad.exit_code == 1 and "cannot write" in bad.output and "Traceback" not in bad.output


def texts(root: ET.Element, prefix: str) -> dict[str, ET.Element]:
    """``colour -> element`` of the texts whose class is ``prefix colour``."""
    return {
        (e.get("class") or "").split()[1]: e
        for e in root.iter(f"{SVG}text")
        if (e.get("class") or "").startswith(prefix + " ")
    }


def pips_by_hand(position: Position, geometry: str) -> tuple[int, int]:
    """RULES.md §1.1: each side counts its checkers by their points in its own coordinates (the
    bar is 25); the opponent's point is ``other_seat`` of the mover's."""
    mover = 25 * position.bar[0] + sum(i * n for i, n in enumerate(position.points, 1) if n > 0)
    other = 25 * position.bar[1] + sum(
        other_seat(i, geometry) * -n for i, n in enumerate(position.points, 1) if n < 0
    )
    return mover, other


@pytest.mark.parametrize(("name", "start"), [("backgammon", 167), ("long", 360)])
def test_pip_counts_of_the_start(name: str, start: int) -> None:
    variant = load_variant(name)
    root = parse(board(variant.start_position(), variant, pips=True))
    pips = texts(root, "pips")
    assert {c: int(e.get("data-pips", "")) for c, e in pips.items()} == {
        "white": start,
        "black": start,
    }
    assert pips["white"].text == f"{start} pips"
    assert "pips" not in board(variant.start_position(), variant)  # only when asked for


@settings(max_examples=40, deadline=None)
@given(
    position=positions(hits=True), flipped=st.booleans(), mover=st.sampled_from(["white", "black"])
)
def test_pip_counts_of_any_position(position: Position, flipped: bool, mover: str) -> None:
    root = parse(board(position, "backgammon", pips=True, flipped=flipped, mover=mover))  # type: ignore[arg-type]
    mine, theirs = pips_by_hand(position, "opposite")
    other = "black" if mover == "white" else "white"
    pips = texts(root, "pips")
    assert int(pips[mover].get("data-pips", "")) == mine
    assert int(pips[other].get("data-pips", "")) == theirs


@pytest.mark.parametrize("name", ["backgammon", "long"])
def test_mover_numbering_from_the_opponents_seat(name: str) -> None:
    """``numbering="mover"``: the board is drawn from the opponent's seat but every number is
    the mover's own point, so the mover's checkers sit on his own numbers and his play's
    sources are outlined where he wrote them."""
    variant = load_variant(name)
    geometry = variant.rules.geometry
    game = Game(variant, SeededDice(4))
    while game.decision is not None and game.mover != 1:
        game.decide(game.decision.plays[0])  # type: ignore[union-attr]
    decision = game.decision
    assert decision is not None
    position = decision.position
    play = decision.plays[0].text  # type: ignore[union-attr]
    root = parse(
        board(position, variant, flipped=True, mover="black", numbering="mover", last_play=play)
    )
    assert root.get("data-numbering") == "black" and root.get("data-viewer") == "white"
    mine = {str(i): n for i, n in enumerate(position.points, 1) if n > 0}
    assert {k: v for k, v in counts(root, "black").items() if k not in ("bar", "off")} == mine
    theirs = {str(i): -n for i, n in enumerate(position.points, 1) if n < 0}
    assert {k: v for k, v in counts(root, "white").items() if k not in ("bar", "off")} == theirs
    outlined = {
        e.get("data-point") for e in root.iter(f"{SVG}polygon") if "last-from" in e.get("class", "")
    }
    assert outlined == {str(s.src) for s in parse_steps(play) if s.src != BAR}
    # The label printed over each point is its data-point; the seat's numbering differs.
    seat = parse(board(position, variant, flipped=True, mover="black"))
    assert seat.get("data-numbering") == "white"
    corner = next(e for e in root.iter(f"{SVG}polygon") if "point" in e.get("class", "").split())
    corner_seat = next(
        e for e in seat.iter(f"{SVG}polygon") if "point" in e.get("class", "").split()
    )
    assert int(corner.get("data-point", "")) == other_seat(
        int(corner_seat.get("data-point", "")), geometry
    )


def test_bands_with_names_score_match_and_crawford() -> None:
    bg = load_variant("backgammon")
    svg = board(
        bg.start_position(),
        bg,
        names=("<b>heur</b>", "rnd"),
        score=(3, 4),
        match_length=5,
        crawford=True,
        mover="black",
    )
    root = parse(svg)
    score = texts(root, "score")
    assert score["white"].get("data-score") == "3" and score["black"].get("data-score") == "4"
    assert [e.get("data-length") for e in score.values() if e.get("data-length")] == ["5"]
    assert [e.get("data-crawford") for e in score.values() if e.get("data-crawford")] == ["yes"]
    assert "Crawford" in "".join(root.itertext()) and "<b>heur</b> (White)" in "".join(
        root.itertext()
    )
    assert "&lt;b&gt;" in svg
    bands = [e for e in root.iter(f"{SVG}g") if (e.get("class") or "").startswith("band ")]
    assert sorted(b.get("class") for b in bands) == ["band black to-move", "band white"]


def test_a_cube_on_offer_lies_on_the_takers_half() -> None:
    bg = load_variant("backgammon")
    root = parse(board(bg.start_position(), bg, cube=(2, "mover"), offered=4))
    cubes = [e for e in root.iter(f"{SVG}g") if (e.get("class") or "").startswith("cube")]
    assert [(c.get("class"), c.get("data-value")) for c in cubes] == [("cube offered", "4")]
    x = float(cubes[0][0].get("x", "0"))
    bar = next(e for e in root.iter(f"{SVG}rect") if e.get("class") == "bar")
    assert x > float(bar.get("x", "0"))  # the mover sits at the bottom: his home half, right


@pytest.mark.parametrize("name", game_variant_names())
def test_the_fast_writer_writes_what_elementtree_writes(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nardy.svg writes its tree with its own serializer (about half ElementTree's time); every
    board along a game of every variant, with every option drawn and hostile text in the names
    and colours, is character for character what ``ET.tostring`` writes."""
    import nardy.svg

    variant = load_variant(name)
    game = Game(variant, SeededDice(7))
    rng = random.Random(3)
    drawn = 0
    last: str | None = None
    names = ('you & "me"', "<bot>\tnew\r\nline")
    while game.decision is not None and drawn < 40:
        decision = game.decision
        options = {
            "flipped": drawn % 2 == 1,
            "mover": "white" if decision.player == 0 else "black",
            "last_play": last,
            "dice": getattr(getattr(decision, "segment", None), "dice", None),
            "cube": (2, "mover") if drawn % 3 else None,
            "pips": True,
            "names": names if drawn % 4 else None,
            "score": (1, 2) if drawn % 5 else None,
            "match_length": 5,
            "offered": 4 if drawn % 7 == 0 else None,
            "best_play": last if drawn % 3 == 0 else None,
            "colours": {"field": '"><script>&amp;</script>\r\n\t'} if drawn % 6 == 0 else None,
            "size": 400 if drawn % 8 == 0 else None,
        }
        fast = board(decision.position, variant, **options)  # type: ignore[arg-type]
        with monkeypatch.context() as patch:
            patch.setattr(nardy.svg, "_to_text", lambda root: ET.tostring(root, "unicode"))
            slow = board(decision.position, variant, **options)  # type: ignore[arg-type]
        assert fast == slow
        drawn += 1
        plays = getattr(decision, "plays", None)
        if plays is not None:
            choice = rng.randrange(len(plays))
            last = plays[choice].text or None
            game.decide(choice)
        elif hasattr(decision, "beaver_allowed"):
            game.decide("take")
        else:
            game.decide(drawn % 2 == 0)
    assert drawn > 5
