"""nardy.web.arena_watch: one ``WatchTournament`` stream per tournament, a cap on the streams,
all over one channel (issue 34 item 4), against a stand-in arena that counts them."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

pytest.importorskip("grpc", reason="the arena extra is not installed")

from spectator_load import CountingArena

from nardy.web.arena_watch import ArenaWatch


@pytest.fixture
def arena() -> Iterator[CountingArena]:
    arena = CountingArena(every_s=0.02)
    try:
        yield arena
    finally:
        arena.stop()


def until(condition: Callable[[], bool], within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_one_stream_per_tournament_and_at_most_the_cap(arena: CountingArena) -> None:
    watch = ArenaWatch(arena.address, max_streams=2)
    events = {"a": threading.Event(), "b": threading.Event()}
    try:
        stop_a = watch.watch("a", events["a"].set)
        assert stop_a is not None
        assert watch.watch("a", events["a"].set) is None  # watched already: no second stream
        stop_b = watch.watch("b", events["b"].set)
        assert stop_b is not None
        assert watch.watch("c", lambda: None) is None  # the cap: "c" is polled instead
        assert events["a"].wait(5) and events["b"].wait(5)
        assert until(lambda: arena.open == 2) and arena.most == 2
        stop_a()
        assert until(lambda: watch.streams == 1)  # room again
        assert watch.watch("c", lambda: None) is not None
        assert until(lambda: arena.total == 3)
    finally:
        watch.close()
    assert until(lambda: arena.open == 0)  # closing the channel ends every stream
    assert watch.watch("d", lambda: None) is None  # and nothing opens after close
