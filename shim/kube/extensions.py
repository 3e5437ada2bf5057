"""The single wiring point for the operator's optional parts: REST server, status writers, webhooks.

Each part lives in its own module, written and tested on its own; this module is the only
place that starts and stops them with the operator, so `herder run` has one list to read:

- REST API and /metrics (`shim.rest`): on `--rest-port` (0: off), in its own thread and event
  loop (`shim.rest.server`, which `herder simulate --serve` uses too) so a slow client never
  delays kopf's watches. `herder run` binds the port first of all (shim/ports.py, before it
  reads the ConfigMap), so a port already taken stops it at once with a clear message instead
  of running without REST; the server is started on that socket before kopf (`start_rest`),
  and the probes answer from then on (`/readyz` 503 until the initial sync).
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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import kopf

    from shim.kube.operator import HerderOperator
    from shim.rest import RestThread

log = logging.getLogger("herder.operator")


@dataclass
class Extras:
    """What was started for one operator, so `stopped()` can stop exactly that."""

    stoppers: list[Any] = field(default_factory=list)


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def start_rest(op: HerderOperator) -> RestThread | None:
    """Serve REST and /metrics when a port is configured; OSError when it cannot be bound."""
    options = op.options
    if options.rest_port is None:
        return None
    from shim.rest import RestThread

    rest = RestThread(op, options.rest_host, options.rest_port, options.rest_access, options.rest_socket)
    rest.start()
    op.rest_port = rest.port
    return rest


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
