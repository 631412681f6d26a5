"""Many source addresses on one machine, for tests and load benchmarks of the arena's limits.

The arena counts streams and calls per IP address, so an attack from many addresses is the
case that matters; gRPC's Python client cannot choose its source address. :class:`Sources`
therefore runs small TCP relays on loopback: a client dials ``sources.address(i)`` (always on
127.0.0.1) and the relay opens its connection to the arena from ``127.0.0.<i + 2>`` (all of
127.0.0.0/8 is loopback on Linux), so the arena sees ``i`` as a peer of its own. Nothing leaves
the machine; :meth:`close` ends every relay and connection.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

__all__ = ["Sources"]


class Sources:
    """``count`` relays to ``target`` (``host:port``), relay ``i`` dialling from
    ``127.0.0.<first + i>``; run on an event loop of their own thread."""

    def __init__(self, target: str, count: int, *, first: int = 2) -> None:
        if not 1 <= count <= 250 or not 2 <= first <= 254 - count + 1:
            raise ValueError("sources are 127.0.0.2 to 127.0.0.254")
        host, _, port = target.rpartition(":")
        self._target = (host, int(port))
        self.sources = [f"127.0.0.{first + i}" for i in range(count)]
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._writers: set[asyncio.StreamWriter] = set()
        self._servers: list[asyncio.Server] = asyncio.run_coroutine_threadsafe(
            self._listen(), self._loop
        ).result(10)
        self._ports = [int(s.sockets[0].getsockname()[1]) for s in self._servers]

    def address(self, i: int) -> str:
        """Where to dial for connections from source ``i``."""
        return f"127.0.0.1:{self._ports[i]}"

    async def _listen(self) -> list[asyncio.Server]:
        servers = []
        for source in self.sources:

            async def relay(
                reader: asyncio.StreamReader, writer: asyncio.StreamWriter, source: str = source
            ) -> None:
                await self._relay(reader, writer, source)

            servers.append(await asyncio.start_server(relay, "127.0.0.1", 0))
        return servers

    async def _relay(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, source: str
    ) -> None:
        self._writers.add(writer)
        try:
            up_reader, up_writer = await asyncio.open_connection(
                *self._target, local_addr=(source, 0)
            )
        except OSError:
            writer.close()
            self._writers.discard(writer)
            return
        self._writers.add(up_writer)
        await asyncio.gather(
            self._pipe(reader, up_writer), self._pipe(up_reader, writer), return_exceptions=True
        )

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(1 << 16):
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            self._writers.discard(writer)

    def close(self) -> None:
        async def close() -> None:
            for server in self._servers:
                server.close()
            for writer in list(self._writers):
                writer.close()
            relays = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in relays:
                task.cancel()
            await asyncio.gather(*relays, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self) -> Sources:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
