"""Kubernetes objects the simulated cluster holds, made from scenario entries.

The simulator keeps real object shapes (Node with status.allocatable and a Ready condition,
Pod with uid, creationTimestamp, nodeName and phase) so that everything reaches the core
through `shim/convert/`, exactly as in the operator. Virtual time starts at the Unix epoch:
a pod arriving at `at: 30` is created at 1970-01-01T00:00:30Z, which the conversion reads
back as 30.0 seconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import Any

from shim.sim.scenario import DEFAULT_NAMESPACE, NodeEntry

DEFAULT_POD_CAPACITY = "110"  # the kubelet's default max pods, when a node does not say


def rfc3339(seconds: float) -> str:
    """Virtual seconds as a Kubernetes timestamp (the epoch is the simulation's start).

    Every pod's creation and start, so made without a datetime: the day's text is kept, the
    time of day is counted out, and the microseconds round half to even as
    `datetime.fromtimestamp` rounds them (which `_datetime_rfc3339` still does for a time
    before the epoch or past the year 9999)."""
    whole = math.floor(seconds)
    micro = round((seconds - whole) * 1_000_000) if seconds != whole else 0
    if micro >= 1_000_000:
        whole, micro = whole + 1, micro - 1_000_000
    day, second = divmod(int(whole), 86_400)
    if not 0 <= day < _LAST_DAY:
        return _datetime_rfc3339(seconds)
    hour, second = divmod(second, 3600)
    minute, second = divmod(second, 60)
    text = f"{_day_text(day)}T{hour:02d}:{minute:02d}:{second:02d}"
    return f"{text}.{micro:06d}Z" if micro else text + "Z"


_LAST_DAY = (date(9999, 12, 31) - date(1970, 1, 1)).days


@lru_cache(maxsize=1024)
def _day_text(day: int) -> str:
    return (date(1970, 1, 1) + timedelta(days=day)).isoformat()


def _datetime_rfc3339(seconds: float) -> str:
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}"
    return text + "Z"


HOSTNAME_LABEL = "kubernetes.io/hostname"


def node_manifest(entry: NodeEntry, name: str) -> dict[str, Any]:
    allocatable = dict(entry.allocatable)
    allocatable.setdefault("pods", DEFAULT_POD_CAPACITY)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        # The kubelet labels every node with its hostname; rules on that key depend on it.
        "metadata": {
            "name": name,
            "labels": {HOSTNAME_LABEL: name, **entry.labels},
            "annotations": dict(entry.annotations),
        },
        "spec": {"taints": [dict(t) for t in entry.taints], "unschedulable": entry.unschedulable},
        "status": {
            "allocatable": allocatable,
            "capacity": dict(allocatable),
            "conditions": [{"type": "Ready", "status": "True" if entry.ready else "False"}],
        },
    }


def pod_manifest(
    template: Mapping[str, Any], name: str, created: float, uid: str, started: float | None = None
) -> dict[str, Any]:
    """The workload's pod with its own name, uid and creation time, not yet bound. The pod, its
    metadata and its spec are its own dicts (binding sets `spec.nodeName`, admission may set
    `spec.priority` and replace the annotations); what is nested deeper (containers, labels,
    affinity...) is the template's, shared by every replica: nothing changes it in place (a
    resize works on a deep copy). `started` gives a pod created bound its status.startTime."""
    pod: dict[str, Any] = dict(template)
    meta = dict(pod.get("metadata") or {})
    meta["name"] = name
    meta["namespace"] = str(meta.get("namespace") or DEFAULT_NAMESPACE)
    meta["uid"] = uid
    meta["creationTimestamp"] = rfc3339(created)
    pod["metadata"] = meta
    pod.setdefault("apiVersion", "v1")
    pod.setdefault("kind", "Pod")
    pod["spec"] = dict(pod.get("spec") or {})
    pod["status"] = {"phase": "Pending"} if started is None else {"phase": "Running", "startTime": rfc3339(started)}
    return pod


def namespace_manifest(name: str) -> dict[str, Any]:
    """The namespace a pod lives in when the scenario does not declare it."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def labels_match(obj: Mapping[str, Any], selector: Mapping[str, str]) -> bool:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    labels = labels if isinstance(labels, Mapping) else {}
    return all(str(labels.get(key)) == value for key, value in selector.items() if key in labels) and all(
        key in labels for key in selector
    )
