"""A pod's `spec.activeDeadlineSeconds`: how long after it starts the kubelet lets it run.

The only promise Kubernetes makes about when a pod ends at the latest (the kubelet fails it
then, reason DeadlineExceeded); reservations count on it to know when a reserved node frees
and which pods may backfill it (core/reservations/).
"""

from __future__ import annotations

from shim.convert.objects import ConversionError
from shim.convert.pod_view import PodLike, as_view


def active_deadline(pod: PodLike) -> float | None:
    """The pod's deadline in seconds, None when unset; ConversionError unless it is a positive
    whole number (as Kubernetes requires)."""
    pod = as_view(pod)
    value = pod.spec.get("activeDeadlineSeconds")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConversionError(
            f"pod {pod.name} spec.activeDeadlineSeconds: expected a positive whole number, got {value!r}"
        )
    return float(value)


def foreign_deadline(pod: PodLike) -> float | None:
    """Another scheduler's pod with a bad deadline is still on its node: read as no deadline."""
    try:
        return active_deadline(pod)
    except ConversionError:
        return None
