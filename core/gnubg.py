"""GNU Backgammon interchange formats: Position ID, Match ID and the Jellyfish ``.mat`` match file.

Everything here is written from the published descriptions (the gnubg manual, sections "A technical
description of the Position ID" and "... of the Match ID",
https://www.gnu.org/software/gnubg/manual/) and from the behaviour of gnubg 1.07 itself (Debian
package ``gnubg``), which the tests use as an oracle when it is installed. No gnubg source code was
used.

Position ID
    The 80-bit *key*: for each player, for his points 1…24 (in his own coordinates) and then his
    bar, as many ``1`` bits as he has checkers there followed by one ``0``; the player **not on
    roll comes first**, then the player on roll; padded with ``0`` to 80 bits; packed little-endian
    (bit ``i`` of the string is bit ``i % 8`` of byte ``i // 8``). The ID is the standard Base64 of
    the 10 bytes without the ``==`` padding (14 characters). The opening position is
    ``4HPwATDgc/ABMA``. (The online copy of the manual still says "player on roll first"; the
    manual shipped with gnubg 1.07 says "player not on roll first", and that is what gnubg does:
    ``set board`` followed by ``show pipcount`` confirms it.)

    Here the position is given in the nardy position JSON form, seen by the mover (= the player on
    roll): ``points[i]`` is the count on the mover's point ``i + 1`` (positive: mover, negative:
    opponent; the opponent's own point ``q`` is the mover's ``25 - q``),
    ``bar = (mover, opponent)``. Borne-off checkers are not encoded; they are N (15, or the
    hypergammon count, RULES.md §3.11) minus the checkers on board and bar.

Match ID
    The 72-bit *match key* (9 bytes, packed little-endian like the position key, every field stored
    least significant bit first), Base64 without padding (12 characters). Bit offsets (0-based):
    0-3 log2(cube value), 4-5 cube owner (0, 1, or 3 = centred), 6 player on roll ("dice owner"),
    7 Crawford, 8-10 game state, 11 turn (the player who must act now), 12 double offered, 13-14
    resignation offered (0 none, 1 single, 2 gammon, 3 backgammon), 15-17 die 1, 18-20 die 2 (0 =
    not rolled), 21-35 match length (0 = money), 36-50 score of player 0, 51-65 score of player 1,
    66 "no Jacoby" (gnubg's extended Match ID, the default build since 2011; the manual lists
    only bits 0-65), 67-71 zero. Bit 66 is 0 when the Jacoby rule is in effect and 1 when it is
    not; gnubg 1.07 writes 1 in match play and in money play without Jacoby, and ``set matchid``
    takes the money-play Jacoby rule from it (tested). An ID without the extension (bit 66 = 0)
    therefore reads as "Jacoby on", which gnubg ignores in match play. The manual's example:
    score 2-4 in a 9-point match, player 0 owns a 2-cube, player 1 has rolled 52 ->
    ``QYkqASAAIAAA`` (decodes with ``jacoby=True``; with ``jacoby=False`` it is ``QYkqASAAIAAE``).

    gnubg's players 0 and 1 are board sides (0 = "O", drawn at the top; 1 = "X", at the bottom, the
    human's side by default). They are not "mover/opponent": a Position ID is always relative to
    the player on roll, the Match ID says which of players 0/1 that is.

Jellyfish ``.mat``, as gnubg 1.07 writes it (``export match mat FILE``) and reads it
(``import mat FILE``)::

    ; [EventDate "2024.01.31"]            optional header lines starting with ';'

     5 point match                        0 for a money session

     Game 1
     Alice : 0                      Bob : 0
      1) 31: 8/5 6/5                 52: 13/11 13/8
      2) 64: 24/18 13/9               Doubles => 2
      3)  Drops                       Wins 1 point

     Game 2
     Alice : 0                      Bob : 1
      1)                             42: 8/4 6/4
      2)  Doubles => 2                Takes
      3) 61: 13/7 8/7                63: 13/10 13/7
      4) 55: 13/8 13/8 8/3 8/3        Doubles => 4
      5)  Drops                       Wins 2 points

    * Player 0 (the first name) owns the left column, player 1 the right one. A numbered line is
      ``f"{n:3d}) "`` followed by player 0's action padded to 28 characters and player 1's action.
      The line number counts lines, not turns. A player-1 action goes on the current line if its
      right half is free, otherwise on a new line with an empty left half; a player-0 action always
      opens a new line.
    * Rolls are ``"52: "`` plus the moves, dice written higher first. Each move is **one step of
      one die** in the **mover's own coordinates**: ``13/8``; the bar is ``25`` (``25/20``), off is
      ``0`` (``6/0``), a hit is marked ``*`` (``13/7*``); a double writes four steps
      (``13/8 13/8 8/3 8/3``); a player who cannot move gets ``"62: "`` with nothing after it.
      gnubg's import also accepts combined moves (``24/13`` for a 65) but its export never writes
      them, nor ``bar``/``off``/``(2)``.
    * Cube actions are written with one leading space: ``" Doubles => 2"`` (the new cube value),
      ``" Takes"``, ``" Drops"``. Beavers are not part of the format as gnubg writes it.
    * The game result is ``" Wins 1 point"`` / ``" Wins N points"`` in the winner's column: on the
      current numbered line when the winner is player 1 and the right half is free, otherwise on an
      unnumbered line (5 spaces instead of the number). gnubg reads a ``Wins`` line that follows
      neither a drop nor the winner's last bear-off as a resignation worth those points. N is the
      cube times the game's value, also in a match where it is more than the winner needed (a
      4-cube gammon at 0-0 of 3 "Wins 8 points", the next score line 8-0): gnubg's export writes
      the game's points so, uncapped, and RULES.md §2.12 adds them so ("game results are added").
    * The score line is ``f" {name0} : {score0}"`` padded to 32 characters, then
      ``f"{name1} : {score1}"``; gnubg keeps at most 31 characters of a name. The Crawford game is
      not marked; gnubg derives it from the scores.
    * A game without a ``Wins`` line is unfinished (gnubg exports the game in progress that way).

:func:`write_mat` writes exactly this layout (without trailing blanks and header lines unless
given); :func:`parse_mat` reads it back, and reads gnubg's own exports.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Literal

from nardy.core.errors import InvalidPlayError, InvalidPositionError, NardyError
from nardy.core.notation import Step, parse_steps
from nardy.core.position import CHECKERS, Position

if TYPE_CHECKING:
    from nardy.core.variant import Variant

__all__ = [
    "Board",
    "GameState",
    "GnubgFormatError",
    "MatAction",
    "MatGame",
    "MatMove",
    "MatchRecord",
    "MatchState",
    "board_from_position",
    "board_from_position_id",
    "board_of_counts",
    "mat_moves_from_steps",
    "mat_play_from_text",
    "mat_play_to_text",
    "match_id",
    "nardy_steps_from_mat",
    "parse_mat",
    "parse_match_id",
    "parse_position_id",
    "parse_position_text",
    "position_from_board",
    "position_from_id",
    "position_id",
    "position_id_of",
    "write_mat",
]


class GnubgFormatError(NardyError, ValueError):
    """A gnubg Position ID, Match ID or ``.mat`` text (or the data to encode in one) is invalid."""


# --------------------------------------------------------------------------------------------------
# Bit strings and Base64
# --------------------------------------------------------------------------------------------------


def _pack_bits(bits: Sequence[int], nbytes: int) -> bytes:
    data = bytearray(nbytes)
    for index, bit in enumerate(bits):
        if bit:
            data[index // 8] |= 1 << (index % 8)
    return bytes(data)


def _unpack_bits(data: bytes) -> list[int]:
    return [(byte >> shift) & 1 for byte in data for shift in range(8)]


def _encode_b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii").rstrip("=")


def _decode_b64(text: object, nchars: int, nbytes: int, what: str) -> bytes:
    if not isinstance(text, str):
        raise GnubgFormatError(f"a gnubg {what} must be a string, not {type(text).__name__}")
    if len(text) != nchars:
        raise GnubgFormatError(
            f"malformed gnubg {what} {text!r}: expected {nchars} Base64 characters, got {len(text)}"
        )
    padding = "=" * (-nchars % 4)
    try:
        data = base64.b64decode(text + padding, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise GnubgFormatError(
            f"malformed gnubg {what} {text!r}: not Base64 (allowed: A-Z a-z 0-9 + /)"
        ) from exc
    if len(data) != nbytes or _encode_b64(data) != text:
        raise GnubgFormatError(f"malformed gnubg {what} {text!r}: stray bits in the last character")
    return data


# --------------------------------------------------------------------------------------------------
# Position ID
# --------------------------------------------------------------------------------------------------

Board = tuple[tuple[int, ...], tuple[int, ...]]
"""gnubg's board: (player not on roll, player on roll); 25 counts each: own points 1…24, bar."""


