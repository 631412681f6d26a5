"""A synchronous test client that runs an ASGI app in the calling thread's own event loop.

Starlette's ``TestClient`` runs the app in a second thread and crosses between the threads for
every ASGI message, about eight crossings a request. A game played out through the play API (a
thousand requests and more) spent two thirds of its CPU there: 1.37 CPU-s against 0.45 here for
the same fevga game. This client sends each request through httpx2's ``ASGITransport`` with
``run_until_complete`` on one private loop, and runs the app's lifespan on entry and exit as
``TestClient``'s context manager does.

Every request runs inside one long-lived task of that loop (:meth:`LoopClient._serve`), not a task
of its own: anyio keeps the worker threads of ``run_in_threadpool`` (the play API's handlers) for
as long as the task that first asked for them, so a task a request started a thread a request —
2,238 thread starts for four played-out games, an eighth of their CPU.

Use it where requests come one after another. A test that needs the app to go on between
requests (a long poll answered by another request, a server-sent stream) keeps ``TestClient``,
whose loop runs all the time in its own thread.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx2
from starlette.types import ASGIApp

T = TypeVar("T")


class LoopClient:
    """``get``/``post``/``request`` as ``TestClient`` has them: redirects followed, the app's
    own exceptions raised in the test, the app's lifespan run by ``with``."""

    def __init__(self, app: ASGIApp, base_url: str = "http://testserver") -> None:
        self._loop = asyncio.new_event_loop()
        self._inbox: asyncio.Queue[tuple[Coroutine[Any, Any, Any], asyncio.Future[Any]]] = (
            asyncio.Queue()
        )
        self._server = self._loop.create_task(self._serve())
        self._client = httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app),
            base_url=base_url,
            follow_redirects=True,
        )
        router = getattr(app, "router", None)
        self._lifespan = router.lifespan_context(app) if router is not None else None

    async def _serve(self) -> None:
        """Await each coroutine handed in, in this one task, and settle its future."""
        while True:
            coroutine, done = await self._inbox.get()
            try:
                result = await coroutine
            except Exception as error:  # the caller's to see, raised by _run
                done.set_exception(error)
            else:
                done.set_result(result)

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        done: asyncio.Future[T] = self._loop.create_future()
        self._inbox.put_nowait((coroutine, done))
        return self._loop.run_until_complete(done)

    def __enter__(self) -> Self:
        if self._lifespan is not None:
            self._run(self._lifespan.__aenter__())
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        try:
            if self._lifespan is not None:
                self._run(self._lifespan.__aexit__(kind, error, trace))
            self._run(self._client.aclose())
        finally:
            self._server.cancel()  # its worker threads stop with it
            with contextlib.suppress(asyncio.CancelledError):
                self._loop.run_until_complete(self._server)
            self._loop.close()

    def request(self, method: str, url: str, **kwargs: Any) -> httpx2.Response:
        return self._run(self._client.request(method, url, **kwargs))

    def get(self, url: str, **kwargs: Any) -> httpx2.Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> httpx2.Response:
        return self.request("POST", url, **kwargs)
