"""gnubg Position ID, Match ID and Jellyfish .mat: pure tests and cross-checks against gnubg.

The cross-checks run the real GNU Backgammon (Debian package ``gnubg``, binary ``/usr/games/gnubg``;
``NARDY_GNUBG`` may name another binary) and SKIP when it is not installed. They drive it
non-interactively:

* ``gnubg -t -q -r -p script.py`` runs a Python script inside gnubg (module ``gnubg``:
  ``positionfromid``, ``positionid``, ``board``, ``matchid``, ``cubeinfo``, ``posinfo``,
  ``command``);
* ``gnubg -t -q -r < commands.txt`` reads CLI commands from stdin (``import mat FILE``,
  ``show score``, ``export match mat FILE``).

``HOME`` is pointed at a temporary folder because gnubg writes ``~/.gnubg``.
"""

from __future__ import annotations

import base64
import json
import os
import random
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nardy.core.errors import NardyError
from nardy.core.gnubg import (
    GameState,
    GnubgFormatError,
    MatAction,
    MatchRecord,
    MatchState,
    MatGame,
    MatMove,
    board_from_position_id,
    mat_moves_from_steps,
    mat_play_from_text,
    mat_play_to_text,
    match_id,
    parse_mat,
    parse_match_id,
    parse_position_id,
    position_from_id,
    position_id,
    position_id_of,
    write_mat,
)
from nardy.core.notation import parse_steps
from nardy.core.position import Position

# ------------------------------------------------------------------------------------------------
# Positions, described independently of the module: each side in its OWN coordinates.
# ------------------------------------------------------------------------------------------------

START = {24: 2, 13: 5, 8: 3, 6: 5}

# (name, mover {own point: n}, opponent {his own point: n}, bar (mover, opponent))
POSITIONS: list[tuple[str, dict[int, int], dict[int, int], tuple[int, int]]] = [
    ("start", START, START, (0, 0)),
    ("mover on bar", {24: 1, 13: 5, 8: 3, 6: 5}, START, (1, 0)),
    ("opponent two on bar", START, {13: 5, 8: 3, 6: 5}, (0, 2)),
    ("both on bar", {20: 1, 13: 5, 8: 3, 6: 5}, {24: 1, 13: 5, 8: 3, 6: 4}, (1, 2)),
    (
        "mover closed out",
        {13: 4, 8: 3, 6: 6},
        {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 3, 13: 2},
        (2, 0),
    ),
    ("bear-off", {1: 3, 2: 2, 3: 1}, {6: 5, 5: 5, 4: 5}, (0, 0)),
    ("last checkers", {1: 1}, {1: 1}, (0, 0)),
    ("all on six", {6: 15}, {6: 15}, (0, 0)),
    ("mover fifteen on bar", {}, {6: 15}, (15, 0)),
    ("opponent four on bar", {24: 2, 13: 13}, {6: 11}, (0, 4)),
    ("race", {10: 4, 9: 3, 7: 8}, {12: 5, 11: 5, 3: 5}, (0, 0)),
    ("blots everywhere", {p: 1 for p in range(10, 25)}, {24: 5, 20: 5, 16: 5}, (0, 0)),
    ("all back", {24: 15}, {24: 15}, (0, 0)),
    ("bar and bear-off", {}, {1: 1}, (1, 0)),
    ("home board vs bar", {5: 2, 4: 2, 3: 2, 2: 2, 1: 2}, {18: 2, 13: 5, 8: 2, 6: 3}, (0, 3)),
    ("primes", {12: 2, 11: 2, 10: 2, 9: 2, 8: 2, 7: 2, 6: 3}, {24: 2, 23: 2, 22: 5, 21: 6}, (0, 0)),
    ("backgame", {1: 2, 2: 2, 13: 3, 8: 3, 6: 5}, {6: 5, 5: 3, 4: 3, 9: 2, 7: 2}, (0, 0)),
    ("few left", {2: 1, 4: 2}, {19: 1, 3: 2}, (0, 0)),
    ("opponent only on bar", {6: 4, 5: 4}, {}, (0, 3)),
    ("mixed bars", {22: 3, 6: 5, 4: 3}, {23: 2, 13: 6, 8: 3, 6: 2}, (3, 2)),
]


def _nardy(
    mover: dict[int, int], opponent: dict[int, int], bar: tuple[int, int]
) -> tuple[list[int], list[int], list[int]]:
    points = [0] * 24
    for p, n in mover.items():
        points[p - 1] += n
    for q, n in opponent.items():
        assert points[24 - q] == 0, f"test position puts both sides on mover's point {25 - q}"
        points[24 - q] -= n
    off = [15 - sum(mover.values()) - bar[0], 15 - sum(opponent.values()) - bar[1]]
    assert min(off) >= 0
    return points, list(bar), off


def _gnubg_board(
    mover: dict[int, int], opponent: dict[int, int], bar: tuple[int, int]
) -> list[list[int]]:
    """gnubg's board straight from the description: [player not on roll, player on roll]."""
    opp = [opponent.get(q, 0) for q in range(1, 25)] + [bar[1]]
    me = [mover.get(p, 0) for p in range(1, 25)] + [bar[0]]
    return [opp, me]


def _pips(side: dict[int, int], bar: int) -> int:
    return sum(p * n for p, n in side.items()) + 25 * bar


