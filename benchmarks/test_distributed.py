"""The limits of one driver (docs/distributed.md): what a tournament on many workers runs into.

* ``writer``: games stored per second by the single writer, one transaction per game
  (``save_game``) and per batch of 32 (``save_games``), on a SQLite file (WAL) and, when
  ``NARDY_BENCH_POSTGRES_URL`` names a server, on PostgreSQL; each game with a real record of a
  long-nardy game (about 15 kB of JSON).
* ``driver``: games per second the engine schedules, stores (in-memory SQLite) and tallies when
  the games themselves cost nothing (an executor that answers at once with a canned record): the
  rate no number of workers can exceed.
* ``encoding``: the writer's CPU per game before any SQL (the record as JSON);
* ``network``: bytes a game's task sends to a worker and its record sends back (what Ray
  pickles), per game.

Run with ``pytest benchmarks/test_distributed.py -s`` for the printed figures (also in
``benchmark.extra_info``). Ray's own overhead per game and games/s per worker count need a
cluster: ``benchmarks/measure_ray.py``.
"""

from __future__ import annotations

import concurrent.futures as cf
import copy
import dataclasses
import json
import os
import pickle
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from nardy.arena.ray_executor import portable
from nardy.arena.runner import FaultCounter
from nardy.arena.schedule import parse_definition
from nardy.arena.storage import SqliteStore, Store, open_store
from nardy.arena.tournament import (
    BuiltinPlayer,
    GameTask,
    Player,
    Tournament,
    row_from_record,
)

POSTGRES = os.environ.get("NARDY_BENCH_POSTGRES_URL")
BATCH = 32


@pytest.fixture(scope="module")
def sample() -> tuple[GameTask, dict[str, Any]]:
    """One real game of long nardy (heuristic vs random): its task and record."""
    d = parse_definition({"name": "sample", "variant": "long", "bots": ["heuristic", "random"]})
    store = SqliteStore(":memory:")
    t = Tournament(d, store)
    t.run()
    (row,) = store.games(d.tournament_id, records=True)[:1]
    task = t._task(t.schedule[0], None, 1)
    assert row.record is not None
    return task, row.record


def _writer_store(kind: str, tmp_path: Path) -> Store:
    if kind == "sqlite":
        return open_store(tmp_path / "w.db")
    if POSTGRES is None:
        pytest.skip("set NARDY_BENCH_POSTGRES_URL to measure PostgreSQL")
    return open_store(POSTGRES)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
@pytest.mark.parametrize("batch", [1, BATCH])
def test_writer(backend, batch, sample, tmp_path, benchmark) -> None:
    task, record = sample
    store = _writer_store(backend, tmp_path)
    tid = f"bench-{uuid.uuid4().hex[:8]}"
    store.open_tournament(tid, "bench", {}, {"id": tid}, 0)
    rounds = max(20, 400 // batch)
    base = row_from_record(record, task)
    games = [
        (dataclasses.replace(base, tournament_id=tid, game_id=f"{base.game_id}#{i}"), record)
        for i in range(rounds * batch)
    ]
    position = iter(range(0, len(games), batch))

    def write() -> None:
        i = next(position)
        chunk = games[i : i + batch]
        if batch == 1:
            store.save_game(*chunk[0])
        else:
            store.save_games(chunk)

    benchmark.pedantic(write, rounds=rounds, iterations=1)
    per_game = benchmark.stats.stats.mean / batch  # the mean: checkpoints are part of the cost
    benchmark.extra_info["games_per_s"] = round(1 / per_game)
    benchmark.extra_info["record_bytes"] = len(pickle.dumps(record))
    print(f"\nwriter {backend} batch {batch}: {1 / per_game:,.0f} games/s")
    store.close()


class _Instant:
    """A GameExecutor whose games cost nothing: every task answers at once with the canned
    record (re-labelled), so the engine's own cost per game is all that is timed."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.record = record

    def submit_game(
        self,
        task: GameTask,
        players: tuple[Player, Player],
        faults: Mapping[str, FaultCounter],
        stop: threading.Event,
    ) -> cf.Future[dict[str, Any] | None]:
        record = copy.copy(self.record)
        record["game_id"] = task.game_id
        future: cf.Future[dict[str, Any] | None] = cf.Future()
        future.set_result(task.annotate(record))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        return None


@pytest.mark.parametrize("bots", [2, 10])
def test_driver(bots, sample, benchmark) -> None:
    """The engine alone: schedule, store (in memory), tally, events; games cost nothing."""
    _, record = sample
    names = [f"b{i}" for i in range(bots)]
    games = 2000 // (bots * (bots - 1) // 2)
    entries = [{"name": n, "builtin": "random", "capacity": 64} for n in names]
    d = parse_definition(
        {"name": "drv", "variant": "long", "games": games, "seed": 1, "bots": entries}
    )
    results: list[float] = []

    def run() -> None:
        store = SqliteStore(":memory:")
        t0 = time.perf_counter()
        result = Tournament(d, store, concurrency=64, executor=_Instant(record)).run()
        results.append((time.perf_counter() - t0) / result.played)
        store.close()

    benchmark.pedantic(run, rounds=3, iterations=1)
    per_game = sorted(results)[len(results) // 2]
    benchmark.extra_info["games_per_s"] = round(1 / per_game)
    print(f"\ndriver, {bots} bots, {len(d.pairings())} pairings: {1 / per_game:,.0f} games/s")


def test_record_encoding(sample, benchmark) -> None:
    """The writer's own CPU per game before any SQL: the record as compact JSON."""
    _, record = sample
    benchmark(lambda: json.dumps(record, separators=(",", ":")))
    per_game = benchmark.stats.stats.mean
    benchmark.extra_info["records_per_s"] = round(1 / per_game)
    print(f"\nrecord encoding: {per_game * 1e6:,.0f} us per game, {1 / per_game:,.0f} games/s")


def test_network_per_game(sample, benchmark) -> None:
    """What Ray ships per game: the task's arguments one way, the record back (pickled)."""
    task, record = sample
    specs = (
        portable(BuiltinPlayer("a", "heuristic", 2)),
        portable(BuiltinPlayer("b", "random", 2)),
    )
    args = (task, specs, ({}, {}))
    sizes = benchmark(lambda: (len(pickle.dumps(args)), len(pickle.dumps(record))))
    benchmark.extra_info["task_bytes"], benchmark.extra_info["record_bytes"] = sizes
    print(f"\nper game: task {sizes[0]:,} bytes out, record {sizes[1]:,} bytes back")