def _int_list(value: object, size: int, name: str) -> list[int]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or len(value) != size:
        raise GnubgFormatError(f"'{name}' must be a sequence of {size} integers")
    items = list(value)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        raise GnubgFormatError(f"'{name}' must hold integers only, got {items!r}")
    return items


def board_from_position(
    points: Sequence[int],
    bar: Sequence[int],
    off: Sequence[int] | None = None,
    checkers: int = CHECKERS,
) -> Board:
    """gnubg's two 25-count arrays for a nardy JSON position (mover = player on roll).

    ``checkers``: N of each side (15; hypergammon 1-3, RULES.md §3.11), checked against ``off``.
    """
    pts = _int_list(points, 24, "points")
    bars = _int_list(bar, 2, "bar")
    if bars[0] < 0 or bars[1] < 0:
        raise GnubgFormatError(f"bar counts must not be negative, got {bars!r}")
    opponent, mover = board_of_counts(pts, bars)
    counts = (sum(mover), sum(opponent))
    for side, name in ((0, "mover"), (1, "opponent")):
        if counts[side] > checkers:
            raise GnubgFormatError(
                f"the {name} has {counts[side]} checkers on the board and bar; at most {checkers}"
            )
    if off is not None:
        offs = _int_list(off, 2, "off")
        for side, name in ((0, "mover"), (1, "opponent")):
            if counts[side] + offs[side] != checkers:
                raise GnubgFormatError(
                    f"the {name} has {counts[side]} checkers on board and bar and "
                    f"{offs[side]} off; "
                    f"each side has exactly {checkers}"
                )
    return opponent, mover


def board_of_counts(points: Sequence[int], bar: Sequence[int]) -> Board:
    """:func:`board_from_position` of counts already known to be a position (a kernel
    ``Position``'s), without the checks of outside input: the conversion alone, in one place."""
    mover = (*(c if c > 0 else 0 for c in points), bar[0])
    # The opponent's own point q is the mover's 25 - q, i.e. index 24 - q of ``points``.
    opponent = (*(-points[24 - q] if points[24 - q] < 0 else 0 for q in range(1, 25)), bar[1])
    return opponent, mover


def position_from_board(board: Board) -> tuple[tuple[int, ...], tuple[int, int]]:
    """The nardy ``(points, bar)`` of gnubg's board (inverse of :func:`board_from_position`)."""
    opponent, mover = board
    points = [0] * 24
    for index in range(24):
        mine = mover[index]
        theirs = opponent[23 - index]  # opponent's point 24 - index is the mover's point index + 1
        if mine and theirs:
            raise GnubgFormatError(
                f"both players have checkers on the mover's point {index + 1} "
                f"({mine} of the mover's, {theirs} of the opponent's)"
            )
        points[index] = mine - theirs
    return tuple(points), (mover[24], opponent[24])


