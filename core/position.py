"""The position value type: 24 points, bars and borne-off counts, always seen from the mover.

RULES.md §1.1: "Every player numbers the points from his own point of view, 1…24. He moves from higher to
lower numbers, his home is 1…6." A :class:`Position` stores the board in the coordinates of the player to
move (the *mover*): ``points[i]`` is the checker count on the mover's point ``i + 1``, positive for the
mover's checkers and negative for the opponent's. This is exactly the position JSON of ``nardy plays``::

    {"points": [24 signed ints], "bar": [mover, opponent], "off": [mover, opponent]}

The **position id** is the same data in one short line of text: the 24 points from the mover's point 1
to 24 in four quarters of six, ``-`` for an empty point, ``A``…``O`` for 1…15 of the mover's checkers and
``a``…``o`` for the opponent's, then ``:m,o`` with the bar counts when a checker is on a bar. Borne-off
counts are implied by the variant's checker count N (RULES.md §3.11: 15 but for hypergammon), so
:meth:`Position.from_id` takes ``checkers`` (default 15) and ``Variant.position_from_id`` passes the
variant's. The backgammon opening position is::

    b----E/-C---e/E---c-/e----B

**Pinned checkers** (RULES.md §3.12.2, variants whose hitting mode is ``pin``): a point may hold one
checker pinned beneath a stack of the other colour. ``points`` counts the stack only (its sign says
whose it is); :attr:`Position.pinned` lists the points, mover's coordinates, that also hold a pinned
checker, which belongs to the side that does not own the stack and counts among that side's N. The
JSON gains ``"pinned": [points]`` and the id a suffix ``^p,q,…`` only when something is pinned, so
every position without a pin keeps its JSON and id exactly::

    -M---a/--A---/------/n-----^6      (the mover's 6-point: one O checker with an X checker beneath)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import neg
from typing import Any, Literal

from nardy.core.errors import InvalidPositionError

CHECKERS = 15
"""Checkers per side in every variant of the seeds; the default where no variant is given."""
MAX_CHECKERS = 15
"""The most checkers a side the kernel holds (RULES.md §3.11: N comes from the layout; position ids
write 1…15 with one letter, gnubg's Position ID has room for 15 a side)."""

Geometry = Literal["opposite", "same"]
"""RULES.md §1.2: ``opposite`` (backgammon, trictrac: opp(p) = 25 − p) or ``same`` (every other variant:
opp(p) = p ± 12)."""


def opposite_point(point: int, geometry: Geometry) -> int:
    """The number of the mover's ``point`` in the opponent's coordinates (RULES.md §1.2)."""
    if geometry == "opposite":
        return 25 - point
    return point + 12 if point <= 12 else point - 12


_MOVER_CHARS = "ABCDEFGHIJKLMNO"
_OPPONENT_CHARS = "abcdefghijklmno"


@dataclass(frozen=True, slots=True)
class Position:
    """An immutable board seen from the player to move.

    Construct it with :meth:`from_json`, :meth:`from_id` or :meth:`from_sides`, which validate; the plain
    constructor trusts its arguments (it is used by the move generator).
    """

    points: tuple[int, ...]
    """24 signed counts; index 0 is the mover's point 1; positive = mover, negative = opponent."""
    bar: tuple[int, int] = (0, 0)
    """Checkers on the bar: (mover, opponent)."""
    off: tuple[int, int] = (0, 0)
    """Borne-off checkers: (mover, opponent)."""
    pinned: tuple[int, ...] = ()
    """Points (mover's coordinates, ascending) holding one pinned checker beneath the stack; the
    pinned checker belongs to the side that does not own the stack (``points[p - 1] < 0``: the
    mover's checker is pinned, ``> 0``: the opponent's). Empty unless the variant pins."""

    # -- construction -------------------------------------------------------------------------------

    @classmethod
    def from_json(cls, obj: Any, checkers: int | None = None) -> Position:
        """Build a position from the position JSON (a mapping); raise :class:`InvalidPositionError`.

        ``checkers``: N of each side (RULES.md §3.11); ``None`` accepts any N of 1…15 that both
        sides share (the variant's ``validate`` then checks its own N).
        """
        if cls is Position:
            # The fast path (parsed JSON, in the compiled generator): None sends everything else,
            # valid or not, on to the checks below, which name every problem.
            position = _read_json(obj, checkers)
            if position is not None:
                return position
        if not isinstance(obj, Mapping):
            raise InvalidPositionError(
                "a position must be an object with 'points', 'bar' and 'off'"
            )
        unknown = set(obj) - {"points", "bar", "off", "pinned", "state"}
        if unknown:
            raise InvalidPositionError(f"unknown position field(s): {', '.join(sorted(unknown))}")
        points = obj.get("points")
        if not isinstance(points, list | tuple) or len(points) != 24:
            raise InvalidPositionError("'points' must be a list of 24 integers")
        bar = obj.get("bar", [0, 0])
        off = obj.get("off", [0, 0])
        for name, value, size in (("points", points, 24), ("bar", bar, 2), ("off", off, 2)):
            if not isinstance(value, list | tuple) or len(value) != size:
                raise InvalidPositionError(f"'{name}' must be a list of {size} integers")
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
                raise InvalidPositionError(f"'{name}' must hold integers only")
        pinned = obj.get("pinned", [])
        if not isinstance(pinned, list | tuple) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in pinned
        ):
            raise InvalidPositionError("'pinned' must be a list of point numbers (1…24)")
        position = cls(tuple(points), (bar[0], bar[1]), (off[0], off[1]), tuple(pinned))
        position.validate(checkers)
        return position

    @classmethod
    def from_sides(
        cls,
        mover: Mapping[int, int],
        opponent: Mapping[int, int],
        *,
        bar: tuple[int, int] = (0, 0),
        off: tuple[int, int] | None = None,
        checkers: int = CHECKERS,
        pinned: tuple[int, ...] | list[int] = (),
    ) -> Position:
        """Build from ``{point: count}`` maps, both in the mover's coordinates.

        Borne-off counts default to what makes each side ``checkers`` (N, RULES.md §3.11).
        ``pinned``: points (mover's coordinates) holding a checker pinned beneath the stack there,
        which belongs to the side that does not own the stack; the maps count the stacks only.
        """
        points = [0] * 24
        for sign, side in ((1, mover), (-1, opponent)):
            for point, count in side.items():
                if not 1 <= point <= 24:
                    raise InvalidPositionError(f"point {point} is outside 1…24")
                if count < 0:
                    raise InvalidPositionError(f"negative checker count {count} on point {point}")
                if count and points[point - 1] * sign < 0:
                    raise InvalidPositionError(f"point {point} holds checkers of both sides")
                points[point - 1] += sign * count
        pins = tuple(sorted(pinned))
        if off is None:
            under = _pinned_counts(points, pins)
            on_board = (
                sum(mover.values()) + bar[0] + under[0],
                sum(opponent.values()) + bar[1] + under[1],
            )
            off = (checkers - on_board[0], checkers - on_board[1])
        position = cls(tuple(points), bar, off, pins)
        position.validate(checkers)
        return position

    @classmethod
    def from_id(cls, text: str, checkers: int = CHECKERS) -> Position:
        """Parse a position id (see the module docstring); raise :class:`InvalidPositionError`.

        ``checkers`` is N of each side (RULES.md §3.11), which gives the borne-off counts.
        """
        if not isinstance(text, str):
            raise InvalidPositionError(f"a position id must be text, not {type(text).__name__}")
        text_body, pin_sep, pin_text = text.strip().partition("^")
        body, sep, bar_text = text_body.partition(":")
        quarters = body.split("/")
        if len(quarters) != 4 or any(len(q) != 6 for q in quarters):
            raise InvalidPositionError(
                f"malformed position id {text!r}: expected four groups of six characters separated by '/'"
            )
        points: list[int] = []
        for char in "".join(quarters):
            if char == "-":
                points.append(0)
            elif char in _MOVER_CHARS:
                points.append(_MOVER_CHARS.index(char) + 1)
            elif char in _OPPONENT_CHARS:
                points.append(-(_OPPONENT_CHARS.index(char) + 1))
            else:
                raise InvalidPositionError(
                    f"malformed position id {text!r}: bad point character {char!r}"
                )
        bar = (0, 0)
        if sep:
            parts = bar_text.split(",")
            if len(parts) != 2 or not all(p.isdigit() for p in parts):
                raise InvalidPositionError(
                    f"malformed position id {text!r}: bar must be ':mover,opponent'"
                )
            bar = (int(parts[0]), int(parts[1]))
        pinned: tuple[int, ...] = ()
        if pin_sep:
            parts = pin_text.split(",")
            if not all(p.isdigit() for p in parts):
                raise InvalidPositionError(
                    f"malformed position id {text!r}: pins must be '^point,point,…'"
                )
            pinned = tuple(int(p) for p in parts)
        under = _pinned_counts(points, pinned)
        mover = sum(p for p in points if p > 0) + bar[0] + under[0]
        opponent = -sum(p for p in points if p < 0) + bar[1] + under[1]
        for name, count in (("mover", mover), ("opponent", opponent)):
            if count > checkers:
                raise InvalidPositionError(
                    f"position id {text!r}: the {name} has {count} checkers on the board and bar; "
                    f"each side has {checkers}"
                )
        position = cls(tuple(points), bar, (checkers - mover, checkers - opponent), pinned)
        position.validate(checkers)
        return position

    # -- validation ---------------------------------------------------------------------------------

    @property
    def checkers(self) -> int:
        """The mover's checkers in all (board, bar and off): N of a valid position."""
        under = _pinned_counts(self.points, self.pinned)[0] if self.pinned else 0
        return sum(c for c in self.points if c > 0) + self.bar[0] + self.off[0] + under

    @property
    def pinned_counts(self) -> tuple[int, int]:
        """(mover's, opponent's) pinned checkers (RULES.md §3.12.2)."""
        return _pinned_counts(self.points, self.pinned)

    def balanced(self, checkers: int | None) -> bool:
        """Whether :meth:`problems` is empty, decided in one pass over the points (the fast path;
        :class:`~nardy.core.variant.Variant` asks it before its own checks)."""
        points = self.points
        net = sum(points)  # mover - opponent on the board
        total = sum(map(abs, points))  # mover + opponent on the board
        bar0, bar1 = self.bar
        off0, off1 = self.off
        if self.pinned:
            return False  # the full checks (rare: only pinning variants have pins)
        mover = (total + net) // 2 + bar0 + off0
        if checkers is None:
            if not 1 <= mover <= MAX_CHECKERS:
                return False
        elif mover != checkers:
            return False
        return (
            len(points) == 24
            and (total - net) // 2 + bar1 + off1 == mover
            and bar0 >= 0
            and bar1 >= 0
            and off0 >= 0
            and off1 >= 0
        )

    def problems(self, checkers: int | None = CHECKERS) -> list[str]:
        """Every way in which this board is not a position of a game with ``checkers`` (N) a side
        (empty if valid). ``None``: any N of 1…15, the same for both sides."""
        found: list[str] = []
        if len(self.points) != 24:
            return [f"a position has 24 points, not {len(self.points)}"]
        pins = self.pinned
        if pins:
            if list(pins) != sorted(set(pins)) or not all(1 <= p <= 24 for p in pins):
                return [f"pinned points must be distinct points 1…24 in order, not {list(pins)}"]
            empty = [p for p in pins if self.points[p - 1] == 0]
            if empty:
                return [
                    f"a pinned checker lies beneath a stack of the other side, but point(s) "
                    f"{', '.join(map(str, empty))} hold no stack"
                ]
        under = _pinned_counts(self.points, pins)
        if checkers is None:
            totals = [
                sum(c * sign for c in self.points if c * sign > 0)
                + self.bar[side]
                + self.off[side]
                + under[side]
                for side, sign in ((0, 1), (1, -1))
            ]
            if totals[0] != totals[1]:
                return [
                    f"the mover has {totals[0]} checkers and the opponent {totals[1]}; "
                    "both sides have the same number"
                ]
            if not 1 <= totals[0] <= MAX_CHECKERS:
                return [f"each side has {totals[0]} checkers; the kernel holds 1…{MAX_CHECKERS}"]
            checkers = totals[0]
        for side, sign in ((0, 1), (1, -1)):
            name = "mover" if side == 0 else "opponent"
            if self.bar[side] < 0 or self.off[side] < 0:
                found.append(f"the {name}'s bar and off counts must not be negative")
            on_board = sum(c * sign for c in self.points if c * sign > 0) + under[side]
            total = on_board + self.bar[side] + self.off[side]
            if total != checkers:
                found.append(
                    f"the {name} has {total} checkers (board {on_board}, bar {self.bar[side]}, "
                    f"off {self.off[side]}); each side has exactly {checkers}"
                )
        return found

    def validate(self, checkers: int | None = CHECKERS) -> None:
        """Raise :class:`InvalidPositionError` naming every problem of :meth:`problems`."""
        if self.balanced(checkers):
            return
        found = self.problems(checkers)
        if found:
            raise InvalidPositionError("; ".join(found))

    # -- conversions --------------------------------------------------------------------------------

    def to_json(self) -> dict[str, list[int]]:
        """The position JSON (mover's view); ``pinned`` only when a checker is pinned."""
        found = {"points": list(self.points), "bar": list(self.bar), "off": list(self.off)}
        if self.pinned:
            found["pinned"] = list(self.pinned)
        return found

    def id(self) -> str:
        """The compact, human-readable position id (round-trips through :meth:`from_id`)."""
        chars = [
            "-" if c == 0 else _MOVER_CHARS[c - 1] if c > 0 else _OPPONENT_CHARS[-c - 1]
            for c in self.points
        ]
        body = "/".join("".join(chars[i : i + 6]) for i in range(0, 24, 6))
        if self.bar != (0, 0):
            body += f":{self.bar[0]},{self.bar[1]}"
        if self.pinned:
            body += "^" + ",".join(map(str, self.pinned))
        return body

    def flip(self, geometry: Geometry) -> Position:
        """The same position seen by the other player (who becomes the mover)."""
        # opposite_point is its own inverse in both geometries: the other player's point j is the
        # mover's opposite_point(j), so his board is the mover's reversed (opposite: 25 - p) or
        # turned by half (same: p ± 12), with the signs swapped.
        points = self.points
        turned = points[::-1] if geometry == "opposite" else points[12:] + points[:12]
        pinned = self.pinned
        if pinned:
            pinned = tuple(sorted(opposite_point(p, geometry) for p in pinned))
        return Position(
            tuple(map(neg, turned)), (self.bar[1], self.bar[0]), (self.off[1], self.off[0]), pinned
        )

    def side(self, which: int, geometry: Geometry) -> dict[int, int]:
        """``{point: count}`` of one side's free checkers (0 = mover, 1 = opponent) in that side's own
        coordinates (its pinned checkers: :meth:`pinned_of`)."""
        if which == 0:
            return {i + 1: c for i, c in enumerate(self.points) if c > 0}
        return {opposite_point(i + 1, geometry): -c for i, c in enumerate(self.points) if c < 0}

    def pinned_of(self, which: int, geometry: Geometry) -> list[int]:
        """The points, in that side's own coordinates, where a checker of one side (0 = mover, 1 =
        opponent) is pinned (RULES.md §3.12.2)."""
        if which == 0:
            return [p for p in self.pinned if self.points[p - 1] < 0]
        return sorted(opposite_point(p, geometry) for p in self.pinned if self.points[p - 1] > 0)

    def __repr__(self) -> str:
        return f"Position.from_id({self.id()!r})"

    def __str__(self) -> str:
        return self.id()


def _pinned_counts(points: tuple[int, ...] | list[int], pinned: tuple[int, ...]) -> tuple[int, int]:
    """(mover's, opponent's) pinned checkers: one beneath each stack of the other side."""
    mover = 0
    opponent = 0
    for p in pinned:
        if 1 <= p <= len(points):
            c = points[p - 1]
            if c < 0:
                mover += 1
            elif c > 0:
                opponent += 1
    return mover, opponent


JsonReader = Callable[[Any, int | None], Position | None]
"""Position JSON → :class:`Position`, or None where :meth:`Position.from_json`'s full checks must
decide."""


def _no_fast_reader(obj: Any, checkers: int | None) -> Position | None:
    return None


_read_json: JsonReader = _no_fast_reader


def use_json_reader(reader: JsonReader) -> None:
    """Make :meth:`Position.from_json` try ``reader`` first: the move generator's parsed-JSON fast
    path (``nardy.core.movegen.position_from_json``), which ``nardy.core._engine`` installs once it
    has chosen the compiled or the pure generator. The generator imports this module, so this one
    is told of the reader rather than importing it (no import cycle)."""
    global _read_json
    _read_json = reader
