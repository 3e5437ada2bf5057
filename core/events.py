"""Scheduling events: what happened, to which object and why, kept in a bounded ring buffer.

Events are the scheduler's diary for people: the REST API serves them (`/ws/v1/events/batch`),
the simulator puts them in its report and the Kubernetes shim turns the ones about pods and
quotas into Kubernetes Events. The buffer keeps the newest `capacity` events and gives every
event a monotonically increasing id, so a reader can ask for "everything after id N".
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

# Object types (YuniKorn's EventRecord types plus quotas and config).
REQUEST = "REQUEST"
APPLICATION = "APP"
NODE = "NODE"
QUEUE = "QUEUE"
USERGROUP = "USERGROUP"
QUOTA = "QUOTA"
CONFIG = "CONFIG"


@dataclass(frozen=True, slots=True)
class SchedulingEvent:
    time: float
    type: str  # REQUEST, APP, NODE, QUEUE, USERGROUP, QUOTA, CONFIG
    object_id: str  # pod key, application id, node id, queue path, quota name, ...
    reason: str  # Scheduled, Unschedulable, Evicted, Preempted, ConfigRefused, ...
    message: str = ""
    reference_id: str = ""  # e.g. the application of a request, the node of an allocation
    name: str = ""  # human name of the object ("<ns>/<pod>") when it has one
    id: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "id": self.id,
            "timestamp": self.time,
            "type": self.type,
            "objectID": self.object_id,
            "referenceID": self.reference_id,
            "reason": self.reason,
            "message": self.message,
        }
        if self.name:
            doc["name"] = self.name
        return doc


class EventRing:
    """A thread-safe ring buffer of the newest `capacity` events."""

    def __init__(self, capacity: int = 10000) -> None:
        if capacity <= 0:
            raise ValueError("event ring capacity must be positive")
        self._events: deque[SchedulingEvent] = deque(maxlen=capacity)
        self._next_id = 1
        self._lock = threading.Lock()

    @property
    def capacity(self) -> int:
        return self._events.maxlen or 0

    def add(self, event: SchedulingEvent) -> SchedulingEvent:
        with self._lock:
            stored = SchedulingEvent(
                time=event.time,
                type=event.type,
                object_id=event.object_id,
                reason=event.reason,
                message=event.message,
                reference_id=event.reference_id,
                name=event.name,
                id=self._next_id,
                details=event.details,
            )
            self._next_id += 1
            self._events.append(stored)
            return stored

    def batch(self, start: int = 0, count: int = 100) -> list[SchedulingEvent]:
        """Up to `count` events with an id >= `start`, oldest first."""
        with self._lock:
            out = [e for e in self._events if e.id >= start]
        return out[:count] if count >= 0 else out

    def latest(self, count: int = 100) -> list[SchedulingEvent]:
        with self._lock:
            events = list(self._events)
        return events[-count:] if count > 0 else []

    def lowest_id(self) -> int:
        with self._lock:
            return self._events[0].id if self._events else self._next_id

    def __len__(self) -> int:
        with self._lock:
            return len(self._events)
