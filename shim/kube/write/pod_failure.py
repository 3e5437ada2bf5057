"""Failing the pods of a Hard gang that timed out, as YuniKorn's shim does, so their Job (or
other controller) sees the failure instead of pods pending forever.

The core reports each waiting pod of such a gang with a `ResourceReservationTimeout` scheduling
event (core/gang/tidy.py); the writer patches the pod's status to phase `Failed` with that
reason and the core's message (pods/status, a strategic merge patch carrying the pod's
resourceVersion, so a pod bound meanwhile is never failed). It runs with the other status
writers: at most `per_pass` pods per pass, one pass per `status.interval`; the setting
`gang.failPodsOnTimeout: false` turns it off (the pods then stay pending with the reason).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from core.events import REQUEST, SchedulingEvent
from core.gang.spec import TIMEOUT_REASON
from shim.convert.objects import map_at, meta_of

log = logging.getLogger("herder.status")


class PodFailureApi(Protocol):
    def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None: ...


class PodFailureWriter:
    def __init__(
        self,
        api: PodFailureApi,
        pod: Callable[[str], Mapping[str, Any] | None],
        enabled: Callable[[], bool],
        interval: Callable[[], float],
        per_pass: int = 200,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`pod(key)` is the cached pod (KubeCache.pod), `enabled()` the setting gang.failPodsOnTimeout."""
        self._api = api
        self._pod = pod
        self._enabled = enabled
        self._interval = interval
        self._per_pass = per_pass
        self._clock = clock
        self._last: float | None = None
        self._wanted: dict[str, str] = {}  # pod key -> why, in arrival order
        self.writes = 0

    def observe(self, event: SchedulingEvent) -> None:
        if event.type == REQUEST and event.reason == TIMEOUT_REASON and self._enabled():
            self._wanted[event.object_id] = event.message

    def pending(self) -> int:
        return len(self._wanted)

    def tick(self, now: float | None = None) -> int:
        now = self._clock() if now is None else now
        if not self._wanted or (self._last is not None and now - self._last < self._interval()):
            return 0
        self._last = now
        made = 0
        for key in list(self._wanted)[: self._per_pass]:
            made += self._fail(key, self._wanted.pop(key))
        self.writes += made
        return made

    def _fail(self, key: str, why: str) -> int:
        pod = self._pod(key)
        if pod is None or map_at(pod, "spec").get("nodeName") or map_at(pod, "status").get("phase") == "Failed":
            return 0
        meta = meta_of(pod)
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        patch: dict[str, Any] = {"status": {"phase": "Failed", "reason": TIMEOUT_REASON, "message": why}}
        if meta.get("resourceVersion"):
            patch["metadata"] = {"resourceVersion": meta["resourceVersion"]}
        try:
            self._api.patch_pod_status(namespace, name, patch)
        except Exception as error:
            status = getattr(error, "status", None)
            if status == 409:  # the pod changed since the watch showed it: look again next pass
                self._wanted[key] = why
            elif status != 404:
                log.warning("could not mark pod %s/%s Failed after its gang timed out: %s", namespace, name, error)
            return 0
        log.info("pod %s/%s marked Failed: %s", namespace, name, why)
        return 1
