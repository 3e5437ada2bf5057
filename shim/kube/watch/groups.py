"""The PodGroup APIs' objects in the cluster: which kinds the API server serves, what each group
object defines, and which pods name each group.

- `served_kinds` asks discovery, once at start, which of the gang-defining kinds
  (shim/convert/gang_sources.py GROUP_KINDS) the server serves, and in which group and version
  (the newest Herder reads). Only those are listed and watched: a cluster with none of the
  CRDs (or without Kubernetes' scheduling.k8s.io alpha APIs) runs Herder as before; a CRD
  installed later is picked up at the next start.
- `GroupSync` keeps each object's definition (read once per version of the object) for the
  pods' conversion (`lookup`), posts a Warning Event on an object it cannot read (its pods wait
  naming the field), and keeps the pods that name each group: their states for the group's
  status (shim/kube/write/group_status.py) and their keys, so that pending pods are read again
  when their group comes or changes (`on_change`, PodSync.group_changed).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubernetes import client

from core.events import APPLICATION, SchedulingEvent
from shim.convert.gang_sources import GROUP_KINDS, GroupKey, GroupKind
from shim.convert.gangs.pod_gang import GroupDefinition, GroupRef
from shim.convert.objects import meta_of
from shim.kube.calls import ApiCalls, segment
from shim.kube.write.group_status import BOUND, FAILED, PENDING, RUNNING, SUCCEEDED, GroupState
from shim.kube.write.pod_events import ObjectRef
from shim.kube.write.recorder import EventRecorder

log = logging.getLogger("herder.groups")

REFUSED = "GangDefinitionRefused"
__all__ = ["BOUND", "FAILED", "PENDING", "RUNNING", "SUCCEEDED", "GroupSync", "ServedKind", "served_kinds"]


@dataclass(frozen=True, slots=True)
class ServedKind:
    """A gang-defining kind as this API server serves it."""

    kind: GroupKind
    group: str
    version: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def path(self) -> str:
        return f"/apis/{self.group}/{self.version}/{self.kind.plural}"

    @property
    def name(self) -> str:
        return f"{self.kind.name} ({self.api_version})"


def served_kinds(api_client: client.ApiClient, timeout: float = 30.0) -> list[ServedKind]:
    """The gang-defining kinds the server serves, each in its preferred group and newest version."""
    calls = ApiCalls(api_client, timeout)
    served: list[ServedKind] = []
    for kind in GROUP_KINDS:
        found = None
        for group in kind.groups:
            for version in kind.versions:
                try:
                    resources = calls.get(f"/apis/{segment(group)}/{segment(version)}")
                except client.ApiException as error:
                    if error.status == 404:
                        continue
                    raise
                listed = resources.get("resources") if isinstance(resources, dict) else None
                names = {entry.get("name") for entry in listed or [] if isinstance(entry, dict)}
                if kind.plural in names:
                    found = ServedKind(kind, group, version)
                    break
            if found is not None:
                break
        if found is not None:
            served.append(found)
    return served


class GroupSync:
    def __init__(self, recorder: EventRecorder | None = None) -> None:
        self._recorder = recorder
        self._lock = threading.Lock()
        self._definitions: dict[GroupKey, GroupDefinition] = {}
        self._objects: dict[GroupKey, tuple[ServedKind, Mapping[str, Any]]] = {}
        self._members: dict[GroupKey, dict[str, str]] = {}
        self._member_of: dict[str, GroupKey] = {}
        self._apps: dict[str, GroupKey] = {}  # application id -> its group
        # PodSync.group_changed: read these pending pods again (their group came or changed)
        self.on_change: Callable[[list[str]], None] = lambda keys: None

    # -- the pods' conversion -------------------------------------------------------------
    def lookup(self, key: GroupKey) -> GroupDefinition | None:
        return self._definitions.get(key)

    # -- watch events ---------------------------------------------------------------------
    def handlers(
        self, served: ServedKind
    ) -> tuple[Callable[[Mapping[str, Any]], None], Callable[[Mapping[str, Any]], None]]:
        return (lambda obj: self.apply(served, obj)), (lambda obj: self.delete(served, obj))

    def apply(self, served: ServedKind, obj: Mapping[str, Any]) -> None:
        kind = served.kind
        key = kind.key(obj)
        with self._lock:
            before = self._definitions.get(key)
            definition = kind.definition(obj) if before is None or _changed(self._objects[key][1], obj) else before
            self._definitions[key] = definition
            self._objects[key] = (served, obj)
            waiting = [pod for pod, state in self._members.get(key, {}).items() if state == PENDING]
        if definition.problem and definition is not before:
            log.warning("%s refused: %s", kind.name, definition.problem)
            if self._recorder is not None:
                message = f"Herder cannot read this {kind.kind}; its pods wait: {definition.problem}"
                self._recorder.record(obj, kind.kind, served.api_version, REFUSED, message)
        if definition is not before and waiting:
            self.on_change(waiting)

    def delete(self, served: ServedKind, obj: Mapping[str, Any]) -> None:
        key = served.kind.key(obj)
        with self._lock:
            self._definitions.pop(key, None)
            self._objects.pop(key, None)

    def relist(self, served: ServedKind, objects: Iterable[Mapping[str, Any]], _began: float = 0.0) -> None:
        """A whole fresh listing of one kind: apply each object, forget those it no longer has."""
        items = list(objects)
        for obj in items:
            self.apply(served, obj)
        present = {served.kind.key(obj) for obj in items}
        with self._lock:
            gone = [key for key, (kind, _) in self._objects.items() if kind == served and key not in present]
        for key in gone:
            self.delete(served, {"metadata": {"namespace": key[2], "name": key[3]}})

    # -- the pods naming a group (PodSync tells) --------------------------------------------
    def member(self, pod: str, ref: GroupRef, application: str, state: str) -> None:
        with self._lock:
            key = ref.key
            previous = self._member_of.get(pod)
            if previous is not None and previous != key:
                self._forget_member(pod)
            self._members.setdefault(key, {})[pod] = state
            self._member_of[pod] = key
            self._apps[application] = key

    def gone(self, pod: str) -> None:
        with self._lock:
            self._forget_member(pod)

    def _forget_member(self, pod: str) -> None:
        key = self._member_of.pop(pod, None)
        if key is None:
            return
        members = self._members.get(key)
        if members is not None:
            members.pop(pod, None)
            if not members:
                del self._members[key]
                for app in [app for app, group in self._apps.items() if group == key]:
                    del self._apps[app]

    # -- readers: the status writer and the Events ------------------------------------------
    def states(self) -> list[GroupState]:
        """Every group object whose status Herder writes, with its pods' states."""
        with self._lock:
            found = []
            for key, (served, obj) in self._objects.items():
                if not served.kind.status:
                    continue
                gang = self._definitions[key].gangs.get("")
                found.append(
                    GroupState(
                        served.kind.api,
                        served.group,
                        served.version,
                        served.kind.plural,
                        obj,
                        gang.members if gang is not None else 0,
                        dict(self._members.get(key, {})),
                    )
                )
            return found

    def group_of(self, event: SchedulingEvent) -> ObjectRef | None:
        """The group object an event's pod (or application) belongs to, for its Events."""
        with self._lock:
            key = self._apps.get(event.object_id) if event.type == APPLICATION else self._member_of.get(event.object_id)
            found = self._objects.get(key) if key is not None else None
        if found is None:
            return None
        served, obj = found
        meta = meta_of(obj)
        return ObjectRef(
            served.kind.kind,
            str(meta.get("namespace") or "default"),
            str(meta.get("name") or ""),
            str(meta.get("uid") or ""),
            served.api_version,
        )

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {"groups": len(self._objects), "members": len(self._member_of)}


def _changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether the object's spec may have changed (its status alone changing reads nothing new)."""
    old, new = meta_of(before), meta_of(after)
    if old.get("generation") is not None and new.get("generation") is not None:
        return bool(old.get("generation") != new.get("generation"))
    return before.get("spec") != after.get("spec")
