"""Positions, position ids, play text: the value types and their clear errors."""

from __future__ import annotations

import pytest

from nardy.core import (
    IllegalPlayError,
    InvalidPlayError,
    InvalidPositionError,
    Position,
    Step,
    format_steps,
    load_variant,
    parse_steps,
)

BACKGAMMON_START = "b----E/-C---e/E---c-/e----B"


def test_backgammon_start_id_matches_the_layout() -> None:
    start = load_variant("backgammon").start_position()
    assert start.id() == BACKGAMMON_START
    # RULES.md §3.1: {24: 2, 13: 5, 8: 3, 6: 5} for each player in his own coordinates.
    assert start.side(0, "opposite") == {24: 2, 13: 5, 8: 3, 6: 5}
    assert start.side(1, "opposite") == {24: 2, 13: 5, 8: 3, 6: 5}
    assert Position.from_id(BACKGAMMON_START) == start


def test_same_direction_layout_and_flip() -> None:
    start = load_variant("long").start_position()
    # RULES.md §1.2: "the opponent's head (his 24) is my 12".
    assert start.points[23] == 15 and start.points[11] == -15
    assert start.flip("same") == start
    khachapuri = load_variant("khachapuri").start_position()
    assert khachapuri.side(0, "same") == {24: 4, 6: 11}
    assert khachapuri.points[17] == -11  # "Each side's point 18 is closed from the start"


def test_id_with_bar_round_trips() -> None:
    position = Position.from_sides({13: 13}, {3: 3, 8: 2, 19: 2}, bar=(2, 0))
    assert position.id().endswith(":2,0")
    assert Position.from_id(position.id()) == position


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("b----E/-C---e/E---c-", "four groups of six"),
        ("b----E/-C---e/E---c-/e----Z", "bad point character 'Z'"),
        ("b----E/-C---e/E---c-/e----B:x", "bar must be"),
        ("O-----/------/------/-----A", "the mover has 16 checkers on the board"),
    ],
)
def test_malformed_ids_raise(text: str, message: str) -> None:
    with pytest.raises(InvalidPositionError, match=message):
        Position.from_id(text)


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([], "must be an object"),
        ({"points": [0] * 23}, "24 integers"),
        ({"points": [1.5] + [0] * 23, "bar": [0, 0], "off": [0, 0]}, "integers only"),
        ({"points": [16] + [0] * 22 + [-15], "bar": [0, 0], "off": [0, 0]}, "16 checkers"),
        (
            {"points": [15] + [0] * 22 + [-15], "bar": [0, 0], "off": [0, 0], "x": 1},
            "unknown position field",
        ),
    ],
)
def test_malformed_json_raises(obj: object, message: str) -> None:
    with pytest.raises(InvalidPositionError, match=message):
        Position.from_json(obj)


def test_both_sides_on_one_point_is_rejected() -> None:
    with pytest.raises(InvalidPositionError, match="both sides"):
        Position.from_sides({5: 15}, {5: 15})


def test_variant_validation() -> None:
    long = load_variant("long")
    with pytest.raises(InvalidPositionError, match="no bar"):
        long.validate(Position.from_sides({24: 14}, {12: 15}, bar=(1, 0)))
    with pytest.raises(InvalidPositionError, match="borne off but has checkers outside home"):
        long.validate(Position.from_sides({24: 14}, {12: 15}))


@pytest.mark.parametrize(
    "text",
    [
        "24/18 13/11",
        "bar/20",
        "6/off",
        "13/10*/5",
        "24/18(2)",
        "24/21/18/15 24/21",
        "bar/20(2) 20/15/10",
        "24/21/18(2)",
        "24/21(2) 21/18/15",
    ],
)
def test_play_text_round_trips(text: str) -> None:
    assert format_steps(parse_steps(text)) == text


def test_parse_relaxations_and_errors() -> None:
    assert parse_steps("25/20 6/0") == [Step(25, 20, 5), Step(6, 0, 6)]
    for bad in ("24-18", "24/30", "18/24", "24/18(9)", "x/3"):
        with pytest.raises(InvalidPlayError):
            parse_steps(bad)


def test_checked_play_lookup() -> None:
    variant = load_variant("backgammon")
    start = variant.start_position()
    plays = variant.legal_plays(start, (3, 1))
    assert variant.play(start, (3, 1), "8/5 6/5").result in plays
    assert "6/5 8/5" in plays  # any order of the same steps
    assert "24/20" in plays  # shorthand for 24/21/20
    assert "24/19" not in plays
    with pytest.raises(IllegalPlayError, match="not a legal play with 3-1"):
        variant.play(start, (3, 1), "13/8")
    with pytest.raises(InvalidPlayError):
        variant.play(start, (3, 1), "8-5")
    with pytest.raises(InvalidPlayError, match="dice must be"):
        variant.legal_plays(start, (7, 1))


