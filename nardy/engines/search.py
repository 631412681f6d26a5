"""N-ply evaluation, ranking of plays and the values of the rolls, for every variant.

Definitions (equities are cubeless, in points of a single game, from the view of the player who
has just moved into an afterstate ``r``; ``V₀`` is the evaluator's):

* ``V₀(r)``: the evaluator; a finished game is scored exactly (the variant's game value).
* ``Vₙ(r) = −Σ_rolls w(roll) · best_reply_{n−1}(flip(r), roll)``: the opponent rolls each of the 21
  rolls (weight 1/36 or 2/36) and makes his best reply, valued at n−1 plies. For n = 1 that is
  the best by ``V₀``; deeper, the reply is chosen at 0-ply and valued at n−1 (gnubg's n-ply), or
  among the replies :attr:`Searcher.reply_filter` keeps.
* ``best_replyₘ(P, roll)``: the maximum over the turn's options of their ``Vₘ``. In variants where
  a roll is one segment (ordinary rolls and four-step doubles) the options are the legal plays.
  Where a roll is a whole turn plan (doubles progressions, re-rolls) the turn is played segment by
  segment, each time choosing the best result by ``V₀`` (as the bots do), and a re-roll is an
  expectation over its 21 rolls (up to :data:`MAX_REROLLS` deep; beyond that the turn is valued
  where it stands).
* Transferred steps (RULES.md §2.10: ``gulbar``, ``mad_gulbar``, ``khachapuri``, ``giul``): a turn
  that hands unplayed double steps to the opponent ends in an afterstate *and* those steps, which
  the receiver plays before his roll. ``Vₙ(r, T)`` (n ≥ 1) is then ``−max_e Σ_rolls w(roll) ·
  best_reply_{n−1}(e, roll)`` over the ends ``e`` of his ways to play ``T`` (group by group,
  ascending; a 15th checker borne off on the way ends the game), the ends chosen among as the
  replies are (:attr:`Searcher.reply_filter`, ranked by his 0-ply equity on roll), and each group
  played on from the ends of the group before that the filter keeps (with an unbounded filter:
  every way). ``V₀`` cannot see ``T``: the evaluators value positions only.
* Move filtering as gnubg does: the plays of a decision are first ranked by ``V₀``; the best one
  and up to :attr:`MoveFilter.extra` more within :attr:`MoveFilter.threshold` of it are searched
  deeper, the others keep their 0-ply value and rank below them (a 0-ply value is not compared
  with deeper ones).
* A segment after which the mover's turn goes on (a double played in full before its re-roll, a
  progression's stage before the next) is ranked at ply n ≥ 1 by the ends of the turn played on
  greedily from each play (:meth:`Searcher.rest_of_turn`), weighted by their probabilities: a
  progression's ends at ``Vₙ``; a re-roll's at ``Vₙ₋₁``, the mover's own roll being the ply's
  chance, as the opponent's is elsewhere (valuing them at ``Vₙ`` made one 1-ply decision of
  khachapuri take 20 s: each end's opponent turns enumerate their own re-rolls). Steps handed to
  the mover are followed by the groups still handed to him and his roll: his plays are valued as
  the search values the opponent's start (``−Vₙ`` from the other side). At 0-ply by ``V₀`` of
  the play's result, as the bots choose.
* The value of a roll, ``roll_value(P, roll)``: what the player on roll in ``P`` expects after his
  best turn with that roll (at the analysis ply); the pre-roll equity is their mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from nardy.engines import blas  # noqa: F401  # isort: skip  # single-threaded BLAS, before numpy
import numpy as np
import numpy.typing as npt

from nardy.core.dice import Roll
from nardy.core.errors import GameStateError
from nardy.core.game import CubeSettings, Game, PlayDecision
from nardy.core.movegen import BoardKey, board_of, position_of
from nardy.core.position import Position
from nardy.core.turnplan import (
    NO_TRANSFER,
    Transfer,
    after_stage,
    all_home,
    chain_handover,
    stage_handover,
)
from nardy.core.variant import LegalPlays, Variant
from nardy.engines.evaluator import Evaluator, key_equities, shortlist, shortlists

__all__ = [
    "MAX_REROLLS",
    "NO_TRANSFER",
    "ROLLS",
    "MoveFilter",
    "RankedPlay",
    "RestOfTurn",
    "Searcher",
    "Transfer",
    "handed_over",
]

Array = npt.NDArray[np.float64]

ROLLS: tuple[tuple[Roll, float], ...] = tuple(
    ((a, b), (1.0 if a == b else 2.0) / 36.0) for a in range(1, 7) for b in range(a, 7)
)
"""The 21 distinct rolls (higher die second) with their probabilities."""
MAX_REROLLS = 2
"""Re-rolls enumerated within one turn (the third and later are rare: (1/6)³ of the turns at most)."""
_CACHE_LIMIT = 200_000
"""Afterstates whose 0-ply value is kept (then the cache starts again): a few hundred MB at most."""
_OPTIONS_LIMIT = 50_000
"""(position, roll) pairs whose options are kept."""
_LUCK_LIMIT = 20_000
"""Positions whose throws' values are kept (:meth:`Searcher.throw_luck`, ``remember``)."""


