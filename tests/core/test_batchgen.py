"""The C batch generator (``nardy.core._batchgen``, behind :func:`nardy.core.batch.legal_results`)
against the Python generator's source, the reference: for every rule set it takes (the fast path,
the ordered search, plakoto's pinning search), the same results (with their pinned points) in the
same order with the same representative steps and dice used; the oracle's result sets; and the
pairs it leaves to ``legal_plays`` (the general search's rare cases, bad input, a game the mother
rule ended) answered in their place with today's errors.

The tests that need the extension skip in a pure install (``NARDY_COMPILE=0``), where the batch
API is the Python path these tests compare with.
"""

from __future__ import annotations

import os
import subprocess
import sys
from array import array
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_oracle import (
    ALL_DICE,
    _cases,
    _oracle_cases,
    _random_positions,
    _steps,
    _variant_id,
    _variants,
)
from test_properties import positions

from nardy.core import NardyError, Position, _engine, batch, load_variant
from nardy.core.batch import BOARD, STEP_FIELDS, ResultBatch, legal_results
from nardy.core.errors import GameStateError, InvalidPositionError
from nardy.core.movegen import board_of, position_of
from nardy.core.variant import Variant

REFERENCE = "nardy_movegen_reference"
FAST = [(n, o) for n, o in _variants() if load_variant(n, o).generator.fast]
"""The rule sets of the fast path: the C generator's (backgammon, trictrac, long, …)."""
ORDERED = [(n, o) for n, o in _variants() if load_variant(n, o).generator.ordered]
"""The rule sets of the ordered search (nardgammon, mad, mad_gulbar, fevga, giul), also the C
generator's, with every option that changes the search (home moves never, a per-step quarter)."""
PINNING = [(n, o) for n, o in _variants() if load_variant(n, o).generator.pins] + [
    ("plakoto", {"mother": "simple"}),
    ("plakoto", {"mother": "off"}),
]
"""The pinning rule sets (plakoto, RULES.md §3.12.2), with each mother rule (standard, simple,
off): the C generator's pinning search."""

needs_c = pytest.mark.skipif(
    batch.NATIVE is None, reason="nardy.core._batchgen is not built, or NARDY_MOVEGEN=pure"
)

# Positions where every longest play fails the six-block end check (RULES.md §3.3.5, §2.3 item 3):
# the fast path gives up and the general search answers (found by a random search).
GIVING_UP = [
    ("HBAA-A/--A--o/------/----A-", (6, 6, 6, 6)),
    ("EAFAA-/--o---/----A-/------", (5, 6)),
]


@pytest.fixture(scope="module")
def reference() -> ModuleType:
    """The generator's Python source, loaded beside whatever ``nardy.core.movegen`` is."""
    return sys.modules.get(REFERENCE) or _engine.load_source(REFERENCE)


Rows = list[tuple[int, list[tuple[list[int], list[int]]]]]


def _key(found: ResultBatch, row: int) -> list[int]:
    """A row's result as the generator keys it: the board, and the pinned points' bits when
    something is pinned (a pinning variant's 29th entry)."""
    key = list(found.boards[row * BOARD : (row + 1) * BOARD])
    if found.pinned is not None and found.pinned[row]:
        key.append(found.pinned[row])
    return key


def _rows(found: ResultBatch) -> Rows:
    """Per pair: the dice used and every play's (key, steps), in order."""
    assert found.steps is not None
    rows: Rows = []
    for k in range(len(found)):
        plays = [
            (_key(found, r), list(found.steps[r * STEP_FIELDS : (r + 1) * STEP_FIELDS]))
            for r in range(found.offsets[k], found.offsets[k + 1])
        ]
        rows.append((found.dice_used[k], plays))
    return rows


def _expected(reference: ModuleType, variant: Variant, pairs: list[Any]) -> Rows:
    """The reference generator's answers in the batch's layout."""
    generator = reference.MoveGenerator(variant.rules)
    rows: Rows = []
    for position, dice in pairs:
        segment = generator.segment(position, dice)
        plays = []
        for key, steps in segment.plays.items():
            encoded = [v for s in steps for v in (s.src, s.dst, int(s.hit))]
            plays.append((list(key), encoded + [-1] * (STEP_FIELDS - len(encoded))))
        rows.append((segment.dice_used, plays))
    return rows


