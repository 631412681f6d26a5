"""Observation vectors for learning: versioned, from the mover's view, batched (docs/encoding.md).

Two encoders, each a fixed layout named with its length and version:

* ``nardy196_v1`` — the board alone (TD-Gammon style): per point and side four units
  ``[n ≥ 1, n ≥ 2, n ≥ 3, max(n − 3, 0) / 2]`` (Tesauro's unary code), then bar / 2 and
  off / N for each side (N = that side's checker count: nothing assumes 15).
* ``nardy226_v1`` — the board plus the turn plan (30 units): the phase of the decision (segment
  kind, or a cube decision), the segment's steps, the steps still planned later in the turn, whether
  a re-roll follows, the first-turn head allowance, the cube and the match score.

**Pinned checkers** (RULES.md §3.12.2, plakoto: a checker pinned beneath an opposing stack) are
written into the same 196 units, so positions without a pin — every position of every other
variant — encode exactly as before and weights trained on them stay valid: the pinned checker's
owner's block at that point reads :data:`PINNED_UNITS` ``[1, 0, 0, −½]`` (a free count never makes
the last unit negative, so the block says "one checker here, pinned" unambiguously, whatever stack
stands on it), and it counts in its owner's N for ``off / N``.

Both sides are laid out in the **mover's coordinates**: unit block ``i`` of either side describes the
mover's point ``i + 1``, so a point's two owners sit at the same index (the board as the mover sees
it). :func:`mirror_permutation` gives the index map between a position's encoding and its flip's.

``encode(position)`` encodes one position; :func:`encode_batch` encodes many at once and
:func:`encode_plays` every legal result of a decision at once (numpy, no Python loop over units)::

    from nardy.encoding import encode, encode_plays, context_of
    x = encode(position)                              # shape (196,), board only
    xs = encode_plays(plays, context_of(game))         # shape (len(plays), 226)

numpy is needed (the ``rl`` extra); the kernel itself never imports it.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from typing import TYPE_CHECKING, Final, Literal

import numpy as np
import numpy.typing as npt

from nardy.core.game import DoubleDecision, PlayDecision, TakeDecision
from nardy.core.movegen import position_of
from nardy.core.position import Geometry, Position, opposite_point
from nardy.core.turnplan import all_home, later_steps, reroll_follows, transfer_groups

if TYPE_CHECKING:
    from nardy.core.game import Game
    from nardy.core.variant import LegalPlays

__all__ = [
    "BOARD_ENCODER",
    "BOARD_SIZE",
    "CONTEXT_SIZE",
    "DEFAULT_ENCODER",
    "ENCODERS",
    "FULL_ENCODER",
    "FULL_SIZE",
    "PHASES",
    "PINNED_UNITS",
    "Context",
    "Layout",
    "Phase",
    "context_of",
    "encode",
    "encode_batch",
    "encode_into",
    "encode_keys",
    "encode_plays",
    "encoder_size",
    "layout",
    "mirror_permutation",
]

Array = npt.NDArray[np.float32]

BOARD_ENCODER: Final = "nardy196_v1"
FULL_ENCODER: Final = "nardy226_v1"
DEFAULT_ENCODER: Final = FULL_ENCODER
ENCODERS: Final = (BOARD_ENCODER, FULL_ENCODER)
"""Every encoder id this module knows. A changed layout gets a new id; old ids keep their layout."""

Phase = Literal["none", "roll", "stage", "reroll", "transfer", "double", "take"]
PHASES: Final[tuple[Phase, ...]] = ("none", "roll", "stage", "reroll", "transfer", "double", "take")
"""What the mover is deciding: ``none`` (a bare position, e.g. an afterstate), a play of a segment of
one of the four kinds of RULES.md §1.4, or a cube decision (§2.12)."""

UNITS_PER_POINT: Final = 4
_SIDE: Final = 24 * UNITS_PER_POINT  # 96

# Offsets of the feature groups (documented in docs/encoding.md; tests pin them).
MOVER_POINTS: Final = 0
OPPONENT_POINTS: Final = _SIDE
BAR: Final = 2 * _SIDE  # 192: [mover bar / 2, opponent bar / 2]
OFF: Final = BAR + 2  # 194: [mover off / N, opponent off / N]
BOARD_SIZE: Final = OFF + 2  # 196

PHASE: Final = BOARD_SIZE  # 196: one-hot over PHASES
SEGMENT_STEPS: Final = PHASE + len(PHASES)  # 203: steps of value 1…6 in the segment / 4
LATER_STEPS: Final = SEGMENT_STEPS + 6  # 209: steps of value 1…6 planned later this turn / 4
REROLL: Final = LATER_STEPS + 6  # 215: a re-roll follows if all four steps are played
FIRST_TURN: Final = REROLL + 1  # 216: [all N on a limited head, head limit 2 granted]
CUBE: Final = FIRST_TURN + 2  # 218: [in use, log2(value) / 6, mover owns, opponent owns]
MATCH: Final = CUBE + 4  # 222: [match play, mover away / length, opponent away / length, Crawford]
FULL_SIZE: Final = MATCH + 4  # 226
CONTEXT_SIZE: Final = FULL_SIZE - BOARD_SIZE  # 30

_SIZES: Final = {BOARD_ENCODER: BOARD_SIZE, FULL_ENCODER: FULL_SIZE}

PINNED_UNITS: Final = (1.0, 0.0, 0.0, -0.5)
"""The four units of a point's block for a checker pinned there beneath the other side's stack
(RULES.md §3.12.2): present, and flagged by the negative overflow unit no free count produces."""


def encoder_size(encoder: str) -> int:
    """The vector length of ``encoder``; a clear error for an unknown id."""
    try:
        return _SIZES[encoder]
    except KeyError:
        raise ValueError(f"unknown encoder {encoder!r}; known: {', '.join(ENCODERS)}") from None


# -- context -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Context:
    """The turn-plan, cube and match state that a bare position does not show (mover's view).

    The default is "no context": a bare position (``phase="none"``), no cube, money play.
    """

    phase: Phase = "none"
    segment: tuple[int, ...] = ()
    """The steps (dice values) of the segment being played."""
    later: tuple[int, ...] = ()
    """Step values still planned in this turn after this segment: the later stages of a progression
    (an upper bound: the all-home stop of RULES.md §2.8 may end it early) or the transferred groups
    still to play (§2.10)."""
    reroll: bool = False
    """A re-roll follows if all four steps of this double are played (§2.9)."""
    first_turn: bool = False
    """The segment starts with all of the mover's checkers on a limited head (§3.3.4 applies)."""
    head_limit: int | None = None
    """Head steps allowed in this segment (None = no head limit)."""
    cube: bool = False
    """Whether the cube is in use in this game."""
    cube_value: int = 1
    cube_owner: Literal["centre", "mover", "opponent"] = "centre"
    match_length: int | None = None
    """None = money play."""
    score: tuple[int, int] = (0, 0)
    """Match score: (mover, opponent)."""
    crawford: bool = False

    def __post_init__(self) -> None:
        if self.phase not in PHASES:
            raise ValueError(f"phase must be one of {', '.join(PHASES)}, not {self.phase!r}")
        for name, steps in (("segment", self.segment), ("later", self.later)):
            if any(not 1 <= v <= 6 for v in steps):
                raise ValueError(f"{name} steps must be dice values 1-6, not {list(steps)}")
        if self.cube_value < 1:
            raise ValueError(f"the cube value is at least 1, not {self.cube_value}")
        if self.match_length is not None and self.match_length < 1:
            raise ValueError(f"a match is to at least 1 point, not {self.match_length}")

    def vector(self) -> Array:
        """The 30 context units of ``nardy226_v1``."""
        out = np.zeros(CONTEXT_SIZE, dtype=np.float32)
        out[PHASES.index(self.phase)] = 1.0
        base = SEGMENT_STEPS - BOARD_SIZE
        for v in self.segment:
            out[base + v - 1] += 0.25
        base = LATER_STEPS - BOARD_SIZE
        for v in self.later:
            out[base + v - 1] += 0.25
        out[REROLL - BOARD_SIZE] = float(self.reroll)
        out[FIRST_TURN - BOARD_SIZE] = float(self.first_turn)
        out[FIRST_TURN - BOARD_SIZE + 1] = float(self.head_limit == 2)
        base = CUBE - BOARD_SIZE
        out[base] = float(self.cube)
        out[base + 1] = float(np.log2(self.cube_value)) / 6.0
        out[base + 2] = float(self.cube_owner == "mover")
        out[base + 3] = float(self.cube_owner == "opponent")
        base = MATCH - BOARD_SIZE
        if self.match_length is not None:
            n = self.match_length
            out[base] = 1.0
            out[base + 1] = max(n - self.score[0], 0) / n
            out[base + 2] = max(n - self.score[1], 0) / n
            out[base + 3] = float(self.crawford)
        return out


def context_of(
    game: Game,
    *,
    match_length: int | None = None,
    score: tuple[int, int] = (0, 0),
    crawford: bool = False,
) -> Context:
    """The context of ``game``'s current decision, from the deciding player's view.

    ``score`` is (deciding player, opponent) when the game is part of a match of ``match_length``.
    A finished game gives the bare context (``phase="none"``) with the cube and match fields.
    """
    decision = game.decision
    player = decision.player if decision is not None else game.mover
    owner: Literal["centre", "mover", "opponent"] = (
        "centre"
        if game.cube.owner is None
        else "mover"
        if game.cube.owner == player
        else "opponent"
    )
    common = {
        "cube": game.cube_settings.enabled,
        "cube_value": game.cube.value,
        "cube_owner": owner,
        "match_length": match_length,
        "score": score,
        "crawford": crawford,
    }
    if isinstance(decision, DoubleDecision):
        return Context(phase="double", **common)  # type: ignore[arg-type]
    if isinstance(decision, TakeDecision):
        return Context(phase="take", **common)  # type: ignore[arg-type]
    if not isinstance(decision, PlayDecision):
        return Context(**common)  # type: ignore[arg-type]
    segment = decision.segment
    rules = game.rules
    home = segment.kind == "stage" and all_home(decision.position)
    later = later_steps(segment.kind, segment.dice, home, _transfer_groups(game))
    limit = rules.head.limit
    # All N of the mover's checkers on his head (N: the variant's count, RULES.md §3.11).
    first_turn = limit is not None and decision.position.points[23] == game.variant.checkers
    head_limit = limit
    if first_turn:
        head_limit = game.variant.generator.segment(decision.position, segment.dice).head_limit
    return Context(
        phase=segment.kind,
        segment=segment.dice,
        later=later,
        reroll=reroll_follows(rules.turn, segment.kind, segment.dice),
        first_turn=first_turn,
        head_limit=head_limit,
        **common,  # type: ignore[arg-type]
    )


def _transfer_groups(game: Game) -> list[tuple[int, int]]:
    """The groups of the steps last handed over in ``game`` (the mover's, while he plays them)."""
    for event in reversed(game.events):
        if event.kind == "transfer":
            return transfer_groups([(v, n) for v, n in event.data["steps"]])
    return []


# -- board units -------------------------------------------------------------------------------------

MAX_STACK: Final = 64
"""Largest checker count on one point the lookup table covers (15 in every built-in variant)."""


def _unit_tables() -> tuple[Array, Array]:
    counts = np.arange(-MAX_STACK, MAX_STACK + 1)
    tables = []
    for sign in (1, -1):
        n = np.clip(counts * sign, 0, None).astype(np.float32)
        units = np.stack([n >= 1, n >= 2, n >= 3, np.maximum(n - 3, 0) / 2], axis=1)
        tables.append(units.astype(np.float32))
    return tables[0], tables[1]


MOVER_UNITS, OPPONENT_UNITS = _unit_tables()
_MOVER_BYTES: Final = {
    count: MOVER_UNITS[count + MAX_STACK].tobytes() for count in range(-MAX_STACK, MAX_STACK + 1)
}
_OPPONENT_BYTES: Final = {
    count: OPPONENT_UNITS[count + MAX_STACK].tobytes() for count in range(-MAX_STACK, MAX_STACK + 1)
}
"""A point's four units (float32 bytes) by its signed count, for the one-position encoder."""
_pack_tail: Final = struct.Struct("=4f").pack
"""The bar and off units as float32 bytes."""

# Column order of a LegalPlays board key ([off0, points 1…24, bar0, bar1, off1]) turned into the
# row layout used here ([points 1…24, bar0, bar1, off0, off1]).
_KEY_COLUMNS: Final = np.array([*range(1, 25), 25, 26, 0, 27])


def encode_rows(rows: npt.NDArray[np.int64]) -> Array:
    """Board units of rows ``[points 1…24, bar0, bar1, off0, off1]`` (shape (B, 28))."""
    batch = rows.shape[0]
    points = rows[:, :24]
    if points.size and int(np.abs(points).max()) > MAX_STACK:
        raise ValueError(f"a point holds more than {MAX_STACK} checkers")
    index = points + MAX_STACK
    out = np.empty((batch, BOARD_SIZE), dtype=np.float32)
    out[:, MOVER_POINTS:OPPONENT_POINTS] = MOVER_UNITS[index].reshape(batch, _SIDE)
    out[:, OPPONENT_POINTS:BAR] = OPPONENT_UNITS[index].reshape(batch, _SIDE)
    out[:, BAR : BAR + 2] = rows[:, 24:26] / 2.0
    # Each side's N = its checkers on the board, on the bar and off (RULES.md §3.11: "read N").
    mover = np.clip(points, 0, None).sum(axis=1) + rows[:, 24] + rows[:, 26]
    opponent = np.clip(-points, 0, None).sum(axis=1) + rows[:, 25] + rows[:, 27]
    out[:, OFF] = rows[:, 26] / np.maximum(mover, 1)
    out[:, OFF + 1] = rows[:, 27] / np.maximum(opponent, 1)
    return out


def _pin(out: Array, position: Position) -> tuple[int, int]:
    """Write ``position``'s pinned checkers into the board units ``out[:BAR]`` (one row) and
    return (mover's, opponent's) pinned counts. The pinned checker is the side's that does not own
    the stack: the mover's where the count is negative."""
    counts = [0, 0]
    points = position.points
    for p in position.pinned:
        side = 0 if points[p - 1] < 0 else 1
        start = (MOVER_POINTS if side == 0 else OPPONENT_POINTS) + (p - 1) * UNITS_PER_POINT
        out[start : start + UNITS_PER_POINT] = PINNED_UNITS
        counts[side] += 1
    return counts[0], counts[1]


def _pin_rows(out: Array, positions: Sequence[Position]) -> None:
    """The rows of ``out`` (batched board units) of the positions that hold pinned checkers:
    their pins written in, their ``off / N`` with N counting the pinned checkers (rare: only a
    pinning variant has any, so a Python loop over those rows)."""
    for row, position in enumerate(positions):
        if not position.pinned:
            continue
        pinned = _pin(out[row], position)
        for side in (0, 1):
            n = sum(c for c in position.points if (c > 0 if side == 0 else c < 0))
            n = abs(n) + position.bar[side] + position.off[side] + pinned[side]
            out[row, OFF + side] = position.off[side] / max(n, 1)


def _rows_of(positions: Sequence[Position]) -> npt.NDArray[np.int64]:
    # One flat iterator into one buffer: a third cheaper than a list of 28-tuples (vector envs
    # encode hundreds of positions a step).
    count = len(positions) * 28
    flat = chain.from_iterable(p.points + p.bar + p.off for p in positions)
    return np.fromiter(flat, dtype=np.int64, count=count).reshape(len(positions), 28)


def _board_units(positions: Sequence[Position]) -> Array:
    """Board units of ``positions`` (shape ``(len(positions), BOARD_SIZE)``), their pinned
    checkers written in (plakoto, RULES.md §3.12.2)."""
    board = encode_rows(_rows_of(positions))
    _pin_rows(board, positions)
    return board


def with_context(board: Array, encoder: str, context: Context | None) -> Array:
    size = encoder_size(encoder)
    if size == BOARD_SIZE:
        if context is not None:
            raise ValueError(f"{encoder} encodes the board only; pass no context")
        return board
    out = np.empty((board.shape[0], size), dtype=np.float32)
    out[:, :BOARD_SIZE] = board
    out[:, BOARD_SIZE:] = context_vector(context or Context())
    return out


@lru_cache(maxsize=4096)
def _context_bytes(context: Context) -> bytes:
    """:func:`context_vector` as float32 bytes (the one-position encoder joins bytes)."""
    return context_vector(context).tobytes()


@lru_cache(maxsize=4096)
def segment_context(
    phase: Phase,
    segment: tuple[int, ...],
    later: tuple[int, ...],
    reroll: bool,
    first_turn: bool,
    head_limit: int | None,
) -> Context:
    """The context of a decision without cube or match (the learning environments' games) from
    its turn-plan state alone: few of these exist, and every step of every game asks for one."""
    return Context(
        phase=phase,
        segment=segment,
        later=later,
        reroll=reroll,
        first_turn=first_turn,
        head_limit=head_limit,
    )


@lru_cache(maxsize=4096)
def context_vector(context: Context) -> Array:
    """Contexts repeat (the same phase, dice and cube over and over): compute each once."""
    vector = context.vector()
    vector.setflags(write=False)
    return vector


# -- public API --------------------------------------------------------------------------------------


def encode(
    position: Position, context: Context | None = None, *, encoder: str | None = None
) -> Array:
    """One position from its mover's view: ``nardy196_v1`` without a context, else ``nardy226_v1``
    (or the ``encoder`` named)."""
    chosen = encoder or (BOARD_ENCODER if context is None else FULL_ENCODER)
    size = encoder_size(chosen)
    if size == BOARD_SIZE and context is not None:
        raise ValueError(f"{chosen} encodes the board only; pass no context")
    # One position: its units joined as bytes from per-count tables, then one numpy view (the
    # same float32 units as the batched path; tests compare): about half the time of numpy
    # indexing on one position, whose dozen small numpy calls each cost more than the work.
    points = position.points
    bar, off = position.bar, position.off
    # Each side's checkers on the board from two C-level sums: Σc = mover − opponent and
    # Σ|c| = mover + opponent.
    net, both = sum(points), sum(map(abs, points))
    mover = (both + net) // 2 + bar[0] + off[0]
    opponent = (both - net) // 2 + bar[1] + off[1]
    try:
        parts = [*map(_MOVER_BYTES.__getitem__, points), *map(_OPPONENT_BYTES.__getitem__, points)]
    except KeyError:
        raise ValueError(f"a point holds more than {MAX_STACK} checkers") from None
    if position.pinned:
        out = np.frombuffer(bytearray(b"".join(parts) + bytes(4 * (size - BAR))), np.float32)
        pinned = _pin(out, position)
        mover += pinned[0]
        opponent += pinned[1]
        out[BAR:BOARD_SIZE] = (
            bar[0] / 2,
            bar[1] / 2,
            off[0] / max(mover, 1),
            off[1] / max(opponent, 1),
        )
        if size > BOARD_SIZE:
            out[BOARD_SIZE:] = context_vector(context or Context())
        return out
    parts.append(
        _pack_tail(bar[0] / 2, bar[1] / 2, off[0] / max(mover, 1), off[1] / max(opponent, 1))
    )
    if size > BOARD_SIZE:
        parts.append(_context_bytes(context or Context()))
    return np.frombuffer(bytearray(b"".join(parts)), np.float32)


def encode_batch(
    positions: Sequence[Position], context: Context | None = None, *, encoder: str | None = None
) -> Array:
    """Many positions at once, shape ``(len(positions), size)``; ``context`` is shared by all rows."""
    chosen = encoder or (BOARD_ENCODER if context is None else FULL_ENCODER)
    out = with_context(_board_units(positions), chosen, context)
    assert out.shape == (len(positions), encoder_size(chosen))
    return out


def encode_into(
    out: Array, positions: Sequence[Position], contexts: Sequence[Context] | None = None
) -> None:
    """Encode ``positions`` (each with its own context) into the preallocated rows of ``out``
    (shape ``(len(positions), size)``): the vector environments' observations, one numpy pass
    for the whole batch. Without contexts ``out`` holds the board units alone (``nardy196_v1``)."""
    n = len(positions)
    if out.shape[0] != n:
        raise ValueError(f"out has {out.shape[0]} rows for {n} positions")
    out[:, :BOARD_SIZE] = _board_units(positions)  # pins included, as encode() has them
    if contexts is not None:
        if out.shape[1] != FULL_SIZE:
            raise ValueError(f"contexts need {FULL_SIZE} columns, not {out.shape[1]}")
        out[:, BOARD_SIZE:] = np.stack([context_vector(c) for c in contexts])


def encode_keys(keys: Sequence[Sequence[int]]) -> Array:
    """The board units of afterstates given as the generator's board keys
    (:func:`~nardy.core.movegen.board_of`), equal to :func:`encode_batch`'s of their positions:
    read from the keys without building a :class:`Position` each, but where a key carries pins
    (28 ints and the pinned points' bits), whose rows are written from its position."""
    if all(len(key) == 28 for key in keys):
        count = len(keys)
        flat = np.fromiter(chain.from_iterable(keys), dtype=np.int64, count=28 * count)
        return encode_rows(flat.reshape(count, 28)[:, _KEY_COLUMNS])
    return _board_units([position_of(key) for key in keys])


def encode_plays(
    plays: LegalPlays, context: Context | None = None, *, encoder: str | None = None
) -> Array:
    """Every legal result of a decision at once, row ``i`` = ``plays[i].result`` (still from the
    view of the player who plays: an afterstate before the turn passes).

    Reads the plays' board keys directly, without building a :class:`Position` per play.
    """
    chosen = encoder or (BOARD_ENCODER if context is None else FULL_ENCODER)
    keys = getattr(plays, "_keys", None)
    if (
        isinstance(keys, dict)
        and keys
        and len(next(iter(keys))) == 28
        and not getattr(plays, "_pins", False)
    ):
        board = encode_keys(list(keys))
    else:  # a pinning variant (its keys carry pins) or another form: the public view
        board = _board_units([play.result for play in plays])
    out = with_context(board, chosen, context)
    assert out.shape == (len(plays), encoder_size(chosen))
    return out


def mirror_permutation(geometry: Geometry, encoder: str = BOARD_ENCODER) -> npt.NDArray[np.int64]:
    """``perm`` with ``encode(position.flip(geometry))[perm] == encode(position)`` on the board units.

    Flipping swaps the two sides and renumbers the points by ``opp`` (RULES.md §1.2); context units
    (if any) map to themselves, since a context is always the mover's.
    """
    size = encoder_size(encoder)
    perm = np.arange(size)
    for point in range(1, 25):
        flipped = opposite_point(point, geometry)
        for unit in range(UNITS_PER_POINT):
            mine = (point - 1) * UNITS_PER_POINT + unit
            theirs = (flipped - 1) * UNITS_PER_POINT + unit
            perm[MOVER_POINTS + mine] = OPPONENT_POINTS + theirs
            perm[OPPONENT_POINTS + mine] = MOVER_POINTS + theirs
    perm[BAR], perm[BAR + 1] = BAR + 1, BAR
    perm[OFF], perm[OFF + 1] = OFF + 1, OFF
    return perm


@dataclass(frozen=True, slots=True)
class Layout:
    """One feature group of an encoder: where it starts, how long it is, what it holds."""

    name: str
    start: int
    size: int
    meaning: str


def layout(encoder: str = FULL_ENCODER) -> tuple[Layout, ...]:
    """The feature groups of ``encoder`` in order (what docs/encoding.md tabulates)."""
    groups = [
        Layout(
            "mover_points", MOVER_POINTS, _SIDE, "mover's checkers on his points 1…24, 4 units each"
        ),
        Layout(
            "opponent_points",
            OPPONENT_POINTS,
            _SIDE,
            "opponent's checkers on the mover's points 1…24",
        ),
        Layout("bar", BAR, 2, "bar / 2: mover, opponent"),
        Layout("off", OFF, 2, "borne off / N: mover, opponent"),
    ]
    if encoder_size(encoder) == FULL_SIZE:
        groups += [
            Layout("phase", PHASE, len(PHASES), "one-hot: " + ", ".join(PHASES)),
            Layout("segment_steps", SEGMENT_STEPS, 6, "steps of value 1…6 in the segment / 4"),
            Layout("later_steps", LATER_STEPS, 6, "steps of value 1…6 planned later this turn / 4"),
            Layout("reroll", REROLL, 1, "a re-roll follows if all four steps are played"),
            Layout("first_turn", FIRST_TURN, 2, "all N on a limited head; head limit 2 granted"),
            Layout("cube", CUBE, 4, "in use, log2(value) / 6, mover owns, opponent owns"),
            Layout("match", MATCH, 4, "match play, mover away / n, opponent away / n, Crawford"),
        ]
    return tuple(groups)
