"""Rollouts: the equity of a decision's best plays measured by playing each out many times.

A rollout of a decision (a position and a roll) plays every candidate play, then the game on from
its result, ``trials`` times, each side choosing its plays by the evaluator at 0-ply (as the bots
do), and averages the results (cubeless points of one game, the mover's view). The turns are the
kernel's own (:class:`~nardy.core.game.Game`, its throws answered as chance nodes), so re-rolls,
progressions, transferred steps and every game end are played by the rules of RULES.md and no copy
of them lives here.

* **Truncated** (``truncate=N``): after N more turns the game stops where it stands and the
  player to roll is credited with the evaluator's 0-ply equity; **full** (None): played to the end.
* **The same dice for every candidate** (common random numbers): trial ``t`` of every candidate
  draws its throws from the same seeded stream, ``Random(f"{seed}:{t}")``, so a difference
  between two plays is not blurred by their dice being different; the same seed gives the same
  rollout.
* **Variance reduction** by the luck of each roll as the evaluator sees it: at every roll (the
  first throw of a turn) the roller's luck is his 0-ply value after his best turn with that roll
  minus its mean over the 21 rolls (:meth:`~nardy.engines.search.Searcher.luck`), and the
  trial's result less the luck of the mover's rolls plus that of the opponent's is the estimate.
  The luck has mean 0 whatever the evaluator (the dice are fair), so the estimate stays unbiased;
  the better the evaluator, the more of the dice's noise it takes out. Any luck of the form
  f(roll) − (the mean of f over the 21 rolls), f a function of the position the roll is thrown
  in, has mean 0 given everything before that throw, so a sum of such terms keeps the estimate
  unbiased however well or badly f values the throw: f need only be cheap and go with the
  result.
* **Re-roll chains** (RULES.md §2.9: ``gulbar``, ``khachapuri``): every throw of the chain, the
  roll and each re-roll, has its own luck, its f the 0-ply value after the throw's first segment
  alone, played greedily, and a double played in full valued as the roller's 0-ply equity on
  roll where it ends, the re-roll still to come (:meth:`~nardy.engines.search.Searcher.throw_luck`).
  The turn's luck is then the sum of its throws' and telescopes to the value where the turn ends
  less the mean over the first roll, short only of how far the equity on roll differs from the
  mean over the re-roll's 21 segments. :meth:`~nardy.engines.search.Searcher.luck` (``nardy
  analyze``'s) values a double's turn with its re-rolls played out greedily, 21 turns each and
  again for a double among them, at every roll of every trial: a rollout of gulbar took minutes
  a position, where this luck takes 21 segments a throw, and took out about as much of the noise
  in gulbar and more in khachapuri, the re-rolls' own luck included (docs/analysis.md,
  *Benchmark positions*).
* The SE of each play is the standard error of its trials' estimates; that of a difference
  between two plays, of the paired differences trial by trial (smaller than either, the dice
  being shared). Both are also given without the variance reduction, from the same trials.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from nardy.engines import blas  # noqa: F401  # isort: skip  # single-threaded BLAS, before numpy

import numpy as np

from nardy.analysis.records import GameInput, RecordError
from nardy.core.errors import GameStateError
from nardy.core.game import CubeSettings, Game, PlayDecision, TakeDecision
from nardy.core.movegen import position_of
from nardy.core.position import Position
from nardy.core.record import Replay
from nardy.core.variant import Variant
from nardy.engines.evaluator import Evaluator, make_evaluator, shortlists
from nardy.engines.search import RankedPlay, Searcher

__all__ = [
    "DEFAULT_TRIALS",
    "BatchRunner",
    "Executor",
    "PlayRollout",
    "Rollout",
    "Trial",
    "TrialDice",
    "TrialJob",
    "play_on",
    "play_out",
    "record_decision",
    "roll_decisions",
    "rollout",
]

DEFAULT_TRIALS = 144
"""Trials per play by default (a multiple of 36)."""
_BATCH = 36
"""Trials between two checks of the target SE."""
_SHARED_ROLLS = 3
"""The rolls of a trial whose throws' values are kept (:meth:`Searcher.throw_luck`): every trial
of a candidate throws its first roll from one position, its second from one of 21 (the policy is
the same), its third from one of 441; later rolls' positions are rarely met twice. Keeping the
first three's took a fifth of a khachapuri rollout of 1,296 trials off, the results unchanged."""
_MAX_TURNS = 2000
"""A game that lasts longer than this is stopped where it stands (no variant's game comes close;
it guards against a policy that cannot make progress)."""


