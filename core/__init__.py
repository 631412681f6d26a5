"""The race-game kernel: positions, steps and plays, legal-play generation, game flow, hooks."""

from __future__ import annotations

if __name__ != "nardy.core":  # pragma: no cover - only a wrong import gets here
    # core/ is the folder of the package nardy.core; importing it by a second name would load a
    # second copy of every module (with its own classes and caches).
    raise ImportError(
        f"{__name__!r} is the folder of the package nardy.core: import nardy.core instead"
    )

# First: decides whether nardy.core.movegen is the compiled generator or its Python source.
from nardy.core import _engine  # isort: skip

from nardy.core.errors import (
    GameStateError,
    IllegalPlayError,
    InvalidOptionError,
    InvalidPlayError,
    InvalidPositionError,
    MatchVariantError,
    NardyError,
    UnknownVariantError,
)
from nardy.core.hookspecs import hookimpl
from nardy.core.notation import BAR, OFF, Step, format_steps, parse_steps
from nardy.core.options import OptionSpec
from nardy.core.plugins import (
    game_variant_names,
    load_variant,
    plugin_manager,
    registry,
    variant_names,
)
from nardy.core.position import CHECKERS, Position
from nardy.core.variant import LegalPlays, Play, Variant, VariantInfo, apply_steps

__all__ = [
    "BAR",
    "CHECKERS",
    "OFF",
    "GameStateError",
    "IllegalPlayError",
    "InvalidOptionError",
    "InvalidPlayError",
    "InvalidPositionError",
    "LegalPlays",
    "MatchVariantError",
    "NardyError",
    "OptionSpec",
    "Play",
    "Position",
    "Step",
    "UnknownVariantError",
    "Variant",
    "VariantInfo",
    "apply_steps",
    "format_steps",
    "game_variant_names",
    "hookimpl",
    "load_variant",
    "movegen_build",
    "parse_steps",
    "plugin_manager",
    "registry",
    "variant_names",
]


def movegen_build() -> str:
    """Which move generator runs and why, e.g. ``compiled (mypyc, movegen.cpython-311-….so)``: what
    ``nardy --version`` prints (chosen by ``nardy.core._engine`` when the package is imported)."""
    return f"{_engine.KIND} ({_engine.DETAIL})"