def position_id(
    points: Sequence[int],
    bar: Sequence[int],
    off: Sequence[int] | None = None,
    checkers: int = CHECKERS,
) -> str:
    """The gnubg Position ID (14 characters) of a position in the nardy JSON form.

    ``points``: 24 signed counts from the mover's point 1 (mover positive); ``bar``:
    (mover, opponent);
    ``off``: optional (mover, opponent) borne-off counts, checked to make ``checkers`` (N, 15 by
    default) per side if given. The mover is the player on roll. Raises :class:`GnubgFormatError`.
    """
    board = board_from_position(points, bar, off, checkers)
    bits: list[int] = []
    for side in board:
        for count in side:
            bits.extend([1] * count)
            bits.append(0)
    return _encode_b64(_pack_bits(bits, 10))


def position_id_of(position: Position) -> str:
    """The gnubg Position ID of a :class:`~nardy.core.position.Position` (mover on roll).

    Raises :class:`GnubgFormatError` for a position with a pinned checker (plakoto, RULES.md
    §3.12.2): gnubg's formats have no way to say that a point holds checkers of both sides.
    """
    if position.pinned:
        raise GnubgFormatError(
            "a gnubg Position ID cannot hold pinned checkers (plakoto): "
            f"{position.id()} pins on point(s) {', '.join(map(str, position.pinned))}"
        )
    return position_id(position.points, position.bar, position.off, position.checkers)


def board_from_position_id(text: str, checkers: int = CHECKERS) -> Board:
    """Decode a Position ID to gnubg's board (player not on roll first).

    Raises :class:`GnubgFormatError`.
    """
    bits = _unpack_bits(_decode_b64(text, 14, 10, "Position ID"))
    sides: list[tuple[int, ...]] = []
    pos = 0
    for _ in range(2):
        counts: list[int] = []
        for _ in range(25):
            count = 0
            while pos < len(bits) and bits[pos]:
                count += 1
                pos += 1
            if pos >= len(bits):
                raise GnubgFormatError(f"malformed gnubg Position ID {text!r}: too many checkers")
            pos += 1  # the terminating 0
            counts.append(count)
        sides.append(tuple(counts))
    if any(bits[pos:]):
        raise GnubgFormatError(f"malformed gnubg Position ID {text!r}: too many checkers")
    for side, name in zip(sides, ("player not on roll", "player on roll"), strict=True):
        if sum(side) > checkers:
            raise GnubgFormatError(
                f"gnubg Position ID {text!r} gives the {name} {sum(side)} checkers; "
                f"at most {checkers}"
            )
    return sides[0], sides[1]


def parse_position_id(
    text: str, checkers: int = CHECKERS
) -> tuple[tuple[int, ...], tuple[int, int]]:
    """Decode a Position ID to nardy ``(points, bar)`` seen by the player on roll.

    Borne-off counts are ``N - checkers on board and bar`` of each side (N = ``checkers``). Raises
    :class:`GnubgFormatError` for malformed IDs and for IDs that put both players on one point.
    """
    board = board_from_position_id(text, checkers)
    try:
        return position_from_board(board)
    except GnubgFormatError as exc:
        raise GnubgFormatError(f"gnubg Position ID {text!r}: {exc}") from None


def position_from_id(text: str, checkers: int = CHECKERS) -> Position:
    """Decode a Position ID to a :class:`~nardy.core.position.Position` (mover = player on roll);
    ``checkers`` is N of each side (15; 1-3 in hypergammon), which gives the borne-off counts."""
    points, bar = parse_position_id(text, checkers)
    mover = sum(c for c in points if c > 0) + bar[0]
    opponent = -sum(c for c in points if c < 0) + bar[1]
    return Position(points, bar, (checkers - mover, checkers - opponent))


# --------------------------------------------------------------------------------------------------
# Match ID
# --------------------------------------------------------------------------------------------------


def parse_position_text(text: str, variant: Variant) -> Position:
    """A position as a person pastes it: position JSON, a nardy position id, or for the backgammon
    family (opposite geometry) a gnubg Position ID, checked against ``variant``'s rules.

    One home for what ``nardy show|hint`` and the analysis board accept, so that a position one
    of them reads the others read too. Raises :class:`ValueError` with a one-line reason
    (:class:`InvalidPositionError`, :class:`GnubgFormatError` or a JSON error)."""
    stripped = text.strip()
    try:
        if stripped.startswith("{"):
            position = variant.position_from_json(json.loads(stripped))
        elif len(stripped) == 14 and variant.rules.geometry == "opposite":
            # A gnubg Position ID (14 Base64 characters; nardy's own ids are 27 or more).
            position = position_from_id(stripped, variant.checkers)
            variant.validate(position)
        else:
            position = variant.position_from_id(stripped)
    except RecursionError:
        raise InvalidPositionError("the JSON is nested too deeply") from None
    except ValueError as error:  # InvalidPositionError, GnubgFormatError, json.JSONDecodeError
        raise InvalidPositionError(" ".join(str(error).split())) from None
    return position


class GameState(IntEnum):
    """Match ID bits 8-10."""

    NONE = 0
    """No game started."""
    PLAYING = 1
    OVER = 2
    RESIGNED = 3
    DROPPED = 4
    """Ended by a dropped double."""


