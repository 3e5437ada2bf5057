"""Herder's scheduling events as YuniKorn's event records (`si.EventRecord` in JSON).

YuniKorn's record has `type` (1 REQUEST, 2 APP, 3 NODE, 4 QUEUE, 5 USERGROUP), `objectID`,
`referenceID`, `message`, `timestampNano`, `eventChangeType` (0 NONE, 1 SET, 2 ADD,
3 REMOVE), `eventChangeDetail` (e.g. 204 APP_ACCEPTED, 303 NODE_ALLOC, 501 ALLOC_PREEMPT) and
`resource` (`{"resources": {"vcore": {"value": 1000}}}`); like YuniKorn, an empty `message`
or `referenceID` is left out, and `eventChangeType`/`eventChangeDetail` are always there
(Herder prints the zeros YuniKorn leaves out). Herder's own fields ride beside them:
`id`, `objectType` (Herder's type name, also for its QUOTA and CONFIG events, which YuniKorn
has no type for: their `type` is 0), `reason` and `name`.

Events emitted with a change and detail keep them; the older Herder events are mapped here by
their type and reason. Where YuniKorn files a change under the application (a pod placed:
APP ADD APP_ALLOC; a pod preempted or evicted: APP REMOVE ALLOC_PREEMPT), `objectID` is the
application and `referenceID` the pod, as in YuniKorn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.events import (
    ADD,
    ALLOC_PREEMPT,
    APP_ACCEPTED,
    APP_ALLOC,
    APP_COMPLETED,
    APP_REJECT,
    APPLICATION,
    DETAILS_NONE,
    NODE,
    NODE_DECOMISSION,
    NONE,
    QUEUE,
    REMOVE,
    REQUEST,
    SET,
    USERGROUP,
    SchedulingEvent,
)

RECORD_TYPES = {REQUEST: 1, APPLICATION: 2, NODE: 3, QUEUE: 4, USERGROUP: 5}

# (Herder type, reason) -> (YuniKorn type, change type, change detail, filed under the application)
_MAPPED: dict[tuple[str, str], tuple[int, int, int, bool]] = {
    (REQUEST, "Scheduled"): (2, ADD, APP_ALLOC, True),
    (REQUEST, "Preempted"): (2, REMOVE, ALLOC_PREEMPT, True),
    (REQUEST, "Evicted"): (2, REMOVE, ALLOC_PREEMPT, True),
    (APPLICATION, "Accepted"): (2, SET, APP_ACCEPTED, False),
    (APPLICATION, "Completed"): (2, SET, APP_COMPLETED, False),
    (APPLICATION, "Rejected"): (2, SET, APP_REJECT, False),
    (NODE, "NodeAdded"): (3, ADD, DETAILS_NONE, False),
    (NODE, "NodeRemoved"): (3, REMOVE, NODE_DECOMISSION, False),
}


def resource_record(resource: Mapping[str, int] | None) -> dict[str, Any]:
    """A resource as YuniKorn's protobuf JSON prints it (`{}` when there is none)."""
    if not resource:
        return {}
    return {"resources": {key: {"value": int(val)} for key, val in sorted(resource.items())}}


def yunikorn_record(event: SchedulingEvent, epoch_offset: float) -> dict[str, Any]:
    """`event` as YuniKorn's record; `epoch_offset` turns its scheduler-clock time into Unix time."""
    kind = RECORD_TYPES.get(event.type, 0)
    change, detail, under_app = event.change, event.detail, False
    if change == NONE and detail == DETAILS_NONE:
        mapped = _MAPPED.get((event.type, event.reason))
        if mapped is not None:
            kind, change, detail, under_app = mapped
    object_id, reference_id = event.object_id, event.reference_id
    if under_app and reference_id:
        object_id, reference_id = reference_id, object_id
    record: dict[str, Any] = {"type": kind, "objectID": object_id}
    if event.message:  # YuniKorn leaves out empty strings and zeros (protobuf JSON); the UI's tools cope
        record["message"] = event.message
    record["timestampNano"] = round((event.time + epoch_offset) * 1e9)
    record["eventChangeType"] = change
    record["eventChangeDetail"] = detail
    if reference_id:
        record["referenceID"] = reference_id
    record["resource"] = resource_record(event.resource)
    record["id"] = event.id
    record["objectType"] = event.type
    record["reason"] = event.reason
    if event.name:
        record["name"] = event.name
    return record
