"""The core's callbacks in the operator: queue binds, evictions and events, never block the cycle."""

from __future__ import annotations

import logging
import queue

from core.events import SchedulingEvent
from core.objects.ask import Allocation
from shim.kube.write.binder import Binder
from shim.kube.write.evictor import Evictor
from shim.kube.write.placeholders import PlaceholderWriter
from shim.kube.write.volumes import VolumeBinder

log = logging.getLogger("herder.operator")


class ShimCallbacks:
    """Implements core.callbacks.Callbacks; events wait in `events` for the Kubernetes Event writer."""

    def __init__(
        self,
        binder: Binder,
        evictor: Evictor,
        event_backlog: int = 10_000,
        placeholders: PlaceholderWriter | None = None,
        volumes: VolumeBinder | None = None,
    ) -> None:
        self._binder = binder
        self._volumes = volumes
        self._evictor = evictor
        self._placeholders = placeholders
        self.events: queue.Queue[SchedulingEvent] = queue.Queue(maxsize=event_backlog)
        self.events_dropped = 0

    def bind(self, allocation: Allocation) -> None:
        if self._placeholders is not None and (allocation.placeholder or allocation.replaces):
            if allocation.placeholder:
                self._placeholders.create(allocation)
            else:
                self._placeholders.replace(allocation)  # the placeholder goes, then the binder binds
            return
        if self._placeholders is not None:
            self._placeholders.after_deletions_on(allocation.node_id, lambda: self._bind_placed(allocation))
        else:
            self._bind_placed(allocation)

    def _bind_placed(self, allocation: Allocation) -> None:
        if allocation.volume_plan and self._volumes is not None:
            self._volumes.submit(allocation)  # the claims first; the binder binds the pod once they are bound
            return
        if not self._binder.submit(allocation.key, allocation.node_id):
            log.warning("pod %s already being bound; second binding refused", allocation.display_name)

    def evict(self, allocation: Allocation, reason: str) -> None:
        if self._placeholders is not None and allocation.placeholder:
            self._placeholders.delete(allocation, reason)
            return
        self._evictor.submit(allocation.key, reason)

    def report(self, event: SchedulingEvent) -> None:
        try:
            self.events.put_nowait(event)
        except queue.Full:
            # A slow API server must not stall scheduling: Events are best effort.
            self.events_dropped += 1