def _c_answers(variant: Variant, pairs: list[Any]) -> int:
    """How many of the pairs the C generator answers itself."""
    rules = batch.native_rules(variant)
    assert batch.NATIVE is not None and rules is not None
    answered = start = 0
    while start < len(pairs):
        pinned = bytearray() if variant.rules.hitting.pins else None
        end = batch.NATIVE.legal_results(
            pairs,
            start,
            Position,
            rules,
            bytearray(8),
            bytearray(),
            bytearray(),
            None,
            None,
            pinned,
        )
        answered += end - start
        start = end + 1
    return answered


def test_the_c_path_takes_the_fast_ordered_and_pinning_rule_sets() -> None:
    """The C path answers exactly the fast path's, the ordered search's and the pinning search's
    rule sets (none with NARDY_MOVEGEN=pure or without the extension)."""
    assert {"backgammon", "trictrac", "long", "gulbar", "khachapuri", "hypergammon", "portes"} <= {
        n for n, o in FAST if not o
    }
    assert {"nardgammon", "mad", "mad_gulbar", "fevga", "giul"} <= {n for n, o in ORDERED if not o}
    assert {"plakoto"} <= {n for n, o in PINNING if not o}
    for name, options in _variants() + PINNING:
        variant = load_variant(name, options)
        taken = batch.native_rules(variant) is not None
        generator = variant.generator
        expected = generator.fast or generator.ordered or generator.pins
        assert taken == (batch.NATIVE is not None and expected), name


@needs_c
@pytest.mark.parametrize(
    ("name", "options"),
    FAST + ORDERED + PINNING,
    ids=[_variant_id(n, o) for n, o in FAST + ORDERED + PINNING],
)
def test_c_gives_the_references_answers(
    reference: ModuleType, name: str, options: dict[str, Any]
) -> None:
    variant = load_variant(name, options)
    pairs = list(_cases(variant, games=2, per_position=4, seed=7))
    assert _rows(legal_results(variant, pairs, steps=True)) == _expected(reference, variant, pairs)
    # Almost wholly in C: the rare segments left to Python are the fast path's where its end check
    # fails every longest play (the general search's); an ordered or pinning rule set's, every one.
    share = 0.95 if variant.generator.fast else 1.0
    assert _c_answers(variant, pairs) >= share * len(pairs)


@needs_c
def test_c_agrees_with_the_oracle() -> None:
    """100 % of the oracle's cases, every one answered in C: the oracle's result sets (the order
    and steps are legal_plays's: tests/core/test_batch.py, on the oracle too)."""
    variant = load_variant("backgammon")
    cases = _oracle_cases()
    pairs = [(Position.from_json(c["position"]), _steps(c["dice"])) for c in cases]
    assert _c_answers(variant, pairs) == len(pairs) == 2550
    found = legal_results(variant, pairs)
    boards = found.boards.tobytes()
    for k, case in enumerate(cases):
        rows = range(found.offsets[k], found.offsets[k + 1])
        got = {boards[r * BOARD : (r + 1) * BOARD] for r in rows}
        expected = {array("b", board_of(Position.from_json(r))).tobytes() for r in case["results"]}
        assert got == expected and len(rows) == len(expected), case["id"]


@needs_c
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_c_gives_the_references_answers_on_random_positions(
    reference: ModuleType, data: st.DataObject
) -> None:
    """Arbitrary positions (bars, bear-offs, blocks; not only those of games), every dice; the
    fast path's main rule sets and every ordered one (with its options)."""
    fast: list[tuple[str, dict[str, Any]]] = [
        (n, {}) for n in ("backgammon", "long", "khachapuri", "portes")
    ]
    name, options = data.draw(st.sampled_from(fast + ORDERED))
    variant = load_variant(name, options)
    position = data.draw(positions(variant.rules.geometry))
    if variant.is_finished(position):
        return
    pairs = [(position, dice) for dice in ALL_DICE]
    assert _rows(legal_results(variant, pairs, steps=True)) == _expected(reference, variant, pairs)


@needs_c
def test_where_the_fast_path_gives_up_python_answers(reference: ModuleType) -> None:
    """A pair the C generator leaves to the Python one is answered in its place."""
    variant = load_variant("long")
    start = variant.start_position()
    pairs: list[Any] = [(start, (3, 1))]
    for text, dice in GIVING_UP:
        pairs += [(Position.from_id(text), dice), (start, (6, 6, 6, 6))]
    assert _c_answers(variant, pairs) == len(pairs) - len(GIVING_UP)
    assert _rows(legal_results(variant, pairs, steps=True)) == _expected(reference, variant, pairs)


