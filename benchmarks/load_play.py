"""Concurrent human games on one ``nardy web`` (issue 35's check): the Play page's first load,
and the round trip of a move against a 0-ply bot.

A real ``nardy web`` process (the installed command) on a free loopback port; ``--games``
clients play games at once through the JSON API as the page does: each reads its state,
enters random offered steps, confirms (taking each action's answer as its next state, as the
page does), and times from the confirming request to the state that shows the bot's reply
played and its own turn again (or the game over). While the bot thinks it
waits as the page does, with a long poll (``GET /api/play/{id}?after=VERSION``), or with
``--poll SECONDS`` polls the state at that pace. A client whose game ends starts another, so
that the games at once stay ``--games``. Each game is started from an address of its own
(``127.0.0.2``, ``127.0.0.3`` …, ``127.1.0.2`` for a client's second game), so that the Play
page's limit on new games per address (20 in 10 minutes) is met as real visitors would meet it;
its limit for everyone (600 in 10 minutes) bounds a run's length (``starts_refused``). Prints JSON::

    python benchmarks/load_play.py --games 100 --seconds 30

``benchmarks/test_play.py`` runs it small in the benchmarks' quick pass.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _nardy() -> str:
    """The installed ``nardy`` beside this Python (the README's install), else on PATH."""
    beside = Path(sys.executable).with_name("nardy")
    found = str(beside) if beside.exists() else shutil.which("nardy")
    if found is None:
        raise SystemExit("no installed nardy command: install the package first")
    return found


class Client:
    """One HTTP/1.1 connection from one source address (keep-alive, as a browser's)."""

    def __init__(self, port: int, source: str) -> None:
        self.port = port
        self.source = source
        self.connection = http.client.HTTPConnection(
            "127.0.0.1", port, timeout=30, source_address=(source, 0)
        )

    def request(
        self, method: str, path: str, body: Any = None, seat: str | None = None
    ) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if seat is not None:
            headers["X-Nardy-Seat"] = seat
        payload = None if body is None else json.dumps(body)
        for attempt in (0, 1):
            try:
                self.connection.request(method, path, body=payload, headers=headers)
                response = self.connection.getresponse()
                data = response.read()
                kind = response.getheader("Content-Type", "")
                return response.status, json.loads(data) if "json" in kind else data
            except (ConnectionError, http.client.HTTPException):
                if attempt:
                    raise
                self.connection.close()  # the server closed an idle one: open another
                self.connection = http.client.HTTPConnection(
                    "127.0.0.1", self.port, timeout=30, source_address=(self.source, 0)
                )
        raise AssertionError("unreachable")


def play(
    port: int,
    source: str,
    variant: str,
    bot: str,
    seed: int,
    until: float,
    poll: float,
    think: float = 0.0,
    reread: bool = False,
) -> dict[str, Any]:
    """Human games one after another until ``until`` (a new one as soon as one ends, so that
    the games at once stay as many as the clients): the round trips. Each game comes from an
    address of its own (``source`` with its third number the game's: the Play page lets an
    address start 20 games in 10 minutes); a start refused by the page's limit for everyone
    (600 in 10 minutes) ends the client, counted in ``refused``.

    As the page (play.js ``act``), it takes the state an action answers with and asks for the
    state again only while it waits (``reread``: it asks again after every action too)."""
    rng = random.Random(seed)
    trips: list[float] = []
    games = errors = refused = 0
    while time.monotonic() < until and not errors:
        first, _, _, last = source.split(".")
        client = Client(port, f"{first}.{games % 250}.{seed // 250}.{last}")
        status, made = client.request(
            "POST", "/api/play", {"variant": variant, "opponent": {"kind": "bot", "bot": bot}}
        )
        if status == 429:
            refused += 1
            break
        if status != 201:
            errors += 1
            break
        games += 1
        game, seat = made["id"], made["seat_url"].split("#seat=", 1)[1]
        confirmed: float | None = None
        version: int | None = None  # the version seen while waiting for the bot (long poll)
        answered: Any = None  # the state the last action answered with
        while time.monotonic() < until:
            if answered is not None:
                state, answered = answered, None
            else:
                query = "" if version is None else f"?after={version}"
                status, state = client.request("GET", f"/api/play/{game}{query}", seat=seat)
                if status != 200:
                    errors += 1
                    break
            mine = state["decision"] is not None and state["decision"]["player"] == state["seat"]
            if state["result"] is not None or mine:
                if confirmed is not None:
                    trips.append(time.monotonic() - confirmed)
                    confirmed = None
                if state["result"] is not None:
                    break
            if not mine:  # the bot thinks
                if poll:
                    time.sleep(poll)
                else:
                    version = state["version"]  # ask again when the game moves past it
                continue
            version = None
            kind = state["decision"]["kind"]
            action: tuple[str, Any]
            if kind == "double":
                action = ("/cube", {"action": "roll"})
            elif kind == "take":
                action = ("/cube", {"action": "take"})
            elif state["complete"]:
                action = ("/confirm", None)
            else:
                action = ("/step", rng.choice(state["offered"]))
            if think:
                time.sleep(rng.uniform(0.5, 1.5) * think)  # a person looks, then clicks
            if action[0] == "/confirm":  # the play in; the bot's reply out
                confirmed = time.monotonic()
            status, state = client.request("POST", f"/api/play/{game}{action[0]}", action[1], seat)
            if status != 200:
                errors += 1
                break
            answered = None if reread else state
    return {"trips": trips, "games": games, "errors": errors, "refused": refused}


def _cpu_seconds(pid: int) -> float | None:
    """The CPU time (user + system) the process ``pid`` used so far, where /proc tells it."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)

    return {"n": len(ordered), "p50_ms": at(0.5), "p99_ms": at(0.99), "max_ms": at(1.0)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="games played at once")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long they play")
    parser.add_argument("--variant", default="backgammon")
    parser.add_argument("--bot", default="heuristic", help="a 0-ply bot")
    parser.add_argument(
        "--poll",
        type=float,
        default=0.0,
        help="seconds between state polls while the bot thinks; 0 (the default): a long poll "
        "(GET state?after=VERSION), as the Play page does",
    )
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="seconds a person takes for each action, on average (a step, a confirm, a cube "
        "answer; drawn from 0.5-1.5 times it); 0 (the default): every client acts the moment "
        "its state arrives, the server's worst case",
    )
    parser.add_argument(
        "--pythonpath",
        metavar="DIR",
        help="run the server as python -m nardy from the package copied into DIR (its nardy/ "
        "folder) instead of the installed command: two copies, before and after a change, "
        "measured in turns under the same load",
    )
    parser.add_argument(
        "--reread",
        action="store_true",
        help="after every action ask for the state again (GET) instead of reading the state the "
        "action answered with, as the page does: how this script measured before 2026-12-05",
    )
    args = parser.parse_args(argv)
    port = _free_port()
    with tempfile.TemporaryDirectory() as folder:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        command = [_nardy()]
        if args.pythonpath:
            env["PYTHONPATH"] = str(Path(args.pythonpath).resolve())
            command = [sys.executable, "-m", "nardy"]
        server = subprocess.Popen(
            [*command, "web", "--port", str(port), "--db", str(Path(folder) / "arena.db")],
            cwd=folder,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit("nardy web did not start") from None
                    time.sleep(0.1)
            first = Client(port, "127.0.0.1")
            started = time.monotonic()
            status, page = first.request("GET", "/play")
            first_load = time.monotonic() - started
            assert status == 200, status
            static = time.monotonic()
            # Every stylesheet and script the page names, as a browser fetches them.
            for asset in dict.fromkeys(
                re.findall(r'(?:href|src)="(/static/[^"]+)"', page.decode())
            ):
                assert first.request("GET", asset)[0] == 200, asset
            assets = time.monotonic() - static

            cpu_before = _cpu_seconds(server.pid)
            clients_before = time.process_time()
            until = time.monotonic() + args.seconds
            results: list[dict[str, Any]] = [{} for _ in range(args.games)]

            def run(i: int) -> None:
                source = f"127.0.0.{2 + i % 250}"
                results[i] = play(
                    port,
                    source,
                    args.variant,
                    args.bot,
                    i,
                    until,
                    args.poll,
                    args.think,
                    args.reread,
                )

            threads = [threading.Thread(target=run, args=(i,)) for i in range(args.games)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            cpu_after = _cpu_seconds(server.pid)
            clients_cpu = time.process_time() - clients_before
        finally:
            server.terminate()
            server.wait(10)
    trips = [t for r in results for t in r.get("trips", [])]
    cpu = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    return {
        "server": args.pythonpath or "installed",
        "load_average_1min": os.getloadavg()[0],
        "games_at_once": args.games,
        "variant": args.variant,
        "bot": args.bot,
        "seconds": args.seconds,
        "poll": args.poll or "long",
        "think_s": args.think,
        "reread": args.reread,
        "play_page_first_load_ms": round(1000 * first_load, 1),
        "play_page_assets_ms": round(1000 * assets, 1),
        "games_played": sum(r.get("games", 0) for r in results),
        "errors": sum(r.get("errors", 0) for r in results),
        "starts_refused": sum(r.get("refused", 0) for r in results),
        "round_trip": _percentiles(trips),
        # What the server spent (all its threads) per move timed: the load's own cost, which
        # the round trip shows only once the machine's cores run short.
        "server_cpu_s": None if cpu is None else round(cpu, 2),
        "server_cpu_ms_per_move": None
        if cpu is None or not trips
        else round(1000 * cpu / len(trips), 1),
        # What this script's clients spent meanwhile, on the same machine's cores.
        "clients_cpu_s": round(clients_cpu, 2),
    }


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
