"""The single wiring point for the operator's optional parts: REST server, status writers, webhooks.

Each part lives in its own module, written and tested on its own; this module is the only
place that starts and stops them with the operator, so `herder run` has one list to read:

- REST API and /metrics (`shim.rest`): on `--rest-port` (0: off), in its own thread and event
  loop so a slow client never delays kopf's watches. Started before kopf (`start_rest`), so
  a port already taken stops start-up with a clear message instead of running without REST;
  the probes answer from then on (`/readyz` 503 until the initial sync).
- Status writers (`shim.kube.write.status`): ElasticQuota `status.used` and runtime annotations,
  pod PodScheduled=False conditions, throttled Kubernetes Events. WIRING POINT: started here
  when the module exists (see `_start_status`).
- Admission webhooks (`shim.kube.admission.webhooks`): registered into kopf's registry before kopf
  starts, on `--webhook-port` (0: off) (see `register_webhooks`).
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import socket
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import kopf

    from shim.kube.operator import HerderOperator
    from shim.rest.access import RestAccess

log = logging.getLogger("herder.operator")


@dataclass
class Extras:
    """What was started for one operator, so `stopped()` can stop exactly that."""

    stoppers: list[Any] = field(default_factory=list)


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


class RestThread:
    """The REST server on its own event loop and thread."""

    def __init__(self, op: HerderOperator, host: str, port: int, access: RestAccess | None = None) -> None:
        self._op = op
        self._host = host
        self._port = port
        self._access = access
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self.port = 0
        self._thread = threading.Thread(target=self._run, name="herder-rest", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        from shim.rest import build_rest_app, start_rest_server

        self._stop = asyncio.Event()
        app = build_rest_app(self._op.scheduler, self._op.status, self._op.metrics, access=self._access)
        try:
            runner = await start_rest_server(app, self._host, self._port)
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


def start_rest(op: HerderOperator) -> RestThread | None:
    """Serve REST and /metrics when a port is configured; OSError when it cannot be bound."""
    if op.options.rest_port is None:
        return None
    rest = RestThread(op, op.options.rest_host, op.options.rest_port, op.options.rest_access)
    rest.start()
    op.rest_port = rest.port
    return rest


def check_port_free(host: str, port: int) -> None:
    """OSError now if host:port cannot be bound (kopf binds the webhook port only later)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp's server does
        probe.bind((host, port))


def register_webhooks(op: HerderOperator, registry: kopf.OperatorRegistry, settings: kopf.OperatorSettings) -> bool:
    """Add the admission handlers and kopf's webhook server when a webhook port is configured."""
    port = op.options.webhook_port
    if not port:
        return False
    if not _available("shim.kube.admission.webhooks"):
        log.warning("--webhook-port %d given but shim/kube/admission/webhooks.py is not installed; no webhooks", port)
        return False
    from shim.kube.admission.webhooks import WebhookDeps, register_webhooks, scheduler_quota_tree, webhook_server

    deps = WebhookDeps(
        settings=lambda: op.scheduler.settings,
        quota_tree=scheduler_quota_tree(op.scheduler, lambda: op.status.synced),
        namespace=op.cache.namespace,
        priority_class=op.cache.priority_class,
    )
    register_webhooks(registry, deps)
    settings.admission.server = webhook_server(
        port=port,
        certfile=op.options.webhook_cert,
        keyfile=op.options.webhook_key,
        cert_dir=op.options.webhook_cert_dir,
        insecure=op.options.webhook_insecure,
        addr=op.options.webhook_addr,
        deps=deps,
        on_serving=op.status.mark_webhooks_serving,
    )
    op.status.webhooks_expected = True
    log.info("admission webhooks on port %d", port)
    return True


def _start_status(op: HerderOperator, extras: Extras) -> None:
    # WIRING POINT for shim/kube/write/status.py (ElasticQuota status, PodScheduled conditions, Events):
    # start its writer(s) here with the operator's api_client, scheduler, cache and
    # callbacks.events queue, and append whatever has a stop() to extras.stoppers.
    if not _available("shim.kube.write.status"):
        log.info("status writers (shim/kube/write/status.py) not installed: no quota status, pod conditions or Events")
        return
    status = importlib.import_module("shim.kube.write.status")
    starter = getattr(status, "start_status_writers", None)
    if starter is None:
        log.warning("shim/kube/write/status.py has no start_status_writers(operator); status writers not started")
        return
    stopper = starter(op)
    if stopper is not None:
        extras.stoppers.append(stopper)


async def started(op: HerderOperator) -> None:
    """After the initial sync (kopf's startup handler): start the status writers."""
    extras = Extras()
    op.extras = extras
    await asyncio.to_thread(_start_status, op, extras)


async def stopped(op: HerderOperator) -> None:
    """kopf's cleanup handler, after the operator stopped: stop what `started` started."""
    extras, op.extras = op.extras, None
    if not isinstance(extras, Extras):
        return
    for stopper in reversed(extras.stoppers):
        try:
            await asyncio.to_thread(stopper.stop)
        except Exception as error:
            log.warning("stopping %r failed: %s", stopper, error)
