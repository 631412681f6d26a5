"""``nardy rollout --executor ray``: a rollout's trials played on a Ray cluster.

A rollout (:func:`nardy.analysis.rollout.rollout`) runs its trials in batches of 36; on Ray each
batch is split into one contiguous run of trials per CPU of the cluster, each a task that plays
its trials of every candidate (:meth:`~nardy.analysis.rollout.TrialJob.run`) and returns them.
Trial ``t`` depends only on the job and ``t`` (its dice are ``Random(f"{seed}:{t}")``), and a
searcher's caches only spare work, so the driver, putting the runs back in order, has the trials
of the local rollout: the same result for the same seed (``tests/analysis/test_rollout_ray.py``).

The evaluator goes to the workers by name (the built-in ones and those of installed plugins; one
registered at run time in the driver is not known there), and a worker keeps one searcher per
evaluator and variant. Ray is imported only when this executor is used, through the analysis's
one way onto a cluster (:func:`nardy.analysis.distributed.ray_session`).
"""

from __future__ import annotations

import json
from types import ModuleType

from nardy.analysis.distributed import RayAnalysisError
from nardy.analysis.rollout import BatchRunner, Executor, Trial, TrialJob
from nardy.collector import tune as tune_collector
from nardy.core.variant import Variant
from nardy.engines.evaluator import make_evaluator
from nardy.engines.search import Searcher

__all__ = ["RAY_MISSING", "on_ray", "split", "trials_task"]

RAY_MISSING = "nardy rollout --executor ray needs ray: pip install 'nardy[ray]'"

_SEARCHERS: dict[tuple[str, str], Searcher] = {}
"""This worker process's searchers, per evaluator and variant (a cache, not state)."""


def _searcher(variant: Variant, evaluator: str) -> Searcher:
    key = (evaluator, json.dumps([variant.name, variant.options], sort_keys=True, default=str))
    searcher = _SEARCHERS.get(key)
    if searcher is None:
        searcher = _SEARCHERS[key] = Searcher(variant, make_evaluator(evaluator, variant))
    return searcher


def trials_task(job: TrialJob, evaluator: str, first: int, count: int) -> list[list[Trial]] | str:
    """Trials ``first`` … ``first + count − 1`` of every candidate of ``job``, in a worker; or
    the message of the error that stopped them (an evaluator the worker cannot load)."""
    tune_collector()  # a Ray worker starts with Python's defaults (nardy.collector)
    try:
        return job.run(_searcher(job.variant, evaluator), first, count)
    except (ValueError, OSError, ImportError) as error:
        return str(error)


def split(first: int, count: int, parts: int) -> list[tuple[int, int]]:
    """``count`` trials from ``first`` as at most ``parts`` contiguous runs (first, count) of
    sizes differing by one at most, in order."""
    parts = max(1, min(parts, count))
    size, extra = divmod(count, parts)
    runs = []
    for k in range(parts):
        n = size + (k < extra)
        runs.append((first, n))
        first += n
    return runs


def on_ray(ray: ModuleType, evaluator: str) -> Executor:
    """The rollout's ``executor`` on the cluster ``ray`` is connected to (module doc):
    ``rollout(..., evaluator=evaluator, executor=on_ray(ray, evaluator))``.
    :class:`RayAnalysisError` for a task that failed."""
    remote = ray.remote(num_cpus=1, max_retries=3)(trials_task)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))

    def executor(job: TrialJob) -> BatchRunner:
        shared = ray.put(job)

        def run(first: int, count: int) -> list[list[Trial]]:
            refs = [remote.remote(shared, evaluator, a, n) for a, n in split(first, count, cpus)]
            out: list[list[Trial]] = [[] for _ in job.plays]
            try:
                for ref in refs:
                    try:
                        part = ray.get(ref)
                    except Exception as error:  # a task Ray gave up on (its worker kept dying)
                        raise RayAnalysisError(f"a rollout task failed on Ray: {error}") from None
                    if isinstance(part, str):
                        raise RayAnalysisError(part)
                    for found, trials in zip(out, part, strict=True):
                        found.extend(trials)
            except BaseException:  # (an interrupt too) the other runs are not waited for
                for ref in refs:
                    ray.cancel(ref, force=True)
                raise
            return out

        return run

    return executor
