"""Wake the live pages on the arena's events: one ``WatchTournament`` stream per tournament.

With ``nardy web --arena HOST:PORT`` the live standings are sent the moment the arena reports an
event (a game ended, the standings or the SPRT changed, the tournament ended) instead of at the
next poll; the standings themselves are still read from the database the arena writes. A
tournament the arena does not run (``FAILED_PRECONDITION``) or an unreachable arena leaves the
page on polling.

The spectator is one client of the arena among the bots, and the arena limits the streams of
each peer address (issue 34 item 4: one stream per visitor used up the web's share, and bots
running beside the web were refused). So every tournament is watched by at most one stream,
whatever the number of its visitors (:class:`nardy.web.app` fans its events out), all streams go
over one channel (one connection), and at most ``max_streams`` tournaments are watched at once:
the others are polled, as without ``--arena``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["ArenaWatch"]

MAX_STREAMS = 16
"""Tournaments watched at once by default: well below the arena's streams per peer address."""

RETRY_S = 2.0
"""How long an unreachable arena is left alone before the stream is opened again."""

log = logging.getLogger("nardy.web")


class ArenaWatch:
    """``WatchTournament`` streams to one arena over one channel, at most ``max_streams``.

    Each stream is read by its own thread (the synchronous gRPC API); a thread per watched
    tournament, never per visitor."""

    def __init__(self, address: str, max_streams: int = MAX_STREAMS) -> None:
        self.address = address
        self.max_streams = max_streams
        self._lock = threading.Lock()
        self._channel: Any = None  # opened on the first watch: a spectator may never need it
        self._active: set[str] = set()
        self._closed = False

    @property
    def streams(self) -> int:
        """The tournaments watched now (each one stream)."""
        with self._lock:
            return len(self._active)

    def watch(self, tournament_id: str, on_event: Callable[[], None]) -> Callable[[], None] | None:
        """Call ``on_event()`` (from the stream's thread) for every event of ``tournament_id``;
        returns a function that stops, or None when ``max_streams`` are open already (or the
        tournament is watched already: one stream per tournament) and the caller polls."""
        import grpc

        from nardy.arena.protocol import arena_pb2, arena_pb2_grpc

        with self._lock:
            if (
                self._closed
                or tournament_id in self._active
                or len(self._active) >= self.max_streams
            ):
                return None
            if self._channel is None:
                self._channel = grpc.insecure_channel(self.address)
            self._active.add(tournament_id)
            stub = arena_pb2_grpc.ArenaServiceStub(self._channel)
        stopped = threading.Event()
        calls: list[Any] = []  # the streaming call, to cancel it

        def run() -> None:
            try:
                while not stopped.is_set():
                    call = stub.WatchTournament(
                        arena_pb2.WatchTournamentRequest(tournament_id=tournament_id, replay=False)
                    )
                    calls.append(call)
                    if stopped.is_set():  # stop() ran before the call was there to cancel
                        call.cancel()
                        return
                    try:
                        for _ in call:
                            on_event()
                        return  # the stream ends after the tournament's end
                    except grpc.RpcError as exc:
                        if stopped.is_set() or exc.code() in (
                            grpc.StatusCode.FAILED_PRECONDITION,
                            grpc.StatusCode.NOT_FOUND,
                            grpc.StatusCode.CANCELLED,
                        ):
                            return
                        log.info("arena stream of %s: %s; polling meanwhile", tournament_id, exc)
                    calls.clear()
                    stopped.wait(RETRY_S)  # unreachable for now: polling goes on meanwhile
            finally:
                with self._lock:
                    self._active.discard(tournament_id)

        thread = threading.Thread(target=run, name=f"watch {tournament_id}", daemon=True)
        thread.start()

        def stop() -> None:
            stopped.set()
            for call in list(calls):
                call.cancel()

        return stop

    def close(self) -> None:
        """Close the channel: every stream ends (their threads see ``CANCELLED``)."""
        with self._lock:
            self._closed = True
            channel, self._channel = self._channel, None
        if channel is not None:
            channel.close()
