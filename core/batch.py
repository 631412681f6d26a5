"""Legal results of many (position, dice) pairs in one call, as compact arrays.

For analysis and learning, where a program wants every result board of thousands of segments (to
evaluate them, to build training targets) and no :class:`~nardy.core.variant.Play` objects:

    batch = legal_results(variant, [(position, (3, 1)), (other, (2, 2, 2, 2))])
    batch.boards[28 * i : 28 * (i + 1)]       # play i's result board (see below)
    batch.offsets[k], batch.offsets[k + 1]    # the plays of pair k are rows offsets[k] … offsets[k+1]-1

Each answer is exactly :meth:`Variant.legal_plays <nardy.core.variant.Variant.legal_plays>`'s, in
its order (tests/core/test_batch.py). A result board is 28 signed bytes from the view of the player who
moved (:func:`~nardy.core.movegen.board_of`): ``[his borne-off count, points 1…24 (positive his,
negative the opponent's), his bar, the opponent's bar, the opponent's borne-off count]``. With
``steps=True`` each play also has 4 × (source, destination, hit) in ``steps`` (bar 25, off 0, hit
1 or 0; -1 where a play has fewer than four steps). :meth:`ResultBatch.to_numpy` gives the same as
numpy arrays (numpy is optional: ``nardy[rl]`` or ``nardy[neural]``).

Where the move generator's fast path answers (order-free rule sets: backgammon, trictrac, long,
gulbar, khachapuri, hypergammon, portes, mad with ``home_moves: always``; :attr:`MoveGenerator.fast
<nardy.core.movegen.MoveGenerator.fast>`) or its ordered search (nardgammon, mad, mad_gulbar,
fevga, giul; :attr:`MoveGenerator.ordered <nardy.core.movegen.MoveGenerator.ordered>`) or its
pinning search (plakoto with each mother rule; :attr:`MoveGenerator.pins
<nardy.core.movegen.MoveGenerator.pins>`) and the C extension ``nardy.core._batchgen`` is built
(setup.py, beside the compiled generator), the pairs are generated in C, which writes the results
(and a pinning variant's pinned points, :attr:`ResultBatch.pinned`) straight into the arrays; a
pair it cannot answer (the general search's rare cases, bad input, a game the mother rule ended)
is answered by ``legal_plays`` as every pair is elsewhere. ``NARDY_MOVEGEN=pure`` turns the C
path off (the pure build is the reference).
"""

from __future__ import annotations

import gc
import hashlib
import os
import warnings
import weakref
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from nardy.core.errors import NardyError
from nardy.core.movegen import BoardKey, MoveGenerator, position_of
from nardy.core.notation import Step
from nardy.core.position import Position

if TYPE_CHECKING:
    from types import ModuleType

    from nardy.core.variant import Variant

BOARD = 28
"""Bytes per result board."""
STEP_FIELDS = 12
"""Bytes per play in :attr:`ResultBatch.steps`: 4 steps × (source, destination, hit)."""
_NO_STEP = (-1, -1, -1)
_FIRST_TURN = {"principle": 0, "fixed": 1, "head_only": 2}
"""RULES.md §3.3.4's first-turn head rules, as the C generator numbers them."""
_HOME_MOVES = {"always": 0, "never": 1, "until_all_home": 2}
"""RULES.md §3.5's moves inside home, as the C generator numbers them."""
_POINT_BITS = sum(1 << p for p in range(1, 25))
"""The bits of points 1…24 in a pinned points' mask (:data:`~nardy.core.movegen.PINS`)."""
_QUARTER = {"none": 0, "step": 1, "end": 2}
"""RULES.md §3.9's quarter rule timing, as the C generator numbers them."""

NativeRules = tuple[
    int, int, bool, bool, int, int, bool, bool, bool, int, bool, int, bool, bool, int, int
]
"""A rule set as the C generator takes it (:func:`native_rules`)."""