def _b64_bits(bits: list[int], nbytes: int = 10) -> str:
    """Pack a bit string little-endian (as gnubg does) and Base64 it without padding."""
    data = bytearray(nbytes)
    for i, bit in enumerate(bits):
        data[i // 8] |= bit << (i % 8)
    return base64.b64encode(bytes(data)).decode().rstrip("=")


def _with_field(match_id_text: str, start: int, width: int, value: int) -> str:
    """A Match ID with bits ``start … start + width - 1`` replaced by ``value`` (LSB first)."""
    data = base64.b64decode(match_id_text)
    bits = [(byte >> k) & 1 for byte in data for k in range(8)]
    for k in range(width):
        bits[start + k] = (value >> k) & 1
    return _b64_bits(bits, 9)


# ------------------------------------------------------------------------------------------------
# Position ID: pure tests
# ------------------------------------------------------------------------------------------------


def test_start_position_id_is_the_documented_one() -> None:
    points, bar, off = _nardy(START, START, (0, 0))
    assert position_id(points, bar) == "4HPwATDgc/ABMA"
    assert position_id(points, bar, off) == "4HPwATDgc/ABMA"
    assert parse_position_id("4HPwATDgc/ABMA") == (tuple(points), (0, 0))


def test_start_key_bytes_match_the_manual() -> None:
    # gnubg manual: "the 10 byte key (in hex) is E0 73 F0 01 30 E0 73 F0 01 30".
    key = base64.b64decode("4HPwATDgc/ABMA==")
    assert key.hex(" ").upper() == "E0 73 F0 01 30 E0 73 F0 01 30"


def test_player_not_on_roll_is_encoded_first() -> None:
    # Observed with gnubg 1.07: after "set turn 1; set board /x8AAGDgf8ABIA" it reports
    # "The pip counts are: root 124, gnubg 63." with root on roll.
    mover = {6: 10, 13: 3}
    opponent = {1: 13}
    points, bar, _ = _nardy(mover, opponent, (1, 2))
    assert position_id(points, bar) == "/x8AAGDgf8ABIA"
    assert board_from_position_id("/x8AAGDgf8ABIA") == (
        tuple(_gnubg_board(mover, opponent, (1, 2))[0]),
        tuple(_gnubg_board(mover, opponent, (1, 2))[1]),
    )
    assert _pips(mover, 1) == 124 and _pips(opponent, 2) == 63


@pytest.mark.parametrize(
    ("name", "mover", "opponent", "bar"), POSITIONS, ids=[p[0] for p in POSITIONS]
)
def test_position_id_round_trip(
    name: str, mover: dict[int, int], opponent: dict[int, int], bar: tuple[int, int]
) -> None:
    points, bars, off = _nardy(mover, opponent, bar)
    pid = position_id(points, bars, off)
    assert len(pid) == 14
    assert parse_position_id(pid) == (tuple(points), tuple(bars))
    board = board_from_position_id(pid)
    assert [list(side) for side in board] == _gnubg_board(mover, opponent, bar)
    position = Position.from_json({"points": points, "bar": bars, "off": off})
    assert position_id_of(position) == pid
    assert position_from_id(pid) == position


@st.composite
def _positions(draw: st.DrawFn) -> Position:
    free = list(range(24))
    draw(st.randoms(use_true_random=False)).shuffle(free)
    points = [0] * 24
    bar = [0, 0]
    for sign, side in ((1, 0), (-1, 1)):
        left = draw(st.integers(0, 15))
        bar[side] = draw(st.integers(0, left))
        left -= bar[side]
        while left:
            index = free.pop() if free else None
            if index is None:
                break
            n = draw(st.integers(1, left))
            points[index] = sign * n
            left -= n
    off = [
        15 - sum(c for c in points if c > 0) - bar[0],
        15 - sum(-c for c in points if c < 0) - bar[1],
    ]
    return Position(tuple(points), (bar[0], bar[1]), (off[0], off[1]))


@settings(max_examples=300)
@given(_positions())
def test_position_id_round_trips_random_positions(position: Position) -> None:
    pid = position_id_of(position)
    assert position_from_id(pid) == position
    assert parse_position_id(pid) == (position.points, position.bar)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("4HPwATDgc/ABM", "expected 14 Base64 characters"),
        ("4HPwATDgc/ABMAA", "expected 14 Base64 characters"),
        ("4HPwATDgc/AB!A", "not Base64"),
        ("4HPwATDgc/ABMB", "stray bits"),
        ("//////////////", "stray bits"),
        (_b64_bits([1] * 80), "too many checkers"),
        (_b64_bits([1] * 16 + [0] * 50), "gives the player not on roll 16 checkers"),
        # the opponent on his 24 (the mover's 1) and the mover on his 1
        (_b64_bits([0] * 23 + [1, 0, 0] + [1, 0]), "both players"),
    ],
)
def test_parse_position_id_rejects_bad_ids(text: str, message: str) -> None:
    with pytest.raises(GnubgFormatError, match=message) as info:
        parse_position_id(text)
    assert isinstance(info.value, ValueError) and isinstance(info.value, NardyError)


def test_parse_position_id_rejects_non_strings() -> None:
    with pytest.raises(GnubgFormatError, match="must be a string"):
        parse_position_id(12345)  # type: ignore[arg-type]


def test_position_id_rejects_bad_positions() -> None:
    points, bar, _ = _nardy(START, START, (0, 0))
    with pytest.raises(GnubgFormatError, match="24 integers"):
        position_id(points[:23], bar)
    with pytest.raises(GnubgFormatError, match="at most 15"):
        position_id([16] + [0] * 23, [0, 0])
    with pytest.raises(GnubgFormatError, match="at most 15"):
        position_id(points, [0, 1])
    with pytest.raises(GnubgFormatError, match="negative"):
        position_id([0] * 24, [-1, 0])
    with pytest.raises(GnubgFormatError, match="exactly 15"):
        position_id(points, bar, [1, 0])
    with pytest.raises(GnubgFormatError, match="integers only"):
        position_id([0.5] + [0] * 23, [0, 0])  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------
