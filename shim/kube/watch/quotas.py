"""ElasticQuota objects to the core's quota tree, with refusals said on the object.

The core validates every change and keeps its old tree when one is invalid; this module turns
such a refusal into a Kubernetes Event on the ElasticQuota. Watches deliver objects in any
order, so a child may arrive before its parent: a refused quota is tried again whenever
another one is accepted, and only the verdict after that settles is reported. A deleted quota
the core still needs (pods or children use it) is removed as soon as it no longer is.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from core.elastic.spec import ElasticQuotaSpec
from core.scheduler import Scheduler
from shim.convert.objects import ConversionError
from shim.convert.quotas import quota_to_spec
from shim.kube.write.recorder import EventRecorder

log = logging.getLogger("herder.quotas")

REFUSED = "QuotaRefused"
KIND, API_VERSION = "ElasticQuota", "scheduling.sigs.k8s.io/v1alpha1"


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _where(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


class QuotaSync:
    def __init__(self, scheduler: Scheduler, recorder: EventRecorder | None) -> None:
        self._scheduler = scheduler
        self._recorder = recorder
        self._lock = threading.RLock()
        self._applied: dict[str, ElasticQuotaSpec] = {}
        self._refused: dict[str, tuple[Mapping[str, Any], str]] = {}  # name -> (object, why)
        self._removing: set[str] = set()

    def applied(self) -> dict[str, ElasticQuotaSpec]:
        with self._lock:
            return dict(self._applied)

    def refused(self) -> dict[str, str]:
        with self._lock:
            return {name: why for name, (_, why) in self._refused.items()}

    def removing(self) -> set[str]:
        """Deleted quotas the core keeps while pods or children still use them."""
        with self._lock:
            return set(self._removing)

    def apply(self, obj: Mapping[str, Any]) -> None:
        with self._lock:
            self._removing.discard(_name(obj))
            if self._try(obj):
                self._settle()
            else:
                self._settle()
                self._report(_name(obj))

    def apply_all(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """The start-up listing: parents and children in any order, refusals said once settled."""
        with self._lock:
            for obj in objects:
                self._try(obj)
            self._settle()
            for name in list(self._refused):
                self._report(name)

    def delete(self, obj: Mapping[str, Any]) -> None:
        name = _name(obj)
        with self._lock:
            self._refused.pop(name, None)
            if name not in self._applied:
                return
            try:
                self._scheduler.remove_quota(name)
            except ValueError as error:
                log.info("ElasticQuota %s deleted; kept until nothing uses it: %s", _where(obj), error)
                self._removing.add(name)
                return
            del self._applied[name]
            log.info("ElasticQuota %s removed", _where(obj))
            self._settle()

    def retry(self) -> None:
        """Housekeeping: finish deletions the core refused while pods or children used the quota."""
        with self._lock:
            for name in sorted(self._removing):
                try:
                    self._scheduler.remove_quota(name)
                except ValueError:
                    continue
                self._removing.discard(name)
                self._applied.pop(name, None)
                log.info("ElasticQuota %s removed now that nothing uses it", name)

    # -- internals ---------------------------------------------------------------------------
    def _try(self, obj: Mapping[str, Any]) -> bool:
        name = _name(obj)
        try:
            spec = quota_to_spec(obj)
        except ConversionError as error:
            self._refused[name] = (obj, str(error))
            return False
        if self._applied.get(name) == spec:
            self._refused.pop(name, None)
            return True
        try:
            self._scheduler.update_quota(spec)
        except ValueError as error:
            self._refused[name] = (obj, str(error))
            return False
        self._applied[name] = spec
        if self._refused.pop(name, None) is not None and self._recorder is not None:
            self._recorder.forget(obj, KIND)
        log.info("ElasticQuota %s applied (min %s, max %s)", _where(obj), dict(spec.min), dict(spec.max))
        return True

    def _settle(self) -> None:
        """Try refused quotas again until no more of them are accepted (parents may have arrived)."""
        progress = True
        while progress and self._refused:
            progress = False
            for obj, _ in list(self._refused.values()):
                if self._try(obj):
                    progress = True

    def _report(self, name: str) -> None:
        refused = self._refused.get(name)
        if refused is None:
            return
        obj, why = refused
        message = f"ElasticQuota {_where(obj)} refused, the previous quota tree is kept: {why}"
        log.warning("%s", message)
        if self._recorder is not None:
            self._recorder.record(obj, KIND, API_VERSION, REFUSED, message)
