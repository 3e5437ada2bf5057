"""The REST application: routes, middleware, its thread pool, and a helper to serve it.

`build_rest_app` wires the handlers of `partition`, `usage` and `service` to one scheduler,
one `RestStatus` and the metrics registry. The application owns a small thread pool for
reading the scheduler (see `context.offload`); it is shut down with the application.
Every request passes `access` (tokens, CORS: see `access`) and a body limit of `MAX_BODY`
(a ConfigMap's own limit); `POST /ws/v1/validate-conf` runs in a child process of its own
(`validation`). `start_rest_server` binds it on a host and port (or serves it on a socket bound
earlier, `shim.ports.listen`) and returns the aiohttp runner, whose `cleanup()` stops it.
"""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor

from aiohttp import web

from core.scheduler import Scheduler
from shim.metrics import ShimMetrics, metrics_registry
from shim.rest import cluster, events, partition, pending, service, usage
from shim.rest.access import RestAccess, access_middleware, cors_headers
from shim.rest.context import EXECUTOR, REGISTRY, SCHEDULER, STATUS, VALIDATOR
from shim.rest.errors import error_middleware
from shim.rest.status import RestStatus
from shim.rest.validation import ConfigValidator

DEFAULT_PORT = 9080
READERS = 4  # threads reading the scheduler for REST answers and scrapes at once
MAX_BODY = 1024 * 1024 + 4096  # a ConfigMap's limit, plus room for framing


def build_rest_app(
    scheduler: Scheduler,
    status: RestStatus,
    shim_metrics: ShimMetrics | None = None,
    *,
    readers: int = READERS,
    history_interval: float = cluster.HISTORY_INTERVAL,
    access: RestAccess | None = None,
    validator: ConfigValidator | None = None,
) -> web.Application:
    """The read-only REST API and /metrics for `scheduler`; `status` says ready/leader/identity."""
    executor = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="herder-rest")
    access = access or RestAccess()
    app = web.Application(middlewares=[access_middleware(access, executor), error_middleware], client_max_size=MAX_BODY)
    app.on_response_prepare.append(cors_headers(access))
    app[SCHEDULER] = scheduler
    app[STATUS] = status
    app[REGISTRY] = metrics_registry(scheduler, status, shim_metrics)
    app[EXECUTOR] = executor
    app[VALIDATOR] = validator or ConfigValidator()
    cluster.install_history(app, history_interval)
    app.add_routes(cluster.routes)
    events.install_streams(app)
    app.add_routes(events.routes)
    app.add_routes(partition.routes)
    app.add_routes(pending.routes)
    app.add_routes(usage.routes)
    app.add_routes(service.routes)

    async def stop_readers(app: web.Application) -> None:
        app[EXECUTOR].shutdown(wait=False, cancel_futures=True)
        app[VALIDATOR].close()

    app.on_cleanup.append(stop_readers)
    return app


async def start_rest_server(
    app: web.Application, host: str = "0.0.0.0", port: int = DEFAULT_PORT, sock: socket.socket | None = None
) -> web.AppRunner:
    """Serve `app` on host:port (port 0: any free port, see `runner.addresses`), or on `sock` when
    given (`shim.ports.listen`); `await runner.cleanup()` stops it."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site: web.BaseSite = web.SockSite(runner, sock) if sock is not None else web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError:
        await runner.cleanup()
        raise
    return runner
