"""The shape of what Herder writes about objects: a core/v1 Event body and the wall-clock timestamp
Kubernetes expects (RFC 3339, seconds, UTC). One place, so the refusal recorder and the
correlated pod Events say things the same way."""

from __future__ import annotations

import datetime
import time
import uuid
from collections.abc import Mapping
from typing import Any

_last: tuple[int, str] = (-1, "")  # (second, its text): a burst stamps thousands of Events in one second


def wall_timestamp() -> str:
    """Now, as Kubernetes writes times in Events and conditions (`2026-11-22T17:03:42Z`)."""
    global _last
    second = int(time.time())
    last = _last
    if last[0] == second:
        return last[1]
    text = datetime.datetime.fromtimestamp(second, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    _last = (second, text)
    return text


def core_event(
    involved: Mapping[str, str],
    namespace: str,
    *,
    type: str,
    reason: str,
    message: str,
    component: str,
    first: str,
    last: str,
    count: int = 1,
    instance: str = "",
) -> dict[str, Any]:
    """A new core/v1 Event about `involved` (an object reference), with a unique name."""
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{involved['name'][:200]}.{uuid.uuid4().hex[:16]}", "namespace": namespace},
        "involvedObject": dict(involved),
        "type": type,
        "reason": reason,
        "message": message,
        "count": count,
        "firstTimestamp": first,
        "lastTimestamp": last,
        "source": {"component": component},
        "reportingComponent": component,
    }
    if instance:
        body["reportingInstance"] = instance
    return body
