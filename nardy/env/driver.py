"""One game as the learning environments see it: decisions as agent turns, actions as indexes,
observations from the decider's view, dice from a seeded numpy generator.

Every decision of :class:`~nardy.core.game.Game` is an agent turn of the player who must make it:
the plays of every segment (rolls, progression stages, re-rolls, transferred steps), the double
decision and the answer to a double. Actions (docs/learning.md):

* a play decision: the index of the play in the canonical order of :func:`play_order` (the
  legal plays sorted by their resulting boards: the same for dice a-b and b-a);
* a double decision: 0 = roll, 1 = double;
* a take decision: 0 = take, 1 = drop, 2 = beaver (only when offered).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from nardy import encoding
from nardy.core import lean
from nardy.core.dice import DiceSource
from nardy.core.errors import GameStateError
from nardy.core.game import (
    COLOURS,
    Decision,
    DoubleDecision,
    Game,
    GameResult,
    PlayDecision,
    TakeDecision,
)
from nardy.core.lean import LeanGame
from nardy.core.match import Match
from nardy.core.plugins import load_variant
from nardy.core.position import Position
from nardy.core.turnplan import reroll_follows
from nardy.core.variant import LegalPlays, Play, Variant
from nardy.env.spaces import CUBE_ACTIONS, action_space_size

ROLL, DOUBLE = 0, 1
TAKE, DROP, BEAVER = 0, 1, 2
_TAKE_ANSWERS: Final = ("take", "drop", "beaver")

Mask = npt.NDArray[np.int8]

_ROLL_CONTEXTS: dict[tuple[object, ...], encoding.Context] = {}
"""Contexts of roll and re-roll decisions by what fixes them (:meth:`Driver._roll_context`)."""


def play_order(plays: LegalPlays) -> list[int]:
    """The canonical action order of a play decision: ``play_order(plays)[action]`` is the index in
    ``plays`` of the play that ``action`` makes.

    Actions number the legal plays by their resulting board, ascending: the board key of
    :func:`nardy.core.movegen.board_of` (the mover's borne-off count, the signed counts on his points
    1…24, the two bars, the opponent's borne-off count) compared as a tuple. It depends on the
    position and the multiset of steps only — not on the order of the dice, nor on the order in
    which a move generator lists the plays (docs/encoding.md)."""
    keys = plays.board_keys()
    return sorted(range(len(keys)), key=keys.__getitem__)


@functools.cache
def _masks(actions: int) -> Mask:
    """``_masks(actions)[n]``: the mask of ``n`` legal actions (the first ``n`` ones)."""
    table = (np.arange(actions) < np.arange(actions + 1)[:, None]).astype(np.int8)
    table.flags.writeable = False  # rows are copied out
    return table


_NO_CUBE: Final = encoding.Context(cube=False)
"""The context of a lean game's board seen by the player who does not decide."""


def lean_context(game: LeanGame) -> encoding.Context:
    """:func:`encoding.context_of` of a lean game's decision: no cube or match, so only the
    segment (its kind, dice and the steps planned after it), the re-roll flag and the head limit
    vary (tested equal at every decision)."""
    limit = game.variant.rules.head.limit
    first = limit is not None and game.position.points[23] == game.variant.checkers
    if first:
        limit = game.segment().head_limit  # the first-turn allowance (RULES.md §3.3.4)
    kind, dice = game.kind, game.dice
    later = game.later() if kind == "stage" or kind == "transfer" else ()
    reroll = reroll_follows(game.turn, kind, dice)
    return encoding.segment_context(kind, dice, later, reroll, first, limit)


def _lean_position(game: LeanGame, colour: int) -> Position:
    return lean.position_for(game, colour)


class NumpyDice:
    """Dice drawn from a numpy generator (the environment's seeded ``np_random``).

    Drawn 128 rolls at a time: one ``integers`` call per roll cost about a tenth of an AEC step
    (benchmarks/compare_learning.py's profile); the sequence is still fixed by the seed."""

    BATCH = 128

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._rolls: list[tuple[int, int]] = []

    def roll(self) -> tuple[int, int]:
        if not self._rolls:
            drawn = self.rng.integers(1, 7, size=(self.BATCH, 2)).tolist()
            self._rolls = [(a, b) for a, b in reversed(drawn)]  # popped from the end: in order
        return self._rolls.pop()


@dataclass(frozen=True, slots=True)
class EnvConfig:
    """What every environment of a variant shares: the variant, encoder and action space."""

    variant: Variant
    encoder: str
    actions: int
    auto_forced: bool

    @classmethod
    def build(
        cls,
        variant: str | Variant,
        options: dict[str, Any],
        *,
        encoder: str = encoding.FULL_ENCODER,
        actions: int | None = None,
        auto_forced: bool = True,
    ) -> EnvConfig:
        loaded = variant if isinstance(variant, Variant) else load_variant(variant, options)
        # A match variant (tavli: portes → plakoto → fevga) changes its rules, board geometry
        # and observation meaning between games; an episode is one variant's game or match.
        loaded.single_game("a learning environment's episode")
        if isinstance(variant, Variant) and options:
            raise ValueError("pass variant options with a variant name, not with a Variant")
        encoding.encoder_size(encoder)  # a clear error for an unknown encoder
        size = action_space_size(loaded) if actions is None else actions
        if size < CUBE_ACTIONS:
            raise ValueError(f"the action space needs at least {CUBE_ACTIONS} actions, not {size}")
        return cls(loaded, encoder, size, auto_forced)

    @property
    def obs_size(self) -> int:
        return encoding.encoder_size(self.encoder)

    @property
    def obs_low(self) -> float:
        """Lower bound of every observation unit: 0, but −½ in a variant that pins (a pinned
        checker's block ends in −½, docs/encoding.md "Pinned checkers")."""
        return encoding.PINNED_UNITS[3] if self.variant.rules.hitting.pins else 0.0

    @property
    def obs_high(self) -> float:
        """Upper bound of every observation unit: bar / 2 with every checker on the bar, or
        log2(cube value) / 6 up to a cube of 2**48."""
        checkers = sum(self.variant.rules.layout.points.values())
        return max(checkers / 2, 8.0)


class Driver:
    """A game of :class:`EnvConfig`'s variant, stepped by action indexes."""

    def __init__(
        self,
        config: EnvConfig,
        dice: DiceSource | None,
        *,
        whole_match: bool = True,
        deferred: bool = False,
    ) -> None:
        """``dice``: where the dice come from; None for a game whose throws are chance nodes
        (:meth:`roll`, OpenSpiel). With the variant's ``match_length`` set, ``whole_match`` and a
        dice source, the driver plays the whole match (the kernel's
        :class:`~nardy.core.match.Match`: who starts each game, the Crawford game), one game after
        another; else one game. ``deferred``: a lean game's legal plays are handed over by the
        caller (:class:`~nardy.core.lean.LeanGame`, a vector env)."""
        self.config = config
        self.match_length: int | None = config.variant.options.get("match_length")
        self.match: Match | None = None
        if whole_match and self.match_length is not None and dice is not None:
            self.match = Match(config.variant, self.match_length)
        self._dice = dice
        self._game: Game | None = None
        self.lean_game: LeanGame | None = None
        """The game while it runs lean (:mod:`nardy.core.lean`); replaced by the kernel's game
        (:attr:`game`, replayed) the first time anything asks for that."""
        if self.match is None and lean.eligible(config.variant, dice, whole_match):
            assert dice is not None
            self.lean_game = LeanGame(
                config.variant, dice, auto_forced=config.auto_forced, deferred=deferred
            )
        else:
            self._game = self._new_game()
        self._order: list[int] | None = None
        self.score = (0, 0)
        """The match score before this game: (White, Black)."""
        self.crawford = self.match is not None and self.match.crawford_game
        self._unpaid = (0, 0)
        """Points of the games finished since :meth:`take_points` last asked."""
        self._settle()

    def _new_game(self) -> Game:
        if self.match is None:
            return Game(self.config.variant, self._dice, auto_forced=self.config.auto_forced)
        assert self._dice is not None
        return self.match.new_game(self._dice, auto_forced=self.config.auto_forced)

    @classmethod
    def of(cls, config: EnvConfig, game: Game) -> Driver:
        """A driver of an existing game of ``config``'s variant (e.g. one set up from a position)."""
        if game.variant is not config.variant:
            raise ValueError("the game must be of the environment's variant")
        driver = cls.__new__(cls)
        driver.config, driver._game, driver.lean_game, driver._order = config, game, None, None
        driver.match_length = config.variant.options.get("match_length")
        driver.match, driver._dice = None, None
        driver.score, driver.crawford, driver._unpaid = (0, 0), False, (0, 0)
        driver._settle()
        return driver

    # -- state -------------------------------------------------------------------------------

    @property
    def game(self) -> Game:
        """The kernel's game (a lean game is replayed into one here, and goes on as that)."""
        if self._game is None:
            assert self.lean_game is not None
            self._game, self.lean_game = self.lean_game.materialise(), None
        return self._game

    @game.setter
    def game(self, game: Game) -> None:
        self._game, self.lean_game = game, None

    def __getstate__(self) -> dict[str, Any]:
        # A copy is of the kernel's game (which pickles by replaying its inputs): the same future.
        _ = self.game
        return self.__dict__.copy()

    @property
    def decision(self) -> Decision | None:
        """The current decision (None at a chance node or once the game is over)."""
        lean = self.lean_game
        if lean is not None:
            return lean.decision()
        assert self._game is not None
        return self._game.decision

    @property
    def result(self) -> GameResult | None:
        """The current game's result (None while it goes on)."""
        lean = self.lean_game
        if lean is not None:
            return lean.result
        assert self._game is not None
        return self._game.result

    @property
    def over(self) -> bool:
        """The episode is over: the game, or with a whole match, the match."""
        if self.match is not None:
            return self.match.is_over
        return self.result is not None

    @property
    def player(self) -> int:
        """The colour that decides now (the winner once the game is over)."""
        lean = self.lean_game
        if lean is not None:
            result = lean.result
            return lean.mover if result is None else result.winner
        game = self.game
        decision = game.decision
        if decision is None:
            assert game.result is not None
            return game.result.winner
        return decision.player

    def mask(self, colour: int | None = None) -> Mask:
        """The legal actions of ``colour`` (default: the decider); all zero for anyone else."""
        # The legal actions are always the first ones: a copy of a row of a table (one numpy call
        # instead of two).
        row: Mask = _masks(self.config.actions)[self.legal_count(colour)].copy()
        return row

    def legal_count(self, colour: int | None = None) -> int:
        """How many actions are legal for ``colour`` (default: the decider): the legal actions are
        always the first ones, so this is :meth:`mask`'s number of ones (a vector env builds its
        masks from these counts in one numpy comparison)."""
        lean = self.lean_game
        if lean is not None:
            if colour is not None and colour != lean.mover:
                return 0
            return lean.count()
        decision = self.game.decision
        if decision is None or (colour is not None and colour != decision.player):
            return 0
        if isinstance(decision, PlayDecision):
            return len(decision.plays)
        if isinstance(decision, DoubleDecision):
            return 2
        return 3 if decision.beaver_allowed else 2

    def view(self, colour: int) -> tuple[Position, encoding.Context]:
        """What ``colour`` observes: the decision's position and context when he decides, else the
        board from his view with the cube and match state."""
        lean = self.lean_game
        if lean is not None:
            if lean.result is None and colour == lean.mover:
                return lean.position, lean_context(lean)
            return _lean_position(lean, colour), _NO_CUBE
        game = self.game
        decision = game.decision
        score = self.score if colour == 0 else (self.score[1], self.score[0])
        if decision is not None and decision.player == colour:
            context = self._roll_context(decision, score)
            if context is None:
                context = encoding.context_of(
                    game, match_length=self.match_length, score=score, crawford=self.crawford
                )
            return decision.position, context
        context = encoding.Context(
            cube=game.cube_settings.enabled,
            cube_value=game.cube.value,
            cube_owner="centre"
            if game.cube.owner is None
            else "mover"
            if game.cube.owner == colour
            else "opponent",
            match_length=self.match_length,
            score=score,
            crawford=self.crawford,
        )
        return game.position_for(colour), context

    def _roll_context(self, decision: object, score: tuple[int, int]) -> encoding.Context | None:
        """:func:`encoding.context_of` of the commonest decision, remembered: the play of a roll or
        re-roll that is not a first turn on a limited head. Its context is fixed by the segment's
        kind and steps, the variant's rules, cube and match (nothing planned later), so contexts
        repeat and a table answers (an observation's context was a tenth of a vector env's step).
        None for every other decision (computed in full)."""
        if not isinstance(decision, PlayDecision):
            return None
        segment = decision.segment
        kind = segment.kind
        if kind != "roll" and kind != "reroll":
            return None
        game = self.game
        variant = game.variant
        limit = game.rules.head.limit
        if limit is not None and decision.position.points[23] == variant.checkers:
            return None  # a first turn: the head allowance needs the generator
        owner = game.cube.owner
        relative = (
            "centre" if owner is None else "mover" if owner == decision.player else "opponent"
        )
        key = (
            kind,
            segment.dice,
            game.rules.turn.doubles,
            limit,
            game.cube_settings.enabled,
            game.cube.value,
            relative,
            self.match_length,
            score,
            self.crawford,
        )
        context = _ROLL_CONTEXTS.get(key)
        if context is None:
            if len(_ROLL_CONTEXTS) >= 4096:
                _ROLL_CONTEXTS.clear()
            context = _ROLL_CONTEXTS[key] = encoding.context_of(
                game, match_length=self.match_length, score=score, crawford=self.crawford
            )
        return context

    def observation(self, colour: int) -> npt.NDArray[np.float32]:
        """``colour``'s observation (:meth:`view`, encoded)."""
        position, context = self.view(colour)
        if self.config.encoder == encoding.BOARD_ENCODER:
            return encoding.encode(position, encoder=self.config.encoder)
        return encoding.encode(position, context, encoder=self.config.encoder)

    def describe(self, colour: int) -> str:
        """:meth:`view` as text (OpenSpiel's observation and information-state strings): who is to
        act, the position id from ``colour``'s view, the dice and turn plan, cube and match."""
        game = self.game
        position, c = self.view(colour)
        if game.result is not None:
            result = game.result
            if result.draw:  # plakoto's double mother pin (RULES.md §3.12.2): nobody wins
                now = f"over: a draw ({result.reason})"
            else:
                now = f"over: {COLOURS[result.winner]} wins {result.points} ({result.reason})"
        elif game.chance is not None:
            node = game.chance
            now = f"{COLOURS[node.player]} to throw ({node.kind})"
        else:
            assert game.decision is not None
            now = f"{COLOURS[game.decision.player]} to decide"
        parts = [f"{COLOURS[colour]} sees {position.id()}", now]
        if c.phase != "none":
            plan = f"{c.phase}"
            if c.segment:
                plan += " " + "-".join(map(str, c.segment))
            if c.later:
                plan += " later " + "-".join(map(str, c.later))
            if c.reroll:
                plan += " re-roll after"
            if c.first_turn:
                plan += f" first turn head {c.head_limit}"
            parts.append(plan)
        if c.cube:
            parts.append(f"cube {c.cube_value} {c.cube_owner}")
        if c.match_length is not None:
            crawford = " Crawford" if c.crawford else ""
            parts.append(f"match to {c.match_length} {c.score[0]}-{c.score[1]}{crawford}")
        return " | ".join(parts)

    def afterstates(self, encoder: str = encoding.BOARD_ENCODER) -> npt.NDArray[np.float32]:
        """The encodings of every legal play's result (row ``i`` = action ``i``), from the
        decider's view before the turn passes: TD-Gammon's afterstates. Empty for a cube decision
        or a finished game."""
        decision = self.decision
        if not isinstance(decision, PlayDecision):
            return np.zeros((0, encoding.encoder_size(encoder)), dtype=np.float32)
        return encoding.encode_plays(decision.plays, encoder=encoder)[self.order()]

    def order(self) -> list[int]:
        """:func:`play_order` of the current play decision (empty for any other)."""
        if self._order is None:
            decision = self.decision
            self._order = play_order(decision.plays) if isinstance(decision, PlayDecision) else []
        return self._order

    def play(self, action: int) -> Play:
        """The play that ``action`` makes in the current play decision."""
        lean = self.lean_game
        if lean is not None:
            if not 0 <= action < lean.count():
                raise ValueError(f"action {action} is not a play of the current decision")
            return lean.play_of(lean.sorted_keys()[action])
        decision = self.game.decision
        if not isinstance(decision, PlayDecision) or not 0 <= action < len(decision.plays):
            raise ValueError(f"action {action} is not a play of the current decision")
        return decision.plays[self.order()[action]]

    def points(self) -> tuple[int, int]:
        """Game points of (White, Black): + for the winner, − for the loser, 0 while playing."""
        result = self.result
        if result is None:
            return (0, 0)
        sign = 1 if result.winner == 0 else -1
        return (sign * result.points, -sign * result.points)

    def take_points(self) -> tuple[int, int]:
        """The points of the games finished since the last call (White, Black): the rewards of a
        step. Over a whole match they add up to White's score minus Black's."""
        unpaid, self._unpaid = self._unpaid, (0, 0)
        return unpaid

    # -- actions -----------------------------------------------------------------------------

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` is legal now (what :meth:`mask` says, without building it)."""
        lean = self.lean_game
        if lean is not None:
            return 0 <= action < lean.count()
        decision = self.game.decision
        if decision is None or not 0 <= action < self.config.actions:
            return False
        if isinstance(decision, PlayDecision):
            return action < len(decision.plays)
        if isinstance(decision, DoubleDecision):
            return action in (ROLL, DOUBLE)
        return action in (TAKE, DROP) or (action == BEAVER and decision.beaver_allowed)

    def step(self, action: int) -> None:
        """Answer the current decision with ``action``; raise ``ValueError`` if it is not legal."""
        decision = self.decision
        if decision is None:
            raise GameStateError("the game is over" if self.over else "a chance node: roll()")
        if not self.is_legal(action):
            legal = np.flatnonzero(self.mask())
            shown = ", ".join(map(str, legal[:10])) + (" …" if len(legal) > 10 else "")
            raise ValueError(
                f"action {action} is not legal for {COLOURS[decision.player]} now (legal: {shown})"
            )
        self.step_legal(action)

    def step_legal(self, action: int) -> None:
        """:meth:`step` with an action the caller has checked with :meth:`is_legal` (the
        environments check legality once)."""
        lean = self.lean_game
        if lean is not None:
            lean.choose(lean.sorted_keys()[action])
            self._settle()
            return
        decision = self.game.decision
        if isinstance(decision, PlayDecision):
            self.answer(self.order()[action])
        elif isinstance(decision, DoubleDecision):
            self.answer(action == DOUBLE)
        else:
            assert isinstance(decision, TakeDecision)
            self.answer(_TAKE_ANSWERS[action])

    def give(self, count: int, first: Sequence[int], used: int) -> None:
        """A deferred lean game's awaited legal results: ``count`` of them, using ``used``
        dice, ``first`` the result key of the first (played when forced; :meth:`LeanGame.give`)."""
        assert self.lean_game is not None
        self._order = None
        self.lean_game.give(count, first, used)
        self._settle()

    def decision_count(self) -> int:
        """How many legal plays the current play decision has (0 for none)."""
        lean = self.lean_game
        if lean is not None:
            return lean.count()
        decision = self.game.decision
        return len(decision.plays) if isinstance(decision, PlayDecision) else 0

    def choose_key(self, key: Sequence[int]) -> None:
        """A lean game's play by its result board key (a vector env's batch of legal results
        names plays so; the key must be a legal result)."""
        assert self.lean_game is not None
        self._order = None
        self.lean_game.choose(key)
        self._settle()

    def answer(self, answer: int | bool | str) -> None:
        """Answer the current decision in the kernel's terms (a ``LegalPlays`` index, a bool to
        double, "take" / "drop" / "beaver"): what a bot returns."""
        self._order = None
        lean = self.lean_game
        if lean is not None and type(answer) is int:
            if not 0 <= answer < lean.count():
                raise ValueError(f"{answer} is not a play of the current decision")
            lean.choose(lean.key_at(answer))
            self._settle()
            return
        self.game.decide(answer)
        self._settle()

    def roll(self, a: int, b: int) -> None:
        """Make the throw a game without a dice source waits for (``game.chance``)."""
        self._order = None
        self.game.roll(a, b)
        self._settle()

    def _settle(self) -> None:
        """After every input: pay a finished game's points and, in a match that goes on, start
        its next game."""
        self._order = None
        lean = self.lean_game
        if lean is not None:
            if lean.result is not None:
                white, black = self.points()
                self._unpaid = (self._unpaid[0] + white, self._unpaid[1] + black)
            elif lean.count() > self.config.actions:
                self._check_size()
            return
        while self.game.result is not None:
            white, black = self.points()
            self._unpaid = (self._unpaid[0] + white, self._unpaid[1] + black)
            match = self.match
            if match is None:
                break
            match.add_result(self.game.result)
            self.score = (match.score[0], match.score[1])
            self.crawford = match.crawford_game
            if match.is_over:
                break
            self.game = self._new_game()
            self._order = None
        self._check_size()

    def illegal_penalty(self) -> int:
        """What an illegal action costs the offender in every API (docs/learning.md): the variant's
        largest result at the current cube — its largest game value (gammon, backgammon, koks,
        trictrac's 8, per-checker N) × the cube value, so no play of the game can cost more."""
        cube = 1 if self.lean_game is not None else self.game.cube.value
        return self.config.variant.max_game_value() * cube

    def _check_size(self) -> None:
        decision = self.decision
        if isinstance(decision, PlayDecision) and len(decision.plays) > self.config.actions:
            raise GameStateError(
                f"{len(decision.plays)} legal plays exceed the action space of "
                f"{self.config.actions} ({self.config.variant.name}); pass a larger "
                "action_space_size"
            )
