"""The spectator under load, as a real ``nardy web`` process (the installed command) on loopback:
half-sent requests, a connection cap, the live streams' fan-out and their end (issue 34 items 4,
5 and 6b). Small numbers here; benchmarks/test_spectator.py runs the issue's."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from spectator_load import (
    HALF_SENT,
    CountingArena,
    honest_latencies,
    live_visitors,
    p99,
    slowloris,
    soft_nofile_of,
    threads_of,
    web_process,
)

from nardy.arena.competition.schedule import definition_from_flags
from nardy.arena.records.storage import open_store
from nardy.web.app import HERE

pytestmark = pytest.mark.slow  # each starts a server process

RUNNING = "running-0001"
STATIC = HERE / "static"


@pytest.fixture(scope="module")
def running_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tournament the arena is running (no game stored yet): its page streams live."""
    path = tmp_path_factory.mktemp("running") / "arena.db"
    store = open_store(str(path))
    try:
        d = definition_from_flags(variants=["long"], bots="heuristic,random", games=10, seed=3)
        store.open_tournament(RUNNING, "running", d.to_json(), {"id": 1}, 10)
        store.set_status(RUNNING, "running")
    finally:
        store.close()
    return path


def port_of(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


def closed_by_server(s: socket.socket, within_s: float) -> bool:
    """Whether the server closes ``s`` within ``within_s`` (whatever it sends first)."""
    s.settimeout(within_s)
    deadline = time.monotonic() + within_s
    try:
        while time.monotonic() < deadline:
            if not s.recv(65536):
                return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return False


def test_half_sent_requests_do_not_lock_out_honest_ones(finished_db: Path) -> None:
    """More idle half-sent requests than the process has file descriptors: honest requests are
    still answered at once (the oldest half-sent connection makes room). uvicorn alone held
    every descriptor and honest requests failed until the idle ones left."""
    log: list[str] = []
    with web_process(finished_db, nofile=1024, log=log) as (base, _):
        with slowloris(port_of(base), 1100):
            latencies = honest_latencies(base, 10, timeout_s=3.0)
        assert p99(latencies) < 1.0, latencies
    # Never out of descriptors (asyncio would then stop accepting for a second, every time).
    assert "Too many open files" not in log[0], log[0][-2000:]


def test_a_soft_descriptor_limit_is_raised_towards_the_hard_one(finished_db: Path) -> None:
    """A shell's soft 1,024 under a hard 4,096: the server raises it to what its default cap
    needs (1,000 connections and the reserve), and never above the hard limit."""
    from nardy.web.app import FD_RESERVE, MAX_CONNECTIONS

    with web_process(finished_db, nofile=(1024, 4096)) as (_, pid):
        assert soft_nofile_of(pid) == MAX_CONNECTIONS + FD_RESERVE
    with web_process(finished_db, nofile=(1024, 1200)) as (_, pid):
        assert soft_nofile_of(pid) == 1200


def test_a_request_head_must_end_in_time(finished_db: Path) -> None:
    """A head that never ends, or never starts, is closed after --header-timeout, however its
    bytes trickle in; a request in time is answered."""
    with web_process(finished_db, "--header-timeout", "0.5") as (base, _):
        port = port_of(base)
        silent = socket.create_connection(("127.0.0.1", port))
        trickling = socket.create_connection(("127.0.0.1", port))
        try:
            for byte in HALF_SENT[:4]:  # a byte every 0.2 s: each one would reset a idle timer
                trickling.send(bytes([byte]))
                time.sleep(0.2)
            assert closed_by_server(trickling, 2.0)
            assert closed_by_server(silent, 1.0)
        finally:
            silent.close()
            trickling.close()
        assert honest_latencies(base, 1)[0] < 1.0


def test_a_client_that_stops_reading_is_dropped(finished_db: Path) -> None:
    """1,000 requests sent at once (pipelined, 8.7 MB of responses) and nothing read: the
    server drops the connection after --send-timeout instead of holding it for ever."""
    size = len((STATIC / "nardy.css").read_bytes())
    with web_process(finished_db, "--send-timeout", "1") as (base, _):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
        s.connect(("127.0.0.1", port_of(base)))
        try:
            s.sendall(b"GET /static/nardy.css HTTP/1.1\r\nHost: x\r\n\r\n" * 1000)
            time.sleep(4)  # the buffers fill in well under a second; then 1 s of nothing read
            got = 0
            s.settimeout(2)
            try:
                while chunk := s.recv(1 << 20):
                    got += len(chunk)
            except ConnectionResetError:
                pass  # dropped: what was still buffered went with it
            # (a TimeoutError here: the connection was still open, nothing more to read)
        finally:
            s.close()
        assert got < 1000 * size
        assert honest_latencies(base, 1)[0] < 1.0


def test_the_live_stream_of_a_finished_tournament_ends(finished_db: Path) -> None:
    """``event: done``, then the end of the stream (not keep-alives for ever)."""
    store = open_store(str(finished_db), readonly=True)
    try:
        tid = store.tournaments()[0].tournament_id
    finally:
        store.close()
    with web_process(finished_db) as (base, _):
        s = socket.create_connection(("127.0.0.1", port_of(base)), timeout=5)
        try:
            s.sendall(f"GET /t/{quote(tid, safe='')}/live HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            got = b""
            deadline = time.monotonic() + 10  # keep-alives alone would keep the loop going
            while not got.endswith(b"0\r\n\r\n") and time.monotonic() < deadline:
                chunk = s.recv(65536)  # the chunked body ends with an empty chunk
                if not chunk:
                    break
                got += chunk
        finally:
            s.close()
    assert b"event: standings" in got and b"event: done" in got
    assert got.endswith(b"0\r\n\r\n") and b"keep-alive" not in got


@pytest.fixture
def arena() -> Iterator[CountingArena]:
    arena = CountingArena(every_s=0.1)
    try:
        yield arena
    finally:
        arena.stop()


def test_one_arena_stream_per_tournament_whatever_the_visitors(
    running_db: Path, arena: CountingArena
) -> None:
    """80 visitors of a live tournament: the arena sees one ``WatchTournament`` stream (it was
    one per visitor, with a thread each), closed once the last visitor left."""
    with web_process(running_db, "--arena", arena.address) as (base, pid):
        with live_visitors(port_of(base), f"/t/{RUNNING}/live", 80):
            time.sleep(0.5)  # events flow meanwhile
            assert (arena.open, arena.most) == (1, 1)
            assert threads_of(pid) < 60, threads_of(pid)
            assert p99(honest_latencies(base, 5)) < 1.0
        deadline = time.monotonic() + 5
        while arena.open and time.monotonic() < deadline:
            time.sleep(0.05)
        assert arena.open == 0 and arena.total == 1


def test_at_the_cap_busy_connections_stay_and_a_new_one_is_told_busy(running_db: Path) -> None:
    """--max-connections 4 with four live streams open: a fifth connection is answered 503 at
    once (nothing idle to close), and the streams are untouched."""
    with web_process(running_db, "--max-connections", "4") as (base, _):
        port = port_of(base)
        with live_visitors(port, f"/t/{RUNNING}/live", 4) as visitors:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            try:
                s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                answer = s.recv(65536)
            finally:
                s.close()
            assert answer.startswith(b"HTTP/1.1 503"), answer[:100]
            assert not any(closed_by_server(v, 0.05) for v in visitors)
        assert honest_latencies(base, 1)[0] < 1.0  # room again once they left
