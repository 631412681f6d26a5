"""nardy itself: the ``backgammon`` variant's legal plays, three ways.

* ``nardy legal_plays`` — the public API from the position JSON, as a user calls it:
  ``v.legal_plays(Position.from_json(p), steps)``. :class:`~nardy.core.variant.LegalPlays` is lazy: the call
  generates and deduplicates every result (as board keys) but builds no ``Play``/``Position`` objects.
* ``nardy legal_plays + .results`` — the same plus ``.results`` (a frozenset of result ``Position``
  objects), the analogue of engines that hand back result boards.
* ``nardy segment`` — the move generator alone on a pre-built ``Position``:
  ``v.generator.segment(position, steps)``, which returns the raw result keys.

When the loaded generator is the compiled one (the default install, ``nardy --version``), the first
and last mode run again with the Python source of the generator (``… (pure)``, loaded beside it by
``nardy.core._engine.load_source``): the fallback build, side by side in the same run.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from . import Case, Engine, EngineUnavailable, Key, Mode

NAME = "nardy"


def _key_of_board(board: tuple[int, ...]) -> Key:
    # movegen's board list: [mover off, points 1..24, mover bar, opponent bar, opponent off]
    return (*board[1:25], board[25], board[26], board[0], board[27])


def load() -> Engine:
    try:
        from nardy.core import Position, load_variant
    except ImportError as exc:  # pragma: no cover - nardy is the project itself
        raise EngineUnavailable(f"nardy is not importable: {exc}") from exc

    variant = load_variant("backgammon")
    legal_plays = variant.legal_plays
    from_json = Position.from_json

    def plays_from_json(obj: Any, steps: tuple[int, ...]) -> Any:
        return legal_plays(from_json(obj), steps)

    def results_from_json(obj: Any, steps: tuple[int, ...]) -> Any:
        return legal_plays(from_json(obj), steps).results

    def keys_of_positions(positions: Any) -> frozenset[Key]:
        return frozenset((*p.points, *p.bar, *p.off) for p in positions)

    def json_args(case: Case) -> tuple[Any, ...]:
        return (dict(case.position), case.steps)

    def position_args(case: Case) -> tuple[Any, ...]:
        return (from_json(case.position), case.steps)

    try:
        version = metadata.version("nardy")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a checkout
        version = "checkout"

    modes = (
        Mode(
            label="nardy legal_plays",
            returns="LegalPlays (lazy: result keys, no Position objects)",
            prepare=json_args,
            call=plays_from_json,
            results=lambda _args, out: keys_of_positions(out.results),
            notes=("timed: Position.from_json(p) + variant.legal_plays(position, steps)",),
        ),
        Mode(
            label="nardy legal_plays + .results",
            returns="frozenset of result Positions",
            prepare=json_args,
            call=results_from_json,
            results=lambda _args, out: keys_of_positions(out),
        ),
        Mode(
            label="nardy segment",
            returns="raw result keys (dict board key → steps)",
            prepare=position_args,
            call=variant.generator.segment,
            results=lambda _args, out: frozenset(_key_of_board(k) for k in out.plays),
            notes=("timed: variant.generator.segment(position, steps) on a pre-built Position",),
        ),
    )
    from nardy.core import _engine

    if _engine.KIND == "compiled":
        modes += _pure_modes(variant, json_args, position_args, keys_of_positions)
    return Engine(NAME, (("nardy", f"{version}, {_engine.KIND} generator"),), modes)


def _pure_modes(variant: Any, json_args: Any, position_args: Any, keys: Any) -> tuple[Mode, ...]:
    """``legal_plays`` and ``segment`` with the generator's Python source (the pure build)."""
    import copy

    from nardy.core import Position, _engine

    source = _engine.load_source("nardy_movegen_pure_benchmark")
    pure = copy.copy(variant)
    pure.generator = source.MoveGenerator(variant.rules)
    legal_plays = pure.legal_plays
    from_json = Position.from_json

    def plays_from_json(obj: Any, steps: tuple[int, ...]) -> Any:
        return legal_plays(from_json(obj), steps)

    return (
        Mode(
            label="nardy legal_plays (pure)",
            returns="LegalPlays, from the generator's Python source",
            prepare=json_args,
            call=plays_from_json,
            results=lambda _args, out: keys(out.results),
            notes=("the pure build's generator (the fallback without a C compiler)",),
        ),
        Mode(
            label="nardy segment (pure)",
            returns="raw result keys, from the generator's Python source",
            prepare=position_args,
            call=pure.generator.segment,
            results=lambda _args, out: frozenset(_key_of_board(k) for k in out.plays),
        ),
    )