def _native() -> ModuleType | None:
    """The C batch generator, unless ``NARDY_MOVEGEN=pure`` asks for the Python source, it is not
    built (a pure install), or it was built from another version of ``_batchgen.c`` than the one
    beside it (an editable install edited since: a warning, until the next install)."""
    if os.environ.get("NARDY_MOVEGEN", "").strip().lower() == "pure":
        return None
    try:
        from nardy.core import _batchgen  # type: ignore[attr-defined]
    except ImportError:
        return None
    module: ModuleType = _batchgen
    source = Path(__file__).with_name("_batchgen.c")
    built_from = getattr(module, "COMPILED_FROM_SHA256", None)
    if source.is_file() and built_from != hashlib.sha256(source.read_bytes()).hexdigest():
        warnings.warn(
            f"{module.__file__} was built from another version of {source}; the batch API "
            "uses the Python generator until nardy is installed again",
            stacklevel=2,
        )
        return None
    return module


NATIVE = _native()
"""``nardy.core._batchgen`` when the C path is available, else None."""


_RULES: weakref.WeakKeyDictionary[Variant, NativeRules | None] = weakref.WeakKeyDictionary()
"""Each variant's :func:`native_rules`, made once (a batch of one pair is a common call)."""


def native_rules(variant: Variant) -> NativeRules | None:
    """The rule set as the C generator takes it, or None when the C path does not answer it: the
    generator's fast path, its ordered search (no mother rule) and its pinning search."""
    if NATIVE is None:
        return None
    try:
        return _RULES[variant]
    except KeyError:
        pass
    generator = variant.generator
    rules = variant.rules
    found = None
    if isinstance(generator, MoveGenerator) and (
        ((generator.fast or (generator.ordered and generator.shortcuts)) and not generator.mother)
        or (generator.pins and generator.canonical)
    ):
        found = (
            generator.checkers,
            rules.blocking.closed_by,
            generator.hits,
            generator.exact_bear_off,
            generator.head_limit or 0,
            _FIRST_TURN[generator.first_turn],
            generator.block_end,
            generator.ordered,
            generator.block_step,
            _HOME_MOVES[generator.home_moves],
            generator.runner,
            _QUARTER[rules.blocks.quarter],
            generator.trap,
            generator.pins,
            generator.mother,
            generator.opp_head,
        )
    _RULES[variant] = found
    return found


@dataclass(frozen=True, slots=True)
class ResultBatch:
    """The legal results of a batch of segments (:func:`legal_results`)."""

    offsets: array[int]
    """``len(pairs) + 1`` indices (typecode ``q``): pair k's plays are rows ``offsets[k]`` to
    ``offsets[k + 1] - 1`` of :attr:`boards` and :attr:`steps`."""
    dice_used: array[int]
    """Per pair, how many dice every legal play uses (``N`` of RULES.md §2.3; typecode ``b``)."""
    boards: array[int]
    """28 signed bytes per play (typecode ``b``): the result board, mover's view (module doc)."""
    steps: array[int] | None
    """12 signed bytes per play with ``steps=True`` (module doc), else None."""
    pinned: array[int] | None = None
    """Pinning variants only (RULES.md §3.12.2), else None: per play (typecode ``q``) the pinned
    points' bits of the result (bit ``p``: point ``p`` holds a checker pinned beneath its stack,
    :data:`~nardy.core.movegen.PINS`), 0 when nothing is pinned."""
    play_index: array[int] | None = None
    """With ``order="board"`` (:func:`legal_results`), per play (typecode ``i``, int32) its index
    in ``legal_plays``' order, else None."""

    def __len__(self) -> int:
        """The number of (position, dice) pairs."""
        return len(self.dice_used)

    @property
    def play_count(self) -> int:
        """The number of plays of all pairs together (rows of :attr:`boards`)."""
        return self.offsets[-1]

    def results(self, pair: int) -> list[Position]:
        """The result positions of one pair (mover's view, as :attr:`Play.result
        <nardy.core.variant.Play.result>`)."""
        start, end = self.offsets[pair], self.offsets[pair + 1]
        boards = self.boards
        pinned = self.pinned
        if pinned is not None:
            return [
                position_of([*boards[row * BOARD : (row + 1) * BOARD], pinned[row]])
                for row in range(start, end)
            ]
        return [position_of(boards[row * BOARD : (row + 1) * BOARD]) for row in range(start, end)]

    def to_numpy(self) -> dict[str, Any]:
        """``offsets`` (int64), ``dice_used`` (int8), ``boards`` (int8, plays × 28) and, with
        steps, ``steps`` (int8, plays × 4 × 3), sharing this batch's memory."""
        import numpy as np

        arrays: dict[str, Any] = {
            "offsets": np.frombuffer(self.offsets, dtype=np.int64),
            "dice_used": np.frombuffer(self.dice_used, dtype=np.int8),
            "boards": np.frombuffer(self.boards, dtype=np.int8).reshape(-1, BOARD),
        }
        if self.steps is not None:
            arrays["steps"] = np.frombuffer(self.steps, dtype=np.int8).reshape(-1, 4, 3)
        if self.pinned is not None:
            arrays["pinned"] = np.frombuffer(self.pinned, dtype=np.int64)
        if self.play_index is not None:
            arrays["play_index"] = np.frombuffer(self.play_index, dtype=np.int32)
        return arrays


