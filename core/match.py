"""Matches and money sessions (RULES.md §2.11–§2.12): scores, the Crawford rule, who starts each game,
and which cube options a game gets.

:class:`Match` is a small state machine that the caller feeds with finished games; it does not play
them. ``match_length=None`` is money play (results accumulate, Jacoby/beavers/automatic doubles allowed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nardy.core.dice import DiceSource
from nardy.core.errors import GameStateError, MatchVariantError
from nardy.core.game import WHITE, CubeSettings, Game, GameResult, cube_settings_for
from nardy.core.variant import Variant


def cube_is_dead(length: int, score: tuple[int, int], cube_value: int) -> bool:
    """Whether doubling a cube of ``cube_value`` cannot gain for a player with ``score`` =
    (his, his opponent's) in a match to ``length`` points: a *dead cube*, one no sensible
    player turns. RULES.md §2.12 allows the double ("game results are added; the first player
    to reach ≥ n wins the match"); it is silent on whether it is wise, and this is gnubg's
    reading (its match-equity cube decisions: a double is worth making only where it changes
    the match winning chances).

    Once ``cube_value`` reaches what he still needs (``length − his score``), any win at the
    present cube already wins him the match, gammons included: doubling cannot make his wins
    worth more. His opponent, who loses the match by dropping (a drop pays ``cube_value``),
    takes whenever he has any chance, and the doubled cube only makes the opponent's wins
    bigger. So the double can only lose, and the cube is dead. Below that the double can gain
    (a trailer post-Crawford doubles at once: his single win at the doubled cube counts twice)."""
    return cube_value >= length - score[0]


@dataclass(slots=True)
class Match:
    """The state of a match to ``length`` points, or of a money session (``length=None``)."""

    variant: Variant
    length: int | None = None
    score: list[int] = field(default_factory=lambda: [0, 0])
    games: list[GameResult] = field(default_factory=list)
    crawford_game: bool = False
    """Whether the game now being played (or about to be) is the Crawford game."""
    _crawford_done: bool = False
    cycle: tuple[Variant, ...] = ()
    """A match whose games cycle through these variants, each with its own rules (RULES.md
    §3.12.3, ``tavli``: portes → plakoto → fevga); empty: every game is :attr:`variant`."""

    @classmethod
    def of(cls, variant: Variant, length: int | None) -> Match:
        """A match of ``variant``: a match variant (``VariantInfo.cycle``, RULES.md §3.12.3) gets its
        cycle, each game variant loaded with ``match_length`` = ``length``."""
        if not variant.info.cycle:
            return cls(variant, length)
        if length is None:
            raise MatchVariantError(
                f"{variant.name} is played only as a match: give a match length"
            )
        from nardy.core.plugins import load_variant  # the plugins import this module's users

        cycle = tuple(load_variant(name, {"match_length": length}) for name in variant.info.cycle)
        return cls(variant, length, cycle=cycle)

    def __post_init__(self) -> None:
        if self.length is not None and self.length < 1:
            raise ValueError(f"a match is to at least 1 point, not {self.length}")
        self._update_crawford()

    @property
    def game_variant(self) -> Variant:
        """The variant of the next game (the cycle's next one, else :attr:`variant`)."""
        if self.cycle:
            return self.cycle[len(self.games) % len(self.cycle)]
        return self.variant

    @property
    def is_over(self) -> bool:
        """A player reached the match length (never for money play)."""
        return self.length is not None and max(self.score) >= self.length

    @property
    def winner(self) -> int | None:
        """The match winner's colour, once the match is over."""
        if not self.is_over:
            return None
        return 0 if self.score[0] >= self.score[1] else 1

    def cube_settings(self) -> CubeSettings:
        """The cube for the next game (see :func:`~nardy.core.game.cube_settings_for`)."""
        return cube_settings_for(
            self.game_variant, match_length=self.length, crawford=self.crawford_game
        )

    def starter(self) -> int | None:
        """Who starts the next game by rolling, or None for an opening throw (§2.11)."""
        turn = self.game_variant.rules.turn
        if not self.games:
            return WHITE if turn.opening == "white_starts" else None
        later = turn.later_games
        if later == "white_starts":
            return WHITE
        if later == "previous_winner":
            # RULES.md §3.12.2: "after a draw, a new opening throw".
            last = self.games[-1]
            return None if last.draw else last.winner
        return None

    def new_game(self, dice: DiceSource, **kwargs: object) -> Game:
        """A game set up for the current state of the match."""
        if self.is_over:
            raise GameStateError("the match is over")
        return Game(
            self.game_variant,
            dice,
            starter=self.starter(),
            cube=self.cube_settings(),
            **kwargs,  # type: ignore[arg-type]
        )

    def add_result(self, result: GameResult) -> None:
        """Record a finished game; match scores are capped at nothing (a 4-point win at 6-6 of 7 is 10-6).
        A draw adds 0 to both (RULES.md §6)."""
        if self.is_over:
            raise GameStateError("the match is over")
        if not result.draw:
            self.score[result.winner] += result.points
        self.games.append(result)
        if self.crawford_game:
            self.crawford_game = False
        self._update_crawford()

    def _update_crawford(self) -> None:
        # "the first game played after a player's score has become n − 1 while the other's is lower is
        # the Crawford game … every later game is post-Crawford".
        n = self.length
        if n is None or n == 1 or self._crawford_done or self.is_over:
            return
        if self.cycle:  # RULES.md §3.12.3: a tavli match has "no cube, no Crawford rule"
            return
        if max(self.score) == n - 1 and min(self.score) < n - 1:
            self.crawford_game = True
            self._crawford_done = True
