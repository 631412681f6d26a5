"""Load on a real ``nardy web`` process, loopback only and bounded: half-sent requests
(slowloris), honest requests timed beside them, many live-stream visitors, and a stand-in arena
that counts its ``WatchTournament`` streams. Used by tests/viewer/test_load.py (small numbers)
and benchmarks/test_spectator.py (the issue's numbers)."""

from __future__ import annotations

import contextlib
import os
import resource
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from spectator_browser import free_port, installed_nardy, outside_environment

HALF_SENT = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\n"
"""A request head without its end: the server waits for the rest."""


@contextmanager
def web_process(
    db: Path,
    *extra: str,
    nofile: int | tuple[int, int] | None = None,
    log: list[str] | None = None,
) -> Iterator[tuple[str, int]]:
    """The installed ``nardy web`` on a free loopback port, with ``ulimit -n nofile`` when
    given (one number: soft and hard, as bash's ``ulimit -n``; or ``(soft, hard)``), started
    outside the repository; yields ``(base URL, pid)``, stops it by its pid and appends what it
    wrote to stderr to ``log`` (asyncio's complaints, say)."""
    port = free_port()

    def limit() -> None:
        if nofile is not None:
            pair = (nofile, nofile) if isinstance(nofile, int) else nofile
            resource.setrlimit(resource.RLIMIT_NOFILE, pair)

    with (
        tempfile.TemporaryDirectory(prefix="nardy-load-") as cwd,
        open(Path(cwd) / "stderr.txt", "w+") as errors,  # a file: a pipe could fill and block
    ):
        process = subprocess.Popen(
            [installed_nardy(), "web", "--db", str(db), "--port", str(port), *extra],
            stdout=subprocess.DEVNULL,
            stderr=errors,
            text=True,
            cwd=cwd,
            env=outside_environment(),
            preexec_fn=limit,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with urllib.request.urlopen(base + "/api/tournaments", timeout=2):
                        break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        process.kill()
                        process.wait()
                        errors.seek(0)
                        raise RuntimeError(f"nardy web did not start: {errors.read()}") from None
                    time.sleep(0.1)
            yield base, process.pid
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            errors.seek(0)
            if log is not None:
                log.append(errors.read())


def raise_own_nofile(needed: int) -> None:
    """This process opens the attack's sockets: let it hold them (up to its hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        top = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (top, hard))


@contextmanager
def slowloris(port: int, count: int) -> Iterator[list[socket.socket]]:
    """``count`` connections, each with a half-sent request head, held open (not renewed when
    the server closes them); all closed afterwards."""
    raise_own_nofile(count + 256)
    held: list[socket.socket] = []
    try:
        for _ in range(count):
            # One after another, each connected before the next: a burst beyond the listen
            # queue would have the kernel drop handshakes, and the attack would be smaller
            # than it says (a connection the server closed fails the send: no matter).
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            with contextlib.suppress(OSError):
                s.sendall(HALF_SENT)
            held.append(s)
        time.sleep(0.5)
        yield held
    finally:
        for s in held:
            s.close()


def honest_latencies(base: str, count: int, timeout_s: float = 5.0) -> list[float]:
    """``count`` page loads, one after another: each one's seconds, or ``inf`` when it failed
    or took longer than ``timeout_s``."""
    out: list[float] = []
    for _ in range(count):
        start = time.perf_counter()
        try:
            with urllib.request.urlopen(base + "/", timeout=timeout_s) as response:
                response.read()
                ok = response.status == 200
        except OSError:
            ok = False
        out.append(time.perf_counter() - start if ok else float("inf"))
    return out


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def threads_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise RuntimeError(f"no thread count for {pid}")


def soft_nofile_of(pid: int) -> int:
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    raise RuntimeError(f"no descriptor limit for {pid}")


def fds_of(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@contextmanager
def live_visitors(port: int, path: str, count: int) -> Iterator[list[socket.socket]]:
    """``count`` open live streams of ``path`` (their first event read), closed afterwards."""
    raise_own_nofile(count + 256)
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"

    def open_one() -> socket.socket:
        s = socket.create_connection(("127.0.0.1", port), timeout=20)
        s.sendall(request.encode())
        got = b""
        while b"event: standings" not in got:
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError(f"the live stream closed before its first event: {got[:200]!r}")
            got += chunk
        return s

    held: list[socket.socket] = []
    try:
        with futures.ThreadPoolExecutor(16) as pool:
            for s in pool.map(lambda _: open_one(), range(count)):
                held.append(s)
        yield held
    finally:
        for s in held:
            s.close()


class CountingArena:
    """A stand-in arena serving ``WatchTournament`` only: an event every ``every_s`` to each
    stream, and a count of the streams open now and at most (what issue 34 item 4 is about)."""

    def __init__(self, every_s: float = 0.2) -> None:
        import grpc

        from nardy.arena.protocol import arena_pb2, arena_pb2_grpc

        self.every_s = every_s
        self.open = 0
        self.most = 0
        self.total = 0
        self._lock = threading.Lock()
        arena = self

        class Servicer(arena_pb2_grpc.ArenaServiceServicer):
            def WatchTournament(self, request: Any, context: Any) -> Iterator[Any]:
                with arena._lock:
                    arena.open += 1
                    arena.total += 1
                    arena.most = max(arena.most, arena.open)
                try:
                    while context.is_active():
                        time.sleep(arena.every_s)
                        yield arena_pb2.WatchTournamentResponse()
                finally:
                    with arena._lock:
                        arena.open -= 1

        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=700))
        arena_pb2_grpc.add_ArenaServiceServicer_to_server(Servicer(), self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.stop(grace=0.2)
