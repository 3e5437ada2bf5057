"""A cluster's objects at one moment, written as a scenario `herder simulate` plays from there.

The moment the snapshot is taken is the scenario's t=0. Every pod that has not ended is a
workload entry arriving at 0: a bound pod with its `spec.nodeName` (the simulator takes it as
running, Herder's as at a restart, other schedulers' as foreign pods), with its creation and
start times before 0 (`created`, `started`), so queue order and "newest first" victim choice
stay as they are; a pending pod with its creation time, so it keeps its place in line.

How long pods run is not in the cluster. `Durations` says it, per pod, first match wins:
its `spec.activeDeadlineSeconds` (counted from its start), a per-namespace duration, a default
duration, else none (it runs until the end of the run). A running pod runs what is left of
its duration (at least one second).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from shim.convert.gangs.yunikorn import is_placeholder
from shim.convert.quotas import (
    ANNOTATION_ALLOCATED,
    ANNOTATION_CHILD_REQUEST,
    ANNOTATION_GUARANTEED,
    ANNOTATION_NON_PREEMPTIBLE_REQUEST,
    ANNOTATION_NON_PREEMPTIBLE_USED,
    ANNOTATION_REQUEST,
    ANNOTATION_RUNTIME,
)

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# What Herder writes back on ElasticQuotas: the scenario's quotas are the ones applied, not its output.
WRITTEN_BY_HERDER = frozenset(
    {
        ANNOTATION_RUNTIME,
        ANNOTATION_REQUEST,
        ANNOTATION_CHILD_REQUEST,
        ANNOTATION_GUARANTEED,
        ANNOTATION_ALLOCATED,
        ANNOTATION_NON_PREEMPTIBLE_REQUEST,
        ANNOTATION_NON_PREEMPTIBLE_USED,
        LAST_APPLIED,
    }
)
MIN_LEFT = 1.0  # seconds a running pod past its duration still runs


@dataclass(frozen=True)
class Durations:
    """How long pods run, when the cluster cannot say (see the module's docstring)."""

    default: float | None = None
    per_namespace: Mapping[str, float] = field(default_factory=dict)
    use_deadline: bool = True

    def total(self, pod: Mapping[str, Any]) -> float | None:
        spec = pod.get("spec") or {}
        deadline = spec.get("activeDeadlineSeconds")
        if self.use_deadline and isinstance(deadline, int) and not isinstance(deadline, bool) and deadline > 0:
            return float(deadline)
        namespace = str((pod.get("metadata") or {}).get("namespace") or "default")
        return self.per_namespace.get(namespace, self.default)

    def describe(self) -> str:
        parts = ["a pod's activeDeadlineSeconds"] if self.use_deadline else []
        parts += [f"{seconds:g} s in namespace {name}" for name, seconds in sorted(self.per_namespace.items())]
        parts.append(f"{self.default:g} s otherwise" if self.default is not None else "until the end otherwise")
        return ", then ".join(parts)


@dataclass
class ClusterObjects:
    """What a snapshot reads: plain Kubernetes objects (dicts) as the API server lists them."""

    taken_at: float  # seconds since the epoch
    source: str
    nodes: list[dict[str, Any]] = field(default_factory=list)
    namespaces: list[dict[str, Any]] = field(default_factory=list)
    quotas: list[dict[str, Any]] = field(default_factory=list)
    priority_classes: list[dict[str, Any]] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)  # storage objects, PDBs (with kind)
    pods: list[dict[str, Any]] = field(default_factory=list)
    config_map: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)  # what could not be read, and why


OBJECT_META = ("name", "namespace", "labels", "annotations")


def _metadata(obj: Mapping[str, Any], keep: Iterable[str] = OBJECT_META) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    out = {key: meta[key] for key in keep if meta.get(key)}
    if "annotations" in out:
        annotations = {k: v for k, v in out["annotations"].items() if k not in WRITTEN_BY_HERDER}
        if annotations:
            out["annotations"] = annotations
        else:
            del out["annotations"]
    return out


def _ready(node: Mapping[str, Any]) -> bool:
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return True