@dataclass(frozen=True, slots=True)
class Trial:
    """One trial of one candidate: its result and the luck it met (the mover's view)."""

    result: float
    """Points of the game (full) or the equity where it was stopped (truncated)."""
    luck: float
    """The mover's luck less the opponent's over the trial's rolls."""

    @property
    def estimate(self) -> float:
        """The variance-reduced estimate: the result less the luck."""
        return self.result - self.luck


@dataclass(slots=True)
class PlayRollout:
    """One candidate play's rollout."""

    index: int
    """Its index in the decision's legal plays."""
    text: str
    prior: float
    """Its equity by the search that chose the candidates."""
    trials: list[Trial] = field(default_factory=list)

    def estimates(self, reduced: bool = True) -> list[float]:
        return [t.estimate if reduced else t.result for t in self.trials]

    def equity(self, reduced: bool = True) -> float:
        values = self.estimates(reduced)
        return math.fsum(values) / len(values) if values else math.nan

    def se(self, reduced: bool = True) -> float:
        return _se(self.estimates(reduced))


def _se(values: Sequence[float]) -> float:
    """The standard error of the mean of ``values`` (nan for fewer than two)."""
    if len(values) < 2:
        return math.nan
    return float(np.std(np.asarray(values), ddof=1) / math.sqrt(len(values)))