# Ordered rule sets, two different dice and no play using both (found in random games): the
# ordered search hands them to the general search (one-die plays with the larger-die rule, or the
# empty play), which the C generator translates for this case.
ONE_DIE = [
    ("mad", "GDB--a/ac--Ae/d---Aa/------", (1, 4)),
    ("mad", "GDB--a/ac--Ae/d---Aa/------", (4, 5)),
    ("nardgammon", "DECcB-/------/dg----/A-a---", (1, 5)),
    ("nardgammon", "DECcB-/------/dg----/A-a---", (5, 6)),
]


@needs_c
@pytest.mark.parametrize(("name", "text", "dice"), ONE_DIE)
def test_ordered_segments_without_a_two_dice_play(
    reference: ModuleType, name: str, text: str, dice: tuple[int, int]
) -> None:
    variant = load_variant(name)
    pairs: list[Any] = [(Position.from_id(text), dice)]
    expected = _expected(reference, variant, pairs)
    assert expected[0][0] < 2  # no play uses both dice (§2.3 items 4-5)
    assert _c_answers(variant, pairs) == 1
    assert _rows(legal_results(variant, pairs, steps=True)) == expected


# -- plakoto's pinning search (RULES.md §3.12.2) ---------------------------------------------------


@st.composite
def pinned_positions(draw: st.DrawFn) -> Position:
    """A plakoto position with pinned checkers of either side (RULES.md §3.12.2): often a mother (a
    side's last checker on its own 24; the opponent's is on the mover's 1) free or pinned, with the
    other side's checkers a few steps above her, or the mover all home (bear-offs)."""
    mover: dict[int, int] = {}
    opponent: dict[int, int] = {}
    pinned: set[int] = set()
    mothers = draw(st.sampled_from(["none", "hers", "hers pinned", "his", "his pinned", "both"]))
    if mothers in ("hers pinned", "both"):
        mover[1] = draw(st.integers(1, 3))  # her pinned beneath his stack
        pinned.add(1)
    elif mothers == "hers":
        opponent[1] = 1
    if mothers in ("his pinned", "both"):
        opponent[24] = draw(st.integers(1, 3))
        pinned.add(24)
    elif mothers == "his":
        mover[24] = draw(st.integers(1, 2))
    highest = 6 if draw(st.booleans()) else 24
    for side, top in ((mover, highest), (opponent, 24)):
        for point in draw(st.lists(st.integers(1, top), max_size=4, unique=True)):
            if point not in mover and point not in opponent:
                side[point] = draw(st.integers(1, 3))
    stacks = sorted(set(mover) | set(opponent))
    if stacks:
        pinned |= set(draw(st.lists(st.sampled_from(stacks), max_size=3, unique=True)))
    try:  # the checkers not placed are borne off
        return Position.from_sides(mover, opponent, pinned=sorted(pinned))
    except InvalidPositionError:  # more than 15 checkers of a side
        assume(False)
        raise


@needs_c
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_c_gives_the_references_answers_with_pins(
    reference: ModuleType, data: st.DataObject
) -> None:
    """Arbitrary pinned positions (free and pinned mothers, stuck checkers, bear-offs), every dice,
    each mother rule: the reference's answers, and legal_plays' in both orders (or its error where
    the mother rule ended the game)."""
    name, options = data.draw(st.sampled_from(PINNING))
    variant = load_variant(name, options)
    position = data.draw(pinned_positions())
    pairs = [(position, dice) for dice in ALL_DICE]
    with_c, without = _both(variant, pairs)
    assert with_c == without
    if variant.is_finished(position):
        assert isinstance(with_c[0], type)  # GameStateError, raised by legal_plays
        return
    assert _c_answers(variant, pairs) == len(pairs)
    assert _rows(legal_results(variant, pairs, steps=True)) == _expected(reference, variant, pairs)


