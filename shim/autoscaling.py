"""What Herder says to cluster autoscalers, in Kubernetes' words; shared by the operator and the simulator.

A waiting pod's `PodScheduled=False` condition carries the core's category (core/scale_up.py)
as its reason: `Unschedulable` (the reason cluster-autoscaler and Karpenter add nodes for) only
for a pod that lacks nothing but a node, `SchedulingSkipped` (YuniKorn's word) for a pod a
queue, a limit or a quota holds back, so that no autoscaler buys a node for it. The message is
the core's reason in words.

For gangs (with `autoscaling.provisioningRequests`) the atomic scale-up of cluster-autoscaler:
one ProvisioningRequest (autoscaling.x-k8s.io, class best-effort-atomic-scale-up) per gang that
lacks only nodes, one PodTemplate per task group still waiting for placeholders, the gang's
pods annotated as consumers (so cluster-autoscaler does not scale up for them a second time).
`plan_requests` decides, from the core's gang needs and the requests there are, which to
create and which to delete; shim/kube/write/provisioning.py writes them and the simulator
plays them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.scale_up import NODES, GangNeed

UNSCHEDULABLE = "Unschedulable"
SCHEDULING_SKIPPED = "SchedulingSkipped"
CONDITION_REASONS = (UNSCHEDULABLE, SCHEDULING_SKIPPED)

GROUP = "autoscaling.x-k8s.io"
PLURAL = "provisioningrequests"
KIND = "ProvisioningRequest"
VERSIONS = ("v1", "v1beta1")  # the newest first: v1 since cluster-autoscaler 1.31
ATOMIC_CLASS = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
CONSUME_ANNOTATION = "autoscaling.x-k8s.io/consume-provisioning-request"
CLASS_ANNOTATION = "autoscaling.x-k8s.io/provisioning-class-name"
MANAGED_BY = "app.kubernetes.io/managed-by"
APPLICATION_ANNOTATION = "herder.io/application"

# ProvisioningRequest condition types (cluster-autoscaler's)
PROVISIONED = "Provisioned"
FAILED = "Failed"
BOOKING_EXPIRED = "BookingExpired"
ATTEMPTS = 3  # requests made for one gang whose bookings expired before it reserved

_NOT_DNS = re.compile(r"[^a-z0-9-]+")


def condition_reason(category: str) -> str:
    """The PodScheduled=False reason for a core category."""
    return UNSCHEDULABLE if category == NODES else SCHEDULING_SKIPPED


def request_name(namespace: str, application_id: str, attempt: int) -> str:
    """`herder-<application>-<hash>[-<attempt>]`: stable, so a restarted Herder finds its own."""
    digest = hashlib.sha256(f"{namespace}/{application_id}".encode()).hexdigest()[:8]
    app = _NOT_DNS.sub("-", application_id.lower()).strip("-")[:40].strip("-") or "app"
    name = f"herder-{app}-{digest}"
    return name if attempt <= 1 else f"{name}-{attempt}"


def template_name(request: str, group: str) -> str:
    part = _NOT_DNS.sub("-", group.lower()).strip("-")[:40].strip("-") or "group"
    return f"{request}-{part}"


@dataclass(slots=True)
class RequestState:
    """One ProvisioningRequest Herder made for a gang, and what cluster-autoscaler said of it."""

    application_id: str
    namespace: str
    name: str
    attempt: int = 1
    templates: tuple[str, ...] = ()
    pods: tuple[str, ...] = ()  # the pod keys annotated as its consumers
    provisioned: bool = False
    failed: str = ""  # the Failed condition's reason and message
    expired: bool = False  # BookingExpired

    def note(self) -> str:
        """What the gang's pods say about the request (in their condition's message)."""
        where = f"ProvisioningRequest {self.namespace}/{self.name}"
        if self.failed:
            return f"{where} failed: {self.failed}"
        if self.expired:
            return f"{where}: its booking expired"
        if self.provisioned:
            return f"{where} is provisioned: waiting for its nodes"
        return f"{where} asks cluster-autoscaler for the gang's nodes at once"

    def read_conditions(self, conditions: Iterable[Mapping[str, object]]) -> None:
        for condition in conditions:
            kind, true = condition.get("type"), condition.get("status") == "True"
            if kind == PROVISIONED:
                self.provisioned = true
            elif kind == FAILED and true:
                self.failed = f"{condition.get('reason') or FAILED}: {condition.get('message') or ''}".rstrip(": ")
            elif kind == BOOKING_EXPIRED:
                self.expired = true
        if self.expired and self.attempt >= ATTEMPTS and not self.failed:
            self.failed = f"its booking expired {self.attempt} times before the gang could reserve its nodes"


def request_manifest(
    version: str, namespace: str, name: str, application_id: str, pod_sets: Sequence[tuple[str, int]]
) -> dict[str, Any]:
    """A ProvisioningRequest for the gang: one pod set per PodTemplate (name, count)."""
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": KIND,
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {MANAGED_BY: "herder"},
            "annotations": {APPLICATION_ANNOTATION: application_id},
        },
        "spec": {
            "provisioningClassName": ATOMIC_CLASS,
            "podSets": [{"podTemplateRef": {"name": template}, "count": count} for template, count in pod_sets],
        },
    }


def consumer_annotations(request: str | None) -> dict[str, str | None]:
    """The annotations that make a pod a consumer of the request (None: no longer one)."""
    return {CONSUME_ANNOTATION: request, CLASS_ANNOTATION: ATOMIC_CLASS if request else None}


def adopted_request(obj: Mapping[str, Any]) -> RequestState | None:
    """A request Herder made (found by its label after a restart), or None if it is not one."""
    meta = obj.get("metadata")
    spec = obj.get("spec")
    if not isinstance(meta, Mapping) or not isinstance(spec, Mapping):
        return None
    app = (meta.get("annotations") or {}).get(APPLICATION_ANNOTATION)
    if (meta.get("labels") or {}).get(MANAGED_BY) != "herder" or not isinstance(app, str):
        return None
    name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "")
    templates = tuple(
        str((pod_set.get("podTemplateRef") or {}).get("name") or "")
        for pod_set in spec.get("podSets") or []
        if isinstance(pod_set, Mapping)
    )
    attempt = next((n for n in range(1, ATTEMPTS + 1) if request_name(namespace, app, n) == name), ATTEMPTS)
    state = RequestState(app, namespace, name, attempt, templates)
    state.read_conditions(request_conditions(obj))
    return state


def request_conditions(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The status conditions cluster-autoscaler set on a request."""
    status = obj.get("status")
    found = status.get("conditions") if isinstance(status, Mapping) else None
    return [c for c in found or [] if isinstance(c, Mapping)]


@dataclass(frozen=True, slots=True)
class RequestPlan:
    create: tuple[tuple[GangNeed, int], ...]  # a gang, and the attempt the new request is
    delete: tuple[RequestState, ...]


def plan_requests(needs: Iterable[GangNeed], requests: Mapping[str, RequestState], enabled: bool) -> RequestPlan:
    """Which requests to make and which to delete: one per gang that lacks only nodes; deleted
    when the gang reserved (its placeholders all placed: it runs), left, or the setting is off.
    A request whose booking expired before the gang reserved is replaced (up to ATTEMPTS); a
    failed one stays, and the gang waits with its reason."""
    create: list[tuple[GangNeed, int]] = []
    delete: list[RequestState] = []
    reserving = {need.application_id: need for need in needs}
    for app_id, state in requests.items():
        need = reserving.get(app_id)
        if not enabled or need is None:
            delete.append(state)
        elif state.expired and not state.failed and need.waits_for_nodes:
            delete.append(state)
            if state.attempt < ATTEMPTS:
                create.append((need, state.attempt + 1))
    if enabled:
        for app_id, need in reserving.items():
            if need.waits_for_nodes and app_id not in requests:
                create.append((need, 1))
    return RequestPlan(tuple(create), tuple(delete))
