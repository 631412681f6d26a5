"""The spectator's analysed standings of a tournament: each bot's error rate and luck-adjusted
points per game with standard errors (:func:`nardy.analysis.stats.bot_results`), per pool.

Analysing every game takes seconds a game, so it runs in a background thread, one job per
tournament, public game count and evaluator; the page shows its progress until it is done. The
games are the spectator's public ones (:meth:`~nardy.web.data.Spectator.games` and
:meth:`~nardy.web.data.Spectator.game`): a sealed round's games are not in it, and once more
games are shown the next visit starts a new job.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nardy.analysis.game import GameAnalysis
from nardy.analysis.stats import BotResult, bot_results
from nardy.web.analysis_view import Analyst, NoAnalysis, NoEvaluator
from nardy.web.data import NotFound

__all__ = ["Job", "TournamentAnalyses"]

log = logging.getLogger("nardy.web")

JOBS_KEPT = 8
"""Finished jobs kept (their results are small)."""


@dataclass
class Job:
    """One tournament's analysis, as far as it has come."""

    total: int
    done: int = 0
    finished: bool = False
    error: str | None = None
    """Why it stopped (an unexpected failure; the log has it)."""
    analyses: dict[str, list[GameAnalysis]] = field(default_factory=dict)
    """Per pool label, the games analysed (their totals: without the decisions)."""
    pool_errors: dict[str, str] = field(default_factory=dict)
    """Pools left out, with why (a variant without an evaluator)."""
    failed: list[str] = field(default_factory=list)
    """Games that could not be analysed, with why (a record that does not replay)."""

    def results(self) -> list[tuple[str, int, dict[str, BotResult]]]:
        """Per pool: its label, the games analysed and each bot's numbers (by the name it
        played under)."""
        return [(pool, len(games), bot_results(games)) for pool, games in self.analyses.items()]


class TournamentAnalyses:
    """The background jobs (a bounded number kept)."""

    def __init__(self, analyst: Analyst, keep: int = JOBS_KEPT) -> None:
        self.analyst = analyst
        self.keep = keep
        self._jobs: OrderedDict[tuple[str, int, str], Job] = OrderedDict()
        self._lock = threading.Lock()

    def job(
        self,
        key: tuple[str, int, str],
        games: Sequence[tuple[str, str]],
        record_of: Callable[[str], Mapping[str, Any]],
        evaluator: str,
    ) -> Job:
        """The job for ``key`` (tournament, public games, evaluator), started now if new:
        ``games`` are ``(pool, game_id)``, ``record_of(game_id)`` reads a public record."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None:
                self._jobs.move_to_end(key)
                return job
            job = self._jobs[key] = Job(len(games))
            for old in list(self._jobs):
                if len(self._jobs) <= self.keep:
                    break
                if self._jobs[old].finished:
                    del self._jobs[old]
        thread = threading.Thread(
            target=self._run,
            args=(job, list(games), record_of, evaluator),
            name=f"analysis {key[0]}",
            daemon=True,
        )
        thread.start()
        return job

    def _run(
        self,
        job: Job,
        games: list[tuple[str, str]],
        record_of: Callable[[str], Mapping[str, Any]],
        evaluator: str,
    ) -> None:
        try:
            for pool, game_id in games:
                if pool in job.pool_errors:  # its variant has no evaluator: not asked again
                    job.done += 1
                    continue
                try:
                    analysis = self.analyst.compute(game_id, record_of(game_id), evaluator)
                except NotFound:  # no longer shown (cannot happen to a shown round): left out
                    pass
                except NoEvaluator as error:
                    job.pool_errors[pool] = str(error)
                except NoAnalysis as error:
                    job.failed.append(f"{game_id}: {error}")
                else:
                    # The players' totals are what the table needs; the decisions (with every
                    # play's ranking) would hold hundreds of megabytes over a large tournament.
                    light = dataclasses.replace(analysis, decisions=[])
                    job.analyses.setdefault(pool, []).append(light)
                job.done += 1
        except Exception as error:  # the page says so, the log has the trace; the server goes on
            log.exception("analysis of %s failed", games[:1])
            job.error = f"the analysis failed: {error}"
        finally:
            job.finished = True
