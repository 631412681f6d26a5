"""One tournament's live events, translated and serialized once for all of its watchers.

A thousand ``WatchTournament`` streams on one tournament would otherwise translate every event
(standings included) a thousand times on the server's event loop, and the unary calls would
wait behind that work. A :class:`TournamentFeed` subscribes to the engine once, translates each
event in order on the event loop (with one :class:`~nardy.arena.service.servicer.EventTranslator`, which
has seen every event since the first), keeps the serialized messages, and each watcher follows
the list from its start (``replay``) or from the moment it joined.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

__all__ = ["TournamentFeed"]


class TournamentFeed:
    """The serialized events of one tournament (see the module doc); used on one event loop."""

    def __init__(
        self,
        engine: Any,
        translate: Callable[[Any], Awaitable[bytes | None]],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        """:param engine: the :class:`~nardy.arena.competition.tournament.Tournament` (``subscribe``,
            ``history``).
        :param translate: an event → its serialized ``WatchTournamentResponse``, or None for an
            event this feed's watchers do not get; called once per event, in sequence order."""
        self._translate = translate
        self._loop = loop
        self.messages: list[bytes] = []
        self.ended = False
        self.followers = 0
        self._wake = asyncio.Event()
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._unsubscribe = engine.subscribe(self._from_engine)
        # Subscribed first, then the history: nothing falls between; repeats are skipped.
        self._last = 0
        for event in engine.history:
            self._queue.put_nowait(event)
        self._task = loop.create_task(self._run())

    def _from_engine(self, event: Any) -> None:  # the engine's thread
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server is gone
            self._loop.call_soon_threadsafe(self._queue.put_nowait, event)

    async def _run(self) -> None:
        try:
            while True:
                event = await self._queue.get()
                if event.sequence <= self._last:
                    continue
                self._last = event.sequence
                data = await self._translate(event)
                if data is not None:
                    self.messages.append(data)
                if event.kind == "tournament_ended":
                    self.ended = True
                self._wake.set()
                self._wake = asyncio.Event()
                if self.ended:
                    return
        finally:
            self._unsubscribe()
            self.ended = True
            self._wake.set()

    async def follow(self, replay: bool) -> AsyncIterator[bytes]:
        """The serialized messages: every one so far first (``replay``), then each new one,
        until the tournament's end."""
        self.followers += 1
        try:
            index = 0 if replay else len(self.messages)
            while True:
                while index < len(self.messages):
                    index += 1
                    yield self.messages[index - 1]
                if self.ended:
                    return
                await self._wake.wait()
        finally:
            self.followers -= 1

    def close(self) -> None:
        """Stop following the engine (the server stops)."""
        self._task.cancel()
