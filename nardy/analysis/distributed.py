"""``nardy analyze --executor ray``: the games of a large tournament analysed in parallel on a
Ray cluster.

Each game is one Ray task, a pure function of its record (:class:`GameInput`), the evaluator's
name and the plies: the worker replays and analyses it exactly as the serial run does
(:func:`~nardy.analysis.game.analyse_game`) and returns its :class:`GameAnalysis`. A worker
process keeps one searcher per variant and evaluator for the games it is given, as the serial run
keeps one for all; a searcher's caches only spare work (a cached value is the evaluator's value of
the same position), so the results are those of the serial run, in the order of the input. The
driver keeps at most ``in_flight`` games submitted (default: two per CPU of the cluster).

Evaluators must be known to the workers: the built-in ones and those of installed plugins (entry
points of ``nardy.evaluators``); one registered at run time in the driver's process is not.
Ray is imported only here, and only when this executor is used (``pip install 'nardy[ray]'``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from nardy.analysis.game import GameAnalysis, analyse_game
from nardy.analysis.records import GameInput, RecordError
from nardy.collector import tune as tune_collector
from nardy.engines.search import Searcher
from nardy.ray_address import unreachable

__all__ = ["RAY_MISSING", "RayAnalysisError", "analyse_on_ray", "analyse_task", "ray_session"]

RAY_MISSING = "nardy analyze --executor ray needs ray: pip install 'nardy[ray]'"


class RayAnalysisError(RecordError):
    """The cluster cannot be used (Ray missing, unreachable, a task that failed)."""


_SEARCHERS: dict[tuple[str, str], Searcher] = {}
"""This worker process's searchers, per evaluator and variant (a cache of loaded nets and of
values, not state: see the module doc)."""


def _variant_key(game: GameInput) -> str:
    return json.dumps([game.variant.name, game.variant.options], sort_keys=True, default=str)


def analyse_task(game: GameInput, evaluator: str, ply: int, luck_ply: int) -> GameAnalysis | str:
    """One game analysed in a worker: its analysis, or the message of the error that stopped it
    (a record that does not replay, an unusable evaluator) for the driver to report."""
    from nardy.analysis.stats import searchers_for

    tune_collector()  # a Ray worker starts with Python's defaults (nardy.collector)
    key = (evaluator, _variant_key(game))
    try:
        searcher = _SEARCHERS.get(key)
        if searcher is None:
            searcher = _SEARCHERS[key] = searchers_for([game], evaluator)[0]
        return analyse_game(game, searcher, ply, luck_ply=luck_ply)
    except (RecordError, ValueError) as error:
        return str(error)


def _ray(missing: str = RAY_MISSING) -> ModuleType:
    try:
        import ray
    except ImportError:
        raise RayAnalysisError(missing) from None
    module: ModuleType = ray  # (untyped where the nardy[ray] extra is not installed)
    return module


@contextmanager
def ray_session(
    address: str | None, num_cpus: int | None = None, missing: str = RAY_MISSING
) -> Iterator[ModuleType]:
    """Ray, connected to the cluster at ``address`` (``host:port`` of its head, ``ray://…``,
    ``auto``; None: ``RAY_ADDRESS``, else a Ray instance started for this call with ``num_cpus``
    CPUs, default all) for the block, and disconnected after it where this call connected.
    :class:`RayAnalysisError` (``missing`` where Ray is not installed) if it cannot be used. The
    analysis's and the rollout's (:mod:`nardy.analysis.rollout_ray`) one way onto a cluster."""
    ray = _ray(missing)
    problem = None if address is None else unreachable(address)
    if problem is not None:
        raise RayAnalysisError(problem)
    owned = not ray.is_initialized()
    if owned:
        kwargs: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
        if address is None and num_cpus is not None:
            kwargs["num_cpus"] = num_cpus
        try:
            ray.init(address=address, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as error:
            where = address or "a local Ray instance"
            raise RayAnalysisError(f"cannot connect to Ray at {where}: {error}") from None
    try:
        yield ray
    finally:
        if owned:
            ray.shutdown()


def analyse_on_ray(
    games: Sequence[GameInput],
    evaluator: str,
    ply: int = 0,
    *,
    luck_ply: int = 0,
    address: str | None = None,
    num_cpus: int | None = None,
    in_flight: int | None = None,
    on_game: Callable[[int], None] | None = None,
) -> list[GameAnalysis]:
    """Analyse ``games`` on Ray, one task per game; the analyses in the order of ``games``.

    ``address``: the cluster (``host:port`` of its head, ``ray://…``, ``auto``), or None for
    ``RAY_ADDRESS`` or else a Ray instance started for this call (``num_cpus`` CPUs, default all).
    ``on_game(i)`` is called as game ``i`` is done (in any order). :class:`RayAnalysisError` if
    the cluster cannot be used, :class:`RecordError` for a game that does not replay."""
    if in_flight is not None and in_flight < 1:
        raise ValueError(f"in_flight must be 1 or more, not {in_flight}")
    with ray_session(address, num_cpus) as ray:
        remote = ray.remote(num_cpus=1, max_retries=3)(analyse_task)
        limit = in_flight or 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
        results: list[GameAnalysis | None] = [None] * len(games)
        pending: dict[Any, int] = {}
        submitted = 0
        try:
            while pending or submitted < len(games):
                while submitted < len(games) and len(pending) < limit:
                    ref = remote.remote(games[submitted], evaluator, ply, luck_ply)
                    pending[ref] = submitted
                    submitted += 1
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    index = pending.pop(ref)
                    try:
                        outcome = ray.get(ref)
                    except Exception as error:  # a task Ray gave up on (its worker kept dying)
                        raise RayAnalysisError(
                            f"{games[index].label}: the analysis task failed on Ray: {error}"
                        ) from None
                    if isinstance(outcome, str):
                        raise RecordError(outcome)
                    results[index] = outcome
                    if on_game is not None:
                        on_game(index)
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
        return [r for r in results if r is not None]