# Match ID: pure tests
# ------------------------------------------------------------------------------------------------

# The manual's example: "score is 2-4 in a 9 point match with player 0 holding a 2-cube, and
# player 1 has just rolled 52" -> QYkqASAAIAAA (written before the Jacoby bit existed: bit 66 is 0).
MANUAL_EXAMPLE = MatchState(
    cube_value=2,
    cube_owner=0,
    player_on_roll=1,
    crawford=False,
    game_state=GameState.PLAYING,
    turn=1,
    double_offered=False,
    resigned=0,
    dice=(5, 2),
    match_length=9,
    score=(2, 4),
    jacoby=True,
)

# IDs printed by gnubg 1.07 itself, with what its board showed at the time.
GNUBG_OBSERVED = {
    # 9-point match, opening: player 1 ("root") rolled 63; match play => bit 66 set.
    "cAkvAQAAAAAE": MatchState(player_on_roll=1, turn=1, dice=(6, 3), match_length=9),
    # money game, Jacoby on (gnubg's default), player 1 rolled 54.
    "cIkSAAAAAAAA": MatchState(player_on_roll=1, turn=1, dice=(5, 4), jacoby=True),
    # money game, Jacoby on, player 0 rolled 42.
    "MAEKAAAAAAAA": MatchState(player_on_roll=0, turn=0, dice=(4, 2), jacoby=True),
    # "set jacoby off; new session": player 1 rolled 41; bit 66 set (no Jacoby).
    "cAkGAAAAAAAE": MatchState(player_on_roll=1, turn=1, dice=(4, 1), jacoby=False),
    # "set jacoby on; new session": player 1 rolled 42; bit 66 clear.
    "cAkKAAAAAAAA": MatchState(player_on_roll=1, turn=1, dice=(4, 2), jacoby=True),
    # "new match 7" (Jacoby setting irrelevant): player 0 rolled 62; bit 66 set.
    "MAHrAAAAAAAE": MatchState(player_on_roll=0, turn=0, dice=(6, 2), match_length=7),
    # After importing a 5-point match whose last game was resigned (gammon): Bob 5 - Alice 1.
    "cEugABAAKAAE": MatchState(
        player_on_roll=1,
        turn=1,
        game_state=GameState.RESIGNED,
        resigned=2,
        match_length=5,
        score=(1, 5),
    ),
    # Player 1 owns a 2-cube at 0-1 of a 5-point match, player 1 to act, no dice yet.
    "UQmgAAAACAAE": MatchState(
        cube_value=2, cube_owner=1, player_on_roll=1, turn=1, match_length=5, score=(0, 1)
    ),
}


def test_manual_match_id_example() -> None:
    assert match_id(MANUAL_EXAMPLE) == "QYkqASAAIAAA"
    assert parse_match_id("QYkqASAAIAAA") == MANUAL_EXAMPLE
    key = base64.b64decode("QYkqASAAIAAA")
    # "In little endian the bytes looks like: 0x41 0x89 0x2A 0x01 0x20 0x00 0x20 0x00 0x00"
    assert key.hex(" ").upper() == "41 89 2A 01 20 00 20 00 00"


def test_manual_example_without_jacoby_sets_bit_66() -> None:
    state = MatchState(**{**_fields(MANUAL_EXAMPLE), "jacoby": False})
    assert match_id(state) == "QYkqASAAIAAE"


def _fields(state: MatchState) -> dict[str, Any]:
    return {name: getattr(state, name) for name in MatchState.__slots__}


@pytest.mark.parametrize("text", sorted(GNUBG_OBSERVED))
def test_match_ids_printed_by_gnubg(text: str) -> None:
    assert parse_match_id(text) == GNUBG_OBSERVED[text]
    assert match_id(GNUBG_OBSERVED[text]) == text


@st.composite
def _match_states(draw: st.DrawFn) -> MatchState:
    rolled = draw(st.booleans())
    return MatchState(
        cube_value=1 << draw(st.integers(0, 15)),
        cube_owner=draw(st.sampled_from([None, 0, 1])),
        player_on_roll=draw(st.integers(0, 1)),
        crawford=draw(st.booleans()),
        game_state=draw(st.sampled_from(list(GameState))),
        turn=draw(st.integers(0, 1)),
        double_offered=draw(st.booleans()),
        resigned=draw(st.integers(0, 3)),
        dice=(draw(st.integers(1, 6)), draw(st.integers(1, 6))) if rolled else (0, 0),
        match_length=draw(st.integers(0, 32767)),
        score=(draw(st.integers(0, 32767)), draw(st.integers(0, 32767))),
        jacoby=draw(st.booleans()),
    )