# Segments where the mother rule can end the game (MoveGenerator._mother_order 1 or 2): plakoto
# equal dice searched in every order (2), in the multiset order (1), two different dice (2).
MOTHER_LIVE = [
    # Her free on his 1, his 24 holding one checker, a checker of his 2 points above her.
    ({}, {24: 1, 3: 2, 13: 12}, {1: 1, 20: 14}, (), (2, 2, 2, 2), 2),
    # Her free, him all home with a checker 2 points above her (simple rule: pinning her wins; a
    # bear-off may come before the landing).
    ({"mother": "simple"}, {3: 2, 5: 13}, {1: 1, 20: 14}, (), (2, 2, 2, 2), 2),
    # Her pinned, his 24's four checkers taking the four steps (standard: the multiset order).
    ({}, {1: 1, 24: 4, 10: 10}, {5: 7, 20: 7}, (1,), (5, 5, 5, 5), 1),
    # Two different dice, a checker of his one die above her.
    ({}, {4: 2, 12: 13}, {1: 1, 20: 14}, (), (3, 5), 2),
]


@needs_c
@pytest.mark.parametrize(("options", "his", "hers", "pinned", "dice", "order"), MOTHER_LIVE)
def test_c_plays_the_mother_rule_as_the_reference(
    reference: ModuleType,
    options: dict[str, Any],
    his: dict[int, int],
    hers: dict[int, int],
    pinned: tuple[int, ...],
    dice: tuple[int, ...],
    order: int,
) -> None:
    """The every-order search and the mother rule's ends, pinned in C as in the reference."""
    variant = load_variant("plakoto", options)
    position = Position.from_sides(his, hers, pinned=pinned)
    board = [*board_of(position), 0][: BOARD + 1]
    generator = reference.MoveGenerator(variant.rules)
    two = dice[0] != dice[1]
    assert generator._mother_order(board, dice[0], dice[1], len(dice), False) == order
    pairs: list[Any] = [(position, dice)]
    expected = _expected(reference, variant, pairs)
    ends = [key for key, _ in expected[0][1] if variant.is_finished(position_of(key))]
    assert ends or two  # some plays end the game (the mother pinned) before the last die
    assert _c_answers(variant, pairs) == 1
    assert _rows(legal_results(variant, pairs, steps=True)) == expected


@needs_c
@pytest.mark.slow
@pytest.mark.parametrize(("name", "options"), PINNING, ids=[_variant_id(n, o) for n, o in PINNING])
def test_c_gives_the_references_answers_in_plakoto_games(
    reference: ModuleType, name: str, options: dict[str, Any]
) -> None:
    """Every segment of every position of seeded random games (pins, live mother rules, games
    ending by the mother rule or by bear-off), in legal_plays' order and in the board order."""
    variant = load_variant(name, options)
    positions = _random_positions(variant, 2, 5)
    pairs = [(position, dice) for position in positions for dice in ALL_DICE]
    assert any(position.pinned for position in positions)
    assert _c_answers(variant, pairs) == len(pairs)
    assert _rows(legal_results(variant, pairs, steps=True)) == _expected(reference, variant, pairs)
    with_c, without = _both(variant, pairs)
    assert with_c == without


PLAKOTO_START = load_variant("plakoto").start_position()


@pytest.mark.parametrize(
    ("pinned", "ended"),
    [
        pytest.param((0,), False, id="point-0"),
        pytest.param((25,), False, id="point-25"),
        pytest.param((-1,), False, id="negative"),
        pytest.param((3, 3), False, id="twice"),
        pytest.param((24, 1), False, id="unordered"),
        pytest.param((True,), False, id="bool"),
        pytest.param(("1",), False, id="text"),
        pytest.param([1], False, id="a-list"),
        pytest.param((5,), False, id="no-stack-there"),
        # The mother rule ended the game: her pinned, his own 24 empty (§3.12.2).
        pytest.param((1,), True, id="mother-ended"),
    ],
)
def test_bad_pins_get_todays_answers(pinned: Any, ended: bool) -> None:
    """Pinned points the Python generator does not expect (the plain constructor trusts its
    arguments), and a game the mother rule ended: the C path answers (or raises) as it does."""
    variant = load_variant("plakoto")
    points = list(PLAKOTO_START.points)
    if ended:
        points[0], points[1], points[12], points[23] = 1, -14, 14, 0  # his checker pinning her
    bad = Position(tuple(points), (0, 0), (0, 0), pinned)
    pairs: list[Any] = [(PLAKOTO_START, (3, 1)), (bad, (3, 1)), (bad, (2, 2, 2, 2))]
    with_c, without = _both(variant, pairs)
    assert with_c == without
    if ended:
        assert with_c[0] is GameStateError


