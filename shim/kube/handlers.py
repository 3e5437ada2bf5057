"""kopf's part of the operator: which handlers watch what, and the kopf settings Herder needs.

kopf watches namespaces, PriorityClasses (for the pod webhook), PodDisruptionBudgets (which
victims preemption prefers) and ElasticQuotas with
`@kopf.on.event` handlers only: they keep no
state in kopf, add no finalizers and send no patches (`on.create`/`update`, timers and daemons
would write annotations, status fields and finalizers). Pods and nodes are not watched by kopf
at all: their events are the hot path and go through shim/kube/watch/reflector.py, so kopf never sees,
let alone writes, a pod or a node. Every handler is idempotent, because the initial listing
(type None) and every watch (re)connection deliver objects again. The start-up handler lists
the whole cluster and starts the pod and node watches, the Lease loop and housekeeping; the
cleanup handler stops them.

kopf runs standalone (its peering is not leader election; the Lease is ours), posts no Events
of its own, and does not scan CRDs (the chart's RBAC does not allow it; the ElasticQuota CRD
must exist before Herder starts).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import kopf
from kubernetes import client

from shim.kube.kinds import QUOTA_GROUP, QUOTA_PLURAL, QUOTA_VERSION

if TYPE_CHECKING:
    from shim.kube.operator import HerderOperator

log = logging.getLogger("herder.operator")

STARTUP_RETRY = 5.0  # seconds between start-up attempts while the API server cannot be listed


def connection_info(api_client: client.ApiClient) -> kopf.ConnectionInfo:
    """kopf's credentials from the kubernetes client's configuration (kubeconfig or in-cluster)."""
    config = api_client.configuration
    header = config.get_api_key_with_prefix("BearerToken") or config.get_api_key_with_prefix("authorization")
    parts = header.split(" ", 1) if header else []
    scheme, token = (None, None) if not parts else (None, parts[0]) if len(parts) == 1 else (parts[0], parts[1])
    return kopf.ConnectionInfo(
        server=config.host,
        ca_path=config.ssl_ca_cert,
        insecure=not config.verify_ssl,
        username=config.username or None,
        password=config.password or None,
        scheme=scheme,
        token=token,
        certificate_path=config.cert_file,
        private_key_path=config.key_file,
        priority=100,
    )


def kopf_settings(extra: Mapping[str, Any] | None = None) -> kopf.OperatorSettings:
    """kopf's settings for Herder; `extra` sets dotted attributes (`{"watching.server_timeout": 60}`)."""
    settings = kopf.OperatorSettings()
    settings.peering.standalone = True
    settings.posting.enabled = False
    settings.scanning.disabled = True
    settings.watching.server_timeout = 300
    settings.watching.client_timeout = 330
    settings.watching.connect_timeout = 30
    settings.networking.request_timeout = 60
    for dotted, value in (extra or {}).items():
        section, _, name = dotted.partition(".")
        setattr(getattr(settings, section), name, value)
    return settings


def _object(event: Mapping[str, Any]) -> Mapping[str, Any]:
    body = event.get("object")
    return body if isinstance(body, Mapping) else {}


def build_registry(op: HerderOperator) -> kopf.OperatorRegistry:
    """A fresh registry (one per replica, so several can run in one process) wired to `op`."""
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        return connection_info(op.api_client)

    @kopf.on.startup(registry=registry, backoff=STARTUP_RETRY)
    async def startup(**_: Any) -> None:
        from shim.kube import extensions

        await asyncio.to_thread(op.start)
        await extensions.started(op)

    @kopf.on.cleanup(registry=registry)
    async def cleanup(**_: Any) -> None:
        from shim.kube import extensions

        await asyncio.to_thread(op.stop)
        await extensions.stopped(op)

    @kopf.on.event("v1", "namespaces", registry=registry)
    async def namespace_event(event: Mapping[str, Any], **_: Any) -> None:
        if not op.alive:
            return
        if event.get("type") == "DELETED":
            op.pods.namespace_deleted(_object(event))
        else:
            op.pods.namespace_changed(_object(event))

    @kopf.on.event("scheduling.k8s.io", "v1", "priorityclasses", registry=registry)
    async def priority_class_event(event: Mapping[str, Any], **_: Any) -> None:
        obj = _object(event)
        if event.get("type") == "DELETED":
            op.cache.drop_priority_class(str(obj.get("metadata", {}).get("name")))
        else:
            op.cache.put_priority_class(obj)

    @kopf.on.event("policy", "v1", "poddisruptionbudgets", registry=registry)
    async def disruption_budget_event(event: Mapping[str, Any], **_: Any) -> None:
        if not op.alive:
            return
        if event.get("type") == "DELETED":
            op.budgets.delete(_object(event))
        else:
            op.budgets.apply(_object(event))

    @kopf.on.event(QUOTA_GROUP, QUOTA_VERSION, QUOTA_PLURAL, registry=registry)
    async def quota_event(event: Mapping[str, Any], **_: Any) -> None:
        if not op.alive:
            return
        if event.get("type") == "DELETED":
            op.quotas.delete(_object(event))
        else:
            op.quotas.apply(_object(event))

    return registry