@dataclass(frozen=True, slots=True)
class MoveFilter:
    """gnubg's move filter: keep the best option and up to ``extra`` more within ``threshold``
    (equity) of it for the deeper search (gnubg's default: 8 within 0.16)."""

    extra: int = 8
    threshold: float = 0.16

    def keep(self, values: Array) -> list[int]:
        """Indexes of the options to search deeper, best first."""
        order = np.argsort(-values, kind="stable")
        best = values[order[0]]
        kept = [int(order[0])]
        for index in order[1 : self.extra + 1]:
            if best - values[index] <= self.threshold:
                kept.append(int(index))
        return kept


@dataclass(frozen=True, slots=True)
class RankedPlay:
    """One legal play of a decision with its equity (mover's view, after the play)."""

    index: int
    """Its index in the decision's legal plays."""
    text: str
    equity: float
    ply: int
    """The ply its equity was computed at (plays filtered out keep their 0-ply equity and rank
    below the plays searched deeper)."""
    loss: float = 0.0
    """Equity lost against the best play (0 for a play valued higher outside the evaluator's short
    list, or at 0-ply where the best was searched deeper)."""
    candidate: bool = True
    """Whether it is on the evaluator's short list (all plays are, for most evaluators)."""


Option = list[tuple[float, Position, Transfer]]
"""One way to play a roll: its end-of-turn afterstates with their probabilities, each with the
steps it hands to the opponent."""


@dataclass(frozen=True, slots=True)
class RestOfTurn:
    """How a turn goes on after a segment (:meth:`Searcher.rest_of_turn`)."""

    ends: Option
    rerolled: bool = False
    """Whether it starts with the mover's re-roll: a chance, so its ends are valued one ply
    shallower (module doc)."""


