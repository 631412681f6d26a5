"""Load on one ``nardy arena serve``: many dial-out bots and watchers at once, and how fast
``GetStandings`` and the admin's calls answer meanwhile (the figures of docs/arena.md).

    python benchmarks/load_arena.py streams [--bots 1000] [--watchers 1000] [--seconds 20]
    python benchmarks/load_arena.py bodies [--calls 16] [--mib 15]

``streams``: starts ``nardy arena serve`` on a free loopback port (its files in a temporary
directory, stopped by its process id at the end), registers ``--bots`` dial-out bots, connects
them all from this process (``grpc.aio``, spread over 20 connections; every bot answers with a
random legal play), creates a round robin between 8 of them and opens ``--watchers``
``WatchTournament`` streams on it. While all of those are open, one client calls
``GetStandings`` (the running tournament), ``ListBots`` and the admin's ``CancelTournament`` (an
unknown id: the token is checked, the answer is NOT_FOUND) one after the other for ``--seconds``
seconds and reports each call's latency (p50, p99, max). Then it checks that every bot was
still connected, every watcher still open, and that the tournament's games had no timeouts.

``bodies``: the server's memory (VmRSS) before and after ``--calls`` anonymous admin calls of
``--mib`` MiB each sent at once (refused unread: no token) and as many anonymous ``ListBots``
calls of the same size (refused by the message limit).

Everything runs on 127.0.0.1 and is bounded: counts by the options, time by ``--seconds`` plus
the setup (a few tens of seconds at the defaults). The machine's load average is printed with
the figures: on a shared machine the latencies measure the neighbours too.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
from grpc import aio

from nardy.arena.protocol import ARENA_SERVICE_NAME, arena_pb2, arena_pb2_grpc
from nardy.arena.sdk import RandomBot, double_response, play_response, take_response

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "arena"))
from sources import Sources  # type: ignore[import-not-found,unused-ignore]  # loopback addresses


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


class Served:
    """``nardy arena serve`` in a subprocess; :meth:`stop` ends it by its process id."""

    def __init__(self, directory: Path, *extra: str) -> None:
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "nardy.arena.cli", "arena", "serve"]
        command += ["--port", str(self.port), "--db", str(directory / "arena.db")]
        command += ["--admin-token-file", str(directory / "admin.token")]
        self.admin_port = _free_port()
        self.admin_address = f"127.0.0.1:{self.admin_port}"
        command += ["--allow-private-addresses", "--per-decision", "5"]
        command += ["--admin-port", str(self.admin_port), *extra]
        self.log = (directory / "serve.log").open("w")
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.log, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("LISTENING"):
            self.stop()
            raise RuntimeError(f"the arena did not start: {line!r}")
        token = (directory / "admin.token").read_text().strip()
        self.admin = (("authorization", f"Bearer {token}"),)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {"n": 0}

    def at(q: float) -> float:
        return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)

    return {"n": len(ordered), "p50_ms": at(0.5), "p99_ms": at(0.99), "max_ms": at(1.0)}


def _answer(bot: RandomBot, request: arena_pb2.DecisionRequest) -> arena_pb2.ConnectRequest | None:
    answer = arena_pb2.DecisionAnswer()
    which = request.WhichOneof("request")
    if which == "choose_play":
        ctx = request.choose_play.context
        answer.choose_play.CopyFrom(play_response(bot.choose_play(request.choose_play)))
    elif which == "decide_double":
        ctx = request.decide_double.context
        answer.decide_double.CopyFrom(double_response(bot.decide_double(request.decide_double)))
    elif which == "respond_to_double":
        ctx = request.respond_to_double.context
        answer.respond_to_double.CopyFrom(
            take_response(bot.respond_to_double(request.respond_to_double))
        )
    else:
        return None
    answer.game_id, answer.sequence = ctx.game_id, ctx.sequence
    return arena_pb2.ConnectRequest(answer=answer)


class Crowd:
    """Dial-out bots and watchers on an event loop of their own thread."""

    def __init__(self, address: str, connections: int = 20, think: float = 0.0) -> None:
        self.think = think
        """Seconds each answer waits (a bot that thinks; 0: answer at once)."""
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.address = address
        self.connected = 0
        self.welcomed = 0
        self.watching = 0
        self.events = 0
        self.errors: list[str] = []
        self.channels: list[aio.Channel] = self.run(self._channels(connections))
        self.tasks: list[concurrent.futures.Future[Any]] = []

    def run(self, coroutine: Any, timeout: float = 120) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    async def _channels(self, n: int) -> list[aio.Channel]:
        return [
            aio.insecure_channel(self.address, options=[("grpc.use_local_subchannel_pool", 1)])
            for _ in range(n)
        ]

    def _channel(self, i: int) -> aio.Channel:
        return self.channels[i % len(self.channels)]

    async def _bot(self, i: int, token: str) -> None:
        bot = RandomBot(i)
        outbox: asyncio.Queue[arena_pb2.ConnectRequest | None] = asyncio.Queue()
        await outbox.put(arena_pb2.ConnectRequest(hello=arena_pb2.Hello(token=token)))

        async def requests() -> Any:
            while (item := await outbox.get()) is not None:
                yield item

        stub = arena_pb2_grpc.ArenaServiceStub(self._channel(i))
        welcomed = False
        try:
            async for message in stub.Connect(requests()):
                which = message.WhichOneof("message")
                if which == "welcome" and not welcomed:
                    welcomed = True
                    self.welcomed += 1
                elif which == "decision_request":
                    reply = _answer(bot, message.decision_request)
                    if reply is not None and self.think > 0:
                        self.loop.call_later(self.think, outbox.put_nowait, reply)
                    elif reply is not None:
                        await outbox.put(reply)
            self.errors.append(f"bot {i}: stream ended")
        except grpc.RpcError as exc:
            self.errors.append(f"bot {i}: {exc.code()} {exc.details()}")
        except asyncio.CancelledError:
            pass
        finally:
            if welcomed:
                self.welcomed -= 1

    async def _watch(self, i: int, tournament_id: str) -> None:
        stub = arena_pb2_grpc.ArenaServiceStub(self._channel(i))
        call = stub.WatchTournament(arena_pb2.WatchTournamentRequest(tournament_id=tournament_id))
        self.watching += 1
        try:
            async for _ in call:
                self.events += 1
        except grpc.RpcError as exc:
            self.errors.append(f"watcher {i}: {exc.code()} {exc.details()}")
        except asyncio.CancelledError:
            call.cancel()
        finally:
            self.watching -= 1

    def start_bots(self, tokens: list[str]) -> None:
        for i, token in enumerate(tokens):
            self.tasks.append(asyncio.run_coroutine_threadsafe(self._bot(i, token), self.loop))

    def start_watchers(self, n: int, tournament_id: str) -> None:
        for i in range(n):
            self.tasks.append(
                asyncio.run_coroutine_threadsafe(self._watch(i, tournament_id), self.loop)
            )

    def close(self) -> None:
        for task in self.tasks:
            task.cancel()

        async def close() -> None:
            await asyncio.sleep(0.2)
            for channel in self.channels:
                await channel.close()

        self.run(close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def _wait(predicate: Any, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return bool(predicate())


def streams(args: argparse.Namespace) -> dict[str, Any]:
    limit = str(args.bots + args.watchers + 100)
    with tempfile.TemporaryDirectory(prefix="nardy-load-") as tmp:
        served = Served(
            Path(tmp),
            *("--max-streams", limit, "--max-streams-per-peer", limit),
            # The bots all connect at once from one address and do not retry a refusal.
            *("--max-pending-hellos", limit),
            *("--standings-interval", "0.5"),
        )
        channel = grpc.insecure_channel(served.address)
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        crowd: Crowd | None = None
        out: dict[str, Any] = {"load_before": os.getloadavg()}
        try:
            rss_idle = _rss_mib(served.proc.pid)
            tokens, ids = [], []
            started = time.monotonic()
            for i in range(args.bots):
                request = arena_pb2.RegisterBotRequest(name=f"load{i:04d}")
                request.dial_out.SetInParent()
                response = stub.RegisterBot(request, timeout=30, metadata=served.admin)
                tokens.append(response.token)
                ids.append(response.bot_id)
            out["register_s"] = round(time.monotonic() - started, 1)
            crowd = Crowd(served.address, think=args.think_ms / 1000)
            started = time.monotonic()
            crowd.start_bots(tokens)
            connected = _wait(lambda: crowd is not None and crowd.welcomed >= args.bots, 120)
            out["bots_connected"] = crowd.welcomed
            out["connect_s"] = round(time.monotonic() - started, 1)
            if not connected:
                raise RuntimeError(f"only {crowd.welcomed} bots connected: {crowd.errors[:3]}")
            create = arena_pb2.CreateTournamentRequest(
                name="load", bot_ids=ids[:8], games_per_pairing=4, concurrency=4, seed=1
            )
            create.time_control.per_decision.FromNanoseconds(int(5e9))
            tournament = stub.CreateTournament(create, timeout=60, metadata=served.admin)
            crowd.start_watchers(args.watchers, tournament.tournament_id)
            _wait(lambda: crowd is not None and crowd.watching >= args.watchers, 120)
            out["watchers_open"] = crowd.watching
            out["rss_idle_mib"] = round(rss_idle, 1)
            out["rss_loaded_mib"] = round(_rss_mib(served.proc.pid), 1)
            latencies: dict[str, list[float]] = {"GetStandings": [], "ListBots": [], "admin": []}
            calls: dict[str, Callable[[], object]] = {
                "GetStandings": lambda: stub.GetStandings(
                    arena_pb2.GetStandingsRequest(tournament_id=tournament.tournament_id),
                    timeout=10,
                ),
                "ListBots": lambda: stub.ListBots(arena_pb2.ListBotsRequest(), timeout=10),
                "admin": lambda: _expect_not_found(
                    lambda: stub.CancelTournament(
                        arena_pb2.CancelTournamentRequest(tournament_id="none"),
                        timeout=10,
                        metadata=served.admin,
                    )
                ),
            }
            cpu, wall = _cpu_s(served.proc.pid), time.monotonic()
            end = time.monotonic() + args.seconds
            while time.monotonic() < end:
                for name, call in calls.items():
                    t = time.perf_counter()
                    call()
                    latencies[name].append(time.perf_counter() - t)
                time.sleep(0.02)
            # How much of a core the server used while measured (the rest of the machine's
            # load is the neighbours and this script).
            out["server_cores_used"] = round(
                (_cpu_s(served.proc.pid) - cpu) / (time.monotonic() - wall), 2
            )
            out["latency"] = {name: _percentiles(v) for name, v in latencies.items()}
            out["bots_still_connected"] = crowd.welcomed
            out["watchers_still_open"] = crowd.watching
            out["watch_events"] = crowd.events
            standings = stub.GetStandings(
                arena_pb2.GetStandingsRequest(tournament_id=tournament.tournament_id),
                timeout=10,
                metadata=served.admin,
            )
            games = stub.ListGames(
                arena_pb2.ListGamesRequest(tournament_id=tournament.tournament_id), timeout=10
            )
            out["games_played"] = f"{standings.games_played}/{standings.games_total}"
            out["games_not_borne_off"] = sum(
                1
                for g in games.games
                if g.result.termination != 1  # TERMINATION_BORNE_OFF
            )
            out["forfeits"] = sum(r.forfeits for r in standings.standings)
            out["errors"] = crowd.errors[:5]
            out["think_ms"] = args.think_ms
            out["rss_end_mib"] = round(_rss_mib(served.proc.pid), 1)
        finally:
            if crowd is not None:
                crowd.close()
            channel.close()
            served.stop()
        out["load_after"] = os.getloadavg()
        return out


def _expect_not_found(call: Any) -> None:
    try:
        call()
    except grpc.RpcError as exc:
        if exc.code() != grpc.StatusCode.NOT_FOUND:
            raise
    else:
        raise RuntimeError("cancelling an unknown tournament succeeded")


def bodies(args: argparse.Namespace) -> dict[str, Any]:
    size = args.mib * 1024 * 1024
    with tempfile.TemporaryDirectory(prefix="nardy-load-") as tmp:
        served = Served(Path(tmp))
        channel = grpc.insecure_channel(served.address)
        try:
            grpc.channel_ready_future(channel).result(10)
            before = _rss_mib(served.proc.pid)
            body = b"\x0a" + b"\xff" * 4  # a field header, then a body never parsed
            body += b"\0" * (size - len(body))
            codes: dict[str, int] = {}
            peak = before
            for method in args.methods.split(","):
                call = channel.unary_unary(
                    f"/{ARENA_SERVICE_NAME}/{method}",
                    request_serializer=lambda b: b,
                    response_deserializer=lambda b: b,
                )
                futures = [call.future(body, timeout=60) for _ in range(args.calls)]
                for future in futures:
                    try:
                        future.result()
                        code = "OK"
                    except grpc.RpcError as exc:
                        code = exc.code().name
                    codes[f"{method} {code}"] = codes.get(f"{method} {code}", 0) + 1
                peak = max(peak, _rss_mib(served.proc.pid))
            after = _rss_mib(served.proc.pid)
        finally:
            channel.close()
            served.stop()
    return {
        "calls": f"{args.calls} x {args.mib} MiB, each of {args.methods}",
        "codes": codes,
        "rss_before_mib": round(before, 1),
        "rss_after_mib": round(after, 1),
        "rss_peak_seen_mib": round(peak, 1),
    }


# -- floods from many addresses (issue 34) -------------------------------------------------------


class RssSampler:
    """The server's VmRSS every 20 ms on a thread: the peak a flood reached."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = _rss_mib(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            try:
                self.peak = max(self.peak, _rss_mib(self.pid))
            except (OSError, RuntimeError):
                return

    def stop(self) -> float:
        self._stop.set()
        self._thread.join(5)
        return self.peak