@dataclass(slots=True)
class Rollout:
    """A rollout of one decision (module doc): its candidates, best first by rolled-out equity."""

    variant: str
    position: Position
    dice: tuple[int, ...]
    evaluator: str
    truncate: int | None
    seed: int
    variance_reduction: bool
    plays: list[PlayRollout]

    @property
    def trials(self) -> int:
        return len(self.plays[0].trials) if self.plays else 0

    def ranked(self) -> list[PlayRollout]:
        """The candidates, best first by rolled-out equity (ties: the search's order)."""
        return sorted(self.plays, key=lambda p: -p.equity(self.variance_reduction))

    def difference_se(self, a: PlayRollout, b: PlayRollout, reduced: bool | None = None) -> float:
        """The SE of ``a``'s equity minus ``b``'s, from the paired trials (same dice)."""
        use = self.variance_reduction if reduced is None else reduced
        return _se([x - y for x, y in zip(a.estimates(use), b.estimates(use), strict=True)])

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` form (docs/analysis.md)."""
        reduced = self.variance_reduction
        ranked = self.ranked()
        best = ranked[0]

        def r(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 6)

        return {
            "variant": self.variant,
            "position": self.position.id(),
            "dice": list(self.dice),
            "evaluator": self.evaluator,
            "trials": self.trials,
            "truncate": self.truncate,
            "seed": self.seed,
            "variance_reduction": reduced,
            "plays": [
                {
                    "rank": rank,
                    "play": play.text or "(no move)",
                    "equity": r(play.equity(reduced)),
                    "se": r(play.se(reduced)),
                    "loss": r(best.equity(reduced) - play.equity(reduced)),
                    "loss_se": None if play is best else r(self.difference_se(best, play)),
                    "plain_equity": r(play.equity(False)),
                    "plain_se": r(play.se(False)),
                    "prior": r(play.prior),
                }
                for rank, play in enumerate(ranked, 1)
            ],
        }

    def played_json(self, played: str) -> dict[str, Any]:
        """The rollout beside an analysed decision (``nardy analyze --rollout --json``): the
        :meth:`to_json` form less what the decision already says (variant, position, dice), with
        the loss of the play made (``played``, its text) against the rolled-out best and that
        loss's SE (None: it is the best, or was not rolled out)."""
        out = self.to_json()
        for key in ("variant", "position", "dice"):
            del out[key]
        made = next((p for p in out["plays"] if p["play"] == (played or "(no move)")), None)
        out["loss"] = None if made is None else made["loss"]
        out["loss_se"] = None if made is None else made["loss_se"]
        out["plays"] = out.pop("plays")
        return out


class TrialDice:
    """The throws of one trial: the same stream for every candidate (common random numbers)."""

    def __init__(self, seed: int, trial: int) -> None:
        self._random = random.Random(f"{seed}:{trial}")

    def throw(self) -> tuple[int, int]:
        randint = self._random.randint
        return randint(1, 6), randint(1, 6)


def _policy(searcher: Searcher, decision: PlayDecision) -> int:
    """The play a rollout makes: the first best result by 0-ply value among the evaluator's
    short list (as the bots and the search's greedy turns choose)."""
    plays = decision.plays
    if len(plays) == 1:
        return 0
    keys = plays.board_keys()
    eligible = shortlists(searcher.evaluator, [keys])[0] or list(range(len(keys)))
    values = searcher.values([position_of(keys[j]) for j in eligible], 0)
    return eligible[int(np.argmax(values))]


def play_on(
    searcher: Searcher,
    game: Game,
    dice: TrialDice,
    *,
    truncate: int | None,
    reduce: bool = True,
) -> float:
    """Play ``game`` (throws as chance nodes) on from where it stands to its end, or until
    ``truncate`` more rolls have been thrown (it is then left with a roll to throw), choosing
    plays by :func:`_policy`; returns the luck met, from the view of White (colour 0): his luck
    less the opponent's (0 unless ``reduce``)."""
    luck = 0.0
    rolls = 0
    # Where doubles are re-rolled every throw has its luck, valued by its first segment alone
    # (module doc); elsewhere each roll's, by the whole turn it makes.
    while game.result is None:
        chance = game.chance
        if chance is not None:
            sign = 1.0 if game.mover == 0 else -1.0
            # A turn's first throw counts towards truncation; the kernel's other throws
            # (a re-roll chain's, within the roller's turn) are thrown the same way.
            if chance.kind == "roll":
                if truncate is not None and rolls >= truncate:
                    return luck
                if rolls >= _MAX_TURNS:
                    raise GameStateError(f"a rollout game passed {_MAX_TURNS} turns")
                rolls += 1
            a, b = dice.throw()
            if reduce:
                shared = rolls <= _SHARED_ROLLS
                luck += sign * searcher.throw_luck(game.position, (a, b), remember=shared)
            game.roll(a, b)
            continue
        decision = game.decision
        if not isinstance(decision, PlayDecision):
            raise GameStateError(f"a cubeless rollout met a {type(decision).__name__}")
        game.decide(_policy(searcher, decision))
    return luck


def play_out(
    searcher: Searcher,
    game: Game,
    dice: TrialDice,
    *,
    truncate: int | None,
    reduce: bool = True,
) -> Trial:
    """One trial (:func:`play_on`): the game's points, or where it was truncated the evaluator's
    equity of the player on roll there, and the luck, from the view of White (colour 0, the
    mover of the decision rolled out)."""
    luck = play_on(searcher, game, dice, truncate=truncate, reduce=reduce)
    result = game.result
    if result is None:  # truncated, a roll to throw
        sign = 1.0 if game.mover == 0 else -1.0
        return Trial(sign * searcher.equity(game.position, 0), luck)
    points = 0.0 if result.draw else float(result.points)
    return Trial(points if result.winner == 0 else -points, luck)


def _start(variant: Variant, position: Position, roll: tuple[int, int]) -> Game:
    """A cubeless game at the decision: ``position`` with White to roll ``roll``."""
    game = Game(
        variant,
        None,
        position=position,
        mover=0,
        cube=CubeSettings(),
        first_turn=True,
        auto_forced=False,
    )
    game.roll(*roll)
    return game


BatchRunner = Callable[[int, int], list[list[Trial]]]
"""Runs trials ``first`` to ``first + count − 1`` of every candidate: their trials, candidate by
candidate (a :class:`TrialJob`'s, here or on a cluster)."""


@dataclass(frozen=True, slots=True)
class TrialJob:
    """The trials of one rollout, as a value a worker process can be sent (Ray): the decision,
    the candidates by index, and how each trial is played. Trial ``t`` depends on nothing else
    (its dice are ``Random(f"{seed}:{t}")``), so any split of the trials gives the same ones."""

    variant: Variant
    position: Position
    roll: tuple[int, int]
    plays: tuple[int, ...]
    """The candidates' indices in the decision's legal plays."""
    seed: int
    truncate: int | None
    reduce: bool
    """Whether the luck of the rolls is measured (variance reduction)."""

    def run(self, searcher: Searcher, first: int, count: int) -> list[list[Trial]]:
        """Trials ``first`` … ``first + count − 1`` of every candidate, played by ``searcher``
        (the rollout's evaluator)."""
        out: list[list[Trial]] = [[] for _ in self.plays]
        for t in range(first, first + count):
            for found, index in zip(out, self.plays, strict=True):
                game = _start(self.variant, self.position, self.roll)
                game.decide(index)
                found.append(
                    play_out(
                        searcher,
                        game,
                        TrialDice(self.seed, t),
                        truncate=self.truncate,
                        reduce=self.reduce,
                    )
                )
        return out


Executor = Callable[[TrialJob], BatchRunner]
"""Where a rollout's trials are played: given the job, the runner of its batches (the local run
when none is given; :func:`nardy.analysis.rollout_ray.on_ray` on a Ray cluster)."""


def rollout(
    variant: Variant,
    position: Position,
    roll: tuple[int, int],
    *,
    evaluator: str | Evaluator = "neural",
    top: int = 3,
    include: Sequence[int] = (),
    ply: int = 0,
    trials: int = DEFAULT_TRIALS,
    target_se: float | None = None,
    truncate: int | None = None,
    seed: int = 0,
    variance_reduction: bool = True,
    on_trials: Callable[[int], None] | None = None,
    executor: Executor | None = None,
) -> Rollout:
    """Roll out the ``top`` plays (by the search at ``ply``) of ``position`` with the throw
    ``roll`` (module doc), and the plays whose indices (in the legal plays) ``include`` names
    where they are not among them (``nardy analyze --rollout``: the play made and the best). With ``target_se``, trials stop, in batches of 36, once every
    candidate's SE (estimated from 36 trials at least) is at most that (``trials`` is then the
    most). ``on_trials(n)``: n more trials of every candidate done. ``executor(job)``: where the
    trials run (:func:`nardy.analysis.rollout_ray.on_ray`; default: here, by ``job.run``), the
    same trials wherever they run. Raises the kernel's errors
    for an illegal position or roll and :class:`ValueError` for an unknown evaluator."""
    if trials < 2:
        raise ValueError(f"a rollout needs at least 2 trials, not {trials}")
    if top < 1:
        raise ValueError(f"top must be at least 1, not {top}")
    if truncate is not None and truncate < 0:
        raise ValueError(f"truncate must be 0 or more, not {truncate}")
    if not all(isinstance(d, int) and 1 <= d <= 6 for d in roll) or len(roll) != 2:
        raise ValueError(f"a roll is two dice 1-6, not {tuple(roll)}")
    variant.validate(position)
    start = _start(variant, position, roll)
    decision = start.decision
    if not isinstance(decision, PlayDecision):
        raise GameStateError("the game is over: there is nothing to roll out")
    chosen = evaluator if not isinstance(evaluator, str) else make_evaluator(evaluator, variant)
    searcher = Searcher(variant, chosen)
    dice = decision.segment.dice
    ranking: list[RankedPlay] = searcher.rank(decision.position, dice, ply)
    ranked = ranking[:top]
    for index in include:
        if not 0 <= index < len(ranking):
            raise ValueError(f"there is no play {index} (the decision has {len(ranking)})")
        if all(p.index != index for p in ranked):
            ranked.append(next(p for p in ranking if p.index == index))
    # The search and the game list the same legal plays in the same order (both are the
    # variant's legal_plays of the segment); checked, since the candidates are played by index.
    texts = [play.text for play in decision.plays]
    if any(texts[p.index] != p.text for p in ranked):
        raise GameStateError("the game's plays differ from the search's")
    plays = [PlayRollout(p.index, p.text, p.equity) for p in ranked]
    job = TrialJob(
        variant, position, roll, tuple(p.index for p in plays), seed, truncate, variance_reduction
    )
    run: BatchRunner = executor(job) if executor is not None else partial(job.run, searcher)
    done = 0
    while done < trials:
        batch = min(_BATCH, trials - done)
        for candidate, found in zip(plays, run(done, batch), strict=True):
            candidate.trials.extend(found)
        done += batch
        if on_trials is not None:
            on_trials(batch)
        if (
            target_se is not None
            and done >= _BATCH
            and all(p.se(variance_reduction) <= target_se for p in plays)
        ):
            break
    name = evaluator if isinstance(evaluator, str) else chosen.name
    return Rollout(
        variant.name,
        position,
        tuple(dice),
        name,
        truncate,
        seed,
        variance_reduction,
        plays,
    )


def _numbered(game: GameInput) -> Iterator[tuple[int, PlayDecision | None, tuple[int, int] | None]]:
    """The decisions of a recorded game in ``nardy analyze``'s numbering (every play decision,
    forced ones too, and the cube decisions it rates, from 1): each number with its play decision
    (None: a cube decision) and, for the first segment of a roll, the roll (else None). Raises
    :class:`RecordError` if the record does not replay."""
    count = 0
    run = Replay(game.record, auto_forced=False, variant=game.variant)
    for step in run:
        decision = step.decision
        if isinstance(decision, PlayDecision):
            count += 1
            events = run.game.events
            last = events[-1] if events else None
            roll = None
            if decision.segment.kind == "roll" and last is not None and last.kind == "roll":
                a, b = last.data["dice"]
                roll = (a, b)
            yield count, decision, roll
        elif step.answer is not None:
            # The cube decisions `nardy analyze` rates are numbered too (not a beaver's take).
            rated = not (isinstance(decision, TakeDecision) and decision.after_beaver)
            if game.rate_cube and rated:
                count += 1
                yield count, None, None
        if step.answer is None:
            break


def record_decision(game: GameInput, number: int) -> tuple[Position, tuple[int, int]]:
    """The position (the mover's view) and roll of decision ``number`` of a recorded game, in
    ``nardy analyze``'s numbering (every play decision, forced ones too, and the cube decisions it
    rates, from 1). Only a roll's first segment is a decision a rollout starts from: a later
    segment of the turn (a progression's stage, a re-roll, steps handed over) depends on what the
    turn did before it. :class:`RecordError` otherwise, or if the record does not replay."""
    label = game.label
    count = 0
    try:
        for count, decision, roll in _numbered(game):
            if count != number:
                continue
            if decision is None:
                raise RecordError(f"{label}: decision {number} is a cube decision")
            if roll is None:
                raise RecordError(
                    f"{label}: decision {number} is a {decision.segment.description}, "
                    "not the first segment of a roll: roll out a roll's first decision"
                )
            return decision.position, roll
    except RecordError as error:
        if str(error).startswith(f"{label}: "):
            raise
        raise RecordError(f"{label}: {error}") from None
    raise RecordError(f"{label}: there is no decision {number} (the game has {count})")


def roll_decisions(game: GameInput) -> dict[int, tuple[Position, tuple[int, int]]]:
    """Every decision of a recorded game that a rollout can start from (the first segment of a
    roll, :func:`record_decision`), by its number: its position (the mover's view) and roll.
    :class:`RecordError` if the record does not replay."""
    try:
        return {
            number: (decision.position, roll)
            for number, decision, roll in _numbered(game)
            if decision is not None and roll is not None
        }
    except RecordError as error:
        raise RecordError(f"{game.label}: {error}") from None