_MAX_15 = (1 << 15) - 1


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise GnubgFormatError(f"MatchState.{name} must be an integer {low}…{high}, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class MatchState:
    """The fields of a gnubg Match ID. Players are gnubg's 0 and 1 (see the module docstring)."""

    cube_value: int = 1
    """1, 2, 4, … 32768 (stored as its log2)."""
    cube_owner: int | None = None
    """0, 1, or ``None`` for a centred cube."""
    player_on_roll: int = 0
    """The player on roll or who has rolled ("dice owner")."""
    crawford: bool = False
    game_state: GameState = GameState.PLAYING
    turn: int = 0
    """The player who must act now (the doubled player while a double is offered)."""
    double_offered: bool = False
    resigned: int = 0
    """Resignation offered: 0 none, 1 single game, 2 gammon, 3 backgammon."""
    dice: tuple[int, int] = (0, 0)
    """(0, 0) if not rolled yet, else two dice 1…6 in the order gnubg stores them."""
    match_length: int = 0
    """0 for money play."""
    score: tuple[int, int] = (0, 0)
    """(player 0, player 1)."""
    jacoby: bool = False
    """Whether the Jacoby rule is in effect (money play); stored inverted in bit 66."""

    def __post_init__(self) -> None:
        value = self.cube_value
        if (
            not isinstance(value, int)
            or isinstance(value, bool)
            or value < 1
            or value > 1 << 15
            or value & (value - 1)
        ):
            raise GnubgFormatError(
                f"MatchState.cube_value must be a power of two 1…32768, got {value!r}"
            )
        if self.cube_owner is not None:
            _check_int("cube_owner", self.cube_owner, 0, 1)
        _check_int("player_on_roll", self.player_on_roll, 0, 1)
        _check_int("turn", self.turn, 0, 1)
        _check_int("resigned", self.resigned, 0, 3)
        _check_int("match_length", self.match_length, 0, _MAX_15)
        state = _check_int("game_state", self.game_state, 0, len(GameState) - 1)
        object.__setattr__(self, "game_state", GameState(state))
        for name in ("crawford", "double_offered", "jacoby"):
            if not isinstance(getattr(self, name), bool):
                raise GnubgFormatError(
                    f"MatchState.{name} must be a bool, got {getattr(self, name)!r}"
                )
        dice = self.dice
        if not isinstance(dice, tuple) or len(dice) != 2:
            raise GnubgFormatError(f"MatchState.dice must be a pair, got {dice!r}")
        d1 = _check_int("dice[0]", dice[0], 0, 6)
        d2 = _check_int("dice[1]", dice[1], 0, 6)
        if (d1 == 0) != (d2 == 0):
            raise GnubgFormatError(
                f"MatchState.dice must be both 0 (not rolled) or both 1…6, got {dice!r}"
            )
        score = self.score
        if not isinstance(score, tuple) or len(score) != 2:
            raise GnubgFormatError(f"MatchState.score must be a pair, got {score!r}")
        _check_int("score[0]", score[0], 0, _MAX_15)
        _check_int("score[1]", score[1], 0, _MAX_15)


# (name, first bit, width)
_MATCH_FIELDS: tuple[tuple[str, int, int], ...] = (
    ("cube_log2", 0, 4),
    ("cube_owner", 4, 2),
    ("player_on_roll", 6, 1),
    ("crawford", 7, 1),
    ("game_state", 8, 3),
    ("turn", 11, 1),
    ("double_offered", 12, 1),
    ("resigned", 13, 2),
    ("die1", 15, 3),
    ("die2", 18, 3),
    ("match_length", 21, 15),
    ("score0", 36, 15),
    ("score1", 51, 15),
    ("no_jacoby", 66, 1),
)
_CENTRED = 3


def match_id(state: MatchState) -> str:
    """The 12-character gnubg Match ID of ``state`` (the extended form, with the Jacoby bit)."""
    if not isinstance(state, MatchState):
        raise GnubgFormatError(f"match_id() needs a MatchState, not {type(state).__name__}")
    values = {
        "cube_log2": state.cube_value.bit_length() - 1,
        "cube_owner": _CENTRED if state.cube_owner is None else state.cube_owner,
        "player_on_roll": state.player_on_roll,
        "crawford": int(state.crawford),
        "game_state": int(state.game_state),
        "turn": state.turn,
        "double_offered": int(state.double_offered),
        "resigned": state.resigned,
        "die1": state.dice[0],
        "die2": state.dice[1],
        "match_length": state.match_length,
        "score0": state.score[0],
        "score1": state.score[1],
        "no_jacoby": int(not state.jacoby),
    }
    bits = [0] * 72
    for name, start, width in _MATCH_FIELDS:
        for offset in range(width):
            bits[start + offset] = (values[name] >> offset) & 1
    return _encode_b64(_pack_bits(bits, 9))


def parse_match_id(text: str) -> MatchState:
    """Decode a 12-character gnubg Match ID; raise :class:`GnubgFormatError` for invalid ones."""
    bits = _unpack_bits(_decode_b64(text, 12, 9, "Match ID"))
    values: dict[str, int] = {}
    for name, start, width in _MATCH_FIELDS:
        values[name] = sum(bits[start + offset] << offset for offset in range(width))
    if any(bits[67:]):
        raise GnubgFormatError(f"malformed gnubg Match ID {text!r}: unused bits 67-71 are set")
    if values["cube_owner"] == 2:
        raise GnubgFormatError(
            f"malformed gnubg Match ID {text!r}: cube owner bits are 10 (binary)"
        )
    if values["game_state"] >= len(GameState):
        raise GnubgFormatError(
            f"malformed gnubg Match ID {text!r}: game state {values['game_state']} is not 0…4"
        )
    for die in ("die1", "die2"):
        if values[die] > 6:
            raise GnubgFormatError(f"malformed gnubg Match ID {text!r}: die value {values[die]}")
    try:
        return MatchState(
            cube_value=1 << values["cube_log2"],
            cube_owner=None if values["cube_owner"] == _CENTRED else values["cube_owner"],
            player_on_roll=values["player_on_roll"],
            crawford=bool(values["crawford"]),
            game_state=GameState(values["game_state"]),
            turn=values["turn"],
            double_offered=bool(values["double_offered"]),
            resigned=values["resigned"],
            dice=(values["die1"], values["die2"]),
            match_length=values["match_length"],
            score=(values["score0"], values["score1"]),
            jacoby=not values["no_jacoby"],
        )
    except GnubgFormatError as exc:
        raise GnubgFormatError(f"malformed gnubg Match ID {text!r}: {exc}") from None


# --------------------------------------------------------------------------------------------------
# .mat records
# --------------------------------------------------------------------------------------------------

_BAR = 25
_OFF = 0
ActionKind = Literal["roll", "double", "take", "drop"]


@dataclass(frozen=True, slots=True)
class MatMove:
    """One step of one checker by one die, in the mover's own coordinates (bar 25, off 0)."""

    src: int
    dst: int
    hit: bool = False

    def __post_init__(self) -> None:
        for name in ("src", "dst"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise GnubgFormatError(f"MatMove.{name} must be an integer, got {value!r}")
        if not (1 <= self.src <= _BAR and _OFF <= self.dst < self.src and self.dst != _BAR):
            raise GnubgFormatError(
                f"bad move {self.src}/{self.dst}: need 25 >= from > to >= 0 (25 = bar, 0 = off)"
            )
        if self.src - self.dst > 6 or (self.dst == _OFF and self.src > 6):
            raise GnubgFormatError(
                f"bad move {self.src}/{self.dst}: one step moves by one die (1…6); "
                "bear-offs start from points 1…6"
            )
        if self.hit and self.dst == _OFF:
            raise GnubgFormatError(f"bad move {self.src}/0*: a bear-off cannot hit")

    def __str__(self) -> str:
        return f"{self.src}/{self.dst}{'*' if self.hit else ''}"


_MAT_STEP = re.compile(r"^(\d+|bar)/(\d+|off)(\*?)$", re.IGNORECASE)


def mat_moves_from_steps(steps: Iterable[Any]) -> tuple[MatMove, ...]:
    """``.mat`` moves from steps with ``src``, ``dst`` and ``hit`` (e.g. nardy ``Step``)."""
    return tuple(MatMove(int(s.src), int(s.dst), bool(s.hit)) for s in steps)


def mat_play_from_text(text: str) -> tuple[MatMove, ...]:
    """Moves from play text, ``.mat`` style (``25/20 6/0``) or nardy style (``bar/20 6/off``).

    Chains (``24/18/13``) and repeats (``24/18(2)``) are split into single steps. A combined
    move such as ``24/13`` is rejected: the split into dice would be a guess (gnubg's import
    resolves it against the position, which this module does not know).
    """
    try:
        steps = parse_steps(text)
    except InvalidPlayError as exc:
        raise GnubgFormatError(f"bad play text {text!r}: {exc}") from None
    return mat_moves_from_steps(steps)


def mat_play_to_text(moves: Iterable[MatMove]) -> str:
    """``.mat`` text of moves: ``13/8 13/11``, ``25/20*``, ``6/0`` (gnubg's export notation)."""
    return " ".join(str(m) for m in moves)


def nardy_steps_from_mat(moves: Iterable[MatMove]) -> list[Step]:
    """nardy :class:`~nardy.core.notation.Step` objects of ``.mat`` moves (die = ``src - dst``)."""
    return [Step(m.src, m.dst, m.src - m.dst, m.hit) for m in moves]


def _points_word(points: int) -> str:
    return f"{points} point" if points == 1 else f"{points} points"


@dataclass(frozen=True, slots=True)
class MatAction:
    """One entry of a ``.mat`` game: a roll and its play, a double, a take or a drop.

    Build with :meth:`roll`, :meth:`double`, :meth:`take`, :meth:`drop` or :meth:`parse`.
    ``text`` is the entry as written in the file (``"52: 13/8 13/11"``, ``"Doubles => 2"``,
    ``"Takes"``, ``"Drops"``).
    """

    player: int
    """0 = the first-named player (left column), 1 = the second (right column)."""
    kind: ActionKind
    dice: tuple[int, int] = (0, 0)
    """For a roll: the dice, normalised higher first. (0, 0) otherwise."""
    moves: Sequence[MatMove] = ()
    """For a roll: the steps played (empty if none could be played)."""
    cube: int = 0
    """For a double: the cube value offered (2, 4, …). 0 otherwise."""

    def __post_init__(self) -> None:
        if self.player not in (0, 1) or isinstance(self.player, bool):
            raise GnubgFormatError(f"MatAction.player must be 0 or 1, got {self.player!r}")
        if self.kind not in ("roll", "double", "take", "drop"):
            raise GnubgFormatError(
                f"MatAction.kind must be 'roll', 'double', 'take' or 'drop', got {self.kind!r}"
            )
        moves = tuple(self.moves)
        if not all(isinstance(m, MatMove) for m in moves):
            raise GnubgFormatError("MatAction.moves must hold MatMove objects")
        object.__setattr__(self, "moves", moves)
        if self.kind == "roll":
            dice = tuple(self.dice)
            if len(dice) != 2 or not all(
                isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 6 for d in dice
            ):
                raise GnubgFormatError(f"a roll needs two dice 1…6, got {self.dice!r}")
            high, low = max(dice), min(dice)
            object.__setattr__(self, "dice", (high, low))
            limit = 4 if high == low else 2
            if len(moves) > limit:
                raise GnubgFormatError(
                    f"roll {high}{low} plays at most {limit} steps, got {len(moves)}: "
                    f"{mat_play_to_text(moves)}"
                )
            if self.cube:
                raise GnubgFormatError("a roll has no cube value")
        else:
            if self.dice != (0, 0) or moves:
                raise GnubgFormatError(f"a {self.kind} action has no dice and no moves")
            if self.kind == "double":
                cube = self.cube
                if (
                    not isinstance(cube, int)
                    or isinstance(cube, bool)
                    or cube < 2
                    or cube > 1 << 15
                    or cube & (cube - 1)
                ):
                    raise GnubgFormatError(
                        f"a double offers a cube value 2, 4, … 32768, got {cube!r}"
                    )
            elif self.cube:
                raise GnubgFormatError(f"a {self.kind} action has no cube value")

    # -- constructors ------------------------------------------------------------------------------

    @classmethod
    def roll(
        cls, player: int, dice: tuple[int, int], play: str | Iterable[MatMove] = ""
    ) -> MatAction:
        """A roll; ``play`` is text (``"13/8 13/11"``, nardy or ``.mat`` style) or moves."""
        moves = mat_play_from_text(play) if isinstance(play, str) else tuple(play)
        return cls(player, "roll", dice, moves)

    @classmethod
    def double(cls, player: int, cube: int) -> MatAction:
        """``player`` offers the cube at value ``cube`` (the value after the take)."""
        return cls(player, "double", cube=cube)

    @classmethod
    def take(cls, player: int) -> MatAction:
        return cls(player, "take")

    @classmethod
    def drop(cls, player: int) -> MatAction:
        return cls(player, "drop")

    @classmethod
    def parse(cls, player: int, text: str) -> MatAction:
        """Parse one entry (``"52: 13/8 13/11"``, ``"Doubles => 2"``, ``"Takes"``, ``"Drops"``)."""
        entry = " ".join(text.split())
        roll = _ROLL.match(entry)
        if roll is not None:
            moves: list[MatMove] = []
            for token in roll.group(3).split():
                step = _MAT_STEP.match(token)
                if step is None:
                    moves.extend(mat_play_from_text(token))
                    continue
                src_text, dst_text, star = step.groups()
                src = _BAR if src_text.lower() == "bar" else int(src_text)
                dst = _OFF if dst_text.lower() == "off" else int(dst_text)
                moves.append(MatMove(src, dst, bool(star)))
            return cls(player, "roll", (int(roll.group(1)), int(roll.group(2))), tuple(moves))
        double = _DOUBLE.match(entry)
        if double is not None:
            return cls.double(player, int(double.group(1)))
        lowered = entry.lower()
        if lowered in ("takes", "take", "accepts"):
            return cls.take(player)
        if lowered in ("drops", "drop", "passes", "rejects"):
            return cls.drop(player)
        raise GnubgFormatError(f"unknown .mat entry {text.strip()!r}")

    # -- text --------------------------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The entry as written in a ``.mat`` file, without the layout's leading space."""
        if self.kind == "roll":
            return f"{self.dice[0]}{self.dice[1]}: {mat_play_to_text(self.moves)}".rstrip()
        if self.kind == "double":
            return f"Doubles => {self.cube}"
        return "Takes" if self.kind == "take" else "Drops"

    def _cell(self) -> str:
        # gnubg writes a roll as "52: moves" and cube actions with one leading space.
        if self.kind == "roll":
            return f"{self.dice[0]}{self.dice[1]}: {mat_play_to_text(self.moves)}"
        return " " + self.text


_ROLL = re.compile(r"^([1-6])([1-6]):\s*(.*)$")
_DOUBLE = re.compile(r"^Doubles\s*=>\s*(\d+)$", re.IGNORECASE)
_WINS = re.compile(r"^Wins\s+(\d+)\s+points?(?:\s+and\s+the\s+match)?$", re.IGNORECASE)


def _as_pair(value: object, name: str) -> tuple[int, int]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or len(value) != 2:
        raise GnubgFormatError(f"{name} must be a pair of integers, got {value!r}")
    a, b = value
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (a, b)):
        raise GnubgFormatError(f"{name} must be a pair of non-negative integers, got {value!r}")
    return a, b


@dataclass(frozen=True, slots=True)
class MatGame:
    """One game of a ``.mat`` file.

    ``actions`` are the rolls and cube actions in the order made; the result is ``winner`` (0, 1, or
    ``None`` for an unfinished game) and ``points`` (0 when unfinished) and is written as the
    ``Wins`` line, so it is not an action. A game that ends with a drop must be won by the doubler
    with the cube value before the double.
    """

    score_before: tuple[int, int]
    actions: Sequence[MatAction] = ()
    winner: int | None = None
    points: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "score_before", _as_pair(self.score_before, "score_before"))
        actions = tuple(self.actions)
        object.__setattr__(self, "actions", actions)
        if not all(isinstance(a, MatAction) for a in actions):
            raise GnubgFormatError("MatGame.actions must hold MatAction objects")
        if self.winner is None:
            if self.points != 0:
                raise GnubgFormatError("an unfinished game (winner None) has points 0")
        else:
            if self.winner not in (0, 1) or isinstance(self.winner, bool):
                raise GnubgFormatError(f"winner must be 0, 1 or None, got {self.winner!r}")
            if not isinstance(self.points, int) or isinstance(self.points, bool) or self.points < 1:
                raise GnubgFormatError(
                    f"a finished game is won by at least 1 point, got {self.points!r}"
                )
        for index, action in enumerate(actions):
            previous = actions[index - 1] if index else None
            if action.kind in ("take", "drop") and (
                previous is None or previous.kind != "double" or previous.player == action.player
            ):
                raise GnubgFormatError(
                    f"action {index + 1} ({action.text}) must answer the other player's double"
                )
            if (
                previous is not None
                and previous.kind == "double"
                and action.kind not in ("take", "drop")
            ):
                raise GnubgFormatError(
                    f"action {index} ({previous.text}) must be followed by Takes or Drops"
                )
            if action.kind == "drop":
                if index != len(actions) - 1:
                    raise GnubgFormatError(
                        f"action {index + 1} (Drops) ends the game; nothing may follow"
                    )
                assert previous is not None
                if self.winner != previous.player or self.points != previous.cube // 2:
                    raise GnubgFormatError(
                        f"after a dropped double to {previous.cube} player {previous.player} wins "
                        f"{previous.cube // 2} point(s), "
                        f"not winner={self.winner} points={self.points}"
                    )