PROBE_TOKEN_VARIABLE = "NARDY_LOAD_ADMIN_TOKEN"


class AdminProbe:
    """The operator's calls (``CancelTournament`` of an unknown id, answered NOT_FOUND) from a
    process of its own, one every 20 ms for ``seconds``: their latency under a flood."""

    def __init__(self, address: str, token: str, seconds: float) -> None:
        # The token travels in the environment, not on the command line: a token may begin with
        # "-" (token_urlsafe's alphabet has it), which argparse would take for an option.
        command = [sys.executable, __file__, "admin-probe", address, str(seconds)]
        env = {**os.environ, PROBE_TOKEN_VARIABLE: token}
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)

    def result(self) -> dict[str, Any]:
        out, _ = self.proc.communicate(timeout=120)
        found: dict[str, Any] = json.loads(out)
        return found


def admin_probe(args: argparse.Namespace) -> dict[str, Any]:
    metadata = (("authorization", f"Bearer {os.environ[PROBE_TOKEN_VARIABLE]}"),)
    latencies: list[float] = []
    codes: dict[str, int] = {}
    details: dict[str, str] = {}
    with grpc.insecure_channel(args.address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        grpc.channel_ready_future(channel).result(10)
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            started = time.perf_counter()
            try:
                stub.CancelTournament(
                    arena_pb2.CancelTournamentRequest(tournament_id="none"),
                    timeout=10,
                    metadata=metadata,
                )
                code = "OK"
            except grpc.RpcError as exc:
                code = exc.code().name
                if code != "NOT_FOUND":
                    details.setdefault(code, exc.details() or "")
            latencies.append(time.perf_counter() - started)
            codes[code] = codes.get(code, 0) + 1
            time.sleep(0.02)
    return {"latency": _percentiles(latencies), "codes": codes, "details": details}


def _count(codes: dict[str, int], code: str) -> None:
    codes[code] = codes.get(code, 0) + 1


def unary_flood(args: argparse.Namespace) -> dict[str, Any]:
    """``--sources`` addresses each keep ``--calls`` anonymous ``ListBots`` in flight for
    ``--seconds`` (each call a request of ``--kib`` KiB: an unknown field, decoded and
    ignored), while an admin probe runs from another process."""
    size = max(0, args.kib * 1024 - 16)
    # Field 15 (unknown to ListBotsRequest), length-delimited: parsed and kept aside.
    body_bytes = b"\x7a" + _varint(size) + b"\0" * size if size else b""
    codes: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="nardy-load-") as tmp:
        served = Served(Path(tmp), *args.serve.split())
        token = served.admin[0][1].removeprefix("Bearer ")
        sources = Sources(served.address, args.sources)
        out: dict[str, Any] = {
            "flood": f"{args.sources} addresses x {args.calls} ListBots of {args.kib} KiB "
            f"in flight for {args.seconds} s",
            "serve_flags": args.serve,
            "load_before": os.getloadavg(),
        }
        try:
            time.sleep(1.0)
            out["rss_idle_mib"] = round(_rss_mib(served.proc.pid), 1)
            sampler = RssSampler(served.proc.pid)
            probe = AdminProbe(
                served.address if args.public_port else served.admin_address, token, args.seconds
            )

            async def flood() -> None:
                channels = [
                    aio.insecure_channel(
                        sources.address(i),
                        options=[("grpc.max_send_message_length", 64 << 20)],
                    )
                    for i in range(args.sources)
                ]
                end = time.monotonic() + args.seconds

                async def caller(channel: aio.Channel) -> None:
                    call = channel.unary_unary(
                        f"/{ARENA_SERVICE_NAME}/ListBots",
                        request_serializer=lambda b: b,
                        response_deserializer=lambda b: b,
                    )
                    while time.monotonic() < end:
                        try:
                            await call(body_bytes, timeout=30)
                            _count(codes, "OK")
                        except grpc.RpcError as exc:
                            _count(codes, exc.code().name)
                            await asyncio.sleep(0.005)  # a refused caller tries again at once

                await asyncio.gather(
                    *(caller(c) for c in channels for _ in range(args.calls)),
                )
                for c in channels:
                    await c.close()

            asyncio.run(flood())
            out["rss_peak_mib"] = round(sampler.stop(), 1)
            out["admin"] = probe.result()
            time.sleep(args.settle)
            out["rss_after_mib"] = round(_rss_mib(served.proc.pid), 1)
            out["codes"] = codes
        finally:
            sources.close()
            served.stop()
    out["load_after"] = os.getloadavg()
    return out


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def silent_connects(args: argparse.Namespace) -> dict[str, Any]:
    """The attacker of ``hello-flood`` (a process of its own, so that its load is not the
    honest clients'): ``--sources`` addresses each hold ``--streams`` ``Connect`` streams that
    never send Hello, opening a new one 50 ms after one is ended, for ``seconds``."""
    opened = [0]
    ended: dict[str, int] = {}

    async def flood(sources: Sources) -> None:
        stop = asyncio.Event()

        async def nothing() -> Any:
            await stop.wait()
            never: tuple[arena_pb2.ConnectRequest, ...] = ()
            for message in never:  # an async generator that never yields
                yield message

        async def hold(stub: Any) -> None:
            while not stop.is_set():
                call = stub.Connect(nothing())
                opened[0] += 1
                try:
                    async for _ in call:
                        pass
                    code = "OK"
                except grpc.RpcError as exc:
                    code = exc.code().name
                except asyncio.CancelledError:
                    call.cancel()
                    raise
                _count(ended, code)
                await asyncio.sleep(0.05)

        channels = [aio.insecure_channel(sources.address(i)) for i in range(args.sources)]
        holders = [
            asyncio.ensure_future(hold(arena_pb2_grpc.ArenaServiceStub(c)))
            for c in channels
            for _ in range(args.streams)
        ]
        await asyncio.sleep(args.seconds)
        stop.set()
        for task in holders:
            task.cancel()
        await asyncio.gather(*holders, return_exceptions=True)
        for c in channels:
            await c.close()

    with Sources(args.address, args.sources) as sources:
        asyncio.run(flood(sources))
    return {"opened": opened[0], "ended": ended}


