"""Telling users and cluster autoscalers why a pod waits: the condition `PodScheduled=False`, its
reason `Unschedulable` for a pod that lacks only a node (what cluster-autoscaler and Karpenter add
nodes for) or `SchedulingSkipped` for one a queue, a limit or a quota holds back (shim/autoscaling.py,
from the core's category), and the core's reason as message (what `kubectl describe pod` and
`kubectl get pods` show).

Once per pass (one pass per `status.interval`) the writer reads the core's view of the waiting
pods (`Scheduler.scale_up_view`, worked out again only when the scheduler's state changed) and
queues every pod whose reason or message differs from what it last wrote; it then writes a
bounded number of them (`per_pass`), in line order, so a burst of thousands of waiting pods
becomes a steady trickle of patches. A pod whose category changes (a quota grows, a node joins,
a pod ahead of it starts) gets a new condition even when the words of its reason stay. It skips
pods already bound, and pods already showing the same condition (after a restart).

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
from core.scale_up import ScaleUpView
from shim.autoscaling import CONDITION_REASONS, condition_reason
from shim.convert.objects import list_at, map_at, meta_of
from shim.kube.write.event_body import wall_timestamp

log = logging.getLogger("herder.status")

SWEEP_EVERY = 60  # passes between sweeps of pods deleted while waiting (the core reports no event for them)
# Events after which a pod no longer waits (or no longer exists as the same pod).
_DONE = frozenset({"Scheduled", "Evicted", "Preempted"})

Shown = tuple[str, str]  # (reason, message) of a pod's PodScheduled=False condition


class PodStatusApi(Protocol):
    def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None: ...


def _no_notes() -> Mapping[str, str]:
    return {}


def shown_condition(pod: Mapping[str, Any]) -> Shown | None:
    """The reason and message of the PodScheduled=False condition Herder writes, if the pod has one."""
    for condition in list_at(pod, "status", "conditions"):
        if (
            isinstance(condition, Mapping)
            and condition.get("type") == "PodScheduled"
            and condition.get("status") == "False"
            and condition.get("reason") in CONDITION_REASONS
        ):
            return str(condition.get("reason")), str(condition.get("message") or "")
    return None


class PodConditionWriter:
    def __init__(
        self,
        api: PodStatusApi,
        pod: Callable[[str], Mapping[str, Any] | None],
        view: Callable[[], ScaleUpView],
        interval: Callable[[], float],
        per_pass: int = 200,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], str] = wall_timestamp,
        notes: Callable[[], Mapping[str, str]] = _no_notes,
    ) -> None:
        """`pod(key)` is the cached pod object (KubeCache.pod), `view()` the core's view of the
        waiting pods (Scheduler.scale_up_view), `notes()` more words for some pods (a gang's
        ProvisioningRequest; a new mapping whenever one changes)."""
        self._api = api
        self._pod = pod
        self._view = view
        self._notes = notes
        self._interval = interval
        self._per_pass = per_pass
        self._clock = clock
        self._wall = wall
        self._last: float | None = None
        self._passes = 0
        self._seen: tuple[int, Mapping[str, str]] | None = None  # the view and notes last compared
        self._wanted: dict[str, None] = {}  # pods whose condition is to be written, in line order
        self._written: dict[str, Shown] = {}  # key -> the condition the pod shows
        self.writes = 0

    def observe(self, event: SchedulingEvent) -> None:
        if event.type == REQUEST and event.reason in _DONE:
            self.forget(event.object_id)

    def forget(self, key: str) -> None:
        """The pod was bound or deleted: nothing more to say about it."""
        self._wanted.pop(key, None)
        self._written.pop(key, None)

    def pending(self) -> int:
        return len(self._wanted)

    def tick(self, now: float | None = None) -> int:
        """One pass: queue the changed conditions, write up to `per_pass`, at most once per interval."""
        now = self._clock() if now is None else now
        if self._last is not None and now - self._last < self._interval():
            return 0
        self._last = now
        self._passes += 1
        if self._passes % SWEEP_EVERY == 0:
            for key in [k for k in self._written if self._pod(k) is None]:
                self.forget(key)
        view, notes = self._view(), self._notes()
        wanted = {key: self._wanted_condition(key, view, notes) for key in self._wanted}
        if self._seen is None or self._seen[0] != view.generation or self._seen[1] is not notes:
            self._seen = (view.generation, notes)
            for key in view.conditions:
                if key not in wanted:
                    shown = self._wanted_condition(key, view, notes)
                    if shown is not None and self._written.get(key) != shown:
                        self._wanted[key] = None
                        wanted[key] = shown
        made = 0
        for key in list(self._wanted)[: self._per_pass]:
            made += self._write(key, wanted.get(key))
        self.writes += made
        return made

    @staticmethod
    def _wanted_condition(key: str, view: ScaleUpView, notes: Mapping[str, str]) -> Shown | None:
        condition = view.conditions.get(key)
        if condition is None:
            return None
        note = notes.get(key)
        message = f"{condition.message}; {note}" if note else condition.message
        return condition_reason(condition.category), message

    def _write(self, key: str, wanted: Shown | None) -> int:
        pod = self._pod(key)
        if wanted is None or pod is None or map_at(pod, "spec").get("nodeName"):
            self.forget(key)
            return 0
        shown = self._written.get(key)
        if shown is None:
            shown = shown_condition(pod)
        if shown == wanted:
            self._wanted.pop(key, None)
            self._written[key] = wanted
            return 0
        meta = meta_of(pod)
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "reason": wanted[0],
            "message": wanted[1],
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
        self._written[key] = wanted
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