def _both(variant: Variant, pairs: Any) -> list[Any]:
    """legal_results's answer in both orders (or its error) with the C path as built, and
    without it."""
    answers = []
    for native in (batch.NATIVE, None):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(batch, "NATIVE", native)
            try:
                found = legal_results(variant, pairs, steps=True)
                by_board = legal_results(variant, pairs, steps=True, order="board")
                answers.append(
                    (
                        list(found.offsets),
                        list(found.dice_used),
                        found.boards,
                        found.steps,
                        found.pinned,
                        (by_board.boards, by_board.steps, by_board.pinned, by_board.play_index),
                    )
                )
            except Exception as error:  # the errors are what is compared
                answers.append((type(error), str(error)))
    return answers


def test_without_the_extension_the_same_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    variant = load_variant("backgammon")
    start = variant.start_position()
    pairs: list[Any] = [(start, dice) for dice in ALL_DICE]
    # Pairs the C generator leaves to legal_plays, which accepts them: a bool die, a list.
    pairs += [(start, (True, 3)), [start, [5, 2]], (variant.flip(start), [4, 4, 4])]
    pairs += [(start, dice) for dice in ALL_DICE]
    with_c, without = _both(variant, pairs)
    assert with_c == without
    assert len(with_c[1]) == len(pairs)
    assert isinstance(with_c[2], array) and with_c[2].typecode == "b"
    # The batches themselves (built without __init__ on the C path) compare and read alike.
    found = legal_results(variant, pairs[:3])
    monkeypatch.setattr(batch, "NATIVE", None)
    assert found == legal_results(variant, pairs[:3])
    assert found.results(2) == [play.result for play in variant.legal_plays(*pairs[2])]
    assert (
        found.pinned is None and found.steps is None and found.play_count == len(found.boards) // 28
    )


FINISHED = Position((0,) * 23 + (-1,), (0, 0), (15, 14))


@pytest.mark.parametrize(
    "pair",
    [
        pytest.param((None, (2, 3, 4)), id="three-different-dice"),
        pytest.param((None, (0, 1)), id="die-0"),
        pytest.param((None, (1, 7)), id="die-7"),
        pytest.param((None, ()), id="no-dice"),
        pytest.param((None, (2, 2, 2, 2, 2)), id="five-steps"),
        pytest.param((None, "31"), id="dice-text"),
        pytest.param((None, None), id="dice-none"),
        pytest.param((None, (3.0, 1)), id="float-die"),
        pytest.param((FINISHED, (3, 1)), id="finished-game"),
        # Malformed boards (the plain constructor trusts its arguments).
        pytest.param((Position((1, 2, 3), (0, 0), (0, 0)), (3, 1)), id="three-points"),
        pytest.param((Position((0,) * 23 + (120,), (0, 0), (0, 0)), (3, 1)), id="120-accepted"),
        pytest.param(("a position", (3, 1)), id="not-a-position"),
        pytest.param((None,), id="no-dice-in-pair"),
    ],
)
def test_bad_input_gets_todays_errors(pair: tuple[Any, ...]) -> None:
    """The C path raises what the Python path raises, naming the pair."""
    variant = load_variant("backgammon")
    start = variant.start_position()
    bad = tuple(start if x is None else x for x in pair)
    with_c, without = _both(variant, [(start, (3, 1)), bad])
    assert with_c == without
    if isinstance(with_c[0], type) and issubclass(with_c[0], NardyError):
        assert with_c[1].startswith("pair 1: ")


