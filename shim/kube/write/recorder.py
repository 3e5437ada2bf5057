"""Kubernetes Events on the objects Herder refuses: an invalid ElasticQuota, ConfigMap or Node.

A refusal is said once per object and message (watches replay objects, and a ConfigMap is read
again and again), as a core/v1 Event that `kubectl describe` shows beside the object. Posting
is best effort: an API error is logged, never raised into the caller.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from kubernetes import client

from shim.kube.calls import ApiCalls, segment
from shim.kube.write.event_body import core_event, wall_timestamp

log = logging.getLogger("herder.events")

COMPONENT = "herder"
WARNING = "Warning"
NORMAL = "Normal"
_CLUSTER_EVENTS_NAMESPACE = "default"
_REMEMBERED = 10_000


def object_reference(obj: Mapping[str, Any], kind: str, api_version: str) -> dict[str, str]:
    """The Event's involvedObject; kind and apiVersion are given because listed items lack them."""
    meta = obj.get("metadata") or {}
    ref = {"apiVersion": api_version, "kind": kind, "name": str(meta.get("name") or "")}
    for key, field in (("namespace", "namespace"), ("uid", "uid"), ("resourceVersion", "resourceVersion")):
        if meta.get(field):
            ref[key] = str(meta[field])
    return ref


class EventRecorder:
    def __init__(self, api_client: client.ApiClient, component: str = COMPONENT) -> None:
        self._calls = ApiCalls(api_client, timeout=10)
        self._component = component
        self._said: dict[tuple[str, str, str, str], None] = {}
        self._lock = threading.Lock()

    def record(
        self, obj: Mapping[str, Any], kind: str, api_version: str, reason: str, message: str, type: str = WARNING
    ) -> bool:
        """Post one Event about `obj` (a `kind` object); False when the same thing was already said about it."""
        ref = object_reference(obj, kind, api_version)
        said = (ref["kind"], ref.get("namespace", ""), ref["name"], f"{reason}: {message}")
        with self._lock:
            if said in self._said:
                return False
            self._said[said] = None
            if len(self._said) > _REMEMBERED:
                self._said.pop(next(iter(self._said)))
        namespace = ref.get("namespace") or _CLUSTER_EVENTS_NAMESPACE
        stamp = wall_timestamp()
        body = core_event(
            ref,
            namespace,
            type=type,
            reason=reason,
            message=message,
            component=self._component,
            first=stamp,
            last=stamp,
        )
        try:
            self._calls.request("POST", f"/api/v1/namespaces/{segment(namespace)}/events", body)
        except Exception as error:  # an Event is best effort; the log still says it
            log.warning("could not post Event %s on %s %s: %s", reason, ref["kind"], ref["name"], error)
        return True

    def forget(self, obj: Mapping[str, Any], kind: str) -> None:
        """The object changed for the better: a later refusal of it is news again."""
        ref = object_reference(obj, kind, "")
        prefix = (ref["kind"], ref.get("namespace", ""), ref["name"])
        with self._lock:
            for said in [s for s in self._said if s[:3] == prefix]:
                del self._said[said]
