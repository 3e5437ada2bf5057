"""Scheduling events: what happened, to which object and why, kept in a bounded ring buffer.

Events are the scheduler's diary for people: the REST API serves them (`/ws/v1/events/batch`
and `/ws/v1/events/stream`, as YuniKorn's records: `core.event_records`), the simulator puts
the reported ones in its report and the Kubernetes shim turns the ones about pods and quotas
into Kubernetes Events. The buffer keeps the newest `capacity` events and gives every event
the next id (ids have no gaps), so a reader can ask for "everything after id N".

An event may carry YuniKorn's change type and detail (`change`, `detail`: the scheduler
interface's `EventRecord.ChangeType` and `ChangeDetail`) and the resource it is about.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

# Object types (YuniKorn's EventRecord types plus quotas and config).
REQUEST = "REQUEST"
APPLICATION = "APP"
NODE = "NODE"
QUEUE = "QUEUE"
USERGROUP = "USERGROUP"
QUOTA = "QUOTA"
CONFIG = "CONFIG"

# A pod's input Herder read past with a default (a malformed gang parameter): a warning, never a wait.
INPUT_IGNORED = "AnnotationIgnored"

# YuniKorn's EventRecord.ChangeType
NONE, SET, ADD, REMOVE = 0, 1, 2, 3
# The EventRecord.ChangeDetail values Herder sends (yunikorn-scheduler-interface)
DETAILS_NONE = 0
APP_ALLOC = 200
APP_REJECT = 202
APP_ACCEPTED = 204
APP_RUNNING = 206
APP_COMPLETING = 207
APP_COMPLETED = 208
APP_FAILING = 209
APP_FAILED = 210
NODE_DECOMISSION = 300
NODE_SCHEDULABLE = 302
NODE_ALLOC = 303
NODE_CAPACITY = 304
NODE_OCCUPIED = 305
NODE_RESERVATION = 306
ALLOC_PREEMPT = 501


@dataclass(slots=True)
class SchedulingEvent:
    """One event. Not frozen only so the ring can number it without a copy; nobody changes an
    event once it is added."""

    time: float
    type: str  # REQUEST, APP, NODE, QUEUE, USERGROUP, QUOTA, CONFIG
    object_id: str  # pod key, application id, node id, queue path, quota name, ...
    reason: str  # Scheduled, Unschedulable, Evicted, Preempted, ConfigRefused, ...
    message: str = ""
    reference_id: str = ""  # e.g. the application of a request, the node of an allocation
    name: str = ""  # human name of the object ("<ns>/<pod>") when it has one
    id: int = 0
    change: int = NONE
    detail: int = DETAILS_NONE
    resource: Mapping[str, int] | None = None

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


# A record kept in the ring as the fields of a SchedulingEvent, in their order (`id` included),
# and made an event only when read: the scheduler adds one for every placement.
_Fields = tuple[float, str, str, str, str, str, str, int, int, int, Mapping[str, int] | None]


def _event(entry: SchedulingEvent | _Fields) -> SchedulingEvent:
    return entry if isinstance(entry, SchedulingEvent) else SchedulingEvent(*entry)


def _id(entry: SchedulingEvent | _Fields) -> int:
    return entry.id if isinstance(entry, SchedulingEvent) else entry[7]


class EventRing:
    """A thread-safe ring buffer of the newest `capacity` events."""

    def __init__(self, capacity: int = 10000) -> None:
        if capacity <= 0:
            raise ValueError("event ring capacity must be positive")
        self._events: deque[SchedulingEvent | _Fields] = deque(maxlen=capacity)
        self._next_id = 1
        self._lock = threading.Lock()

    @property
    def capacity(self) -> int:
        return self._events.maxlen or 0

    def add(self, event: SchedulingEvent) -> SchedulingEvent:
        with self._lock:
            event.id = self._next_id  # the ring owns the event from here (no copy: this is on the scheduling path)
            stored = event
            self._next_id += 1
            self._events.append(stored)
            return stored

    def add_record(
        self,
        time: float,
        type: str,
        object_id: str,
        reason: str,
        message: str = "",
        reference_id: str = "",
        name: str = "",
        change: int = NONE,
        detail: int = DETAILS_NONE,
        resource: Mapping[str, int] | None = None,
    ) -> None:
        """Add an event nobody is handed now (YuniKorn's fine-grained records): it is kept as
        its fields and built when read, which costs a placement less than building it."""
        with self._lock:
            self._events.append(
                (time, type, object_id, reason, message, reference_id, name, self._next_id, change, detail, resource)
            )
            self._next_id += 1

    def batch(self, start: int = 0, count: int = 100) -> list[SchedulingEvent]:
        """Up to `count` events with an id >= `start`, oldest first (a negative count: all)."""
        with self._lock:
            events = self._events
            if not events:
                return []
            skip = max(0, start - _id(events[0]))
            if skip >= len(events):
                return []
            if skip > len(events) // 2:  # near the newest end: walk from there
                tail = list(islice(reversed(events), len(events) - skip))
                tail.reverse()
                chosen = tail[:count] if count >= 0 else tail
            else:
                stop = None if count < 0 else skip + count
                chosen = list(islice(events, skip, stop))
        return [_event(entry) for entry in chosen]

    def highest_id(self) -> int:
        """The id of the newest event (one less than the lowest when the ring is empty)."""
        with self._lock:
            return self._next_id - 1

    def latest(self, count: int = 100) -> list[SchedulingEvent]:
        with self._lock:
            events = list(self._events)
        return [_event(entry) for entry in events[-count:]] if count > 0 else []

    def lowest_id(self) -> int:
        with self._lock:
            return _id(self._events[0]) if self._events else self._next_id

    def __len__(self) -> int:
        with self._lock:
            return len(self._events)