def test_pure_environment_turns_the_c_path_off() -> None:
    """``NARDY_MOVEGEN=pure`` makes the batch API the Python generator's (the reference run)."""
    code = "from nardy.core import batch; print(batch.NATIVE is None)"
    env = {**os.environ, _engine.ENVIRONMENT: "pure"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


@needs_c
def test_an_extension_built_from_another_source_is_not_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The extension carries the digest of the ``_batchgen.c`` it was built from (setup.py); after
    an edit of the source it is left unused, with a warning, until the next install."""
    from nardy.core import _batchgen  # type: ignore[attr-defined]

    assert batch._native() is _batchgen
    monkeypatch.setattr(_batchgen, "COMPILED_FROM_SHA256", "0" * 64)
    with pytest.warns(UserWarning, match="built from another version of"):
        assert batch._native() is None


def _arrays(pairs: list[Any]) -> tuple[bytes, bytes]:
    """The pairs as legal_results_of_boards takes them: 28 board bytes and 4 dice bytes a pair."""
    boards = b"".join(array("b", board_of(position)[:BOARD]).tobytes() for position, _ in pairs)
    dice = b"".join(array("b", [*d, *[0] * (4 - len(d))]).tobytes() for _, d in pairs)
    return boards, dice


def _batch_fields(found: ResultBatch) -> tuple[Any, ...]:
    return (found.offsets, found.dice_used, found.boards, found.steps, found.play_index)


@pytest.mark.parametrize(
    "name", ["backgammon", "long", "nardgammon", "fevga", "hypergammon", "portes", "mad"]
)
def test_boards_as_arrays_give_legal_results_answers(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """legal_results_of_boards (a vector env's pairs as arrays, read by the C generator) answers
    as legal_results of the same positions, in both orders, with and without the extension."""
    variant = load_variant(name)
    pairs: list[Any] = [(p, tuple(d)) for p, d in _cases(variant, games=2, per_position=3, seed=5)]
    if name == "long":  # pairs the C generator leaves to legal_plays (the general search)
        pairs += [(Position.from_id(text), dice) for text, dice in GIVING_UP]
    boards, dice = _arrays(pairs)
    for native in (batch.NATIVE, None):
        with monkeypatch.context() as patch:
            patch.setattr(batch, "NATIVE", native)
            for order in ("play", "board"):
                expected = legal_results(variant, pairs, steps=True, order=order)
                found = batch.legal_results_of_boards(
                    variant, boards, dice, steps=True, order=order
                )
                assert _batch_fields(found) == _batch_fields(expected)
    assert len(pairs) >= 20


def test_boards_as_arrays_bad_input_is_refused_clearly() -> None:
    variant = load_variant("backgammon")
    boards, dice = _arrays([(variant.start_position(), (3, 1))])
    with pytest.raises(ValueError, match="28 and 4 a pair"):
        batch.legal_results_of_boards(variant, boards, dice + b"\0")
    with pytest.raises(NardyError, match="pair 0: "):  # three different dice: legal_plays's error
        batch.legal_results_of_boards(variant, boards, bytes([2, 3, 4, 0]))
    with pytest.raises(ValueError, match="pinned"):
        batch.legal_results_of_boards(load_variant("plakoto"), boards, dice)
    with pytest.raises(ValueError, match="pins no checker"):
        batch.legal_results_of_boards(variant, boards, dice, pins=array("q", [0]))
    plakoto = load_variant("plakoto")
    for bits in (1, 1 << 25, -2):  # bit 0, bit 25, a negative mask
        with pytest.raises(ValueError, match=r"pair 0: pinned bits .* outside 1-24"):
            batch.legal_results_of_boards(plakoto, boards, dice, pins=array("q", [bits]))
    with pytest.raises(ValueError, match="one int64 a pair"):
        batch.legal_results_of_boards(
            load_variant("plakoto"), boards, dice, pins=array("q", [0, 0])
        )


@pytest.mark.parametrize(("name", "options"), PINNING, ids=[_variant_id(n, o) for n, o in PINNING])
def test_pinned_boards_as_arrays_give_legal_results_answers(
    name: str, options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pinning variant's boards with their pins as an int64 array (RULES.md §3.12.2): the
    results and their pinned bits of legal_results of the same positions, with and without the
    extension (positions of random games: most hold a pin, some a pinned mother)."""
    variant = load_variant(name, options)
    pairs: list[Any] = [(p, tuple(d)) for p, d in _cases(variant, games=2, per_position=3, seed=7)]
    pairs = [(p, d) for p, d in pairs if not variant.is_finished(p)]
    boards, dice = _arrays(pairs)
    pins = array("q", [[*board_of(p), 0][BOARD] for p, _ in pairs])
    assert sum(1 for bits in pins if bits) >= 10
    for native in (batch.NATIVE, None):
        with monkeypatch.context() as patch:
            patch.setattr(batch, "NATIVE", native)
            for order in ("play", "board"):
                expected = legal_results(variant, pairs, steps=True, order=order)
                found = batch.legal_results_of_boards(
                    variant, boards, dice, steps=True, order=order, pins=pins
                )
                assert _batch_fields(found) == _batch_fields(expected)
                assert found.pinned == expected.pinned
