"""Writing the core's quota figures back onto the ElasticQuota objects, as Koordinator does.

`status.used` and the annotations `quota.scheduling.koordinator.sh/runtime` and `.../request`
(JSON resource lists) carry what the core computed, in Kubernetes units: the core's `vcore`
millicores become `cpu` quantities (`1500m`, `2`), memory and every other resource whole
numbers (memory in bytes). Every resource the quota's max names is listed, zeros included.

The writer is rate limited (one pass per `status.interval`) and writes a quota only when its
figures changed since the last write; on first sight of a quota it reads what an earlier
leader left there, so a restart or a failover rewrites nothing that is already right. Status
goes to the status subresource, the annotations to the object's metadata, both as merge patches.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from core.elastic.manager import QuotaStatus
from core.elastic.spec import DEFAULT_QUOTA, SYSTEM_QUOTA
from core.resources import VCORE
from shim.convert.quotas import ANNOTATION_REQUEST, ANNOTATION_RUNTIME

log = logging.getLogger("herder.status")


class QuotaApi(Protocol):
    def read_quota(self, namespace: str, name: str) -> Mapping[str, Any]: ...
    def patch_quota_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None: ...
    def patch_quota(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None: ...


def kube_quantities(values: Mapping[str, int], keys: tuple[str, ...] = ()) -> dict[str, str]:
    """Core amounts as a Kubernetes resource list; `keys` are listed even when zero."""
    out: dict[str, str] = {}
    for key in sorted({*values, *keys}):
        amount = int(values.get(key, 0))
        if key == VCORE:
            out["cpu"] = str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
        else:
            out[key] = str(amount)
    return out


def _resource_json(values: Mapping[str, str]) -> str:
    return json.dumps(dict(values), sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class QuotaReport:
    """What Herder shows on one ElasticQuota."""

    used: Mapping[str, str]
    runtime: str
    request: str

    @staticmethod
    def of(status: QuotaStatus) -> QuotaReport:
        keys = tuple(status.max)
        return QuotaReport(
            used=kube_quantities(status.used, keys),
            runtime=_resource_json(kube_quantities(status.runtime, keys)),
            request=_resource_json(kube_quantities(status.request, keys)),
        )

    @staticmethod
    def on(obj: Mapping[str, Any]) -> QuotaReport:
        """What the object shows now (as written by Herder or anyone else)."""
        status = obj.get("status") if isinstance(obj.get("status"), Mapping) else {}
        used = status.get("used") if isinstance(status, Mapping) else None
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        return QuotaReport(
            used={str(k): str(v) for k, v in used.items()} if isinstance(used, Mapping) else {},
            runtime=str(annotations.get(ANNOTATION_RUNTIME, "")),
            request=str(annotations.get(ANNOTATION_REQUEST, "")),
        )


def _used_patch(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, Any]:
    """A merge patch turning `before` into `after` (a resource no longer listed is removed)."""
    used: dict[str, Any] = {key: None for key in before if key not in after}
    used.update(after)
    return {"status": {"used": used}}


class QuotaStatusWriter:
    def __init__(
        self,
        api: QuotaApi,
        statuses: Callable[[], Mapping[str, QuotaStatus]],
        namespaces: Callable[[], Mapping[str, str]],
        interval: Callable[[], float],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`statuses` is Scheduler.quota_status; `namespaces()` maps each quota the core holds to the
        namespace of its object; `interval` gives the current `status.interval`."""
        self._api = api
        self._statuses = statuses
        self._namespaces = namespaces
        self._interval = interval
        self._clock = clock
        self._last: float | None = None
        self._written: dict[tuple[str, str], QuotaReport] = {}
        self.writes = 0

    def tick(self, now: float | None = None) -> int:
        """Write the quotas whose figures changed, at most once per interval; returns the writes made."""
        now = self._clock() if now is None else now
        if self._last is not None and now - self._last < self._interval():
            return 0
        self._last = now
        made = 0
        seen: set[tuple[str, str]] = set()
        namespaces = self._namespaces()
        for name, status in self._statuses().items():
            namespace = namespaces.get(name)
            if namespace is None or name in (SYSTEM_QUOTA, DEFAULT_QUOTA):
                continue
            seen.add((namespace, name))
            made += self._write(namespace, name, QuotaReport.of(status))
        for gone in set(self._written) - seen:
            del self._written[gone]
        self.writes += made
        return made

    def _current(self, namespace: str, name: str) -> QuotaReport | None:
        known = self._written.get((namespace, name))
        if known is not None:
            return known
        try:
            return QuotaReport.on(self._api.read_quota(namespace, name))
        except Exception as error:
            log.debug("could not read ElasticQuota %s/%s before writing its status: %s", namespace, name, error)
            return None

    def _write(self, namespace: str, name: str, wanted: QuotaReport) -> int:
        current = self._current(namespace, name)
        made = 0
        try:
            if current is None or current.used != wanted.used:
                self._api.patch_quota_status(namespace, name, _used_patch(current.used if current else {}, wanted.used))
                made += 1
            if current is None or (current.runtime, current.request) != (wanted.runtime, wanted.request):
                annotations = {ANNOTATION_RUNTIME: wanted.runtime, ANNOTATION_REQUEST: wanted.request}
                self._api.patch_quota(namespace, name, {"metadata": {"annotations": annotations}})
                made += 1
        except Exception as error:
            # Kept unwritten: the next pass tries again (a 404 means the quota is being deleted).
            self._written.pop((namespace, name), None)
            if getattr(error, "status", None) != 404:
                log.warning("could not write the status of ElasticQuota %s/%s: %s", namespace, name, error)
            return made
        self._written[(namespace, name)] = wanted
        return made
