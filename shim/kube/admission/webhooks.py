"""Herder's admission webhooks in kopf: the handlers the chart's webhook configurations call, and
the HTTPS server that serves them.

The decisions themselves are pure functions (shim/kube/admission/decisions.py for pods and workloads,
shim/kube/admission/quota.py for ElasticQuotas); this module only adapts kopf's handler
arguments to them and their decisions back to kopf (a refusal raises `kopf.AdmissionError`, a
mutation fills kopf's patch, which kopf answers as a JSONPatch).

Surface for the operator (`herder run`):

    deps = WebhookDeps(
        settings=lambda: scheduler.settings,                 # read per request: hot reload applies
        quota_tree=scheduler_quota_tree(scheduler, ready),   # None until the initial sync is done
        namespace=cache.namespace,                           # Namespace object by name, or None
        priority_class=cache.priority_class,                 # PriorityClass object by name, or None
    )
    register_webhooks(registry, deps)
    settings.admission.server = webhook_server(port=args.webhook_port, certfile=args.webhook_cert,
                                               keyfile=args.webhook_key, deps=deps)

The handler ids are the URL paths of the chart's webhook configurations
(deploy/helm/herder/templates/webhook.yaml): kopf's server routes `/<id>` to the handler:

    /validate-elasticquota  ElasticQuota CREATE, UPDATE, DELETE (validating)
    /mutate-pod             Pod CREATE, UPDATE (mutating: user.info, schedulerName; refusals)
    /mutate-workload        Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob CREATE,
                            UPDATE (mutating: user.info on the pod template; refusals)

Given `deps`, the server answers `/mutate-workload` itself (shim/kube/admission/direct.py) instead
of through kopf, which would keep about 1 KiB per workload ever updated (the operator does not
watch workloads, so kopf never learns they are gone); without it kopf's handler answers.

Every replica behind the Service answers webhooks, so `quota_tree` must reflect the cluster on a
standby too (or return None, which refuses quota changes with "retry shortly" until it does).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import kopf

from core.config.settings import Settings
from core.elastic.spec import ElasticQuotaSpec
from shim.convert.objects import map_at
from shim.kube.admission.decisions import (
    WORKLOAD_RESOURCES,
    AdmissionPolicy,
    Decision,
    NamespaceLookup,
    QuotaTree,
    QuotaTreeProvider,
    request_object,
    review_pod,
    review_workload,
)
from shim.kube.admission.direct import DirectWebhookServer
from shim.kube.admission.quota import review_quota
from shim.kube.kinds import QUOTA_GROUP, QUOTA_PLURAL

VALIDATE_QUOTA = "validate-elasticquota"
MUTATE_POD = "mutate-pod"
MUTATE_WORKLOAD = "mutate-workload"

Operation = Literal["CREATE", "UPDATE", "DELETE"]


@dataclass(frozen=True, slots=True)
class Route:
    """One webhook endpoint: its path (`/<id>`), kind, the (apiGroup, plural)s and operations it
    reviews. The chart's webhook configurations must say the same (tests/deploy check it)."""

    id: str
    validating: bool
    resources: frozenset[tuple[str, str]]
    operations: tuple[Operation, ...]

    def reviews(self, resource: kopf.Resource) -> bool:
        return (resource.group, resource.plural) in self.resources


ROUTES = (
    Route(VALIDATE_QUOTA, True, frozenset({(QUOTA_GROUP, QUOTA_PLURAL)}), ("CREATE", "UPDATE", "DELETE")),
    Route(MUTATE_POD, False, frozenset({("", "pods")}), ("CREATE", "UPDATE")),
    Route(MUTATE_WORKLOAD, False, WORKLOAD_RESOURCES, ("CREATE", "UPDATE")),
)


@dataclass(frozen=True, slots=True)
class WebhookDeps:
    """What the webhooks read from the running operator."""

    settings: Callable[[], Settings]
    quota_tree: QuotaTreeProvider
    namespace: NamespaceLookup
    priority_class: Callable[[str], Mapping[str, Any] | None] = lambda name: None  # by name, or None


class _QuotaTreeSource(Protocol):
    def quota_tree(self) -> tuple[dict[str, ElasticQuotaSpec], dict[str, int]]: ...


