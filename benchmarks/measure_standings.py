"""Standings at scale: a synthetic N-game tournament database, then the spectator's tournament
page (first load, cached, concurrent, live latency, server memory) and ``nardy arena
standings`` (time, peak memory) on it (the figures of docs/spectator.md, "Scale").

    python benchmarks/measure_standings.py [--games 50000] [--small 5000] [--json out.json]

The database is built through the storage API (``SqliteStore.save_games``, batches of 1,000,
each game with a real game record of about 12 kB whose ids are rewritten), so the standings
ledger is filled exactly as a tournament fills it. The tournament: 10 bots in a round robin
(45 pairings), one backgammon pool, duplicate dice, status ``running`` with its seed committed,
and its games the first N units of the schedule, so the last round is still being played (the
spectator withholds it). The live latency is the time from storing the games that complete that
round (a writer in this process) to the live page's standings event that shows them.

Memory: ``nardy arena standings`` runs in a child process that reports its own peak RSS; the
server's is its ``VmHWM`` (peak) and ``VmRSS`` from ``/proc``. The CLI is also measured on a
``--small`` database, to show that its memory does not grow with the number of games.
"""

from __future__ import annotations

import argparse
import copy
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from itertools import islice
from pathlib import Path
from typing import Any

from nardy.arena.competition.schedule import TournamentDef, iter_schedule, parse_definition
from nardy.arena.competition.tournament import Tournament
from nardy.arena.records.storage import GameRow, SqliteStore

BOTS = 10
BATCH = 1000


def _definition(games: int) -> TournamentDef:
    pairings = BOTS * (BOTS - 1) // 2
    return parse_definition(
        {
            "name": "scale",
            "bots": [{"name": f"bot{i}", "builtin": "random"} for i in range(BOTS)],
            "variant": "backgammon",
            "games": -(-games // pairings) + 2,  # a few rounds more than stored: still running
            "seed": 7,
        }
    )


def _sample_record() -> dict[str, Any]:
    """One real game record (played here: 2 games of heuristic against random)."""
    d = parse_definition(
        {"name": "sample", "bots": ["heuristic", "random"], "variant": "backgammon", "games": 2}
    )
    store = SqliteStore(":memory:")
    Tournament(d, store).run()
    record = store.games(d.tournament_id, records=True)[0].record
    store.close()
    assert record is not None
    return record


def _row(d: TournamentDef, unit: Any, rnd: random.Random, finished: float) -> GameRow:
    winner = rnd.choice([0, 1])
    points = rnd.choice([1, 1, 1, 2, 2, 3])
    return GameRow.of_unit(
        d.tournament_id,
        unit,
        1,
        winner=winner,
        points=points,
        termination=rnd.choice(["borne_off", "borne_off", "borne_off", "double_dropped"]),
        finished=finished,
    )


def build(path: Path, games: int, sample: dict[str, Any]) -> tuple[TournamentDef, list[GameRow]]:
    """The database of ``games`` stored games; returns the definition and the games of the
    open last round not stored yet (what the live measurement stores)."""
    d = _definition(games)
    store = SqliteStore(path)
    store.open_tournament(d.tournament_id, d.name, d.to_json(), d.identity(), d.total_units)
    store.commit_dice(d.tournament_id, "nardy-dice-v1", "0" * 64, "1" * 64)
    store.set_status(d.tournament_id, "running")
    rnd = random.Random(1)
    units = iter_schedule(d)
    start = time.time() - games
    stored = 0
    while stored < games:
        chunk = list(islice(units, min(BATCH, games - stored)))
        batch = []
        for unit in chunk:
            row = _row(d, unit, rnd, start + stored)
            record = copy.copy(sample)
            record.update(game_id=row.game_id, unit_id=row.unit_id, tournament_id=d.tournament_id)
            record["result"] = {
                "winner": ("white", "black")[row.winner or 0],
                "points": row.points,
                "termination": row.termination,
            }
            batch.append((row, record))
            stored += 1
        store.save_games(batch)
    last_round = batch[-1][0].round
    rest = [
        _row(d, u, rnd, time.time())
        for u in islice(units, 2 * BOTS * BOTS)
        if u.round == last_round
    ]
    store.close()
    return d, rest


# -- the CLI ---------------------------------------------------------------------------------------

_CLI = """
import resource, sys, time
start = time.perf_counter()
import nardy.arena.operator_cli, nardy.arena.tournament_cli  # what `nardy arena` imports
from nardy.cli import main
print(f"import {time.perf_counter() - start}", file=sys.stderr)
start = time.perf_counter()
try:
    main(["arena", "standings", "--db", sys.argv[1], "--json"])
except SystemExit as exc:
    if exc.code:
        raise
finally:
    sys.stdout.flush()
    print(f"{time.perf_counter() - start} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}",
          file=sys.stderr)
"""


def measure_cli(db: Path) -> dict[str, float]:
    baseline = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource, nardy.cli; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CLI, str(db)], capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - start
    lines = done.stderr.strip().splitlines()
    inner, rss = lines[-1].split()
    imports = float(next(x for x in lines if x.startswith("import ")).split()[1])
    json.loads(done.stdout)
    return {
        "wall_s": round(wall, 3),
        "imports_s": round(imports, 3),
        "standings_s": round(float(inner), 3),
        "peak_rss_mb": round(int(rss) / 1024, 1),
        "import_only_rss_mb": round(int(baseline.stdout) / 1024, 1),
    }