def legal_results(
    variant: Variant,
    pairs: Iterable[tuple[Position, Sequence[int]]],
    *,
    steps: bool = False,
    order: Literal["play", "board"] = "play",
) -> ResultBatch:
    """Every legal result of every (position, dice) pair, in :meth:`Variant.legal_plays`'s order,
    or with ``order="board"`` each pair's results sorted by their board (the key of
    :func:`~nardy.core.movegen.board_of` compared as a tuple: the learning environments' canonical
    action order, docs/encoding.md) with :attr:`ResultBatch.play_index` saying where each stands
    in ``legal_plays``' order.

    Dice are as for ``legal_plays``: two different values, or 1–4 equal steps. An impossible pair
    raises ``legal_plays``'s error, naming the pair's index. Without the C generator the garbage
    collector is paused while the batch is generated (the results make no reference cycles); the C
    generator makes no Python object per result.
    """
    if order not in ("play", "board"):
        raise ValueError(f"order must be 'play' or 'board', not {order!r}")
    by_board = order == "board"
    native = native_rules(variant)
    if native is not None:
        return _native_results(variant, native, pairs, steps, by_board)
    # Plain lists grow fastest (list.extend of a key tuple); they become arrays once, at the end.
    offsets = [0]
    dice_used: list[int] = []
    boards: list[int] = []
    step_values: list[int] | None = [] if steps else None
    index_values: list[int] | None = [] if by_board else None
    add_board: Callable[[Sequence[int]], None] = boards.extend
    pins: list[int] | None = [] if variant.rules.hitting.pins else None
    if pins is not None:
        # A pinning variant's keys carry a 29th entry, the pinned points' bits, when something is
        # pinned: the board keeps its 28 bytes and the bits go to their own array.
        add_pins = pins.append

        def add_pinned_board(key: Sequence[int]) -> None:
            boards.extend(key[:BOARD])
            add_pins(key[BOARD] if len(key) > BOARD else 0)

        add_board = add_pinned_board

    legal_plays = variant.legal_plays
    enabled = gc.isenabled()
    gc.disable()
    try:
        for index, (position, dice) in enumerate(pairs):
            try:
                plays = legal_plays(position, dice)
            except NardyError as error:
                raise type(error)(f"pair {index}: {error}") from error
            dice_used.append(plays.dice_used)
            items: Iterable[tuple[BoardKey, tuple[Step, ...]]] = plays.keyed()
            if index_values is not None:
                items, ranks = _by_board(items)
                index_values.extend(ranks)
            if step_values is None:
                for key, _ in items:
                    add_board(key)
            else:
                add_steps = step_values.extend
                for key, play in items:
                    add_board(key)
                    for step in play:
                        add_steps((step[0], step[1], step[3]))
                    add_steps(_NO_STEP * (4 - len(play)))
            offsets.append(offsets[-1] + len(plays))
    finally:
        if enabled:
            gc.enable()
    return ResultBatch(
        array("q", offsets),
        array("b", dice_used),
        array("b", boards),
        None if step_values is None else array("b", step_values),
        None if pins is None else array("q", pins),
        None if index_values is None else array("i", index_values),
    )