def node_entry(node: Mapping[str, Any]) -> dict[str, Any]:
    spec = node.get("spec") or {}
    entry: dict[str, Any] = {
        "name": node["metadata"]["name"],
        "allocatable": dict((node.get("status") or {}).get("allocatable") or {}),
    }
    labels = (node.get("metadata") or {}).get("labels")
    if labels:
        entry["labels"] = dict(labels)
    taints = [{k: t[k] for k in ("key", "value", "effect") if t.get(k) is not None} for t in spec.get("taints") or []]
    if taints:
        entry["taints"] = taints
    if spec.get("unschedulable"):
        entry["unschedulable"] = True
    if not _ready(node):
        entry["ready"] = False
    return entry


def _ended(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _seconds(raw: object, taken_at: float) -> float | None:
    if not isinstance(raw, str) or not raw:
        return None
    try:
        return round(datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp() - taken_at, 3)
    except ValueError:
        return None


def pod_entry(pod: Mapping[str, Any], taken_at: float, durations: Durations) -> dict[str, Any]:
    """The workload entry of a pod that has not ended."""
    spec = dict(pod.get("spec") or {})
    meta = _metadata(pod, ("name", "namespace", "uid", "labels", "annotations", "ownerReferences"))
    entry: dict[str, Any] = {"at": 0}
    created = _seconds((pod.get("metadata") or {}).get("creationTimestamp"), taken_at)
    if created is not None and created < 0:
        entry["created"] = created
    # A gang's placeholder has no duration of its own: it stays until replaced or released.
    total = None if is_placeholder(pod) else durations.total(pod)
    if spec.get("nodeName"):
        started = _seconds((pod.get("status") or {}).get("startTime"), taken_at)
        if started is not None and started < 0:
            entry["started"] = started
        if total is not None:
            entry["duration"] = max(MIN_LEFT, round(total + (started if started is not None else 0.0), 3))
    elif total is not None:
        entry["duration"] = total
    entry["pod"] = {"metadata": meta, "spec": spec}
    return entry


def _quota(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": obj.get("apiVersion", "scheduling.sigs.k8s.io/v1alpha1"),
        "kind": "ElasticQuota",
        "metadata": _metadata(obj),
        "spec": dict(obj.get("spec") or {}),
    }


def _priority_class(obj: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"metadata": _metadata(obj, ("name", "annotations")), "value": int(obj.get("value") or 0)}
    for key in ("globalDefault", "preemptionPolicy"):
        if obj.get(key) is not None:
            out[key] = obj[key]
    return out


def _object(obj: Mapping[str, Any]) -> dict[str, Any]:
    out = {key: value for key, value in obj.items() if key not in ("metadata", "status")}
    out["metadata"] = _metadata(obj)
    return out


def scenario_document(cluster: ClusterObjects, durations: Durations, name: str = "snapshot") -> dict[str, Any]:
    """The scenario: the cluster at t=0, every pod that has not ended in its workload."""
    document: dict[str, Any] = {"name": name}
    data = (cluster.config_map or {}).get("data") or {}
    settings = {key: value for key, value in data.items() if key != "queues.yaml"}
    if settings:
        document["settings"] = settings
    if data.get("queues.yaml"):
        document["config"] = data["queues.yaml"]
    document["nodes"] = [node_entry(node) for node in sorted(cluster.nodes, key=lambda n: n["metadata"]["name"])]
    namespaces = [{"metadata": _metadata(ns, ("name", "labels", "annotations"))} for ns in cluster.namespaces]
    if namespaces:
        document["namespaces"] = sorted(namespaces, key=lambda ns: ns["metadata"]["name"])
    if cluster.quotas:
        document["quotas"] = [_quota(q) for q in cluster.quotas]
    if cluster.priority_classes:
        document["priorityclasses"] = [_priority_class(pc) for pc in cluster.priority_classes]
    if cluster.objects:
        document["objects"] = [_object(obj) for obj in cluster.objects]
    live = [pod for pod in cluster.pods if not _ended(pod)]
    # Bound pods first (they hold room before anything is placed), then by creation, as in line.
    live.sort(key=lambda p: (not (p.get("spec") or {}).get("nodeName"), _created_key(p)))
    document["workload"] = [pod_entry(pod, cluster.taken_at, durations) for pod in live]
    return document


def _created_key(pod: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = pod.get("metadata") or {}
    return (str(meta.get("creationTimestamp") or ""), str(meta.get("namespace") or ""), str(meta.get("name") or ""))