@dataclass
class Searcher:
    """N-ply evaluation of one variant with one evaluator."""

    variant: Variant
    evaluator: Evaluator
    move_filter: MoveFilter = field(default_factory=MoveFilter)
    """Which plays of a decision (:meth:`rank`) are searched at the full depth."""
    reply_filter: MoveFilter = field(default_factory=lambda: MoveFilter(extra=0, threshold=0.0))
    """Which replies inside the search are valued deeper than 0-ply: by default the 0-ply best
    only, as gnubg's n-ply evaluation does (the reply is chosen at 0-ply, valued at n−1)."""
    _cache: dict[BoardKey, float] = field(default_factory=dict, repr=False)
    """``V₀`` of afterstates by their board keys (a position's one key, :func:`board_of`). The
    greedy turns (where a double can re-roll or progress) and the 0-ply values of the 21 rolls
    (:meth:`roll_values`) value every result of a segment by the key the generator gives it, and
    only those not yet valued become positions: keyed by positions, making a position of each
    result and hashing it took a third of a gulbar, khachapuri or trictrac rollout."""
    _options: dict[tuple[Position, Roll], list[Option]] = field(default_factory=dict, repr=False)
    _luck: dict[tuple[Position, int], dict[Roll, float]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        turn = self.variant.rules.turn
        self._simple = turn.doubles == "four"
        self._rerolls = turn.doubles == "reroll"
        self._checkers = self.variant.checkers
        rules = self.variant.rules
        self._mother = rules.hitting.pins and rules.game_end.mother != "off"
        """Whether a play can also end the game by the mother rule (RULES.md §3.12.2)."""

    # -- values of afterstates ------------------------------------------------------------------

    def values(
        self,
        afterstates: Sequence[Position],
        ply: int = 0,
        transfers: Sequence[Transfer] | None = None,
    ) -> Array:
        """``V_ply`` of each afterstate (mover's view), batched; ``transfers``: the steps each
        hands to the opponent (module doc; none if not given)."""
        if ply < 0:
            raise ValueError(f"ply must be 0 or more, not {ply}")
        if transfers is not None and len(transfers) != len(afterstates):
            raise ValueError("one transfer per afterstate")
        if ply == 0:
            return self._values0(afterstates)
        return self._values_deep(afterstates, ply, transfers)

    def terminal(self, position: Position) -> float | None:
        """The exact value of an afterstate that ends the game (mover's view), or None: the last
        checker off (§2.6), or in plakoto the mother rule (§3.12.2: "if both players' mothers are
        pinned, the game ends at once as a draw"; a lone pinned mother, 2 points to the pinner)."""
        if position.off[0] == self._checkers:
            return float(self.variant.game_value(self.variant.loser_side(position, 1)))
        if self._mother:
            end = self.variant.mother_end(position)
            if end is not None:
                sign = {"win": 1.0, "loss": -1.0, "draw": 0.0}[end.outcome]
                return sign * end.value
        return None

    def _values0(self, afterstates: Sequence[Position]) -> Array:
        return self._key_values0([tuple(board_of(p)) for p in afterstates], afterstates)

    def _key_values0(
        self, keys: Sequence[BoardKey], positions: Sequence[Position] | None = None
    ) -> Array:
        """``V₀`` of the afterstates with board keys ``keys``, from :attr:`_cache` or in one
        batch of those not in it (each once, in the order first met). ``positions``: the same
        afterstates where the caller has them made; without them the evaluator reads the keys
        (:func:`~nardy.engines.evaluator.key_equities`): making a position of each result of 21
        rolls to encode it took a sixth of a khachapuri rollout."""
        out = np.empty(len(keys))
        cache = self._cache
        todo: dict[BoardKey, list[int]] = {}
        made: list[Position] = []
        for i, key in enumerate(keys):
            known = cache.get(key)
            if known is None:
                waiting = todo.get(key)
                if waiting is not None:
                    waiting.append(i)
                    continue
                if positions is not None:
                    known = self.terminal(positions[i])
                    if known is None:
                        made.append(positions[i])
                else:
                    known = self._key_terminal(key)
                if known is None:
                    todo[key] = [i]
                    continue
                cache[key] = known
            out[i] = known
        if todo:
            if len(cache) > _CACHE_LIMIT:
                cache.clear()
            values = (
                self.evaluator.afterstate_equities(made)
                if positions is not None
                else key_equities(self.evaluator, list(todo))
            )
            for (key, indices), value in zip(todo.items(), values, strict=True):
                cache[key] = float(value)
                for i in indices:
                    out[i] = value
        return out

    def _key_terminal(self, key: BoardKey) -> float | None:
        """:meth:`terminal` of the afterstate with board key ``key``, making its position only
        where it may have ended the game: the mover's last checker off (``key[0]``, his off),
        or a variant with the mother rule."""
        if key[0] == self._checkers or self._mother:
            return self.terminal(position_of(key))
        return None

    def _values_deep(
        self, afterstates: Sequence[Position], ply: int, transfers: Sequence[Transfer] | None
    ) -> Array:
        out = np.zeros(len(afterstates))
        # The opponent's starts: where he rolls from, after any steps handed to him, each
        # (afterstate index, start index among that afterstate's, start); ends that finish the
        # game while he plays the handed steps are valued at once.
        starts: list[tuple[int, int, Position]] = []
        finished: dict[int, float] = {}
        for i, position in enumerate(afterstates):
            terminal = self.terminal(position)
            if terminal is not None:
                out[i] = terminal
                continue
            opponent = self.variant.flip(position)
            handed = transfers[i] if transfers is not None else NO_TRANSFER
            if not handed:
                starts.append((i, 0, opponent))
                continue
            ends, won = self._transfer_ends(opponent, handed)
            if won is not None:
                finished[i] = won
            kept = self._kept_ends(ends)
            starts.extend((i, j, ends[k]) for j, k in enumerate(kept))
        groups: list[list[Option]] = []
        for _, _, start in starts:
            groups.extend(self.roll_options(start))
        best = self._best_options(groups, ply - 1)
        # Each start's value (his expectation over his rolls); the best start of each afterstate.
        value_of: dict[int, float] = dict(finished)
        for n, (i, _, _) in enumerate(starts):
            expectation = sum(
                weight * best[n * len(ROLLS) + r] for r, (_, weight) in enumerate(ROLLS)
            )
            value_of[i] = max(value_of.get(i, -np.inf), expectation)
        for i, value in value_of.items():
            out[i] = -value
        return out

    def _transfer_ends(
        self, position: Position, handed: Transfer
    ) -> tuple[list[Position], float | None]:
        """Where the player on roll in ``position`` can stand after playing the steps ``handed``
        to him (RULES.md §2.10 item 3: groups by value, ascending, each as far as possible), and
        the best value of an end that bears off his last checker (None if none does). Each group
        but the last is played on from the ends the reply filter keeps (:meth:`_kept_ends`), as a
        turn plan's segments are played one by one: a whole progression handed over (giul's,
        up to six groups of four) has millions of ways through every group, where one analysis
        grew past 20 GB."""
        frontier = [position]
        won: float | None = None
        for group, (value, count) in enumerate(sorted(handed)):
            if group:
                frontier = [frontier[k] for k in self._kept_ends(frontier)]
            after: dict[Position, None] = {}
            for start in frontier:
                for play in self.variant.legal_plays(start, (value,) * count):
                    terminal = self.terminal(play.result)
                    if terminal is not None:
                        won = terminal if won is None else max(won, terminal)
                    else:
                        after[play.result] = None
            frontier = list(after)
        return frontier, won

    def _kept_ends(self, ends: Sequence[Position]) -> list[int]:
        """The ends of played transferred steps searched on (:attr:`reply_filter`, ranked by
        the receiver's 0-ply equity on roll, ``−V₀`` of the position from the other side)."""
        if not ends:
            return []
        equities = -self._values0([self.variant.flip(end) for end in ends])
        return self.reply_filter.keep(equities)

    def _option_values(self, options: list[Option], ply: int) -> Array:
        """The value of each option (probability-weighted ``V_ply`` of its afterstates)."""
        flat = [position for option in options for _, position, _ in option]
        handed = [transfer for option in options for _, _, transfer in option]
        values = self.values(flat, ply, handed if any(handed) else None)
        out = np.empty(len(options))
        k = 0
        for j, option in enumerate(options):
            total = 0.0
            for probability, _, _ in option:
                total += probability * values[k]
                k += 1
            out[j] = total
        return out

    def _best_options(self, groups: list[list[Option]], ply: int) -> list[float]:
        """For each group of options (one roll), the value of its best option at ``ply``, with
        filtering: all options at 0-ply in one batch, the survivors at ``ply`` in one batch."""
        flat = [option for options in groups for option in options]
        values0 = self._option_values(flat, 0)
        if ply == 0:
            best, k = [], 0
            for options in groups:
                best.append(float(values0[k : k + len(options)].max()))
                k += len(options)
            return best
        kept_per_group: list[list[int]] = []
        deep: list[Option] = []
        k = 0
        for options in groups:
            kept = self.reply_filter.keep(values0[k : k + len(options)])
            kept_per_group.append(kept)
            deep.extend(options[j] for j in kept)
            k += len(options)
        deep_values = self._option_values(deep, ply)
        best, k = [], 0
        for kept in kept_per_group:
            best.append(float(deep_values[k : k + len(kept)].max()))
            k += len(kept)
        return best

    # -- turns ------------------------------------------------------------------------------------

    def options(self, position: Position, roll: Roll) -> list[Option]:
        """The ways the player on roll in ``position`` can play ``roll`` (see the module doc)."""
        return self._options_of(position, [roll])[0]

    def roll_options(self, position: Position) -> list[list[Option]]:
        """:meth:`options` of each of the 21 rolls, in :data:`ROLLS` order, enumerated together
        (:meth:`_options_of`)."""
        return self._options_of(position, [roll for roll, _ in ROLLS])

    def _options_of(
        self, position: Position, rolls: Sequence[Roll], rerolls: int = 0
    ) -> list[list[Option]]:
        """:meth:`options` of each roll (``rerolls``: re-rolls already made in the turn). The
        rolls that are one segment (every roll where a double is four steps; a double's first
        segment where it is re-rolled; elsewhere the non-doubles, whose dice are one segment in
        every turn plan and never handed over, RULES.md §2.10 item 2) are enumerated together:
        their short lists are chosen in one batch from the generator's board keys, and only the
        results kept become positions. The luck of every roll of every decision is most of an
        analysis, and most results are not kept."""
        cache = self._options
        # A re-rolled double's turn depends on how many re-rolls are left: only the first roll's
        # is kept.
        keep = [rerolls == 0 or a != b for a, b in rolls]
        known = [
            cache.get((position, roll)) if k else None for roll, k in zip(rolls, keep, strict=True)
        ]
        batched = [
            n
            for n, (a, b) in enumerate(rolls)
            if known[n] is None and (self._simple or self._rerolls or a != b)
        ]
        if len(cache) > _OPTIONS_LIMIT:
            cache.clear()
        if batched:
            legal, results = self._first_segments(position, [rolls[n] for n in batched])
            if self._simple:
                found = [
                    [[(1.0, position_of(key), NO_TRANSFER)] for key in group] for group in results
                ]
            else:
                picks = self._greedy_picks(results)
                found = [
                    [
                        self._after_segment(
                            position_of(group[pick]), rolls[n], plays.dice_used, rerolls
                        )
                    ]
                    for n, group, pick, plays in zip(batched, results, picks, legal, strict=True)
                ]
            for n, made in zip(batched, found, strict=True):
                known[n] = made
                if keep[n]:
                    cache[(position, rolls[n])] = made
        out: list[list[Option]] = []
        for roll, have in zip(rolls, known, strict=True):
            if have is None:  # a progression's double: its stages one by one
                have = cache[(position, roll)] = [self._greedy_turn(position, roll)]
            out.append(have)
        return out

    def _first_segments(
        self, position: Position, rolls: Sequence[Roll]
    ) -> tuple[list[LegalPlays], list[list[BoardKey]]]:
        """The legal plays of each roll's first segment from ``position`` (a double's four steps)
        and the board keys of the results a choice is made among (the evaluator's short list,
        or all of them), the short lists chosen in one batch, so that only the results a caller
        keeps become positions."""
        legal = [
            self.variant.legal_plays(position, (a, b) if a != b else (a,) * 4) for a, b in rolls
        ]
        keys = [plays.board_keys() for plays in legal]
        results = [
            group if kept is None else [group[j] for j in kept]
            for group, kept in zip(keys, shortlists(self.evaluator, keys), strict=True)
        ]
        return legal, results

    def _after_segment(self, end: Position, roll: Roll, used: int, rerolls: int) -> Option:
        """A turn whose roll was played as one segment to ``end`` with ``used`` dice: over, but
        where a double played in full is re-rolled (RULES.md §2.9) and one played in part hands
        its other steps over (§2.10)."""
        if roll[0] != roll[1] or not self._rerolls or self.terminal(end) is not None:
            return [(1.0, end, NO_TRANSFER)]
        if used == 4:
            return self._rerolled(end, rerolls)
        return [(1.0, end, handed_over(self.variant, (roll[0],) * 4, "roll", used))]

    def _greedy_picks(self, groups: list[list[BoardKey]]) -> list[int]:
        """The index of the result a greedy turn plays in each group of one segment's eligible
        results (board keys): the first best by ``V₀`` (a single one without valuing it, as a
        forced play), all groups valued in one batch."""
        valued = [group for group in groups if len(group) > 1]
        values = self._key_values0([result for group in valued for result in group])
        picks: list[int] = []
        k = 0
        for group in groups:
            if len(group) == 1:
                picks.append(0)
                continue
            picks.append(int(np.argmax(values[k : k + len(group)])))
            k += len(group)
        return picks

    def _greedy_turn(self, position: Position, roll: Roll) -> Option:
        """The end-of-turn afterstate of a progression's turn played greedily by ``V₀``, stage by
        stage in the kernel's simulated turn (module doc; a re-rolled double is played by
        :meth:`_after_segment`, so this turn never asks for another roll)."""
        game = _OneTurn(self.variant, position, roll)
        while game.stopped is None and isinstance(game.decision, PlayDecision):
            keys = game.decision.plays.board_keys()
            eligible = shortlists(self.evaluator, [keys])[0] or list(range(len(keys)))
            pick = self._greedy_picks([[keys[j] for j in eligible]])[0]
            game.decide(eligible[pick])
        if isinstance(game.stopped, _TurnOver):
            # The turn passed: the opponent (1 in the simulated game) holds what was handed over.
            handed = tuple(sorted(game.pending_transfer[1]))
            return [(1.0, self.variant.flip(game.position), handed)]
        if game.result is None:
            raise GameStateError("the simulated turn stopped at an unexpected decision")
        return [(1.0, game.position, NO_TRANSFER)]

    def _rerolled(self, here: Position, rerolls: int) -> Option:
        """The rest of a turn that re-rolls in ``here`` (mover's view) after ``rerolls`` re-rolls:
        an expectation over the 21 rolls, each played greedily."""
        if rerolls >= MAX_REROLLS:
            return [(1.0, here, NO_TRANSFER)]
        # Each re-roll's segment is the first of a turn (:meth:`_options_of`, in one batch).
        again = self._options_of(here, [roll for roll, _ in ROLLS], rerolls + 1)
        out: Option = []
        for (_, weight), [option] in zip(ROLLS, again, strict=True):
            for probability, end, handed in option:
                out.append((weight * probability, end, handed))
        return out

    def rest_of_turn(
        self, start: Position, result: Position, dice: Sequence[int], kind: str, used: int
    ) -> RestOfTurn | None:
        """How the mover's turn goes on after a segment (``dice`` of ``kind``, from ``start``,
        ``used`` of them played) ends in ``result``: its end-of-turn afterstates, the rest played
        greedily as the search's turns are, or None where the turn ends with the segment. A
        double played in full is re-rolled (RULES.md §2.9: ``gulbar``, ``khachapuri``); a
        progression's stage played in full is followed by the next unless it was the last (§2.8:
        the 6s, or the mover home at the stage's start, or coming home in it, where
        ``fourth_step_extra`` grants one more stage to an entry on the fourth step)."""
        turn = self.variant.rules.turn
        if used < 4 or len(set(dice)) != 1 or self.terminal(result) is not None:
            return None  # a double played in part ends the turn (its rest handed over or lost)
        if turn.doubles == "reroll" and kind in ("roll", "reroll"):
            # The re-rolls already made are not known here; the first roll's count is used.
            return RestOfTurn(self._rerolled(result, 0 if kind == "roll" else 1), rerolled=True)
        if turn.doubles != "progression" or kind != "stage":
            return None
        x = dice[0]
        # The stage's start tells whether it was already the last (home when it began).
        home_before = all_home(start)
        go_on = after_stage(
            x,
            x,
            used,
            home_before,
            home_before,
            all_home(result),
            result.off[0] == start.off[0],
            turn.progression_stop == "fourth_step_extra",
        )[0]
        if not go_on:
            return None
        following = (x + 1,) * 4
        if self.variant.legal_plays(result, following).dice_used == 0:
            # A later stage that cannot start passes its steps (and, unless it is the last, the
            # later stages'): the simulated turn would take it for a first stage not started.
            handed = handed_over(
                self.variant, following, "stage", 0, start=result, result=result, first_stage=False
            )
            return RestOfTurn([(1.0, result, handed)])
        # The simulated turn from ``result`` with the next stage's double plays that stage and
        # on, each stage the last once the mover is home at its start, as the kernel's does.
        return RestOfTurn(self._greedy_turn(result, (x + 1, x + 1)))

    # -- decisions --------------------------------------------------------------------------------

    def rank(
        self,
        position: Position,
        dice: Sequence[int],
        ply: int = 0,
        *,
        include: int | None = None,
        handed: Transfer = NO_TRANSFER,
        handed_by_play: Sequence[Transfer] | None = None,
        kind: str = "roll",
        then: Transfer = NO_TRANSFER,
    ) -> list[RankedPlay]:
        """Every legal play of ``position`` with ``dice`` (one segment of ``kind``), best first, by
        the equity of its result at ``ply`` (filtered; ``include``: an index always searched at
        ``ply``, e.g. the play made). With an evaluator's short list, the best is chosen among it
        and the plays outside it follow (``candidate`` False). ``handed``: the steps the segment
        hands to the opponent, whichever play is made, or ``handed_by_play`` those of each
        legal play, in their order (:func:`handed_over`). Deeper than 0-ply, a play after which
        the mover's turn goes on (:meth:`rest_of_turn`) is valued at the turn's ends (module
        doc), not as if the opponent rolled next; so is a segment of steps handed to the mover
        (``kind`` "transfer"), after which he plays the groups ``then`` still handed to him and
        rolls (RULES.md §2.10 item 3; his roll is the ply's chance)."""
        plays = self.variant.legal_plays(position, dice)
        results = [play.result for play in plays]
        values = self._values0(results)
        plies = [0] * len(plays)
        eligible = shortlist(self.evaluator, results) or list(range(len(results)))
        if ply > 0:
            kept = [eligible[j] for j in self.move_filter.keep(values[eligible])]
            if include is not None and include not in kept:
                kept.append(include)
            if kind == "transfer":
                deep = self._before_roll([results[j] for j in kept], ply, then)
            else:
                deep = self._turn_values(
                    position,
                    [results[j] for j in kept],
                    dice,
                    kind,
                    ply,
                    [handed_by_play[j] if handed_by_play else handed for j in kept],
                    plays.dice_used,
                )
            for j, value in zip(kept, deep, strict=True):
                values[j] = value
                plies[j] = ply
        chosen = set(eligible)
        # The plays searched at the full depth rank above those the filter left at 0-ply, as gnubg
        # lists its deepest evaluations first: the search lowers an optimistic net's values, so a
        # 0-ply value left standing would outrank the very plays the search was for.
        order = sorted(
            range(len(plays)), key=lambda j: (j not in chosen, plies[j] < ply, -values[j], j)
        )
        top = values[order[0]]
        return [
            RankedPlay(
                j,
                plays[j].text,
                float(values[j]),
                plies[j],
                max(0.0, float(top - values[j])),
                j in chosen,
            )
            for j in order
        ]

    def _turn_values(
        self,
        position: Position,
        results: Sequence[Position],
        dice: Sequence[int],
        kind: str,
        ply: int,
        handed: Sequence[Transfer],
        used: int,
    ) -> list[float]:
        """``V_ply`` of each result of a segment, at the ends of the turn where it goes on."""
        # Each result's ends and the ply they are valued at.
        by_ply: dict[int, list[tuple[int, Option]]] = {}
        for n, result in enumerate(results):
            rest = self.rest_of_turn(position, result, dice, kind, used)
            if rest is None:
                by_ply.setdefault(ply, []).append((n, [(1.0, result, handed[n])]))
            else:
                by_ply.setdefault(ply - 1 if rest.rerolled else ply, []).append((n, rest.ends))
        out = [0.0] * len(results)
        for depth, group in by_ply.items():
            deep = self._option_values([ends for _, ends in group], depth)
            for (n, _), value in zip(group, deep, strict=True):
                out[n] = float(value)
        return out

    def _before_roll(self, positions: Sequence[Position], ply: int, then: Transfer) -> list[float]:
        """The value at ``ply`` for the player about to roll in each position (his view), after
        he plays the handed groups ``then``: ``V_ply`` from the other side, as the search values
        the opponent's start (a position he has already won is scored exactly)."""
        terminals = [self.terminal(position) for position in positions]
        todo = [n for n, terminal in enumerate(terminals) if terminal is None]
        flipped = [self.variant.flip(positions[n]) for n in todo]
        deep = self.values(flipped, ply, [then] * len(flipped) if then else None)
        out = [0.0 if terminal is None else terminal for terminal in terminals]
        for n, value in zip(todo, deep, strict=True):
            out[n] = -float(value)
        return out

    def best_play(self, position: Position, dice: Sequence[int], ply: int = 0) -> int:
        """The index of the best legal play at ``ply``."""
        return self.rank(position, dice, ply)[0].index

    def roll_values(self, position: Position, ply: int = 0) -> dict[Roll, float]:
        """For each of the 21 rolls, the mover's equity after his best turn with it (``ply``)."""
        if ply == 0 and self._simple:
            return self._one_segment_roll_values(position)
        best = self._best_options(self.roll_options(position), ply)
        return {roll: value for (roll, _), value in zip(ROLLS, best, strict=True)}

    def _one_segment_roll_values(self, position: Position) -> dict[Roll, float]:
        """:meth:`roll_values` at 0-ply where every roll is one segment: the best ``V₀`` of each
        roll's results, valued by their board keys without making options of them (the
        luck of every roll of every rollout trial and analysed decision). The same values, in
        the same batch, as :meth:`_best_options` of :meth:`roll_options` (``0.0 + 1.0 * v``,
        as an option's probability-weighted sum has it, down to the sign of a zero)."""
        rolls = [roll for roll, _ in ROLLS]
        _, results = self._first_segments(position, rolls)
        values = 0.0 + 1.0 * self._key_values0([key for group in results for key in group])
        best: dict[Roll, float] = {}
        k = 0
        for roll, group in zip(rolls, results, strict=True):
            best[roll] = float(values[k : k + len(group)].max())
            k += len(group)
        return best

    def equity(self, position: Position, ply: int = 0) -> float:
        """The cubeless equity of the player on roll in ``position`` at ``ply`` (0 = the
        evaluator; n = the mean over his rolls of his best (n−1)-ply turn)."""
        if ply == 0:
            return -float(self._values0([self.variant.flip(position)])[0])
        values = self.roll_values(position, ply - 1)
        return sum(weight * values[roll] for roll, weight in ROLLS)

    def luck(self, position: Position, roll: Sequence[int], ply: int = 0) -> float:
        """The luck of ``roll`` for the player on roll in ``position``: his equity after his best
        turn with it minus the mean of that over all rolls (so its expectation is exactly 0)."""
        return _luck_of(self.roll_values(position, ply), roll)

    def luck_values(self, position: Position, ply: int = 0) -> dict[Roll, float]:
        """For each of the 21 rolls, what a throw of it is worth to the player on roll in
        ``position``, as the analysis and the rollouts measure luck (:meth:`throw_luck`): in a
        re-roll chain at 0-ply :meth:`throw_values`, elsewhere :meth:`roll_values` at ``ply``."""
        if self._rerolls and ply == 0:
            values = self.throw_values(position)
            return {roll: value for (roll, _), value in zip(ROLLS, values, strict=True)}
        return self.roll_values(position, ply)

    def throw_values(self, position: Position) -> list[float]:
        """For each of the 21 rolls (:data:`ROLLS` order), a cheap value of that throw for the
        player on roll in ``position``: his 0-ply value after the first segment of the turn, its
        play chosen greedily (as the search's turns and the rollouts choose), the rest of the
        turn not played out. Where that segment is a double played in full and the variant
        re-rolls it (RULES.md §2.9: "if the player managed all 4 moves, he throws again"), the
        value is his 0-ply equity on roll there, the re-roll still to come; a double played in
        part is valued where it ends (``V₀`` cannot see the steps it hands over).

        It is the value :meth:`luck` takes with the re-rolls' turns not enumerated: that values
        each double's re-rolls, 21 greedy turns each and again for a double among them, at every
        roll, where this is 21 segments and one evaluation per double (a rollout of gulbar took
        minutes a position). A throw of a re-roll chain (§2.9: "every roll is its own segment")
        is valued the same way from where it is thrown."""
        rolls = [roll for roll, _ in ROLLS]
        legal, results = self._first_segments(position, rolls)
        picks = self._greedy_picks(results)
        ends = [position_of(group[pick]) for group, pick in zip(results, picks, strict=True)]
        rerolled = [
            self._rerolls and a == b and plays.dice_used == 4 and self.terminal(end) is None
            for (a, b), plays, end in zip(rolls, legal, ends, strict=True)
        ]
        # The values of the ends are in the cache already where their segment had a choice.
        valued = self._values0(
            [
                self.variant.flip(end) if again else end
                for end, again in zip(ends, rerolled, strict=True)
            ]
        )
        return [
            -float(value) if again else float(value)
            for value, again in zip(valued, rerolled, strict=True)
        ]

    def throw_luck(
        self, position: Position, roll: Sequence[int], ply: int = 0, *, remember: bool = False
    ) -> float:
        """The luck of a throw (a roll, or a re-roll of a chain) as the analysis and the rollouts
        count it: its value (:meth:`luck_values`) minus the mean over the 21 rolls, so its
        expectation is exactly 0, whatever the values. In a re-roll chain (RULES.md §2.9) at
        0-ply every throw has its own luck, 21 segments a throw (:meth:`throw_values`); valuing
        each double with its re-rolls played out instead (:meth:`luck`, two re-rolls deep, 21
        greedy turns each) took 99 % of a gulbar analysis, about 5,000 CPU-s for 1,000 games.
        Elsewhere it is :meth:`luck`.

        ``remember``: keep the position's values for the next throw from it. A rollout's first
        rolls are thrown from a few positions that thousands of trials share (one, then one per
        roll, …), and valuing them again was a fifth of a khachapuri rollout."""
        if not remember:
            return _luck_of(self.luck_values(position, ply), roll)
        key = (position, ply)
        values = self._luck.get(key)
        if values is None:
            if len(self._luck) > _LUCK_LIMIT:
                self._luck.clear()
            values = self._luck[key] = self.luck_values(position, ply)
        return _luck_of(values, roll)


def _luck_of(values: dict[Roll, float], roll: Sequence[int]) -> float:
    """The value of ``roll`` among the 21 rolls' ``values`` minus their probability-weighted
    mean: a luck whose expectation is exactly 0, whatever the values."""
    key = (min(roll[0], roll[1]), max(roll[0], roll[1]))
    mean = sum(weight * values[r] for r, weight in ROLLS)
    return values[key] - mean


def handed_over(
    variant: Variant,
    dice: Sequence[int],
    kind: str,
    used: int,
    *,
    start: Position | None = None,
    result: Position | None = None,
    first_stage: bool = True,
) -> Transfer:
    """What a segment of ``dice`` (its ``kind``, RULES.md's segment kinds) in which ``used`` dice
    are played (the same number for every play) hands to the opponent when the play made ends in
    ``result``. Re-roll variants with transfer (``gulbar``, ``khachapuri``): a rolled double
    played in part passes its other steps, whatever the play (§2.10 items 1-2). Progression
    variants (``mad_gulbar``, ``giul``): a stage (``start`` its position; ``first_stage``: the
    rolled one) played in part passes its other steps and, unless the mover is home before or
    after it (the stage is then the last, §2.8 item 4), the later stages too; a first stage
    not started passes nothing."""
    turn = variant.rules.turn
    if not turn.transfer or kind not in ("roll", "reroll", "stage"):
        return NO_TRANSFER
    if len(dice) != 4 or len(set(dice)) != 1 or used >= 4:
        return NO_TRANSFER  # not a double (never passed), or played in full
    x = dice[0]
    if turn.doubles != "progression":
        return chain_handover(x, used)
    if start is None or result is None:
        raise ValueError("a progression stage's hand-over needs its start and result")
    # Home at the stage's start means an earlier stage (or the roll) already made it the last.
    home_before = all_home(start)
    _, _, short, last = after_stage(
        x,
        x if first_stage else 0,
        used,
        home_before,
        home_before,
        all_home(result),
        result.off[0] == start.off[0],
        False,  # (the extra stage needs a stage played in full: never one that hands over)
    )
    return stage_handover(x, used, last) if short else NO_TRANSFER  # not short: "not started"


class _TurnOver(Exception):
    """The simulated turn ended (the opponent is about to roll)."""


class _NeedRoll(Exception):
    """The simulated turn needs another roll (a re-roll after a fully played double)."""


class _TurnDice:
    """The dice of one simulated turn: its roll, then :class:`_NeedRoll`."""

    def __init__(self, roll: Roll) -> None:
        self._roll: Roll | None = roll

    def roll(self) -> Roll:
        if self._roll is None:
            raise _NeedRoll
        roll, self._roll = self._roll, None
        return roll


class _OneTurn(Game):
    """A game that plays one turn of the player on roll and stops (``stopped``) when it ends or
    needs another roll."""

    def __init__(self, variant: Variant, position: Position, roll: Roll) -> None:
        self.stopped: Exception | None = None
        super().__init__(
            variant,
            _TurnDice(roll),
            position=position,
            mover=0,
            cube=CubeSettings(),
            first_turn=True,
            auto_forced=True,
        )

    def _advance(self, answer: object = None) -> None:
        try:
            super()._advance(answer)
        except (_TurnOver, _NeedRoll) as stop:
            self.stopped = stop
            self.decision = None

    def _switch(self) -> None:
        super()._switch()
        raise _TurnOver
