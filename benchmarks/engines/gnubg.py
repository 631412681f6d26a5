"""GNU Backgammon through its two PyPI bindings.

``gnubg`` (PyPI ``gnubg``, the full gnubg library) has no plain move-generation call: the nearest is
``gnubg.findbestmoves(board, cubeinfo, evalcontext, dice)``, which runs gnubg's ``GenerateMoves`` and then
scores **every** distinct play (``FindnSaveBestMoves``). We ask for the cheapest scoring, 0-ply cubeless
(``evalcontext(cubeful=0, plies=0, deterministic=1, prune=0, noise=0.0)``), so one call is "generate +
one neural-net (or bear-off database) evaluation per play". Its answer is a list of move tuples
``(from, to, ...)`` in the mover's 1-based coordinates (25 = bar); the harness applies them, outside the
timing, to get the result positions. The binding builds each tuple from gnubg's ``anMove`` array and stops
at the first negative entry, and gnubg writes "off" as -1, so a tuple ends at the first bear-off: ``6/off
5/off`` comes back as ``(6,)``. Such plays cannot be turned back into positions; for those cases only the
number of distinct plays (gnubg keeps one play per distinct result) is compared with the reference.

gnubg keeps an evaluation cache across calls (``cEval``); it is switched off with ``set cache 0`` before
anything is timed (``EvaluatePositionCache`` bypasses the cache when its size is 0). With the default cache
a repeated query here is about 3× faster (30 µs → 9 µs for the opening 31), so it would flatter gnubg.

``gnubg-nn`` (PyPI ``gnubg-nn``, the gnubg neural-net library) exposes gnubg's ``GenerateMoves`` itself:
``gnubg_nn.moves(board, die1, die2)`` returns the 20-character position key of every distinct result and
evaluates nothing, so it has no cache to clear. Keys are turned back into boards with
``gnubg_nn.board_from_position_key`` outside the timing.

Both take gnubg's two-sided board ``(player not on roll, player on roll)``, each side 25 counts in its
own coordinates (index ``i`` = its point ``i + 1``, index 24 = its bar); results keep that orientation.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from types import ModuleType
from typing import Any

from nardy.quiet import quiet_stdout

from . import Case, Engine, EngineUnavailable, Key, Mode, key_of_sides, sides_of_json

NAME = "gnubg"


def board_of(case: Case) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """gnubg's (opponent, mover) board of a case's position."""
    mover, opponent = sides_of_json(case.position)
    return (tuple(opponent), tuple(mover))


def apply_move(board: Any, move: tuple[int, ...]) -> Key:
    """The key after gnubg's move tuple (flat ``from, to, ...``, 1-based, 25 = bar, 0 = off)."""
    opponent, mover = list(board[0]), list(board[1])
    for i in range(0, len(move), 2):
        src, dst = move[i], move[i + 1]
        mover[src - 1] -= 1
        if dst >= 1:
            mover[dst - 1] += 1
            target = 24 - dst  # the opponent's own index of the mover's point dst
            if opponent[target] == 1:
                opponent[target] = 0
                opponent[24] += 1
    return key_of_sides(mover, opponent)


def _load_gnubg(notes: list[str]) -> Mode | None:
    try:
        gnubg: ModuleType = importlib.import_module("gnubg")
    except ImportError as exc:
        notes.append(f"`gnubg` mode skipped: `pip install gnubg` (not installed: {exc})")
        return None
    with quiet_stdout():
        gnubg.command("set cache 0")
    cubeinfo = gnubg.cubeinfo()
    evalcontext = gnubg.evalcontext(0, 0, 1, 0, 0.0)

    def prepare(case: Case) -> tuple[Any, ...]:
        return (board_of(case), cubeinfo, evalcontext, case.dice)

    def results(args: tuple[Any, ...], out: Any) -> frozenset[Key] | int:
        board = args[0]
        if not out:  # no legal play
            return frozenset({key_of_sides(board[1], board[0])})
        moves = [tuple(entry["move"]) for entry in out]
        if any(len(move) % 2 for move in moves):
            # A bear-off cut the tuple short (see the module docstring): only the count is known.
            # gnubg keeps one play per distinct result, so the count is the number of results.
            return len(moves)
        return frozenset(apply_move(board, move) for move in moves)

    return Mode(
        label="gnubg findbestmoves (0-ply)",
        returns="every distinct play as a move tuple, each scored at 0 ply",
        prepare=prepare,
        call=gnubg.findbestmoves,
        results=results,
        notes=(
            "includes a 0-ply evaluation of every play: gnubg's Python API has no plain generator",
            "evaluation cache off (`set cache 0`)",
            "move tuples stop at the first bear-off (binding bug): those cases are checked by count",
        ),
    )


def _load_gnubg_nn(notes: list[str]) -> Mode | None:
    try:
        nn: ModuleType = importlib.import_module("gnubg_nn")
    except ImportError as exc:
        notes.append(f"`gnubg-nn` mode skipped: `pip install gnubg-nn` (not installed: {exc})")
        return None
    from_key = nn.board_from_position_key

    def prepare(case: Case) -> tuple[Any, ...]:
        return (board_of(case), case.dice[0], case.dice[1])

    def results(args: tuple[Any, ...], out: Any) -> frozenset[Key]:
        board = args[0]
        if not out:  # no legal play
            return frozenset({key_of_sides(board[1], board[0])})
        keys = set()
        for position_key in out:
            opponent, mover = from_key(position_key)
            keys.add(key_of_sides(mover, opponent))
        return frozenset(keys)

    return Mode(
        label="gnubg-nn moves",
        returns="position key (20-char string) of every distinct result",
        prepare=prepare,
        call=nn.moves,
        results=results,
        notes=("gnubg's GenerateMoves alone; no evaluation, no cache",),
    )


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def load() -> Engine:
    notes: list[str] = []
    modes = tuple(m for m in (_load_gnubg(notes), _load_gnubg_nn(notes)) if m is not None)
    if not modes:
        raise EngineUnavailable("; ".join(notes))
    packages = tuple((d, v) for d in ("gnubg", "gnubg-nn") if (v := _version(d)) is not None)
    return Engine(NAME, packages, modes, tuple(notes))