@settings(max_examples=300)
@given(_match_states())
def test_match_id_round_trips(state: MatchState) -> None:
    text = match_id(state)
    assert len(text) == 12
    assert parse_match_id(text) == state


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("QYkqASAAIAA", "expected 12"),
        ("QYkqASAAIA-A", "not Base64"),
        ("QYkqASAAIAAI", "unused bits"),
        (_with_field("QYkqASAAIAAA", 4, 2, 2), "cube owner"),
        (_with_field("QYkqASAAIAAA", 8, 3, 5), "game state 5"),
        (_with_field("QYkqASAAIAAA", 8, 3, 7), "game state 7"),
        (_with_field("QYkqASAAIAAA", 15, 3, 7), "die value 7"),
        (_with_field("QYkqASAAIAAA", 18, 3, 0), "both 0"),
    ],
)
def test_parse_match_id_rejects_bad_ids(text: str, message: str) -> None:
    with pytest.raises(GnubgFormatError, match=message):
        parse_match_id(text)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"cube_value": 3}, "power of two"),
        ({"cube_value": 1 << 16}, "power of two"),
        ({"cube_owner": 2}, "cube_owner"),
        ({"player_on_roll": 2}, "player_on_roll"),
        ({"turn": -1}, "turn"),
        ({"resigned": 4}, "resigned"),
        ({"game_state": 5}, "game_state"),
        ({"dice": (0, 3)}, "both 0"),
        ({"dice": (7, 1)}, r"dice\[0\]"),
        ({"match_length": 32768}, "match_length"),
        ({"score": (1, -1)}, r"score\[1\]"),
        ({"crawford": 1}, "bool"),
    ],
)
def test_match_state_validates(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(GnubgFormatError, match=message):
        MatchState(**changes)


def test_match_state_accepts_plain_int_game_state() -> None:
    state = MatchState(game_state=4)  # type: ignore[arg-type]
    assert state.game_state is GameState.DROPPED


# ------------------------------------------------------------------------------------------------
# .mat: pure tests
# ------------------------------------------------------------------------------------------------


def _sample_record() -> MatchRecord:
    """A 5-point match: a drop, a take and a redouble-drop, a drop, a resignation (gnubg-legal)."""
    roll, double, take, drop = MatAction.roll, MatAction.double, MatAction.take, MatAction.drop
    return MatchRecord(
        players=("Alice", "Bob"),
        match_length=5,
        games=[
            MatGame(
                (0, 0),
                [
                    roll(0, (3, 1), "8/5 6/5"),
                    roll(1, (5, 2), "13/8 13/11"),
                    roll(0, (6, 4), "24/18 13/9"),
                    double(1, 2),
                    drop(0),
                ],
                winner=1,
                points=1,
            ),
            MatGame(
                (0, 1),
                [
                    roll(1, (4, 2), "8/4 6/4"),
                    double(0, 2),
                    take(1),
                    roll(0, (6, 1), "13/7 8/7"),
                    roll(1, (6, 3), "13/7 13/10"),
                    roll(0, (5, 5), "13/8(2) 8/3(2)"),
                    double(1, 4),
                    drop(0),
                ],
                winner=1,
                points=2,
            ),
            MatGame(
                (0, 3),
                [
                    roll(0, (6, 5), "24/18 18/13"),
                    roll(1, (2, 1), "13/11 6/5"),
                    double(0, 2),
                    drop(1),
                ],
                winner=0,
                points=1,
            ),
            MatGame(
                (1, 3),
                [roll(1, (3, 1), "8/5 6/5"), roll(0, (4, 2), "8/4 6/4")],
                winner=1,
                points=2,
            ),
        ],
    )


SAMPLE_MAT = """\
 5 point match

 Game 1
 Alice : 0                      Bob : 0
  1) 31: 8/5 6/5                 52: 13/8 13/11
  2) 64: 24/18 13/9               Doubles => 2
  3)  Drops                       Wins 1 point

 Game 2
 Alice : 0                      Bob : 1
  1)                             42: 8/4 6/4
  2)  Doubles => 2                Takes
  3) 61: 13/7 8/7                63: 13/7 13/10
  4) 55: 13/8 13/8 8/3 8/3        Doubles => 4
  5)  Drops                       Wins 2 points

 Game 3
 Alice : 0                      Bob : 3
  1) 65: 24/18 18/13             21: 13/11 6/5
  2)  Doubles => 2                Drops
      Wins 1 point

 Game 4
 Alice : 1                      Bob : 3
  1)                             31: 8/5 6/5
  2) 42: 8/4 6/4                  Wins 2 points

"""


def test_write_mat_uses_gnubgs_layout() -> None:
    assert write_mat(_sample_record()) == SAMPLE_MAT


def test_mat_round_trip() -> None:
    record = _sample_record()
    assert parse_mat(write_mat(record)) == record
    assert record.final_score == (1, 5)


def test_mat_round_trip_money_session_tags_and_unfinished_game() -> None:
    record = MatchRecord(
        players=("White Player", "Black"),
        match_length=0,
        tags=(("Site", "nardy"), ("Jacoby", "On")),
        games=(
            MatGame(
                (0, 0),
                (
                    MatAction.roll(1, (1, 3), "bar/24* 6/off"),
                    MatAction.roll(0, (6, 6), "bar/19 bar/19 19/13 19/13"),
                    MatAction.roll(1, (6, 5)),
                ),
            ),
        ),
    )
    text = write_mat(record)
    assert text.startswith('; [Site "nardy"]\n; [Jacoby "On"]\n\n 0 point match\n')
    assert "  1)                             31: 25/24* 6/0" in text
    assert "  2) 66: 25/19 25/19 19/13 19/13 65:" in text
    assert parse_mat(text) == record
    assert record.final_score == (0, 0)


def test_long_left_entry_keeps_a_separating_blank() -> None:
    game = MatGame(
        (0, 0),
        [
            MatAction.roll(0, (2, 2), "25/23* 15/13* 13/11 8/6"),
            MatAction.roll(1, (3, 2), "25/23 25/22"),
        ],
    )
    record = MatchRecord(("a", "b"), 3, [game])
    text = write_mat(record)
    assert "  1) 22: 25/23* 15/13* 13/11 8/6 32: 25/23 25/22" in text
    assert parse_mat(text) == record


# A 3-point match played by gnubg 1.07 against itself and exported with "export match mat"
# (trailing blanks removed).
GNUBG_EXPORT = """\
; [EventDate "2026.11.29"]

 3 point match

 Game 1
 gnubg : 0                      root : 0
  1) 65: 24/18 18/13             61: 13/7 8/7
  2) 31: 8/5 6/5                 51: 13/8 24/23
  3) 33: 13/10 13/10 10/7 10/7   21: 23/22 24/22
  4) 44: 24/20 20/16 13/9 13/9   54: 13/9* 9/4
  5)  Doubles => 2                Drops
      Wins 1 point

 Game 2
 gnubg : 1                      root : 0
  1)                             42: 8/4 6/4
  2) 32: 13/10 24/22              Doubles => 2
  3)  Takes                      32: 6/3* 3/1*
  4) 54: 25/20                   31: 6/5* 8/5
  5) 51: 25/24*                  54: 25/20 24/20
  6) 33: 25/22 13/10 6/3 6/3     42: 13/11 8/4
  7) 65: 24/18 18/13             22: 13/11 13/11 5/3* 5/3
  8) 31: 25/24 13/10             54: 24/20 11/6
  9) 66: 24/18 13/7 13/7 13/7    65: 13/8 13/7*
 10) 61: 25/24 24/18*            33:
 11) 54: 10/6 18/13              11: 25/24 11/10 8/7 6/5
 12) 32: 7/4 6/4                 61: 20/14 14/13
 13) 62: 13/7 8/6                43: 11/8 13/9
 14) 32: 10/7 10/8               32: 4/2 8/5
 15) 43: 7/4 7/3                 51: 20/15 9/8
 16) 55: 7/2 7/2 6/1* 6/1        65: 25/20 8/2
 17) 64: 8/2 8/4                 52: 10/5 5/3
 18) 22: 8/6 6/4 6/4 6/4         31: 7/6 15/12
 19) 41: 1/0 4/0                 22: 12/10 10/8 8/6 6/4
 20) 32: 3/0 2/0                 62: 20/14 14/12
 21) 21: 2/0 1/0                 43: 20/16 12/9
 22) 53: 4/0 3/0                 42: 16/14 14/10
 23) 65: 4/0 4/0                 21: 9/7 7/6
 24) 64: 4/0 4/0
      Wins 4 points
"""


def test_parse_gnubg_export() -> None:
    record = parse_mat(GNUBG_EXPORT)
    assert record.players == ("gnubg", "root")
    assert record.match_length == 3
    assert record.tags == (("EventDate", "2026.11.29"),)
    assert [(g.score_before, g.winner, g.points) for g in record.games] == [
        ((0, 0), 0, 1),
        ((1, 0), 0, 4),
    ]
    assert record.final_score == (5, 0)
    game2 = record.games[1].actions
    assert game2[0] == MatAction.roll(1, (4, 2), "8/4 6/4")
    assert game2[2] == MatAction.double(1, 2) and game2[3] == MatAction.take(0)
    assert game2[5].moves == (MatMove(25, 20),)
    assert game2[18] == MatAction(1, "roll", (3, 3))  # "33:" with no move
    assert game2[-1].moves == (MatMove(4, 0), MatMove(4, 0))


def test_write_reproduces_gnubg_export() -> None:
    assert write_mat(parse_mat(GNUBG_EXPORT)) == GNUBG_EXPORT + "\n"


def test_parse_tolerates_trailing_blanks_and_crlf() -> None:
    noisy = "\r\n".join(line + "  " for line in GNUBG_EXPORT.splitlines())
    assert parse_mat(noisy) == parse_mat(GNUBG_EXPORT)


def test_parse_accepts_nardy_style_moves_and_match_suffix() -> None:
    text = SAMPLE_MAT.replace("13/8 13/8 8/3 8/3", "13/8(2) 8/3(2)").replace(
        "Wins 2 points\n\n Game 3", "Wins 2 points and the match\n\n Game 3"
    )
    assert parse_mat(text) == _sample_record()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (" 5 point match", " five point match", "before the first game"),
        (" Game 2", " Game 3", "expected Game 2"),
        ("Bob : 1", "Bob : 2", "starts at score 0-2"),
        (" Alice : 0                      Bob : 1", " Alice 0 Bob 1", "score line"),
        ("52: 13/8 13/11", "52: 13/8 13/11 6/1", "at most 2 steps"),
        ("52: 13/8 13/11", "52: 13/8 13/x", "bad play text"),
        ("52: 13/8 13/11", "52: 13/3", "one die"),
        (
            "  2)  Doubles => 2                Takes",
            "  2)  Doubles => 3                Takes",
            "2, 4",
        ),
        ("  3)  Drops                       Wins 1 point", "  3)  Takes", "unfinished"),
        (
            "  3)  Drops                       Wins 1 point",
            "  3)  Drops                       52: 13/8 13/11\n      Wins 1 point",
            "nothing may follow",
        ),
        ("  2)  Doubles => 2                Takes", "  2)  Takes", "other player's double"),
        ("Wins 1 point\n\n Game 2", "Wins 2 points\n\n Game 2", "wins 1 point"),
        ("  1) 31: 8/5 6/5", "  1) 31: 8/5 6/5 Hello", "cannot read|bad play"),
        ("      Wins 1 point", "      Wins one point", "cannot read"),
    ],
)
def test_parse_mat_errors(old: str, new: str, message: str) -> None:
    assert old in SAMPLE_MAT
    with pytest.raises(GnubgFormatError, match=message):
        parse_mat(SAMPLE_MAT.replace(old, new, 1))