_NAME_LIMIT = 31


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A match (``match_length`` > 0) or money session (0) as a ``.mat`` file holds it.

    ``players`` are (player 0, player 1): the left and right columns. ``tags`` are optional header
    lines ``; [Key "Value"]`` (e.g. ``("Jacoby", "On")``). Lists are accepted and stored as tuples.
    Each game's ``score_before`` must be the previous game's plus its result.
    """

    players: tuple[str, str]
    match_length: int
    games: Sequence[MatGame] = ()
    tags: Sequence[tuple[str, str]] = ()

    def __post_init__(self) -> None:
        players = self.players
        if isinstance(players, str) or not isinstance(players, Sequence) or len(players) != 2:
            raise GnubgFormatError(f"players must be two names, got {players!r}")
        for name in players:
            if not isinstance(name, str) or not name or name != name.strip():
                raise GnubgFormatError(
                    f"player name {name!r} must be non-empty without outer blanks"
                )
            if ":" in name or any(ch in name for ch in "\r\n\t") or len(name) > _NAME_LIMIT:
                raise GnubgFormatError(
                    f"player name {name!r}: at most {_NAME_LIMIT} characters (gnubg cuts "
                    "longer names), no ':', no tabs or line breaks"
                )
        object.__setattr__(self, "players", (players[0], players[1]))
        if (
            not isinstance(self.match_length, int)
            or isinstance(self.match_length, bool)
            or not 0 <= self.match_length <= _MAX_15
        ):
            raise GnubgFormatError(
                f"match_length must be 0 (money) … 32767, got {self.match_length!r}"
            )
        games = tuple(self.games)
        object.__setattr__(self, "games", games)
        if not all(isinstance(g, MatGame) for g in games):
            raise GnubgFormatError("MatchRecord.games must hold MatGame objects")
        tags = tuple((str(k), str(v)) for k, v in self.tags)
        for key, value in tags:
            if not _TAG_KEY.match(key) or '"' in value or any(ch in value for ch in "\r\n"):
                raise GnubgFormatError(f"bad header tag {key!r} = {value!r}")
        object.__setattr__(self, "tags", tags)
        for number, (game, after) in enumerate(itertools.pairwise(games), start=1):
            if game.winner is None:
                raise GnubgFormatError(
                    f"game {number} is unfinished but game {number + 1} follows it"
                )
            expected = list(game.score_before)
            expected[game.winner] += game.points
            if after.score_before != tuple(expected):
                raise GnubgFormatError(
                    f"game {number + 1} starts at score "
                    f"{after.score_before[0]}-{after.score_before[1]}, "
                    f"but game {number} ended at {expected[0]}-{expected[1]}"
                )

    @property
    def final_score(self) -> tuple[int, int]:
        """The score after the last game (counting only finished games)."""
        if not self.games:
            return 0, 0
        last = self.games[-1]
        score = list(last.score_before)
        if last.winner is not None:
            score[last.winner] += last.points
        return score[0], score[1]


_TAG_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9 _-]*$")
_LEFT_WIDTH = 28


@dataclass(slots=True)
class _Line:
    """One line of a game in the .mat layout: optional number, player 0's and player 1's entry."""

    number: int | None
    left: str | None = None
    right: str | None = None

    def render(self) -> str:
        prefix = f"{self.number:3d}) " if self.number is not None else "     "
        text = self.left or ""
        if self.right is not None:
            gap = "" if len(text) < _LEFT_WIDTH else " "
            text = text.ljust(_LEFT_WIDTH) + gap + self.right
        return (prefix + text).rstrip()


def write_mat(record: MatchRecord) -> str:
    """The ``.mat`` text of ``record`` in gnubg's export layout (see the module docstring)."""
    if not isinstance(record, MatchRecord):
        raise GnubgFormatError(f"write_mat() needs a MatchRecord, not {type(record).__name__}")
    if not record.games:
        raise GnubgFormatError(
            "a .mat file needs at least one game (its score line names the players)"
        )
    out: list[str] = [f'; [{key} "{value}"]' for key, value in record.tags]
    if out:
        out.append("")
    out += [f" {record.match_length} point match", ""]
    for number, game in enumerate(record.games, start=1):
        out.append(f" Game {number}")
        first = f" {record.players[0]} : {game.score_before[0]}"
        out.append(first.ljust(31) + " " + f"{record.players[1]} : {game.score_before[1]}")
        lines: list[_Line] = []
        for action in game.actions:
            cell = action._cell()
            if action.player == 1 and lines and lines[-1].right is None:
                lines[-1].right = cell
            elif action.player == 0:
                lines.append(_Line(len(lines) + 1, left=cell))
            else:
                lines.append(_Line(len(lines) + 1, right=cell))
        if game.winner is not None:
            cell = " Wins " + _points_word(game.points)
            if game.winner == 1 and lines and lines[-1].right is None:
                lines[-1].right = cell
            elif game.winner == 0:
                lines.append(_Line(None, left=cell))
            else:
                lines.append(_Line(None, right=cell))
        out.extend(line.render() for line in lines)
        out.append("")
    return "\n".join(out) + "\n"


