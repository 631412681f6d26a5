"""``nardy analyze --rollout``: the plays the analysis marks as errors, rolled out.

The analysis judges each play by its evaluator at N plies; a rollout measures it by playing it
out (:mod:`nardy.analysis.rollout`, the one home of rollouts: this module only chooses what to roll
out and keeps the results beside the analysis). Rolled out are the play decisions marked error or
blunder (a loss of 0.08 or more: :data:`ROLLED_OUT_MARKS`), where the evaluator's verdict matters
most and a rollout can overturn it; each decision's top plays by the search at the analysis's ply,
and the play made and the analysis's best where they are not among them, all with the same dice
and seed (the same seed for every decision: decision N's figures are those of ``nardy rollout
--record FILE --game K --decision N`` with the same settings).

Only the first segment of a roll can be rolled out: a later segment of a turn (a progression's
stage, a re-roll, steps handed over) depends on what the turn did before it
(:func:`~nardy.analysis.rollout.record_decision`); such a decision keeps the evaluator's figures
alone. Cube decisions are not rolled out (the rollouts are cubeless).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from nardy.analysis.game import DecisionAnalysis, GameAnalysis
from nardy.analysis.records import GameInput
from nardy.analysis.rollout import BatchRunner, Rollout, TrialJob, roll_decisions, rollout
from nardy.core.position import Position
from nardy.engines.search import Searcher

__all__ = [
    "ROLLED_OUT_MARKS",
    "RolloutSettings",
    "rollout_decision",
    "rollout_errors",
    "to_roll_out",
]

ROLLED_OUT_MARKS = frozenset({"error", "blunder"})
"""The marks whose plays ``--rollout`` rolls out (gnubg's thresholds: a loss of 0.08 or more)."""


@dataclass(frozen=True, slots=True)
class RolloutSettings:
    """How each marked decision is rolled out (the options of ``nardy analyze --rollout``)."""

    trials: int = 72
    """Trials per play (the same dice for every play of a decision)."""
    truncate: int | None = 5
    """Rolls after which a game stops and is valued by the evaluator (None: to the end)."""
    seed: int = 0
    top: int = 3
    """The plays rolled out: the best ``top`` by the search, and the play made and the
    analysis's best where they are not among them."""

    def to_json(self) -> dict[str, Any]:
        return {
            "trials": self.trials,
            "truncate": self.truncate,
            "seed": self.seed,
            "top": self.top,
            "marks": sorted(ROLLED_OUT_MARKS),
        }


def to_roll_out(decisions: Sequence[DecisionAnalysis]) -> list[DecisionAnalysis]:
    """The play decisions marked error or blunder (what ``--rollout`` rolls out, where it can)."""
    return [d for d in decisions if d.kind == "play" and d.mark in ROLLED_OUT_MARKS]


def rollout_decision(
    decision: DecisionAnalysis,
    start: tuple[Position, tuple[int, int]],
    searcher: Searcher,
    ply: int,
    settings: RolloutSettings,
    *,
    on_trials: Callable[[int], None] | None = None,
    executor: Callable[[TrialJob], BatchRunner] | None = None,
) -> Rollout:
    """The rollout of one analysed play ``decision`` (at ``ply``) from ``start``, its position and
    roll (:func:`~nardy.analysis.rollout.roll_decisions`), by the searcher's evaluator: the top
    plays, and the play made and the analysis's best (module doc). Also the spectator's, for the
    decision its analysis page shows. ``executor``: where the trials run (the rollout's)."""
    position, roll = start
    # The play made and the analysis's best, by their index in the legal plays (the same list,
    # in the same order, as the rollout's game has: rollout() checks it by text).
    made = [r.index for r in decision.ranking if r.text == decision.played][:1]
    return rollout(
        searcher.variant,
        position,
        roll,
        evaluator=searcher.evaluator,
        top=settings.top,
        include=(decision.ranking[0].index, *made),
        ply=ply,
        trials=settings.trials,
        truncate=settings.truncate,
        seed=settings.seed,
        on_trials=on_trials,
        executor=executor,
    )


def rollout_errors(
    game: GameInput,
    analysis: GameAnalysis,
    searcher: Searcher,
    settings: RolloutSettings,
    *,
    on_trials: Callable[[int], None] | None = None,
    executor: Callable[[TrialJob], BatchRunner] | None = None,
) -> GameAnalysis:
    """``analysis`` of ``game`` with each of its errors rolled out (module doc) by the
    searcher's evaluator: a copy whose decisions carry their :class:`~nardy.analysis.rollout.
    Rollout` (``DecisionAnalysis.rollout``). ``on_trials(n)``: n more trials of a decision's every
    play done (a decision that cannot be rolled out reports its ``settings.trials`` at once, so
    that a progress bar's total stays right); ``executor``: where the trials run
    (:func:`nardy.analysis.rollout_ray.on_ray`; default here). :class:`~nardy.analysis.records.
    RecordError` if the record does not replay."""
    wanted = to_roll_out(analysis.decisions)
    if not wanted:
        return analysis
    starts = roll_decisions(game)
    by_number = {d.number: d for d in wanted}
    decisions: list[DecisionAnalysis] = []
    for decision in analysis.decisions:
        start = starts.get(decision.number) if decision.number in by_number else None
        if start is None:
            if decision.number in by_number and on_trials is not None:
                on_trials(settings.trials)
            decisions.append(decision)
            continue
        found = rollout_decision(
            decision,
            start,
            searcher,
            analysis.ply,
            settings,
            on_trials=on_trials,
            executor=executor,
        )
        decisions.append(dataclasses.replace(decision, rollout=found))
    return dataclasses.replace(analysis, decisions=decisions)
