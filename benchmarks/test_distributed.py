"""The limits of one driver (docs/distributed.md): what a tournament on many workers runs into.

* ``writer``: games stored per second by the single writer, one transaction per game
  (``save_game``) and per batch of 32 (``save_games``), on a SQLite file (WAL) and, when
  ``NARDY_BENCH_POSTGRES_URL`` names a server, on PostgreSQL; each game with a real record of a
  long-nardy game (about 15 kB of JSON).
* ``driver``: games per second the engine schedules, stores (in-memory SQLite) and tallies when
  the games themselves cost nothing (an executor that answers at once with a canned record): the
  rate no number of workers can exceed.
* ``standings``: one recomputation of the standings, which the engine repeats every 0.5 s;
* ``encoding``: the writer's CPU per game before any SQL (the record as JSON);
* ``network``: bytes a game's task sends to a worker and its record sends back (what Ray
  pickles), per game.

Run with ``pytest benchmarks/test_distributed.py -s`` for the printed figures (also in
``benchmark.extra_info``). Ray's own overhead per game and games/s per worker count need a
cluster: ``benchmarks/measure_ray.py``.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import json
import os
import pickle
import threading
import time
import uuid
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from nardy.arena.competition.ray_executor import portable
from nardy.arena.competition.schedule import iter_schedule, parse_definition
from nardy.arena.competition.standings import Tally
from nardy.arena.competition.tournament import (
    BuiltinPlayer,
    GameTask,
    Player,
    Tournament,
    row_from_record,
)
from nardy.arena.records.storage import GameRow, SqliteStore, Store, open_store
from nardy.bots.faults import FaultCounter
from nardy.core.record import GameRecord, from_json

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
    task = t._task(next(iter_schedule(d)), None, 1)
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

    wall, cpu, written = [0.0], [0.0], [0]

    def write() -> None:
        i = next(position)
        chunk = games[i : i + batch]
        t0, c0 = time.perf_counter(), time.process_time()
        if batch == 1:
            store.save_game(*chunk[0])
        else:
            store.save_games(chunk)
        cpu[0] += time.process_time() - c0
        wall[0] += time.perf_counter() - t0
        written[0] += len(chunk)

    benchmark.pedantic(write, rounds=rounds, iterations=1)
    # Totals (the mean), not the median: the WAL checkpoints are part of the cost.
    per_game, per_cpu = wall[0] / written[0], max(cpu[0], 1e-9) / written[0]
    benchmark.extra_info["games_per_s"] = round(1 / per_game)
    benchmark.extra_info["games_per_cpu_s"] = round(1 / per_cpu)
    benchmark.extra_info["record_bytes"] = len(pickle.dumps(record))
    print(
        f"\nwriter {backend} batch {batch}: {1 / per_game:,.0f} games/s "
        f"({1 / per_cpu:,.0f} per CPU-second of this process)"
    )
    store.close()


class _Instant:
    """A GameExecutor whose games cost nothing: every task answers at once with the canned
    record (re-labelled), so the engine's own cost per game is all that is timed."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.record = from_json(record)  # the kernel's record, as a worker hands it over

    def submit_game(
        self,
        task: GameTask,
        players: tuple[Player, Player],
        faults: Mapping[str, FaultCounter],
        stop: threading.Event,
    ) -> cf.Future[GameRecord | None]:
        record = dataclasses.replace(self.record, game_id=task.game_id)
        future: cf.Future[GameRecord | None] = cf.Future()
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

    cpu: list[float] = []

    def run() -> None:
        store = SqliteStore(":memory:")
        t0, c0 = time.perf_counter(), time.process_time()
        result = Tournament(d, store, concurrency=64, executor=_Instant(record)).run()
        results.append((time.perf_counter() - t0) / result.played)
        cpu.append((time.process_time() - c0) / result.played)
        store.close()

    benchmark.pedantic(run, rounds=3, iterations=1)
    per_game = sorted(results)[len(results) // 2]
    per_cpu = sorted(cpu)[len(cpu) // 2]
    benchmark.extra_info["games_per_s"] = round(1 / per_game)
    benchmark.extra_info["games_per_cpu_s"] = round(1 / per_cpu)
    print(
        f"\ndriver, {bots} bots, {len(d.pairings())} pairings: {1 / per_game:,.0f} games/s "
        f"({1 / per_cpu:,.0f} per CPU-second)"
    )


@pytest.mark.parametrize("games", [2_000, 20_000])
def test_standings(games, benchmark) -> None:
    """One recomputation of the standings (ratings, pairings, intervals) of a 10-bot pool with
    ``games`` stored: the engine does it every ``standings_interval`` (0.5 s) while it runs."""
    names = [f"b{i}" for i in range(10)]
    entries = [{"name": n, "builtin": "random"} for n in names]
    d = parse_definition(
        {"name": "st", "variant": "long", "games": games // 45, "seed": 1, "bots": entries}
    )
    tally = Tally(d)
    for i, unit in enumerate(iter_schedule(d)):
        tally.add(
            GameRow.of_unit(
                d.tournament_id,
                unit,
                1,
                winner=(i * 7919) % 3 % 2,
                points=1 + i % 3,
                termination="borne_off",
                finished=0.0,
            )
        )
    times: list[float] = []

    def standings() -> None:
        t0 = time.perf_counter()
        tally.standings(tournament_id=d.tournament_id)
        times.append(time.perf_counter() - t0)

    benchmark.pedantic(standings, rounds=3)
    seconds = min(times)
    benchmark.extra_info["seconds"] = seconds
    print(f"\nstandings of {tally.games_stored:,} games, 45 pairings: {seconds * 1000:,.0f} ms")


def test_record_encoding(sample, benchmark) -> None:
    """The writer's own CPU per game before any SQL: the record as compact JSON."""
    _, record = sample
    times: list[float] = []

    def encode() -> None:
        t0 = time.perf_counter()
        json.dumps(record, separators=(",", ":"))
        times.append(time.perf_counter() - t0)

    benchmark(encode)
    per_game = min(times)  # the machine's own speed, without its neighbours
    benchmark.extra_info["records_per_s"] = round(1 / per_game)
    print(f"\nrecord encoding: {per_game * 1e6:,.0f} us per game, {1 / per_game:,.0f} games/s")


def test_network_per_game(sample, benchmark) -> None:
    """What Ray ships per game: the task's arguments one way, the record back (pickled); and
    the record as compact JSON, compressed (what a worker could send instead)."""
    task, record = sample
    specs = (
        portable(BuiltinPlayer("a", "heuristic", 2)),
        portable(BuiltinPlayer("b", "random", 2)),
    )
    args = (task, specs, ({}, {}))
    text = json.dumps(record, separators=(",", ":")).encode()
    typed = from_json(record)  # what a worker hands back: the kernel's record
    sizes = benchmark(
        lambda: (len(pickle.dumps(args)), len(pickle.dumps(typed)), len(zlib.compress(text, 6)))
    )
    for key, value in zip(("task_bytes", "record_bytes", "record_zlib_bytes"), sizes, strict=True):
        benchmark.extra_info[key] = value
    print(
        f"\nper game: task {sizes[0]:,} bytes out, record {sizes[1]:,} bytes back "
        f"(JSON {len(text):,}, compressed {sizes[2]:,})"
    )
