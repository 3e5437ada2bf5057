"""Telling users why a pod waits: the condition `PodScheduled=False`, reason `Unschedulable`, with
the core's reason as its message (what `kubectl describe pod` and `kubectl get pods` show).

The core reports a waiting pod's reason as an `Unschedulable` scheduling event whenever the
reason changes; the writer keeps the newest reason per pod and writes it at most once per pass
(one pass per `status.interval`, a bounded number of pods per pass, so a burst of thousands of
waiting pods becomes a steady trickle of patches). Before writing it asks the core whether the
pod still waits (and for the latest reason) and skips pods already bound.

Binding sets `PodScheduled=True` on the pod; the writer never fights it: a `Scheduled` event
ends its interest in the pod, and each patch carries the pod's resourceVersion as a
precondition, so a write racing the binding fails (409) instead of overwriting it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from core.events import REQUEST, SchedulingEvent
from shim.convert.objects import list_at, map_at, meta_of
from shim.kube.write.event_body import wall_timestamp

log = logging.getLogger("herder.status")

UNSCHEDULABLE = "Unschedulable"
SWEEP_EVERY = 60  # passes between sweeps of pods deleted while waiting (the core reports no event for them)
# Events after which a pod no longer waits (or no longer exists as the same pod).
_DONE = frozenset({"Scheduled", "Evicted", "Preempted"})


class PodStatusApi(Protocol):
    def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None: ...


def shown_reason(pod: Mapping[str, Any]) -> str | None:
    """The message of the pod's PodScheduled=False/Unschedulable condition, if it has one."""
    for condition in list_at(pod, "status", "conditions"):
        if (
            isinstance(condition, Mapping)
            and condition.get("type") == "PodScheduled"
            and condition.get("status") == "False"
            and condition.get("reason") == UNSCHEDULABLE
        ):
            return str(condition.get("message") or "")
    return None


class PodConditionWriter:
    def __init__(
        self,
        api: PodStatusApi,
        pod: Callable[[str], Mapping[str, Any] | None],
        pending_reason: Callable[[str], str | None],
        interval: Callable[[], float],
        per_pass: int = 200,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], str] = wall_timestamp,
    ) -> None:
        """`pod(key)` is the cached pod object (KubeCache.pod), `pending_reason(key)` the core's
        current reason (Scheduler.pending_reason; None once placed or gone)."""
        self._api = api
        self._pod = pod
        self._pending_reason = pending_reason
        self._interval = interval
        self._per_pass = per_pass
        self._clock = clock
        self._wall = wall
        self._last: float | None = None
        self._passes = 0
        self._wanted: dict[str, str] = {}  # key -> newest reason not yet written, in arrival order
        self._written: dict[str, str] = {}  # key -> reason the pod shows
        self.writes = 0

    def observe(self, event: SchedulingEvent) -> None:
        if event.type != REQUEST:
            return
        if event.reason == UNSCHEDULABLE:
            self._wanted.pop(event.object_id, None)  # re-queue at the end: oldest waits are written first
            self._wanted[event.object_id] = event.message
        elif event.reason in _DONE:
            self.forget(event.object_id)

    def forget(self, key: str) -> None:
        """The pod was bound or deleted: nothing more to say about it."""
        self._wanted.pop(key, None)
        self._written.pop(key, None)

    def pending(self) -> int:
        return len(self._wanted)

    def tick(self, now: float | None = None) -> int:
        """One pass: write up to `per_pass` changed reasons, at most once per interval."""
        now = self._clock() if now is None else now
        if self._last is not None and now - self._last < self._interval():
            return 0
        self._last = now
        self._passes += 1
        if self._passes % SWEEP_EVERY == 0:
            for key in [k for k in self._written if self._pod(k) is None]:
                self.forget(key)
        made = 0
        for key in list(self._wanted)[: self._per_pass]:
            made += self._write(key)
        self.writes += made
        return made

    def _write(self, key: str) -> int:
        reason = self._pending_reason(key)
        pod = self._pod(key)
        if reason is None or pod is None or map_at(pod, "spec").get("nodeName"):
            self.forget(key)
            return 0
        shown = self._written.get(key)
        if shown is None:
            shown = shown_reason(pod)
        if shown == reason:
            self._wanted.pop(key, None)
            self._written[key] = reason
            return 0
        meta = meta_of(pod)
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "reason": UNSCHEDULABLE,
            "message": reason,
            "lastProbeTime": None,
            "lastTransitionTime": self._transition_time(pod),
        }
        patch: dict[str, Any] = {"status": {"conditions": [condition]}}
        if meta.get("resourceVersion"):
            patch["metadata"] = {"resourceVersion": meta["resourceVersion"]}
        try:
            self._api.patch_pod_status(namespace, name, patch)
        except Exception as error:
            status = getattr(error, "status", None)
            if status == 404:
                self.forget(key)
            elif status != 409:  # 409: the pod changed (maybe bound); the next pass looks again
                log.warning("could not write why pod %s/%s waits: %s", namespace, name, error)
            return 0
        self._wanted.pop(key, None)
        self._written[key] = reason
        return 1

    def _transition_time(self, pod: Mapping[str, Any]) -> str:
        """Kept from the pod's current PodScheduled=False condition; now when it becomes False."""
        for condition in list_at(pod, "status", "conditions"):
            if (
                isinstance(condition, Mapping)
                and condition.get("type") == "PodScheduled"
                and condition.get("status") == "False"
                and condition.get("lastTransitionTime")
            ):
                return str(condition["lastTransitionTime"])
        return self._wall()