def test_parse_mat_errors_without_games() -> None:
    with pytest.raises(GnubgFormatError, match="no 'N point match'"):
        parse_mat("")
    with pytest.raises(GnubgFormatError, match="no game"):
        parse_mat(" 3 point match\n")
    with pytest.raises(GnubgFormatError, match="score line"):
        parse_mat(" 3 point match\n\n Game 1\n")


def test_record_validation() -> None:
    roll = MatAction.roll
    with pytest.raises(GnubgFormatError, match="':'"):
        MatchRecord(("a:b", "c"), 3, [MatGame((0, 0))])
    with pytest.raises(GnubgFormatError, match="31 characters"):
        MatchRecord(("x" * 32, "c"), 3, [MatGame((0, 0))])
    with pytest.raises(GnubgFormatError, match="non-empty"):
        MatchRecord((" a", "c"), 3, [MatGame((0, 0))])
    with pytest.raises(GnubgFormatError, match="unfinished"):
        MatchRecord(("a", "b"), 3, [MatGame((0, 0)), MatGame((0, 0))])
    with pytest.raises(GnubgFormatError, match="match_length"):
        MatchRecord(("a", "b"), -1, [MatGame((0, 0))])
    with pytest.raises(GnubgFormatError, match="at least one game"):
        write_mat(MatchRecord(("a", "b"), 3, []))
    with pytest.raises(GnubgFormatError, match="points 0"):
        MatGame((0, 0), [], None, 2)
    with pytest.raises(GnubgFormatError, match="at least 1 point"):
        MatGame((0, 0), [], 1, 0)
    with pytest.raises(GnubgFormatError, match="followed by Takes or Drops"):
        MatGame((0, 0), [MatAction.double(0, 2), roll(0, (3, 1), "8/5 6/5")])
    with pytest.raises(GnubgFormatError, match="other player's double"):
        MatGame((0, 0), [MatAction.double(0, 2), MatAction.take(0)])
    with pytest.raises(GnubgFormatError, match="two dice"):
        roll(0, (7, 1))
    with pytest.raises(GnubgFormatError, match="bear-off"):
        roll(0, (6, 5), "8/off")
    with pytest.raises(GnubgFormatError, match="25 >= from > to"):
        MatMove(5, 7)


