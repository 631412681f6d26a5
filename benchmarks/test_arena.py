"""The arena's own overhead per decision over loopback, for both transports.

Two trivial bots (always the first legal play) play seeded games of long nardy through a real
arena server on 127.0.0.1. Per decision we report

* ``latency`` — what the arena's clock charges: request sent → answer received, i.e. request
  encoding, the gRPC round trip, the (trivial) bot's decoding/encoding, answer decoding;
* ``wall`` — the whole per-decision cost of a game: latency plus building the request (legal
  plays, positions) and the kernel applying the answer.

Run with ``pytest benchmarks/test_arena.py -s`` (printed table) or with pytest-benchmark's
options; the numbers are also stored in ``benchmark.extra_info``. The target is a median latency
of at most 1 ms; the assertion is looser (``NARDY_ARENA_BENCH_LIMIT_MS``, default 5 ms) so that a
loaded CI machine does not fail the build.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Iterator

import pytest

pytest.importorskip("grpc")

from nardy.arena.protocol import bot_pb2
from nardy.arena.sdk import BotBase, DialOutClient, dial_out, serve_bot
from nardy.arena.service.core import Arena
from nardy.arena.service.server import ArenaServer

GAMES = int(os.environ.get("NARDY_ARENA_BENCH_GAMES", "20"))
LIMIT_MS = float(os.environ.get("NARDY_ARENA_BENCH_LIMIT_MS", "5"))


class FirstPlay(BotBase):
    name = "first-play"

    def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> int:
        return 0


@pytest.fixture(scope="module")
def setup() -> Iterator[tuple[Arena, dict[str, tuple[str, str]]]]:
    server = ArenaServer(Arena()).start()
    arena = server.arena
    bots = [serve_bot(FirstPlay()), serve_bot(FirstPlay())]
    s1 = arena.register_server_bot("s1", bots[0].address)
    s2 = arena.register_server_bot("s2", bots[1].address)
    d1 = arena.register_dial_out_bot("d1")
    d2 = arena.register_dial_out_bot("d2")
    clients: list[DialOutClient] = [
        dial_out(FirstPlay(), server.address, d1.token).start(),
        dial_out(FirstPlay(), server.address, d2.token).start(),
    ]
    assert all(c.connected.wait(5) for c in clients)
    try:
        yield arena, {"server": (s1.bot_id, s2.bot_id), "dial_out": (d1.bot_id, d2.bot_id)}
    finally:
        for c in clients:
            c.stop()
        server.stop(0)
        for b in bots:
            b.stop(0)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@pytest.mark.parametrize("transport", ["server", "dial_out"])
def test_overhead_per_decision(setup, transport, benchmark) -> None:
    arena, pairs = setup
    white, black = pairs[transport]
    latencies: list[float] = []
    walls: list[float] = []
    seeds = iter(range(10**6))

    def one_game() -> None:
        record = arena.play_game(white, black, seed=next(seeds))
        assert record.outcome is not None and record.outcome.termination == "borne_off"
        latencies.extend(record.latencies())
        walls.append(record.elapsed / len(record.answers))

    arena.play_game(white, black, seed=10**7)  # warm up channels and caches
    benchmark.pedantic(one_game, rounds=GAMES, iterations=1)
    stats = {
        "decisions": len(latencies),
        "latency_median_ms": statistics.median(latencies) * 1e3,
        "latency_p99_ms": _percentile(latencies, 0.99) * 1e3,
        "wall_per_decision_median_ms": statistics.median(walls) * 1e3,
    }
    benchmark.extra_info.update(stats)
    print(
        f"\n{transport:9s} {stats['decisions']} decisions: latency median "
        f"{stats['latency_median_ms']:.3f} ms, p99 {stats['latency_p99_ms']:.3f} ms; "
        f"wall per decision {stats['wall_per_decision_median_ms']:.3f} ms"
    )
    assert stats["latency_median_ms"] <= LIMIT_MS
