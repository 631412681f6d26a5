"""The bot interface (python-chess engine style) and the game driver.

A :class:`Bot` answers the three kinds of decision of :class:`~nardy.core.game.Game`:

* :meth:`Bot.choose_play` — an index into ``decision.plays``;
* :meth:`Bot.offer_double` — ``True`` to double before rolling (default: never);
* :meth:`Bot.respond_to_double` — ``"take"``, ``"drop"`` or ``"beaver"`` (default: always take).

:meth:`Bot.start_game` is called once per game with the variant and the bot's colour, before the
first decision (a no-op by default); a bot that needs the variant's rules keeps them there.

:func:`play_game` drives a game to its end, sending every decision to ``bots[decision.player]``::

    from nardy.core import load_variant
    from nardy.core.dice import SeededDice
    from nardy.bots import make_bot, play_game

    game = play_game(load_variant("long"), (make_bot("heuristic"), make_bot("random", seed=1)),
                     SeededDice(7))
    game.result.winner, game.result.points
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from nardy.bots.loop import GameLoop
from nardy.core.dice import DiceSource
from nardy.core.game import CubeAnswer, DoubleDecision, Game, PlayDecision, TakeDecision
from nardy.core.match import cube_is_dead
from nardy.core.variant import Variant

__all__ = ["Bot", "play_game"]


class Bot(ABC):
    """Abstract base class of all bots. Subclasses must implement :meth:`choose_play`.

    The cube methods have safe defaults (never double, always take), so a bot for a game without a
    cube implements :meth:`choose_play` only.
    """

    name: str = "bot"
    """A short name for tables and logs."""

    interactive: ClassVar[bool] = False
    """True for a person deciding at this process's terminal (the ``human`` seat): only a game
    run in that terminal (``nardy play``) can seat it; a tournament, run by a server or in the
    background, refuses it up front rather than wait on an input nobody types."""

    match: tuple[int, int, int] | None = None
    """(match length, my score, the opponent's score) before the game being played, or None for
    money play (or a bot nobody told the score): what :meth:`set_match` was given."""

    def set_match(self, length: int | None, score: tuple[int, int]) -> None:
        """The match before the next game: its length (None: money play) and (my, opponent's)
        score. ``nardy play --match`` and the tournaments call it before every game of a match,
        so that a bot can weigh the score (the built-in bots turn no dead cube)."""
        self.match = None if length is None else (length, score[0], score[1])

    def dead_cube(self, decision: DoubleDecision) -> bool:
        """Whether doubling now cannot gain in the match the bot was told of
        (:func:`nardy.core.match.cube_is_dead`); always False in money play."""
        if self.match is None:
            return False
        length, mine, theirs = self.match
        return cube_is_dead(length, (mine, theirs), decision.cube.value)

    def start_game(self, variant: Variant, colour: int) -> None:
        """Called by :func:`play_game` before a game starts: the variant and the bot's colour
        (0 White, 1 Black). Does nothing by default."""
        return None

    @abstractmethod
    def choose_play(self, decision: PlayDecision) -> int:
        """Return the index of the chosen play in ``decision.plays``."""

    def offer_double(self, decision: DoubleDecision) -> bool:
        """Before rolling: ``True`` to offer a double. Default: never double."""
        return False

    def respond_to_double(self, decision: TakeDecision) -> CubeAnswer:
        """The opponent doubled: ``"take"``, ``"drop"`` or (if ``decision.beaver_allowed``)
        ``"beaver"``. Default: always take."""
        return "take"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def play_game(
    variant: Variant,
    bots: tuple[Bot, Bot],
    dice: DiceSource,
    *,
    started: Callable[[Game], None] | None = None,
    **game_kwargs: Any,
) -> Game:
    """Play one game of ``variant`` between ``bots`` (White, Black) to its end and return the game.

    ``game_kwargs`` go to :class:`~nardy.core.game.Game` unchanged (``position``, ``mover``,
    ``starter``, ``cube`` …); as there, the cube follows the variant's options by default
    (backgammon: on) and ``cube=CubeSettings()`` turns it off. Each bot's :meth:`Bot.start_game` is
    called first; every decision goes to ``bots[decision.player]``; an answer the rules do not allow
    raises the game's error (:class:`~nardy.core.errors.IllegalPlayError`,
    :class:`~nardy.core.errors.CubeError`).

    ``started``, if given, is called with the game after the bots' ``start_game`` and before the
    first decision: the game is otherwise out of the caller's reach until it ends, and a caller
    that shows it as it happens (a person at the terminal, :mod:`nardy.bots.human`) or must keep
    it when a decision is interrupted (``nardy play --jsonl`` records the game so far) needs it.

    The game is played by :class:`nardy.bots.loop.GameLoop` (the one game loop) without a clock
    or a fault policy; a tournament's games add both there.
    """
    if len(bots) != 2:
        raise ValueError(f"play_game needs two bots (White, Black), not {len(bots)}")
    # The one game loop, with no fault policy (a bot's error is the caller's) and no clock.
    loop = GameLoop(Game(variant, dice, **game_kwargs), bots, record=False)
    return loop.play(started).game