def test_play_conversions() -> None:
    moves = mat_play_from_text("bar/20* 24/18/13 6/off 8/5(2)")
    assert mat_play_to_text(moves) == "25/20* 24/18 18/13 6/0 8/5 8/5"
    assert mat_moves_from_steps(parse_steps("bar/22 13/11*")) == (
        MatMove(25, 22),
        MatMove(13, 11, True),
    )
    assert MatAction.roll(1, (2, 6), "13/11 13/7").text == "62: 13/11 13/7"
    assert MatAction.parse(0, "Doubles => 8") == MatAction.double(0, 8)
    assert MatAction.parse(0, "33:").text == "33:"
    with pytest.raises(GnubgFormatError, match=r"unknown \.mat entry"):
        MatAction.parse(0, "Beavers => 4")


# ------------------------------------------------------------------------------------------------
# Cross-checks against the real gnubg (skipped when it is not installed)
# ------------------------------------------------------------------------------------------------


def _find_gnubg() -> str | None:
    configured = os.environ.get("NARDY_GNUBG")
    if configured:
        return shutil.which(configured)
    return shutil.which("gnubg") or (
        "/usr/games/gnubg" if os.access("/usr/games/gnubg", os.X_OK) else None
    )


GNUBG = _find_gnubg()
_gnubg_found = pytest.mark.skipif(
    GNUBG is None,
    reason="gnubg binary not found (install the Debian package: apt-get install -y gnubg; "
    "or set NARDY_GNUBG)",
)


def needs_gnubg(test: Any) -> Any:
    """A cross-check against the gnubg binary: slow (a gnubg process each), skipped without it."""
    return pytest.mark.slow(_gnubg_found(test))


