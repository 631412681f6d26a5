"""Bots: the interface every bot implements, the built-in bots, and bots by name.

One package holds every bot; the kernel (:mod:`nardy.core`) knows none of them, only the decisions
of :class:`~nardy.core.game.Game` they answer.

* :mod:`nardy.bots.base` — :class:`Bot` (the in-process decider) and :func:`play_game`;
* :mod:`nardy.bots.decider` — the one decider protocol (:class:`~nardy.bots.decider.Decider`,
  :func:`~nardy.bots.decider.ask`), which remote bots implement too
  (:class:`nardy.arena.clients.runner.RemoteDecider`); :mod:`nardy.bots.faults` — its typed faults and
  the fault policy; :mod:`nardy.bots.loop` — the one game loop, with the clock, that
  :func:`play_game`, the tournaments and the arena's runner all play their games by;
* :mod:`nardy.bots.random_bot`, :mod:`nardy.bots.heuristic`, :mod:`nardy.bots.neural` (numpy) and
  :mod:`nardy.bots.gnubg_bot` (the optional extra ``nardy[gnubg]``) — the built-in bots; a module
  is named after its bot, with ``_bot`` where the bare name is another module's (``random``,
  ``gnubg``);
* :mod:`nardy.bots.human` — ``human``: a person at the terminal answers the decisions
  (``nardy play --bots human,neural``, docs/play.md);
* :mod:`nardy.bots.registry` — :func:`make_bot`: bots by name. The built-ins register through the
  entry-point group ``nardy.bots``, the same as a third party's bots.

The split with the kernel follows one rule: what reads or writes a file format, or that a rule
needs, is the kernel's (``nardy.core.gnubg``: GNU Backgammon's Position ID, Match ID and ``.mat``
file, pure functions of positions and games); what chooses a play is a bot, here
(``nardy.bots.gnubg_bot`` asks the ``gnubg`` package for its plays).
"""

from nardy.bots.base import Bot, play_game
from nardy.bots.heuristic import HeuristicBot
from nardy.bots.random_bot import RandomBot
from nardy.bots.registry import (
    BOT_ENTRY_POINT_GROUP,
    BotFactory,
    builtin_bot_names,
    installed_bots,
    is_builtin_bot,
    make_bot,
)

__all__ = [
    "BOT_ENTRY_POINT_GROUP",
    "Bot",
    "BotFactory",
    "HeuristicBot",
    "RandomBot",
    "builtin_bot_names",
    "installed_bots",
    "is_builtin_bot",
    "make_bot",
    "play_game",
]