def _by_board(
    items: Iterable[tuple[BoardKey, tuple[Step, ...]]],
) -> tuple[list[tuple[BoardKey, tuple[Step, ...]]], list[int]]:
    """A pair's (key, steps) sorted by key, and each one's index in the given order."""
    listed = list(items)
    ranks = sorted(range(len(listed)), key=lambda i: listed[i][0])
    return [listed[i] for i in ranks], ranks


def _native_results(
    variant: Variant,
    rules: NativeRules,
    pairs: Iterable[tuple[Position, Sequence[int]]],
    steps: bool,
    by_board: bool,
) -> ResultBatch:
    """:func:`legal_results` through the C generator."""
    assert NATIVE is not None
    items = pairs if type(pairs) is list else list(pairs)
    generate = NATIVE.legal_results

    def native(start: int, *out: bytearray | None) -> int:
        found: int = generate(items, start, Position, rules, *out)
        return found

    pins = bool(variant.rules.hitting.pins)
    return _native_loop(variant, native, items.__getitem__, len(items), steps, by_board, pins)


def legal_results_of_boards(
    variant: Variant,
    boards: Any,
    dice: Any,
    *,
    steps: bool = False,
    order: Literal["play", "board"] = "play",
    pins: Any = None,
) -> ResultBatch:
    """:func:`legal_results` of pairs given as two byte arrays (a numpy ``int8`` array, ``bytes``):
    ``boards`` 28 signed bytes per pair (a result board's layout, the mover's view: the module
    doc), ``dice`` 4 signed bytes per pair (the dice, then zeros). The same answer as
    :func:`legal_results` of the pairs' positions; the C generator reads the arrays directly (no
    :class:`~nardy.core.position.Position` per pair: a vector env's whole batch). A pinning
    variant's boards need ``pins`` (and only theirs take it): per pair a native ``int64`` (a numpy
    ``int64`` array), the pinned points' bits (:attr:`ResultBatch.pinned`'s form, 0 where nothing
    is pinned)."""
    if order not in ("play", "board"):
        raise ValueError(f"order must be 'play' or 'board', not {order!r}")
    pinning = bool(variant.rules.hitting.pins)
    if pinning and pins is None:
        raise ValueError(
            f"{variant.name}'s boards carry pinned checkers, which 28 bytes do not hold: pass "
            "pins (the pinned points' bits per pair)"
        )
    if not pinning and pins is not None:
        raise ValueError(f"{variant.name} pins no checker: pass no pins")
    # Signed byte views (a numpy int8 array's buffer is multi-dimensional: cast to one row).
    board_bytes = memoryview(boards).cast("B").cast("b")
    dice_bytes = memoryview(dice).cast("B").cast("b")
    count = len(board_bytes) // BOARD
    if len(board_bytes) != count * BOARD or len(dice_bytes) != 4 * count:
        raise ValueError(
            f"{len(board_bytes)} board bytes and {len(dice_bytes)} dice bytes: 28 and 4 a pair"
        )
    pin_values = None
    if pins is not None:
        pin_values = memoryview(pins).cast("B").cast("q")
        if len(pin_values) != count:
            raise ValueError(f"{len(pin_values)} pins for {count} pairs: one int64 a pair")

    def pair(k: int) -> tuple[Position, tuple[int, ...]]:
        board = array("b", board_bytes[BOARD * k : BOARD * (k + 1)])
        values = array("b", dice_bytes[4 * k : 4 * (k + 1)])
        key: Sequence[int] = board
        if pin_values is not None:
            bits = pin_values[k]
            if bits & ~_POINT_BITS:
                raise ValueError(f"pair {k}: pinned bits {bits:#x} name points outside 1-24")
            key = [*board, bits]
        return position_of(key), tuple(v for v in values if v)

    rules = native_rules(variant)
    if rules is None:
        return legal_results(variant, [pair(k) for k in range(count)], steps=steps, order=order)
    assert NATIVE is not None
    generate = NATIVE.legal_results_of_boards

    def native(start: int, *out: bytearray | None) -> int:
        found: int = generate(board_bytes, dice_bytes, start, rules, *out[:5], pin_values, out[5])
        return found

    return _native_loop(variant, native, pair, count, steps, order == "board", pinning)


