"""The typed errors of the kernel: every user mistake raises one of these, with a message naming it."""

from __future__ import annotations


class NardyError(Exception):
    """Base class of every error the framework raises on purpose."""


class InvalidPositionError(NardyError, ValueError):
    """A position (JSON, id or board) is malformed or breaks the rules of its variant."""


class InvalidPlayError(NardyError, ValueError):
    """A play's text cannot be parsed."""


class IllegalPlayError(NardyError, ValueError):
    """A well-formed play that is not legal in the current position."""


class UnknownVariantError(NardyError, ValueError):
    """No installed plugin registers a variant of that name."""


class InvalidOptionError(NardyError, ValueError):
    """A variant option is unknown or has a value outside its choices."""


class MatchVariantError(NardyError, ValueError):
    """A match variant (``VariantInfo.cycle``, e.g. ``tavli``, RULES.md §3.12.3) used where a single
    game is played: its games are played by their own variants (``Match.of``), never by it."""


class GameStateError(NardyError, RuntimeError):
    """An action that the game's current state does not allow (e.g. playing after the game ended)."""


class CubeError(GameStateError):
    """A cube action that the rules do not allow now (doubling without access, beavering in a match, ...)."""