# -- parsing ---------------------------------------------------------------------------------------

_HEADER_TAG = re.compile(r'^;\s*\[\s*([^"\]]+?)\s+"([^"]*)"\s*\]\s*$')
_MATCH_LINE = re.compile(r"^\s*(\d+)\s+point\s+match\s*$", re.IGNORECASE)
_GAME_LINE = re.compile(r"^\s*Game\s+(\d+)\b.*$", re.IGNORECASE)
_SCORE_LINE = re.compile(r"^\s*(\S(?:.*?\S)?)\s*:\s*(\d+)\s*(\S(?:.*?\S)?)\s*:\s*(\d+)\s*$")
_NUMBERED = re.compile(r"^\s*(\d+)\)(.*)$")
_ENTRY_START = re.compile(r"(?<!\S)(?:[1-6][1-6]:|Doubles\b|Takes\b|Drops\b|Wins\b)", re.IGNORECASE)
_RIGHT_COLUMN = 19
"""Entries starting at this column or later belong to player 1 (gnubg: column 5/6 vs 33/34)."""


class _GameBuilder:
    def __init__(self, number: int, line_no: int) -> None:
        self.number = number
        self.line_no = line_no
        self.score: tuple[int, int] | None = None
        self.actions: list[MatAction] = []
        self.winner: int | None = None
        self.points = 0


