"""A pod's priority, whether it asked not to be preempted, and what its PriorityClass adds at admission."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shim.convert.objects import ConversionError, annotations_of
from shim.convert.pod_view import PodLike, as_view

ANNOTATION_ALLOW_PREEMPTION = "yunikorn.apache.org/allow-preemption"  # "false": preempted across queues last


def pod_priority(pod: PodLike) -> int:
    """`spec.priority` (0 when unset); ConversionError when it is not an integer."""
    pod = as_view(pod)
    value = pod.priority
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConversionError(f"pod {pod.name} spec.priority: expected an integer, got {value!r}")
    return value


def allows_preemption(pod: PodLike) -> bool:
    """False when the pod carries `yunikorn.apache.org/allow-preemption: "false"` (YuniKorn's
    admission controller copies it from the pod's PriorityClass; the pod's own value wins)."""
    return str(as_view(pod).annotations.get(ANNOTATION_ALLOW_PREEMPTION, "true")).strip().lower() != "false"


def with_priority_class(pod: dict[str, Any], priority_class: Mapping[str, Any] | None) -> dict[str, Any]:
    """The pod as admission leaves it: `spec.priority` from its PriorityClass's `value` (when
    the pod sets none), and the class's `allow-preemption` annotation copied onto the pod
    unless the pod sets its own (what YuniKorn's admission controller does)."""
    if priority_class is None:
        return pod
    spec = pod.setdefault("spec", {})
    value = priority_class.get("value")
    if spec.get("priority") is None and isinstance(value, int) and not isinstance(value, bool):
        spec["priority"] = value
    opt_out = annotations_of(priority_class).get(ANNOTATION_ALLOW_PREEMPTION)
    if opt_out is not None:
        meta = pod.setdefault("metadata", {})
        annotations = meta.get("annotations")
        annotations = dict(annotations) if isinstance(annotations, Mapping) else {}
        annotations.setdefault(ANNOTATION_ALLOW_PREEMPTION, str(opt_out))
        meta["annotations"] = annotations
    return pod