def scheduler_quota_tree(scheduler: _QuotaTreeSource, ready: Callable[[], bool]) -> QuotaTreeProvider:
    """A provider backed by the scheduler's quota tree, answering None until `ready()` is true."""

    def provide() -> QuotaTree | None:
        if not ready():
            return None
        specs, pods = scheduler.quota_tree()
        return QuotaTree(specs, pods)

    return provide


def _plain(value: Any) -> Any:
    """kopf's Body views as the plain dicts the decisions read."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def admission_request(operation: str | None, userinfo: Any, new: Any, old: Any) -> dict[str, Any]:
    """The AdmissionReview `request` part rebuilt from kopf's handler arguments."""
    obj = _plain(new) if new is not None else None
    previous = _plain(old) if old is not None else None
    meta = (obj or previous or {}).get("metadata") or {}
    return {
        "operation": operation,
        "userInfo": _plain(userinfo or {}),
        "object": obj,
        "oldObject": previous,
        "namespace": meta.get("namespace"),
        "name": meta.get("name"),
    }


def _request_of(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    return admission_request(kwargs.get("operation"), kwargs.get("userinfo"), kwargs.get("new"), kwargs.get("old"))


def _apply(decision: Decision, patch: kopf.Patch) -> None:
    if not decision.allowed:
        raise kopf.AdmissionError(decision.message, code=decision.code)
    for key, value in decision.patch.items():
        patch[key] = value


def register_webhooks(registry: kopf.OperatorRegistry, deps: WebhookDeps) -> None:
    """Add Herder's validating and mutating handlers to `registry`, one per entry of ROUTES."""

    def validate_elasticquota(**kwargs: Any) -> None:
        _apply(review_quota(_request_of(kwargs), deps.quota_tree()), kwargs["patch"])

    def mutate_pod(**kwargs: Any) -> None:
        request = _request_of(kwargs)
        namespace = request["namespace"]
        class_name = map_at(request_object(request), "spec").get("priorityClassName")
        decision = review_pod(
            request,
            AdmissionPolicy.from_settings(deps.settings()),
            deps.quota_tree(),
            deps.namespace(namespace) if namespace else None,
            deps.priority_class(str(class_name)) if class_name else None,
        )
        _apply(decision, kwargs["patch"])

    def mutate_workload(**kwargs: Any) -> None:
        policy = AdmissionPolicy.from_settings(deps.settings())
        _apply(review_workload(_request_of(kwargs), policy), kwargs["patch"])

    handlers = {VALIDATE_QUOTA: validate_elasticquota, MUTATE_POD: mutate_pod, MUTATE_WORKLOAD: mutate_workload}
    for route in ROUTES:
        decorate = kopf.on.validate if route.validating else kopf.on.mutate
        decorate(route.reviews, id=route.id, operations=route.operations, registry=registry)(handlers[route.id])


def webhook_server(
    port: int,
    certfile: str | None = None,
    keyfile: str | None = None,
    cert_dir: str | None = None,
    insecure: bool = False,
    addr: str | None = None,
    deps: WebhookDeps | None = None,
    on_serving: Callable[[], None] | None = None,
) -> kopf.WebhookServer:
    """kopf's HTTPS webhook server on `port` (all interfaces unless `addr`), with the chart's
    certificate (`cert_dir` holding tls.crt/tls.key, or explicit files; renewed files are reloaded).
    `insecure` serves plain HTTP, for tests only: the API server calls webhooks over HTTPS."""
    if not 0 < port < 65536:
        raise ValueError(f"webhook port {port} is not a TCP port (1-65535)")
    if cert_dir:
        directory = Path(cert_dir)
        certfile = certfile or str(directory / "tls.crt")
        keyfile = keyfile or str(directory / "tls.key")
    options: dict[str, Any] = {"addr": addr, "port": port}
    if insecure:
        options["insecure"] = True
    else:
        if not certfile or not keyfile:
            raise ValueError("the webhook server needs a TLS certificate: --webhook-cert and --webhook-key")
        for label, path in (("certificate", certfile), ("key", keyfile)):
            if not Path(path).is_file():
                raise ValueError(f"webhook TLS {label} {path} does not exist")
        options.update(certfile=certfile, pkeyfile=keyfile)
    if deps is None:
        return kopf.WebhookServer(**options)

    def workload(request: Mapping[str, Any]) -> Decision:
        return review_workload(request, AdmissionPolicy.from_settings(deps.settings()))

    return DirectWebhookServer(direct={MUTATE_WORKLOAD: workload}, on_serving=on_serving, **options)
