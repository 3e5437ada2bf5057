"""Kubernetes Events for what the scheduler did to pods, throttled so a burst cannot flood the API.

The core's scheduling events about pods (`Scheduled`, `Unschedulable`, `Evicted`, `Preempted`,
`EvictionRefused`, `PreferencesIgnored`, `PlaceholderTooSmall`, `AnnotationIgnored`,
`Reserved`, `ReservationEnded`, `Backfilled`, `ResourceReservationTimeout`) become core/v1 Events
on the pod, under the names kube-scheduler and the kubelet use where one exists
(`FailedScheduling` for a waiting pod). A gang of a PodGroup API also speaks on its group object
(`group_event`): why its pods wait (`FailedScheduling`), `GangReserved`,
`ResourceReservationTimeout`, `Rejected` and `Failed`.
Refusals of ElasticQuotas, the ConfigMap and Nodes are posted by shim/kube/write/recorder.py, which
knows when a refusal has settled; they are not repeated here.

`EventCorrelator` does what client-go's event correlator does, as pure bookkeeping:
- a repeat of the same event (object, type, reason, message) is not a new Event: the existing
  one's `count` and `lastTimestamp` go up, in one patch however many repeats came in between;
- more than `max_similar` different messages for one object and reason within `similar_window`
  seconds collapse into one Event whose message says "(combined from similar events): ...";
- writes (creates and patches) pass a token bucket of `rate` per second with `burst`; what
  waits stays queued, newest repeats folded in, up to `cache_size` Events (the oldest beyond
  that are dropped and counted in `dropped`). So 10,000 pods scheduled at once cost at most
  `cache_size` Events, written at `rate` per second, and never stall the scheduler.

While the binder has more bindings queued than its workers are posting (`busy`), the writer
holds its Events back, for at most `hold` seconds: a binding is what makes a pod run, and an
Event written meanwhile is a request the API server serves instead of one. What comes in
meanwhile is correlated as usual, and written at the usual rate once the queue is gone or the
hold is over; under a backlog that never ends, Events are written as before after the first
`hold` seconds.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from core.events import APPLICATION, INPUT_IGNORED, REQUEST, SchedulingEvent
from core.gang.spec import TIMEOUT_REASON
from shim.kube.write.event_body import core_event, wall_timestamp

log = logging.getLogger("herder.events")

NORMAL, WARNING = "Normal", "Warning"
COMBINED = "(combined from similar events): "
MAX_MESSAGE = 1024
HOLD_SECONDS = 10.0  # the longest Events wait for queued bindings
# core reason -> (Event type, Event reason)
POD_EVENTS: dict[str, tuple[str, str]] = {
    "Scheduled": (NORMAL, "Scheduled"),
    "Unschedulable": (WARNING, "FailedScheduling"),
    "Evicted": (WARNING, "Evicted"),
    "Preempted": (NORMAL, "Preempted"),
    "Preempting": (NORMAL, "Preempting"),
    "EvictionRefused": (WARNING, "EvictionRefused"),
    "PreferencesIgnored": (NORMAL, "PreferencesIgnored"),
    "PlaceholderTooSmall": (WARNING, "PlaceholderTooSmall"),  # a gang pod larger than its task group
    INPUT_IGNORED: (WARNING, INPUT_IGNORED),  # a malformed gang parameter read as its default
    "Reserved": (NORMAL, "Reserved"),  # a node is kept for the pod while it drains
    "ReservationEnded": (NORMAL, "ReservationEnded"),
    "Backfilled": (NORMAL, "Backfilled"),  # placed on a reserved node: it ends before the reserved pod starts
    TIMEOUT_REASON: (WARNING, TIMEOUT_REASON),  # its Hard gang timed out: the pod fails
}
# core reason of an event about a group's pod or application -> the Event on the group object
GROUP_EVENTS: dict[str, tuple[str, str]] = {
    "Unschedulable": (WARNING, "FailedScheduling"),
    "GangReserved": (NORMAL, "GangReserved"),
    TIMEOUT_REASON: (WARNING, TIMEOUT_REASON),
    "Rejected": (WARNING, "Rejected"),
    "Failed": (WARNING, "Failed"),
}
GroupOf = Callable[[SchedulingEvent], "ObjectRef | None"]


@dataclass(frozen=True, slots=True)
class ObjectRef:
    kind: str
    namespace: str
    name: str
    uid: str = ""
    api_version: str = "v1"

    def to_dict(self) -> dict[str, str]:
        ref = {"apiVersion": self.api_version, "kind": self.kind, "namespace": self.namespace, "name": self.name}
        if self.uid:
            ref["uid"] = self.uid
        return ref


@dataclass(frozen=True, slots=True)
class EventNote:
    """One thing to say about one object."""

    ref: ObjectRef
    type: str
    reason: str
    message: str


def pod_event(event: SchedulingEvent, locate: Callable[[str], tuple[str, str] | None]) -> EventNote | None:
    """The Event to post for a core scheduling event about a pod, or None."""
    if event.type != REQUEST or event.reason not in POD_EVENTS:
        return None
    if "/" in event.name:
        namespace, name = event.name.split("/", 1)
    else:
        where = locate(event.object_id)
        if where is None:
            return None
        namespace, name = where
    uid = event.object_id if event.object_id != f"{namespace}/{name}" else ""
    kind, reason = POD_EVENTS[event.reason]
    return EventNote(ObjectRef("Pod", namespace, name, uid), kind, reason, event.message)


def group_event(event: SchedulingEvent, group_of: GroupOf) -> EventNote | None:
    """The Event to post on the group object a pod or application of the event belongs to."""
    if event.type not in (REQUEST, APPLICATION) or event.reason not in GROUP_EVENTS:
        return None
    if event.type == APPLICATION and event.reason == "Unschedulable":
        return None
    ref = group_of(event)
    if ref is None:
        return None
    kind, reason = GROUP_EVENTS[event.reason]
    return EventNote(ref, kind, reason, event.message)


@dataclass
class _Record:
    """One Kubernetes Event object and what the server knows of it."""

    note: EventNote
    first: str
    last: str
    count: int = 1
    name: str | None = None  # set once created


@dataclass(frozen=True, slots=True)
class EventWrite:
    key: tuple[Any, ...]
    namespace: str
    name: str
    create: bool
    body: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Similar:
    since: float
    messages: set[str] = field(default_factory=set)


class EventCorrelator:
    def __init__(
        self,
        component: str = "herder",
        instance: str = "",
        max_similar: int = 10,
        similar_window: float = 600.0,
        cache_size: int = 4096,
        rate: float = 20.0,
        burst: int = 100,
        wall: Callable[[], str] = wall_timestamp,
    ) -> None:
        self._component = component
        self._instance = instance
        self._max_similar = max_similar
        self._window = similar_window
        self._cache_size = cache_size
        self._rate = rate
        self._burst = float(burst)
        self._wall = wall
        self._records: OrderedDict[tuple[Any, ...], _Record] = OrderedDict()
        self._similar: OrderedDict[tuple[Any, ...], _Similar] = OrderedDict()
        self._dirty: OrderedDict[tuple[Any, ...], None] = OrderedDict()
        self._tokens = float(burst)
        self._refilled: float | None = None
        self.dropped = 0

    def observe(self, note: EventNote, now: float) -> None:
        group = (note.ref, note.type, note.reason)
        similar = self._similar.get(group)
        if similar is None or now - similar.since > self._window:
            similar = _Similar(now)
        self._similar[group] = similar
        self._similar.move_to_end(group)
        if len(similar.messages) <= self._max_similar:
            similar.messages.add(note.message)
        if len(similar.messages) > self._max_similar:
            note = replace(note, message=COMBINED + note.message)
            key: tuple[Any, ...] = (*group, COMBINED)
        else:
            key = (*group, note.message)
        stamp = self._wall()
        record = self._records.get(key)
        if record is None:
            record = self._records[key] = _Record(note, first=stamp, last=stamp)
        else:
            record.count += 1
            record.last = stamp
            record.note = note
            self._records.move_to_end(key)
        self._dirty[key] = None
        while len(self._records) > self._cache_size:
            old, _ = self._records.popitem(last=False)
            if old in self._dirty:  # never written: this Event is lost
                del self._dirty[old]
                self.dropped += 1
        while len(self._similar) > self._cache_size:
            self._similar.popitem(last=False)

    def waiting(self) -> int:
        return len(self._dirty)

    def next_writes(self, now: float) -> list[EventWrite]:
        """The creates and patches the rate limit allows now, oldest first."""
        if self._refilled is not None:
            self._tokens = min(self._burst, self._tokens + (now - self._refilled) * self._rate)
        self._refilled = now
        writes = []
        while self._dirty and self._tokens >= 1:
            key, _ = self._dirty.popitem(last=False)
            self._tokens -= 1
            writes.append(self._write(key, self._records[key]))
        return writes

    def _write(self, key: tuple[Any, ...], record: _Record) -> EventWrite:
        note = record.note
        message = note.message[:MAX_MESSAGE]
        if record.name is not None:
            patch = {"count": record.count, "lastTimestamp": record.last, "message": message}
            return EventWrite(key, note.ref.namespace, record.name, create=False, body=patch)
        body = core_event(
            note.ref.to_dict(),
            note.ref.namespace,
            type=note.type,
            reason=note.reason,
            message=message,
            component=self._component,
            first=record.first,
            last=record.last,
            count=record.count,
            instance=self._instance,
        )
        name = body["metadata"]["name"]
        return EventWrite(key, note.ref.namespace, name, create=True, body=body)

    def written(self, write: EventWrite) -> None:
        record = self._records.get(write.key)
        if record is not None and write.create:
            record.name = write.name

    def failed(self, write: EventWrite, gone: bool) -> None:
        """A write failed: a patched Event that is gone (expired) is created anew; anything else is
        dropped (best effort: a repeat tries again)."""
        record = self._records.get(write.key)
        if record is None:
            return
        if gone and not write.create:
            record.name = None
            self._dirty[write.key] = None
            return
        self.dropped += 1
        if write.create:
            del self._records[write.key]


class EventApi(Protocol):
    def create_event(self, namespace: str, event: Mapping[str, Any]) -> None: ...
    def patch_event(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None: ...


class EventWriter:
    """Feeds the core's pod events through the correlator and posts what it lets through."""

    def __init__(
        self,
        api: EventApi,
        locate: Callable[[str], tuple[str, str] | None],
        correlator: EventCorrelator,
        clock: Callable[[], float] = time.monotonic,
        active: Callable[[], bool] = lambda: True,
        group_of: GroupOf | None = None,
        busy: Callable[[], bool] = lambda: False,
        hold: float = HOLD_SECONDS,
    ) -> None:
        """`group_of(event)`: the group object a gang's pod or application belongs to (a PodGroup
        API's), or None; its events are said there too. `busy()`: bindings are queued (Events wait
        for them, at most `hold` seconds)."""
        self._api = api
        self._busy = busy
        self._hold = hold
        self._held_since: float | None = None
        self._locate = locate
        self._correlator = correlator
        self._group_of = group_of
        self._clock = clock
        self._active = active
        self.writes = 0
        self._failures = 0

    @property
    def dropped(self) -> int:
        return self._correlator.dropped

    def observe(self, event: SchedulingEvent, now: float | None = None) -> None:
        note = pod_event(event, self._locate)
        if note is not None:
            now = self._clock() if now is None else now
            self._correlator.observe(note, now)
        if self._group_of is not None:
            group_note = group_event(event, self._group_of)
            if group_note is not None:
                self._correlator.observe(group_note, self._clock() if now is None else now)

    def flush(self, now: float | None = None) -> int:
        """Post what the rate limit allows now (nothing while bindings are queued, up to `hold`
        seconds); returns the API writes made."""
        now = self._clock() if now is None else now
        if self._holding(now):
            return 0
        made = 0
        for write in self._correlator.next_writes(now):
            if not self._active():  # checked before each POST: a round may outlive the Lease
                self._correlator.failed(write, gone=False)
                continue
            try:
                if write.create:
                    self._api.create_event(write.namespace, write.body)
                else:
                    self._api.patch_event(write.namespace, write.name, write.body)
            except Exception as error:
                status = getattr(error, "status", None)
                if write.create and status == 409:  # the name is taken: it is our Event
                    self._correlator.written(write)
                    continue
                self._correlator.failed(write, gone=status == 404)
                self._failures += 1
                if self._failures in (1, 10, 100) or self._failures % 1000 == 0:
                    log.warning("could not post Event %s (%d failures so far): %s", write.name, self._failures, error)
                continue
            self._correlator.written(write)
            made += 1
        self.writes += made
        return made

    def _holding(self, now: float) -> bool:
        """Whether Events wait now: bindings are queued, and have been for less than `hold` seconds."""
        if not self._busy():
            self._held_since = None
            return False
        if self._held_since is None:
            self._held_since = now
        return now - self._held_since < self._hold