# -- the spectator ---------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(port: int, path: str) -> tuple[float, int]:
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("GET", path)
    response = conn.getresponse()
    response.read()
    conn.close()
    return time.perf_counter() - start, response.status


def _memory(pid: int) -> dict[str, float]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = round(int(value.split()[0]) / 1024, 1)
    return out


class Server:
    def __init__(self, db: Path) -> None:
        self.port = _free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "nardy", "web", "--db", str(db), "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("nardy web did not start")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def _live_latency(port: int, path: str, store_round: Callable[[], float]) -> float:
    """Seconds from storing the round's last games to the live page's event that shows them."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.sendall(f"GET {path}/live HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    buffer = b""
    while b"event: standings" not in buffer:  # the first one: the standings as they are
        buffer += sock.recv(65536)
    buffer = buffer.split(b"event: standings", 1)[1]
    stored_at = store_round()
    while b"event: standings" not in buffer:
        buffer += sock.recv(65536)
    latency = time.perf_counter() - stored_at
    sock.close()
    return latency


def measure_web(
    db: Path, d: TournamentDef, rest: list[GameRow], sample: dict[str, Any]
) -> dict[str, Any]:
    path = f"/t/{d.tournament_id}"
    out: dict[str, Any] = {}
    server = Server(db)
    try:
        out["memory_idle_mb"] = _memory(server.process.pid)
        first, status = _get(server.port, path)
        assert status == 200, status
        out["first_load_s"] = round(first, 3)
        cached = [_get(server.port, path)[0] for _ in range(20)]
        out["cached_median_s"] = round(statistics.median(cached), 4)
        out["cached_max_s"] = round(max(cached), 4)
        out["api_cached_s"] = round(_get(server.port, "/api" + path)[0], 4)
        out["tournaments_list_s"] = round(_get(server.port, "/")[0], 4)
        out["games_list_first_s"] = round(_get(server.port, path + "/games")[0], 3)
        out["games_list_again_s"] = round(_get(server.port, path + "/games?page=3")[0], 4)
        out["memory_after_games_list_mb"] = _memory(server.process.pid)

        def store_round() -> float:
            writer = SqliteStore(db)
            writer.save_games([(r, {**sample, "game_id": r.game_id}) for r in rest])
            writer.close()
            return time.perf_counter()

        out["live_latency_s"] = round(_live_latency(server.port, path, store_round), 3)
        out["memory_after_mb"] = _memory(server.process.pid)
    finally:
        server.stop()
    # A fresh server, 8 requests at once: one computation, the others wait for it.
    server = Server(db)
    try:
        times: list[float] = []
        threads = [
            threading.Thread(target=lambda: times.append(_get(server.port, path)[0]))
            for _ in range(8)
        ]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        out["concurrent_8_wall_s"] = round(time.perf_counter() - start, 3)
        out["concurrent_8_max_s"] = round(max(times), 3)
        out["memory_concurrent_mb"] = _memory(server.process.pid)
    finally:
        server.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50_000)
    parser.add_argument("--small", type=int, default=5_000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    sample = _sample_record()
    results: dict[str, Any] = {"load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        for label, games in (("small", args.small), ("large", args.games)):
            db = Path(tmp) / f"{label}.db"
            start = time.perf_counter()
            d, rest = build(db, games, sample)
            entry: dict[str, Any] = {
                "games": games,
                "build_s": round(time.perf_counter() - start, 1),
                "db_mb": round(db.stat().st_size / 2**20, 1),
                "cli": measure_cli(db),
            }
            if label == "large":
                entry["web"] = measure_web(db, d, rest, sample)
            results[label] = entry
            print(json.dumps({label: entry}, indent=1), flush=True)
    results["load_after"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