async def _connect_twice(address: str, token: str) -> float:
    """Seconds for an honest dial-out bot to be welcomed, then welcomed again on a new stream
    (a reconnect), retrying a refused ``Connect`` after 0.1 s; the larger of the two."""
    times = []
    async with aio.insecure_channel(address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        for _ in range(2):
            started = time.monotonic()
            while True:
                hello = arena_pb2.ConnectRequest(hello=arena_pb2.Hello(token=token))
                outbox: asyncio.Queue[arena_pb2.ConnectRequest | None] = asyncio.Queue()
                outbox.put_nowait(hello)

                async def requests(box: Any = outbox) -> Any:
                    while (item := await box.get()) is not None:
                        yield item

                call = stub.Connect(requests())
                try:
                    async for message in call:
                        if message.WhichOneof("message") == "welcome":
                            break
                    else:
                        raise RuntimeError("the stream ended without a welcome")
                    times.append(time.monotonic() - started)
                    call.cancel()
                    break
                except grpc.RpcError:
                    if time.monotonic() - started > 30:
                        times.append(float("inf"))
                        break
                    await asyncio.sleep(0.1)
    return max(times)


def hello_flood(args: argparse.Namespace) -> dict[str, Any]:
    """An attacker process (:func:`silent_connects`) holds silent ``Connect`` streams from
    ``--sources`` addresses; meanwhile ``--bots`` honest dial-out bots connect and reconnect
    from other addresses, ``--watchers`` watch a tournament from another one, and an admin
    probe runs from a third process."""
    with tempfile.TemporaryDirectory(prefix="nardy-load-") as tmp:
        served = Served(Path(tmp), *args.serve.split())
        token = served.admin[0][1].removeprefix("Bearer ")
        honest = Sources(served.address, 3, first=2 + args.sources)
        channel = grpc.insecure_channel(served.address)
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        out: dict[str, Any] = {
            "flood": f"{args.sources} addresses x {args.streams} silent Connect streams",
            "serve_flags": args.serve,
            "load_before": os.getloadavg(),
        }
        tokens = []
        for i in range(args.bots + 2):
            request = arena_pb2.RegisterBotRequest(name=f"honest{i:03d}")
            request.dial_out.SetInParent()
            tokens.append(stub.RegisterBot(request, timeout=30, metadata=served.admin))
        command = [sys.executable, __file__, "silent-connects", served.address]
        command += [str(args.sources), str(args.streams), str(args.seconds + 10)]
        attacker = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        crowd: Crowd | None = None
        try:
            time.sleep(5.0)  # the flood builds up
            probe = AdminProbe(
                served.address if args.public_port else served.admin_address, token, args.seconds
            )
            # A tournament's two bots and its watchers from one honest address.
            crowd = Crowd(honest.address(0), connections=2)
            crowd.start_bots([t.token for t in tokens[:2]])
            _wait(lambda: crowd is not None and crowd.welcomed >= 2, 10)
            out["tournament_bots_connected"] = crowd.welcomed
            if crowd.welcomed >= 2:
                create = arena_pb2.CreateTournamentRequest(
                    name="watched",
                    bot_ids=[t.bot_id for t in tokens[:2]],
                    games_per_pairing=5000,
                    concurrency=2,
                    seed=1,
                )
                created = stub.CreateTournament(create, timeout=30, metadata=served.admin)
                crowd.start_watchers(args.watchers, created.tournament_id)
                _wait(lambda: crowd is not None and crowd.watching >= args.watchers, 10)
            out["watchers_open"] = crowd.watching

            async def connect_all() -> list[float]:
                return list(
                    await asyncio.gather(
                        *(
                            _connect_twice(honest.address(1 + i % 2), t.token)
                            for i, t in enumerate(tokens[2:])
                        )
                    )
                )

            times = sorted(crowd.run(connect_all()))  # on the crowd's loop: one aio loop
            out["honest_connect_and_reconnect_s"] = {
                "bots": len(times),
                "p50": round(times[len(times) // 2], 3),
                "max": round(times[-1], 3),
            }
            out["watchers_still_open"] = crowd.watching
            out["admin"] = probe.result()
            out["watch_events"] = crowd.events
            out["crowd_errors"] = crowd.errors[:3]
            attacker_out, _ = attacker.communicate(timeout=120)
            out["silent"] = json.loads(attacker_out)
        finally:
            if attacker.poll() is None:
                os.kill(attacker.pid, signal.SIGTERM)
                attacker.wait(30)
            if crowd is not None:
                crowd.close()
            channel.close()
            honest.close()
            served.stop()
    out["load_after"] = os.getloadavg()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    s = sub.add_parser("streams")
    s.add_argument("--bots", type=int, default=1000)
    s.add_argument("--watchers", type=int, default=1000)
    s.add_argument("--seconds", type=float, default=20.0)
    s.add_argument(
        "--think-ms", type=float, default=0.0, help="Each bot's time per decision (default 0)."
    )
    b = sub.add_parser("bodies")
    b.add_argument("--calls", type=int, default=16)
    b.add_argument("--mib", type=int, default=15)
    b.add_argument("--methods", default="CreateTournament,ListBots")
    u = sub.add_parser("unary-flood")
    u.add_argument("--sources", type=int, default=10)
    u.add_argument("--calls", type=int, default=16, help="calls in flight per address")
    u.add_argument("--kib", type=int, default=4095, help="each request's size")
    u.add_argument("--seconds", type=float, default=10.0)
    u.add_argument("--settle", type=float, default=5.0)
    u.add_argument("--serve", default="", help="extra flags for nardy arena serve")
    u.add_argument(
        "--public-port", action="store_true", help="the admin probe calls --port, not the admin's"
    )
    h = sub.add_parser("hello-flood")
    h.add_argument("--sources", type=int, default=63)
    h.add_argument("--streams", type=int, default=64, help="silent streams per address")
    h.add_argument("--bots", type=int, default=20, help="honest bots that connect, reconnect")
    h.add_argument("--watchers", type=int, default=20)
    h.add_argument("--seconds", type=float, default=20.0)
    h.add_argument("--serve", default="")
    h.add_argument("--public-port", action="store_true")
    c = sub.add_parser("silent-connects")
    c.add_argument("address")
    c.add_argument("sources", type=int)
    c.add_argument("streams", type=int)
    c.add_argument("seconds", type=float)
    a = sub.add_parser("admin-probe")
    a.add_argument("address")
    a.add_argument("seconds", type=float)
    args = parser.parse_args()
    run = {
        "unary-flood": unary_flood,
        "hello-flood": hello_flood,
        "silent-connects": silent_connects,
        "admin-probe": admin_probe,
    }
    if args.what in run:
        if getattr(args, "sources", 1) > 120 or getattr(args, "seconds", 0) > 140:
            parser.error("at most 120 sources and 140 seconds")
        print(json.dumps(run[args.what](args), indent=2))
        return
    if not (1 <= getattr(args, "bots", 8) <= 1000 and 0 <= getattr(args, "watchers", 0) <= 2000):
        parser.error("--bots must be 1..1000 (the arena's registration limit), --watchers 0..2000")
    if args.what == "streams" and args.bots < 8:
        parser.error("--bots must be at least 8 (the tournament's players)")
    result = streams(args) if args.what == "streams" else bodies(args)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