def _run_gnubg(args: list[str], home: Path, stdin: str | None = None) -> str:
    assert GNUBG is not None
    env = {**os.environ, "HOME": str(home), "LANG": "C", "LC_ALL": "C"}
    done = subprocess.run(
        [GNUBG, "-t", "-q", "-r", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    return output


def _run_gnubg_python(script: str, tmp_path: Path) -> str:
    path = tmp_path / "script.py"
    path.write_text(script)
    output = _run_gnubg(["-p", str(path)], tmp_path)
    if "@@READY" not in output:
        pytest.skip(f"this gnubg build cannot run Python scripts (-p): {output[-500:]}")
    return output


def _random_positions(
    count: int,
) -> list[tuple[str, dict[int, int], dict[int, int], tuple[int, int]]]:
    rng = random.Random(20240131)
    found: list[tuple[str, dict[int, int], dict[int, int], tuple[int, int]]] = []
    while len(found) < count:
        mover: dict[int, int] = {}
        opponent: dict[int, int] = {}
        taken: set[int] = set()  # mover-coordinate points in use
        bar = [rng.choice([0, 0, 0, 1, 2]), rng.choice([0, 0, 0, 1, 3])]
        for side, target in ((mover, 15 - bar[0]), (opponent, 15 - bar[1])):
            left = rng.randint(max(0, target - 6), target)
            while left:
                p = rng.randint(1, 24)
                mover_point = p if side is mover else 25 - p
                if mover_point in taken and p not in side:
                    continue
                n = rng.randint(1, left)
                side[p] = side.get(p, 0) + n
                taken.add(mover_point)
                left -= n
        found.append((f"random {len(found)}", mover, opponent, (bar[0], bar[1])))
    return found


@needs_gnubg
def test_gnubg_agrees_on_position_ids(tmp_path: Path) -> None:
    cases = POSITIONS + _random_positions(20)
    ids: list[tuple[str, list[list[int]]]] = []
    for _, mover, opponent, bar in cases:
        points, bars, off = _nardy(mover, opponent, bar)
        ids.append((position_id(points, bars, off), _gnubg_board(mover, opponent, bar)))
    script = f"""
import gnubg, json, sys
cases = json.loads({json.dumps(json.dumps(ids))})
gnubg.command("set player 0 human")
gnubg.command("set player 1 human")
gnubg.command("new game")
gnubg.command("set player 0 name opp")
gnubg.command("set player 1 name mover")
print("@@READY"); sys.stdout.flush()
for pid, board in cases:
    gnubg.command("set turn 1")
    print("@@BEGIN " + pid); sys.stdout.flush()
    gnubg.command("set board " + pid)
    result = {{
        "decoded": [list(side) for side in gnubg.positionfromid(pid)],
        "encoded": gnubg.positionid((tuple(board[0]), tuple(board[1]))),
        "current": [list(side) for side in gnubg.board()],
    }}
    sys.stdout.flush()
    gnubg.command("show pipcount")
    sys.stdout.flush()
    print("@@RESULT " + json.dumps(result)); sys.stdout.flush()
"""
    output = _run_gnubg_python(script, tmp_path)
    blocks = output.split("@@BEGIN ")[1:]
    assert len(blocks) == len(cases)
    for (name, mover, opponent, bar), (pid, board), block in zip(cases, ids, blocks, strict=True):
        assert block.startswith(pid), name
        assert "Illegal position" not in block, (name, block)
        result = json.loads(block.split("@@RESULT ", 1)[1].splitlines()[0])
        assert result["decoded"] == board, name  # gnubg reads our ID as the intended board
        assert result["encoded"] == pid, name  # gnubg writes that board as our ID
        assert result["current"] == board, name  # and "set board" accepted it
        assert f"Position ID: {pid}" in block, name
        pips = re.search(r"The pip counts are: (\w+) (\d+), (\w+) (\d+)\.", block)
        assert pips is not None, block
        counts = {pips.group(1): int(pips.group(2)), pips.group(3): int(pips.group(4))}
        # The player on roll ("mover", set with "set turn 1") has the mover's checkers.
        assert counts == {"mover": _pips(mover, bar[0]), "opp": _pips(opponent, bar[1])}, name


@needs_gnubg
def test_gnubg_agrees_on_match_ids(tmp_path: Path) -> None:
    # gnubg's "set matchid" needs a game in progress, drops offered doubles and resignations and
    # refuses very long matches, so only ordinary playing states are cross-checked here (the pure
    # tests cover the rest); gnubg writes the higher die first.
    states = [
        MANUAL_EXAMPLE,
        MatchState(),
        MatchState(jacoby=True, dice=(3, 1)),
        MatchState(cube_value=4, cube_owner=1, dice=(6, 6), score=(12, 3), jacoby=True),
        MatchState(cube_value=4, cube_owner=1, dice=(6, 6), score=(12, 3), jacoby=False),
        MatchState(
            match_length=5, score=(4, 2), crawford=True, player_on_roll=1, turn=1, dice=(4, 2)
        ),
        MatchState(match_length=5, score=(4, 2), player_on_roll=0, turn=0, dice=(2, 1)),
        MatchState(cube_value=64, match_length=25, score=(20, 24), dice=(5, 2)),
        MatchState(
            cube_value=2, cube_owner=0, match_length=7, score=(3, 5), player_on_roll=1, turn=1
        ),
        MatchState(cube_value=4096, cube_owner=1, match_length=63, score=(62, 61)),
    ]
    cases = [[match_id(s), s.match_length] for s in states]
    script = f"""
import gnubg, json, sys
cases = json.loads({json.dumps(json.dumps(cases))})
gnubg.command("set player 0 human")
gnubg.command("set player 1 human")
print("@@READY"); sys.stdout.flush()
for mid, length in cases:
    gnubg.command("new match %d" % length if length else "new session")
    gnubg.command("set matchid " + mid)
    print("@@RESULT " + json.dumps([mid, gnubg.matchid(), gnubg.cubeinfo(), gnubg.posinfo()]))
    sys.stdout.flush()
"""
    output = _run_gnubg_python(script, tmp_path)
    results = [json.loads(line[9:]) for line in output.splitlines() if line.startswith("@@RESULT ")]
    assert len(results) == len(states)
    for state, (mid, echoed, cube, pos) in zip(states, results, strict=True):
        assert mid == match_id(state)
        assert echoed == mid, (state, echoed)
        assert cube["cube"] == state.cube_value
        assert cube["cubeowner"] == (-1 if state.cube_owner is None else state.cube_owner)
        assert cube["move"] == state.player_on_roll
        assert cube["matchto"] == state.match_length
        if state.match_length:  # gnubg keeps money-session scores out of its cube info
            assert tuple(cube["score"]) == state.score
        assert cube["crawford"] == int(state.crawford)
        assert cube["jacoby"] == int(state.jacoby and state.match_length == 0)
        assert sorted(pos["dice"]) == sorted(state.dice)
        assert pos["turn"] == state.turn
        assert pos["gamestate"] == int(state.game_state)


def _gnubg_import_output(text: str, tmp_path: Path) -> tuple[str, str]:
    """gnubg's console output for ``import mat``, ``show score``, and its own re-export."""
    source = tmp_path / "ours.mat"
    source.write_text(text)
    exported = tmp_path / "theirs.mat"
    commands = f"import mat {source}\nshow score\nexport match mat {exported}\n"
    output = _run_gnubg([], tmp_path, stdin=commands)
    return output, exported.read_text()


def _gnubg_import(text: str, tmp_path: Path) -> tuple[str, MatchRecord]:
    output, exported = _gnubg_import_output(text, tmp_path)
    assert "WARNING" not in output and "Invalid" not in output, output[-3000:]
    return output, parse_mat(exported)


def _score_reported(output: str) -> tuple[dict[str, int], int]:
    found = re.findall(r"The score \(after (\d+) games?\) is: (\S+) (\d+), (\S+) (\d+)", output)
    assert found, output[-3000:]
    games, name1, score1, name2, score2 = found[-1]
    return {name1: int(score1), name2: int(score2)}, int(games)


def _play_key(moves: Sequence[MatMove]) -> tuple[list[tuple[int, int]], list[int]]:
    # gnubg re-orders the steps of a roll and, when two steps land on the hit blot's point,
    # may put the '*' on the other one: compare the steps and the points where hits happened.
    return sorted((m.src, m.dst) for m in moves), sorted(m.dst for m in moves if m.hit)


def _semantic(record: MatchRecord) -> list[Any]:
    """What must survive gnubg's import and export."""
    return [
        (
            game.score_before,
            game.winner,
            game.points,
            [(a.player, a.kind, a.dice, _play_key(a.moves), a.cube) for a in game.actions],
        )
        for game in record.games
    ]


@needs_gnubg
def test_gnubg_imports_our_mat_export(tmp_path: Path) -> None:
    record = _sample_record()
    output, theirs = _gnubg_import(write_mat(record), tmp_path)
    scores, games = _score_reported(output)
    assert games == len(record.games)
    assert (
        scores
        == {"Alice": 1, "Bob": 5}
        == dict(zip(record.players, record.final_score, strict=True))
    )
    assert theirs.players == record.players and theirs.match_length == record.match_length
    assert _semantic(theirs) == _semantic(record)


@needs_gnubg
def test_gnubg_reimports_a_rewritten_gnubg_match(tmp_path: Path) -> None:
    record = parse_mat(GNUBG_EXPORT)
    output, theirs = _gnubg_import(write_mat(record), tmp_path)
    scores, _ = _score_reported(output)
    assert scores == {"gnubg": 5, "root": 0}
    assert _semantic(theirs) == _semantic(record)


def _kernel_match(seed: int, games: int, match_length: int) -> MatchRecord:
    """Random backgammon games played with nardy's own move generator, as a cubeless .mat match."""
    from nardy.core import load_variant

    variant = load_variant("backgammon")
    rng = random.Random(seed)
    score = [0, 0]
    records = []
    for _ in range(games):
        position = variant.start_position()
        actions = []
        while True:  # the opening throw: no doubles, the higher die starts
            dice = (rng.randint(1, 6), rng.randint(1, 6))
            if dice[0] != dice[1]:
                break
        player = rng.randint(0, 1)
        score_before = (score[0], score[1])
        while True:
            steps = dice if dice[0] != dice[1] else (dice[0],) * 4
            plays = variant.legal_plays(position, steps)
            play = rng.choice(list(plays))
            actions.append(MatAction.roll(player, dice, mat_moves_from_steps(play.steps)))
            after = play.result
            if variant.is_finished(after):
                loser = variant.loser_side(after, 1)
                points = variant.game_points(loser, jacoby=False)
                score[player] += points
                records.append(MatGame(score_before, actions, player, points))
                break
            position = variant.flip(after)
            player = 1 - player
            dice = (rng.randint(1, 6), rng.randint(1, 6))
    return MatchRecord(("nardyA", "nardyB"), match_length, records)


@needs_gnubg
def test_gnubg_replays_games_of_the_nardy_move_generator(tmp_path: Path) -> None:
    # Every play of nardy's backgammon move generator must be legal for gnubg, and gnubg must
    # score the games (single/gammon/backgammon) as nardy does.
    record = _kernel_match(seed=7, games=12, match_length=63)  # no Crawford game: 36 < 62
    output, theirs = _gnubg_import(write_mat(record), tmp_path)
    scores, games = _score_reported(output)
    assert games == len(record.games)
    assert scores == dict(zip(record.players, record.final_score, strict=True))
    assert _semantic(theirs) == _semantic(record)


@needs_gnubg
def test_gnubg_import_flags_illegal_moves(tmp_path: Path) -> None:
    # The oracle check used above: gnubg warns about a move it cannot make (Alice's 7 point,
    # Bob's 18, is made, so Bob's 24/18 is blocked).
    text = SAMPLE_MAT.replace("63: 13/7 13/10", "63: 24/18 13/10")
    output, _ = _gnubg_import_output(text, tmp_path)
    assert "Invalid move" in output


def _cli_match(tmp_path: Path, seed: int) -> tuple[MatchRecord, dict[str, Any]]:
    """A 7-point match of the built-in bots through ``nardy play --match 7 --mat``."""
    from click.testing import CliRunner

    from nardy.cli import cli

    mat = tmp_path / "match.mat"
    args = ["play", "--variant", "backgammon", "--bots", "heuristic,random", "--match", "7"]
    args += ["--games", "1", "--seed", str(seed), "--mat", str(mat), "--json", "--quiet"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return parse_mat(mat.read_text()), json.loads(result.output)


def test_cli_match_export_round_trips(tmp_path: Path) -> None:
    record, _ = _cli_match(tmp_path, seed=1)
    assert record.match_length == 7 and max(record.final_score) >= 7
    assert parse_mat(write_mat(record)) == record
    # The games' points add up to the final score (MatchRecord also checks each game's start score).
    assert sum(g.points for g in record.games) == sum(record.final_score)


@needs_gnubg
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_gnubg_imports_a_cli_match_and_agrees_on_the_score(tmp_path: Path, seed: int) -> None:
    record, _ = _cli_match(tmp_path, seed)
    output, theirs = _gnubg_import(write_mat(record), tmp_path)
    scores, games = _score_reported(output)
    assert games == len(record.games)
    assert scores == dict(zip(record.players, record.final_score, strict=True))
    assert _semantic(theirs) == _semantic(record)
