"""StorageClasses, PersistentVolumes and PersistentVolumeClaims to the core, and which claims are bound.

Each kind is watched by a reflector (shim/kube/watch/reflector.py) like pods and nodes; every
event is converted (shim/convert/storage.py) and given to the core, which tries the pods waiting
on a claim again when something changed. An object that cannot be read keeps the last good
state and is reported with a Kubernetes Event naming the field (a claim that cannot be read
makes its pods wait with that reason instead). The volume binder (shim/kube/write/volumes.py)
asks `claim_bound` while it waits for the claims it wrote to bind.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from core.scheduler import Scheduler
from shim.convert.objects import ConversionError, meta_of
from shim.convert.storage import claim_from, claim_key, storage_class_from, volume_from
from shim.kube.write.recorder import EventRecorder

log = logging.getLogger("herder.storage")

REFUSED = "StorageObjectRefused"
CLASSES, VOLUMES, CLAIMS = "storageclasses", "persistentvolumes", "persistentvolumeclaims"
PATHS = {
    CLASSES: "/apis/storage.k8s.io/v1/storageclasses",
    VOLUMES: "/api/v1/persistentvolumes",
    CLAIMS: "/api/v1/persistentvolumeclaims",
}
_KINDS = {
    CLASSES: ("StorageClass", "storage.k8s.io/v1"),
    VOLUMES: ("PersistentVolume", "v1"),
    CLAIMS: ("PersistentVolumeClaim", "v1"),
}


def _name(obj: Mapping[str, Any]) -> str:
    return str(meta_of(obj).get("name") or "")


def _key(plural: str, obj: Mapping[str, Any]) -> str:
    if plural == CLAIMS:
        return claim_key(str(meta_of(obj).get("namespace") or "default"), _name(obj))
    return _name(obj)


class StorageSync:
    def __init__(self, scheduler: Scheduler, recorder: EventRecorder | None) -> None:
        self._scheduler = scheduler
        self._recorder = recorder
        self._lock = threading.Lock()
        self._known: dict[str, set[str]] = {plural: set() for plural in PATHS}
        self._bound: dict[str, str] = {}  # claim key -> volume name, for bound claims

    def handlers(self, plural: str) -> tuple[Callable[[Mapping[str, Any]], None], Callable[[Mapping[str, Any]], None]]:
        return (lambda obj: self.apply(plural, obj)), (lambda obj: self.delete(plural, obj))

    def apply(self, plural: str, obj: Mapping[str, Any]) -> None:
        try:
            if plural == CLASSES:
                self._scheduler.update_storage_class(storage_class_from(obj))
            elif plural == VOLUMES:
                self._scheduler.update_volume(volume_from(obj))
            else:
                claim = claim_from(obj)
                with self._lock:
                    if claim.volume_name and (obj.get("status") or {}).get("phase") == "Bound":
                        self._bound[claim.key] = claim.volume_name
                    else:
                        self._bound.pop(claim.key, None)
                self._scheduler.update_claim(claim)
                if claim.problem:
                    self._refuse(plural, obj, claim.problem)
        except ConversionError as error:
            self._refuse(plural, obj, str(error))
            return
        with self._lock:
            self._known[plural].add(_key(plural, obj))

    def _refuse(self, plural: str, obj: Mapping[str, Any], problem: str) -> None:
        kind, version = _KINDS[plural]
        message = f"{kind} {_key(plural, obj)} refused, Herder keeps the last state it could read (if any): {problem}"
        log.warning("%s", message)
        if self._recorder is not None:
            self._recorder.record(obj, kind, version, REFUSED, message)

    def delete(self, plural: str, obj: Mapping[str, Any]) -> None:
        key = _key(plural, obj)
        with self._lock:
            self._known[plural].discard(key)
            self._bound.pop(key, None)
        if plural == CLASSES:
            self._scheduler.remove_storage_class(key)
        elif plural == VOLUMES:
            self._scheduler.remove_volume(key)
        else:
            self._scheduler.remove_claim(key)

    def relist(self, plural: str, listed: Iterable[Mapping[str, Any]]) -> None:
        """A whole fresh listing: apply each object, forget those it no longer has."""
        items = list(listed)
        for obj in items:
            self.apply(plural, obj)
        present = {_key(plural, obj) for obj in items}
        with self._lock:
            gone = self._known[plural] - present
        for key in gone:
            namespace, _, name = key.rpartition("/")
            self.delete(plural, {"metadata": {"name": name, "namespace": namespace or None}})

    def claim_bound(self, key: str) -> bool:
        with self._lock:
            return key in self._bound
