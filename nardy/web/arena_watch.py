"""Wake the live page on the arena's events: a thread reading ``WatchTournament``.

With ``nardy web --arena HOST:PORT`` the live standings are sent the moment the arena reports an
event (a game ended, the standings or the SPRT changed, the tournament ended) instead of at the
next poll; the standings themselves are still read from the database the arena writes. A
tournament the arena does not run (``FAILED_PRECONDITION``) or an unreachable arena leaves the
page on polling.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["watch"]


def watch(address: str, tournament_id: str, on_event: Callable[[], None]) -> Callable[[], None]:
    """Call ``on_event()`` for every event of ``tournament_id``; returns a function that stops."""
    import grpc

    from nardy.arena.protocol import arena_pb2, arena_pb2_grpc

    channel = grpc.insecure_channel(address)
    stub = arena_pb2_grpc.ArenaServiceStub(channel)
    stopped = threading.Event()
    calls: list[Any] = []  # the streaming calls, to cancel them

    def run() -> None:
        while not stopped.is_set():
            call = stub.WatchTournament(
                arena_pb2.WatchTournamentRequest(tournament_id=tournament_id, replay=False)
            )
            calls.append(call)
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
            stopped.wait(2.0)  # unreachable for now: try again, polling goes on meanwhile

    thread = threading.Thread(target=run, name=f"watch {tournament_id}", daemon=True)
    thread.start()

    def stop() -> None:
        stopped.set()
        for call in calls:
            call.cancel()
        channel.close()

    return stop