def _native_loop(
    variant: Variant,
    generate: Callable[..., int],
    pair: Callable[[int], tuple[Position, Sequence[int]]],
    count: int,
    steps: bool,
    by_board: bool,
    pins: bool,
) -> ResultBatch:
    """The C generator appends to byte arrays and stops at a pair it leaves to ``legal_plays``,
    which this loop answers before handing the rest back."""
    offsets = bytearray(8)  # offsets[0] = 0, an int64
    dice_used = bytearray()
    boards = bytearray()
    step_bytes = bytearray() if steps else None
    index = bytearray() if by_board else None
    pinned = bytearray() if pins else None
    legal_plays = variant.legal_plays
    out = (offsets, dice_used, boards, step_bytes, index, pinned)
    start = generate(0, *out)
    while start < count:
        position, dice = pair(start)
        try:
            plays = legal_plays(position, dice)
        except NardyError as error:
            raise type(error)(f"pair {start}: {error}") from error
        dice_used.append(plays.dice_used)
        keyed: Iterable[tuple[BoardKey, tuple[Step, ...]]] = plays.keyed()
        if index is not None:
            keyed, ranks = _by_board(keyed)
            index += array("i", ranks).tobytes()
        for key, play in keyed:
            boards += array("b", key[:BOARD]).tobytes()
            if pinned is not None:
                pinned += array("q", [key[BOARD] if len(key) > BOARD else 0]).tobytes()
            if step_bytes is not None:
                encoded = [v for step in play for v in (step[0], step[1], step[3])]
                step_bytes += array("b", encoded + [-1] * (12 - len(encoded))).tobytes()
        offsets += array("q", [len(boards) // BOARD]).tobytes()
        start = generate(start + 1, *out)
    # An array made from a bytearray copies its bytes (as frombytes). The batch is built without
    # the frozen dataclass's __init__ (five object.__setattr__ calls in Python: a fifth of a
    # one-pair call), setting its slots directly as that __init__ does.
    found: ResultBatch = _new_object(ResultBatch)
    _set_offsets(found, array("q", offsets))
    _set_dice_used(found, array("b", dice_used))
    _set_boards(found, array("b", boards))
    _set_steps(found, None if step_bytes is None else array("b", step_bytes))
    _set_pinned(found, None if pinned is None else array("q", pinned))
    _set_play_index(found, None if index is None else array("i", index))
    return found


_new_object = object.__new__
_set_offsets = ResultBatch.__dict__["offsets"].__set__
_set_dice_used = ResultBatch.__dict__["dice_used"].__set__
_set_boards = ResultBatch.__dict__["boards"].__set__
_set_steps = ResultBatch.__dict__["steps"].__set__
_set_pinned = ResultBatch.__dict__["pinned"].__set__
_set_play_index = ResultBatch.__dict__["play_index"].__set__
