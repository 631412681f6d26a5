"""Bots by name: every bot, nardy's own included, is an entry point of the group ``nardy.bots``.

nardy declares its bots in its own ``pyproject.toml`` exactly as a third party declares theirs::

    [project.entry-points."nardy.bots"]
    heuristic = "nardy.bots.heuristic:HeuristicBot"

so :func:`make_bot` finds them all the same way. The built-in bots are those of the distribution
``nardy``; a third party's entry point of the same name never hides one. A bot name is one of

* an installed bot (``heuristic``, ``random``, ``mybot``): its target is called with the seed;
* an installed bot with an argument (``neural:FILE.npz``, ``gnubg:2``): its target is called with
  the seed and the text after the colon; a target that takes no argument is refused;
* ``module:factory`` of a Python bot (``mypkg.bots:MyBot``): a :class:`~nardy.bots.base.Bot`
  subclass or a function of the seed.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from typing import Any

from nardy.bots.base import Bot

__all__ = [
    "BOT_ENTRY_POINT_GROUP",
    "BotFactory",
    "BotMaker",
    "InstalledBot",
    "builtin_bot_names",
    "installed_bots",
    "is_builtin_bot",
    "make_bot",
]

BOT_ENTRY_POINT_GROUP = "nardy.bots"
"""Entry-point group of every bot: ``name = "module:factory"`` (a Bot class or a function of the
seed, optionally also of an argument), as variants use the group ``nardy``."""

DISTRIBUTION = "nardy"
"""The distribution whose entry points are the built-in bots."""

BotFactory = Callable[..., Bot]
"""A bot class or function: called with a seed (or ``None``), and with an argument if it takes one."""


@dataclass(frozen=True, slots=True)
class InstalledBot:
    """One entry point of :data:`BOT_ENTRY_POINT_GROUP`."""

    name: str
    reference: str
    """``module:attribute`` of its factory."""
    distribution: str | None
    """The distribution that declares it (``nardy`` for the built-ins)."""

    @property
    def builtin(self) -> bool:
        return self.distribution == DISTRIBUTION

    def load(self) -> BotFactory:
        """Its factory (imports the bot's module). Raises :class:`ValueError` if that fails."""
        return _load_factory(self.reference)


def installed_bots() -> dict[str, InstalledBot]:
    """Every installed bot by name (the built-ins first; a later duplicate name is ignored).

    The entry points are read once per process, as the variants' plugins are
    (:func:`nardy.core.plugins.plugin_manager`): reading them scans every installed distribution
    (3 ms here), and a game loop resolves its bots' names for every game. A bot installed
    while a process runs is found by the next process."""
    return dict(_read_installed_bots())


@cache
def _read_installed_bots() -> dict[str, InstalledBot]:
    found: dict[str, InstalledBot] = {}
    for entry_point in metadata.entry_points(group=BOT_ENTRY_POINT_GROUP):
        dist = entry_point.dist.name if entry_point.dist is not None else None
        bot = InstalledBot(entry_point.name, entry_point.value, dist)
        if entry_point.name not in found or (bot.builtin and not found[entry_point.name].builtin):
            found[entry_point.name] = bot
    builtins = {name: bot for name, bot in found.items() if bot.builtin}
    return {**builtins, **{name: bot for name, bot in found.items() if not bot.builtin}}


def builtin_bot_names() -> list[str]:
    """The names of the built-in bots, for messages."""
    return sorted(name for name, bot in installed_bots().items() if bot.builtin)


def is_builtin_bot(name: str) -> bool:
    """Whether ``name`` names a built-in bot for :func:`make_bot` (``random``, ``neural:FILE`` …):
    a built-in's name, with an argument only if that bot takes one."""
    base, colon, _ = name.partition(":")
    bot = installed_bots().get(base)
    if bot is None or not bot.builtin:
        return False
    if not colon:
        return True
    try:
        return _takes_argument(bot.load())
    except ValueError:
        return False


def _takes_argument(factory: BotFactory) -> bool:
    try:
        inspect.signature(factory).bind(None, "")
    except TypeError:
        return False
    except ValueError:  # no signature to inspect (a builtin callable): let the call decide
        return True
    return True


def _load_factory(reference: str) -> BotFactory:
    """The factory ``module:attribute`` names (``mypkg.bots:MyBot``)."""
    module_name, _, attribute = reference.partition(":")
    try:
        target: Any = importlib.import_module(module_name.strip())
        for part in attribute.strip().split("."):
            target = getattr(target, part)
    except Exception as error:  # an import error of the bot's own code, too
        raise ValueError(
            f"cannot load bot {reference!r}: {type(error).__name__}: {error}"
        ) from None
    if not callable(target):
        raise ValueError(f"bot {reference!r} is not a Bot class or factory")
    factory: BotFactory = target
    return factory


def make_bot(name: str, seed: int | None = None) -> Bot:
    """A new bot by name: an installed bot (``heuristic``), with its argument if it takes one
    (``neural:FILE``, ``gnubg:2``), or ``module:factory`` (``mypkg.bots:MyBot``: a :class:`Bot`
    subclass or a function of the seed). An installed bot's name takes precedence over a module
    of the same name. Raises :class:`ValueError` for an unknown or broken bot."""
    factory, argument = _resolve(name)
    return _start(name, factory, argument, seed)


class BotMaker:
    """:func:`make_bot` of one name for many seeds (an environment's opponent, a new bot every
    game): the name is resolved once, on the first call, since reading the installed bots from
    the packages' metadata costs milliseconds; every call then runs the factory alone, exactly as
    :func:`make_bot` would. Pickles as its name (the resolution is redone after loading)."""

    __slots__ = ("_resolved", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._resolved: tuple[BotFactory, str | None] | None = None

    def check(self) -> None:
        """Resolve the name now: a clear :class:`ValueError` for an unknown bot."""
        if self._resolved is None:
            self._resolved = _resolve(self.name)

    @property
    def interactive(self) -> bool:
        """Whether the bot is a person deciding at this process's terminal
        (:attr:`~nardy.bots.base.Bot.interactive`): resolves the name, as :meth:`check` does."""
        self.check()
        assert self._resolved is not None
        return bool(getattr(self._resolved[0], "interactive", False))

    def __call__(self, seed: int | None = None) -> Bot:
        if self._resolved is None:
            self._resolved = _resolve(self.name)
        factory, argument = self._resolved
        return _start(self.name, factory, argument, seed)

    def __getstate__(self) -> str:
        return self.name

    def __setstate__(self, state: str) -> None:
        self.name = state
        self._resolved = None

    def __repr__(self) -> str:
        return f"BotMaker({self.name!r})"


def _resolve(name: str) -> tuple[BotFactory, str | None]:
    """``name``'s factory and the argument it is called with after the seed (None: the seed
    alone); :func:`make_bot`'s errors for an unknown name."""
    base, colon, argument = name.partition(":")
    bots = installed_bots()
    if base in bots:
        factory = bots[base].load()
        if colon:
            if not _takes_argument(factory):
                raise ValueError(f"bot {base!r} takes no argument (asked for {name!r})")
            return factory, argument
        return factory, None
    if colon:
        return _load_factory(name), None
    known = ", ".join(sorted(bots)) or "none"
    if not any(bot.builtin for bot in bots.values()):
        again = "pip install -e . --config-settings editable_mode=strict"
        known += (
            f" (nardy's own bots are entry points of the group {BOT_ENTRY_POINT_GROUP!r}, "
            f"read from its installed metadata: install nardy again, {again})"
        )
    raise ValueError(f"unknown bot {name!r}; known bots: {known} (or module:Class of a Python bot)")


def _start(name: str, factory: BotFactory, argument: str | None, seed: int | None) -> Bot:
    """A bot from its resolved factory, checked (:func:`make_bot`)."""
    arguments: tuple[Any, ...] = (seed,) if argument is None else (seed, argument)
    try:
        bot = factory(*arguments)
    except ValueError:
        raise
    except Exception as error:
        raise ValueError(f"bot {name!r} failed to start: {type(error).__name__}: {error}") from None
    if not isinstance(bot, Bot):
        raise ValueError(f"bot {name!r} made a {type(bot).__name__}, not a nardy Bot")
    return bot
