"""The REST server on a thread of its own, for whoever owns a scheduler: `herder run` and `herder simulate --serve`.

The server gets its own event loop and thread, so a slow client never delays the owner's work
(kopf's watches in the operator, the clock in a served simulation). What it serves is a
`RestBackend`: the scheduler, the status `/readyz` and `/metrics` report, and the shim's own
metrics (binds, evictions) when the owner has them. The operator satisfies it as it is; the
simulator passes its own.

    server = RestThread(backend, "0.0.0.0", 9080, access)   # or sock=: a socket bound already
    server.start()        # OSError when the port cannot be bound; server.port is the bound port
    ...
    server.stop()
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from typing import Protocol

from core.scheduler import Scheduler
from shim.metrics import ShimMetrics
from shim.rest.access import RestAccess
from shim.rest.app import build_rest_app, start_rest_server
from shim.rest.status import RestStatus

log = logging.getLogger("herder.rest")

START_TIMEOUT = 30.0  # seconds to wait for the server to listen (or fail to)


class RestBackend(Protocol):
    """What the REST server reads."""

    @property
    def scheduler(self) -> Scheduler: ...

    @property
    def status(self) -> RestStatus: ...

    @property
    def metrics(self) -> ShimMetrics | None: ...


class RestThread:
    """The REST API and /metrics of one backend, on their own event loop and thread."""

    def __init__(
        self,
        backend: RestBackend,
        host: str,
        port: int,
        access: RestAccess | None = None,
        sock: socket.socket | None = None,
    ) -> None:
        self._backend = backend
        self._host = host
        self._port = port
        self._socket = sock  # bound already (`herder run` binds its port first: shim/ports.py)
        self._access = access
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self.port = 0
        self._thread = threading.Thread(target=self._run, name="herder-rest", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(START_TIMEOUT)
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(START_TIMEOUT)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        backend = self._backend
        app = build_rest_app(backend.scheduler, backend.status, backend.metrics, access=self._access)
        try:
            runner = await start_rest_server(app, self._host, self._port, self._socket)
        except OSError as error:
            self._error = error
            self._ready.set()
            return
        addresses = runner.addresses
        self.port = int(addresses[0][1]) if addresses else self._port
        log.info("REST API and /metrics on http://%s:%d", self._host, self.port)
        self._ready.set()
        await self._stop.wait()
        await runner.cleanup()