def _entries(line: str, start: int, line_no: int) -> list[tuple[int, str]]:
    """(player, text) of the entries of one action line; ``start`` is where the entries begin."""
    body = line[start:]
    starts = [m.start() for m in _ENTRY_START.finditer(body)]
    if not starts:
        if body.strip():
            raise GnubgFormatError(f"line {line_no}: cannot read {body.strip()!r}")
        return []
    if body[: starts[0]].strip():
        raise GnubgFormatError(f"line {line_no}: cannot read {body[: starts[0]].strip()!r}")
    if len(starts) > 2:
        raise GnubgFormatError(f"line {line_no}: more than two entries on one line")
    texts = [body[a:b].strip() for a, b in zip(starts, [*starts[1:], len(body)], strict=True)]
    if len(texts) == 2:
        return [(0, texts[0]), (1, texts[1])]
    column = start + starts[0]
    return [(1 if column >= _RIGHT_COLUMN else 0, texts[0])]


def parse_mat(text: str) -> MatchRecord:
    """Parse a ``.mat`` match file (our :func:`write_mat` output or gnubg's export).

    Raises :class:`GnubgFormatError` with the line number for anything it cannot read.
    """
    if not isinstance(text, str):
        raise GnubgFormatError(f"parse_mat() needs a str, not {type(text).__name__}")
    tags: list[tuple[str, str]] = []
    match_length: int | None = None
    players: tuple[str, str] | None = None
    games: list[_GameBuilder] = []
    expect_score = False
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip().replace("\t", " ")
        if not line.strip():
            continue
        if line.lstrip().startswith(";"):
            tag = _HEADER_TAG.match(line.strip())
            if tag is not None and not games:
                tags.append((tag.group(1), tag.group(2)))
            continue
        if expect_score:
            score = _SCORE_LINE.match(line)
            if score is None:
                raise GnubgFormatError(
                    f"line {line_no}: expected the score line 'name : score   name : score'"
                )
            names = (score.group(1), score.group(3))
            if players is None:
                players = names
            elif names != players:
                raise GnubgFormatError(
                    f"line {line_no}: players {names!r} differ from the first game's {players!r}"
                )
            games[-1].score = (int(score.group(2)), int(score.group(4)))
            expect_score = False
            continue
        length = _MATCH_LINE.match(line)
        if length is not None:
            if match_length is not None or games:
                raise GnubgFormatError(f"line {line_no}: a second 'point match' line")
            match_length = int(length.group(1))
            continue
        game = _GAME_LINE.match(line)
        if game is not None:
            if match_length is None:
                raise GnubgFormatError(f"line {line_no}: 'Game' before the 'N point match' line")
            number = int(game.group(1))
            if number != len(games) + 1:
                raise GnubgFormatError(
                    f"line {line_no}: expected Game {len(games) + 1}, got Game {number}"
                )
            games.append(_GameBuilder(number, line_no))
            expect_score = True
            continue
        if not games:
            raise GnubgFormatError(
                f"line {line_no}: unexpected text before the first game: {line.strip()!r}"
            )
        numbered = _NUMBERED.match(line)
        start = len(line) - len(numbered.group(2)) if numbered is not None else 0
        current = games[-1]
        for player, entry in _entries(line, start, line_no):
            if current.winner is not None:
                raise GnubgFormatError(f"line {line_no}: {entry!r} after the game's result")
            wins = _WINS.match(" ".join(entry.split()))
            if wins is not None:
                current.winner = player
                current.points = int(wins.group(1))
                continue
            if entry.lower().startswith("wins"):
                raise GnubgFormatError(f"line {line_no}: cannot read {entry!r}")
            try:
                current.actions.append(MatAction.parse(player, entry))
            except GnubgFormatError as exc:
                raise GnubgFormatError(f"line {line_no}: {exc}") from None
    if expect_score:
        raise GnubgFormatError("the file ends before the last game's score line")
    if match_length is None:
        raise GnubgFormatError("no 'N point match' line: not a .mat match file")
    if players is None:
        raise GnubgFormatError("the match file holds no game, so no player names")
    records: list[MatGame] = []
    for builder in games:
        assert builder.score is not None
        try:
            records.append(
                MatGame(builder.score, tuple(builder.actions), builder.winner, builder.points)
            )
        except GnubgFormatError as exc:
            raise GnubgFormatError(
                f"Game {builder.number} (line {builder.line_no}): {exc}"
            ) from None
    return MatchRecord(players, match_length, tuple(records), tuple(tags))