VALID_POINTS = [2, 0, 0, 0, 0, -5, 0, -3, 0, 0, 0, 5, -5, 0, 0, 0, 3, 0, 5, 0, 0, 0, 0, -2]


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        # Each is what the one-pass reader of the generator declines; the full checks word it.
        ({"points": [True, *VALID_POINTS[1:]]}, "integers only"),
        ({"points": VALID_POINTS, "bar": None}, "'bar' must be a list of 2 integers"),
        ({"points": VALID_POINTS, "off": [0]}, "'off' must be a list of 2 integers"),
        ({"points": VALID_POINTS, "off": [0, 1.0]}, "integers only"),
        ({"points": VALID_POINTS, "bar": [-1, 0], "off": [1, 0]}, "must not be negative"),
        ({"points": [*VALID_POINTS[:-1], -3]}, "the mover has 15 checkers and the opponent 16"),
        ({"points": tuple(VALID_POINTS), "extra": 1}, "unknown position field"),
    ],
)
def test_fast_reader_declines_and_the_full_checks_say_why(obj: object, message: str) -> None:
    from nardy.core.movegen import position_from_json

    assert position_from_json(obj, None) is None
    with pytest.raises(InvalidPositionError, match=message):
        Position.from_json(obj)


@pytest.mark.parametrize("checkers", [None, 15])
def test_fast_reader_reads_what_the_full_checks_accept(checkers: int | None) -> None:
    from types import MappingProxyType

    from nardy.core.movegen import position_from_json

    obj = {"points": VALID_POINTS, "bar": [0, 0], "off": [0, 0], "state": {"cube": 1}}
    fast = position_from_json(obj, checkers)
    assert fast is not None
    assert fast == Position.from_json(MappingProxyType(obj), checkers)  # the full checks' answer
    assert fast.points == tuple(VALID_POINTS) and fast.bar == (0, 0) and fast.off == (0, 0)
    assert position_from_json({"points": VALID_POINTS}, checkers) == fast  # bar, off left out
    assert position_from_json(obj, 14) is None  # 15 checkers a side, not 14


@pytest.mark.parametrize(
    ("dice", "error", "message"),
    [
        ((7, 1), InvalidPlayError, "dice must be"),
        ((), InvalidPlayError, "dice must be"),
        ((3, 3, 3, 3, 3), InvalidPlayError, "dice must be"),
        ((3.0, 1), InvalidPlayError, "dice must be"),
        ((3, 1, 2), InvalidPlayError, "two different dice or equal steps"),
        ((3, 3, 1), InvalidPlayError, "two different dice or equal steps"),
    ],
)
def test_legal_plays_words_bad_dice(dice: tuple[object, ...], error: type, message: str) -> None:
    variant = load_variant("backgammon")
    start = variant.start_position()
    assert variant.generator.checked_segment(start, dice) is None
    with pytest.raises(error, match=message):
        variant.legal_plays(start, dice)  # type: ignore[arg-type]


def test_legal_plays_takes_dice_as_a_list_a_tuple_or_bools() -> None:
    variant = load_variant("backgammon")
    start = variant.start_position()
    by_tuple = variant.legal_plays(start, (3, 1))
    assert variant.generator.checked_segment(start, [3, 1]) is not None
    by_list = variant.legal_plays(start, [3, 1])
    assert by_list.dice == by_tuple.dice == (3, 1)
    assert [p.text for p in by_list] == [p.text for p in by_tuple]
    # A bool is an int (the checks before the one-pass one accepted it): True is a 1.
    assert variant.generator.checked_segment(start, (3, True)) is None
    assert {p.result for p in variant.legal_plays(start, (3, True))} == set(by_tuple.results)


def test_positions_built_by_the_generator_are_ordinary_positions() -> None:
    """The generator builds positions without ``__init__`` (nardy.core.movegen._position): they
    must compare, hash, pickle and stay frozen as constructed ones do."""
    import dataclasses
    import pickle

    from nardy.core.movegen import board_of, position_from_json, position_of

    made = Position(tuple(VALID_POINTS), (0, 0), (0, 0))
    for built in (position_of(tuple(board_of(made))), position_from_json(made.to_json(), 15)):
        assert type(built) is Position
        assert built == made and hash(built) == hash(made) and repr(built) == repr(made)
        assert pickle.loads(pickle.dumps(built)) == made
        with pytest.raises(dataclasses.FrozenInstanceError):
            built.bar = (1, 0)  # type: ignore[misc]
