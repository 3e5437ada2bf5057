"""A TCP proxy in front of the API emulator that cuts every open connection every few seconds.

Between a scheduler and its API server sit load balancers, NAT tables and proxies that drop
idle or long-lived connections; a watch stream is the longest-lived connection there is. The
proxy forwards bytes both ways unchanged and, at moments drawn from `every` (seeded), aborts
every connection it carries (both sides at once, as a reset): watches, keep-alive connections
and requests in flight alike. `pause()` stops the cutting (to let the cluster settle before
the final checks).

    with FlakyProxy(server.url, every=(2.0, 8.0)) as proxy:
        client = ...(host=proxy.url)
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
from urllib.parse import urlsplit


class FlakyProxy:
    def __init__(self, upstream: str, every: tuple[float, float] = (2.0, 8.0), seed: int = 5) -> None:
        parts = urlsplit(upstream)
        self._upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._every = every
        self._random = random.Random(seed)
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._stop: asyncio.Event | None = None
        self._cutting = True
        self._open: set[asyncio.StreamWriter] = set()
        self._handlers: set[asyncio.Task[None]] = set()
        self._thread = threading.Thread(target=self._serve, name="flaky-proxy", daemon=True)
        self.url = ""
        self.cuts = 0  # moments every connection was cut
        self.connections_cut = 0

    def __enter__(self) -> FlakyProxy:
        self._thread.start()
        if not self._started.wait(timeout=30):
            raise RuntimeError("the proxy did not start within 30s")
        return self

    def __exit__(self, *_: object) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=30)

    def pause(self) -> None:
        """No more cuts from now on."""
        self._cutting = False

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        cutter = asyncio.ensure_future(self._cut_now_and_then())
        self._started.set()
        async with server:
            await self._stop.wait()
        cutter.cancel()
        for writer in list(self._open):
            writer.transport.abort()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(cutter, *self._handlers, return_exceptions=True)

    async def _cut_now_and_then(self) -> None:
        while True:
            await asyncio.sleep(self._random.uniform(*self._every))
            if not self._cutting:
                continue
            self.cuts += 1
            for writer in list(self._open):
                self.connections_cut += 1
                writer.transport.abort()

    async def _handle(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
            task.add_done_callback(self._handlers.discard)
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self._upstream)
        except OSError:
            client_writer.transport.abort()
            return
        pair = (client_writer, upstream_writer)
        self._open.update(pair)
        try:
            await asyncio.gather(
                self._pump(client_reader, upstream_writer),
                self._pump(upstream_reader, client_writer),
            )
        finally:
            for writer in pair:
                self._open.discard(writer)
                writer.transport.abort()

    @staticmethod
    async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError, asyncio.IncompleteReadError):
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
        writer.transport.abort()  # one side gone: the connection is over both ways
