"""Page loads of the web spectator on a 10,000-game tournament database.

The database holds one finished tournament of long nardy, heuristic against random, of
``NARDY_BENCH_GAMES`` games (default 10,000): 40 games played by the engine, their records
stored again under the ids of a 10,000-game schedule (same size and shape as real ones, built in
seconds instead of minutes). Timed: the tournament page (standings of 10,000 games) and the games
list (first page; filtered by bot and winner; by fault, which reads each record's faults once),
each the first time (a fresh server: nothing cached) and again (cached until a game is stored);
one game's first view (replayed from its record) and a step of an already replayed game.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'nardy[web]'")
pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2 (the dev extra)")

from starlette.testclient import TestClient

from nardy.arena.competition.schedule import build_schedule, definition_from_flags
from nardy.arena.competition.tournament import Tournament
from nardy.arena.records.storage import open_store
from nardy.web.app import create_app

GAMES = int(os.environ.get("NARDY_BENCH_GAMES", "10000"))


@pytest.fixture(scope="module")
def big_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[str]]:
    root = tmp_path_factory.mktemp("spectator-bench")
    seed_store = open_store(str(root / "seed.db"))
    small = definition_from_flags(variants=["long"], bots="heuristic,random", games=40, seed=2)
    Tournament(small, seed_store).run()
    sample = seed_store.games(seed_store.tournaments()[0].tournament_id, records=True)
    seed_store.close()

    big = definition_from_flags(
        variants=["long"], bots="heuristic,random", games=GAMES, seed=2, name="bench"
    )
    schedule = build_schedule(big)
    store = open_store(str(root / "big.db"))
    tournament_id = "bench-10k"
    store.open_tournament(tournament_id, "bench", big.to_json(), {"bench": GAMES}, len(schedule))
    for index, unit in enumerate(schedule):
        source = sample[index % len(sample)]
        assert source.record is not None
        # The record must agree with its row's columns: the store refuses a row that does not.
        record = {
            **source.record,
            "game_id": unit.unit_id,
            "tournament_id": tournament_id,
            "unit_id": unit.unit_id,
            "round": unit.round,
            "leg": unit.leg,
            "seed": unit.seed,
            "white": {**source.record["white"], "bot_id": unit.white},
            "black": {**source.record["black"], "bot_id": unit.black},
        }
        row = dataclasses.replace(
            source,
            record=None,
            tournament_id=tournament_id,
            game_id=unit.unit_id,
            unit_id=unit.unit_id,
            round=unit.round,
            leg=unit.leg,
            white=unit.white,
            black=unit.black,
            seed=unit.seed,
        )
        store.save_game(row, record)
    store.set_status(tournament_id, "finished")
    store.close()
    return root / "big.db", tournament_id, [u.unit_id for u in schedule]


@pytest.fixture(scope="module")
def client(big_db: tuple[Path, str, list[str]]) -> Iterator[TestClient]:
    with TestClient(create_app(str(big_db[0]))) as c:
        yield c


def _get(client: TestClient, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 200, url


def test_tournament_page(benchmark, client, big_db) -> None:
    benchmark(_get, client, f"/t/{big_db[1]}")


def test_games_list(benchmark, client, big_db) -> None:
    benchmark(_get, client, f"/t/{big_db[1]}/games")


def test_games_list_filtered(benchmark, client, big_db) -> None:
    benchmark(_get, client, f"/t/{big_db[1]}/games?bot=random&result=white&page=3")


def _first_time(benchmark, big_db, url: str) -> None:
    def first_time() -> None:
        with TestClient(create_app(str(big_db[0]))) as fresh:
            _get(fresh, url)

    benchmark.pedantic(first_time, rounds=3, iterations=1)


def test_tournament_page_first_time(benchmark, big_db) -> None:
    _first_time(benchmark, big_db, f"/t/{big_db[1]}")


def test_games_list_first_time(benchmark, big_db) -> None:
    _first_time(benchmark, big_db, f"/t/{big_db[1]}/games")


def test_games_list_fault_filter_first_time(benchmark, big_db) -> None:
    _first_time(benchmark, big_db, f"/t/{big_db[1]}/games?fault=timeout")


def test_game_page_first_view(benchmark, big_db) -> None:
    _first_time(benchmark, big_db, f"/t/{big_db[1]}/g/{quote(big_db[2][GAMES // 2], safe='')}")


def test_game_step_cached(benchmark, client, big_db) -> None:
    url = f"/t/{big_db[1]}/g/{quote(big_db[2][7], safe='')}"
    _get(client, url)
    benchmark(_get, client, url + "?partial=1&ply=20")


# -- under load: a real `nardy web` process on loopback (issue 34 items 4 and 5) -------------------

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "viewer"))
from spectator_load import (  # noqa: E402
    CountingArena,
    fds_of,
    honest_latencies,
    live_visitors,
    p99,
    slowloris,
    threads_of,
    web_process,
)

HALF_SENT = int(os.environ.get("NARDY_BENCH_SLOWLORIS", "1100"))
VISITORS = int(os.environ.get("NARDY_BENCH_VISITORS", "500"))


@pytest.fixture(scope="module")
def running_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("spectator-live") / "arena.db"
    store = open_store(str(path))
    d = definition_from_flags(variants=["long"], bots="heuristic,random", games=100, seed=3)
    store.open_tournament("live-bench", "live", d.to_json(), {"bench": 1}, 100)
    store.set_status("live-bench", "running")
    store.close()
    return path, "live-bench"


def test_honest_requests_beside_half_sent_ones(benchmark, running_db) -> None:
    """``HALF_SENT`` idle half-sent requests against a server with ``ulimit -n 1024``; honest
    page loads one after another meanwhile (p99 under 1 s is the goal)."""
    with web_process(running_db[0], nofile=1024) as (base, pid):
        port = int(base.rsplit(":", 1)[1])
        with slowloris(port, HALF_SENT):
            latencies = honest_latencies(base, 100, timeout_s=3.0)
            benchmark.extra_info.update(
                half_sent=HALF_SENT, server_fds=fds_of(pid), p99_s=p99(latencies)
            )
            benchmark.pedantic(honest_latencies, (base, 1), rounds=20, iterations=1)
    print(f"\n{HALF_SENT} half-sent: honest p99 {p99(latencies) * 1000:.1f} ms, "
          f"{sum(x == float('inf') for x in latencies)} of 100 failed")  # fmt: skip
    assert p99(latencies) < 1.0


def test_live_visitors_share_one_arena_stream(benchmark, running_db) -> None:
    """``VISITORS`` live pages of one tournament with ``--arena`` (an arena stand-in sending an
    event every 0.2 s): the streams it sees, the server's threads, honest page loads beside."""
    arena = CountingArena(every_s=0.2)
    try:
        with web_process(running_db[0], "--arena", arena.address) as (base, pid):
            port = int(base.rsplit(":", 1)[1])
            idle_threads = threads_of(pid)
            start = time.perf_counter()
            with live_visitors(port, f"/t/{running_db[1]}/live", VISITORS):
                opened = time.perf_counter() - start
                time.sleep(2.0)  # events flow to the visitors meanwhile
                threads = threads_of(pid)
                latencies = honest_latencies(base, 50)
                benchmark.extra_info.update(
                    visitors=VISITORS,
                    opened_s=opened,
                    arena_streams=arena.most,
                    threads=threads,
                    idle_threads=idle_threads,
                    p99_s=p99(latencies),
                )
                benchmark.pedantic(honest_latencies, (base, 1), rounds=20, iterations=1)
    finally:
        arena.stop()
    print(f"\n{VISITORS} visitors opened in {opened:.2f} s: arena streams {arena.most}, "
          f"threads {idle_threads} -> {threads}, honest p99 {p99(latencies) * 1000:.1f} ms")  # fmt: skip
    assert arena.most == 1 and threads < 64
