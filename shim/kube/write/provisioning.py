"""Atomic scale-up for gangs: cluster-autoscaler's ProvisioningRequests, made and followed
(setting `autoscaling.provisioningRequests`, off by default; docs/autoscaling.md).

Once per pass (`status.interval`, on the status writers' thread, never the cycle's), while this
replica leads:

1. it asks discovery whether the API server serves autoscaling.x-k8s.io (again every
   `RECHECK` seconds while it does not: without cluster-autoscaler's CRD it writes nothing);
2. on its first pass it adopts the requests an earlier leader made (by their label), and on
   later ones reads their conditions (`Provisioned`, `Failed`, `BookingExpired`);
3. it follows `shim.autoscaling.plan_requests` on the core's gang needs: for a gang that lacks
   only nodes, one PodTemplate per task group still waiting for placeholders (a placeholder's
   pod, cut from the gang's originator pod), then the ProvisioningRequest (class
   best-effort-atomic-scale-up, a pod set per template with the count still waiting), then the
   gang's pods annotated as its consumers; when the gang reserved (it runs) or left, the
   request and its templates are deleted and the pods still waiting lose the annotations.

A request that failed stays: the gang's pods keep waiting and their condition's message says
why (`notes`); a request whose booking expired before the gang reserved is replaced, a few
times. Errors are logged and the pass retried; nothing is recorded that was not written.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Protocol

from core.config.settings import Settings
from core.scale_up import GangNeed, ScaleUpView
from shim.autoscaling import (
    MANAGED_BY,
    RequestState,
    adopted_request,
    consumer_annotations,
    plan_requests,
    request_conditions,
    request_manifest,
    request_name,
    template_name,
)
from shim.convert.objects import ConversionError, map_at, meta_of
from shim.placeholders import placeholder_template

log = logging.getLogger("herder.provisioning")

RECHECK = 300.0  # seconds between discovery checks while the API is not served


class ProvisioningCalls(Protocol):
    def served_version(self) -> str | None: ...
    def create_template(self, namespace: str, body: Mapping[str, Any]) -> None: ...
    def delete_template(self, namespace: str, name: str) -> None: ...
    def create_request(self, version: str, namespace: str, body: Mapping[str, Any]) -> None: ...
    def list_requests(self, version: str) -> list[Mapping[str, Any]]: ...
    def delete_request(self, version: str, namespace: str, name: str) -> None: ...
    def annotate_pod(self, namespace: str, name: str, annotations: Mapping[str, str | None]) -> None: ...


class ProvisioningWriter:
    def __init__(
        self,
        api: ProvisioningCalls,
        view: Callable[[], ScaleUpView],
        pod: Callable[[str], Mapping[str, Any] | None],
        settings: Callable[[], Settings],
        interval: Callable[[], float],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`view()` is Scheduler.scale_up_view, `pod(key)` the cached pod (KubeCache.pod)."""
        self._api = api
        self._view = view
        self._pod = pod
        self._settings = settings
        self._interval = interval
        self._clock = clock
        self._last: float | None = None
        self._version: str | None = None
        self._checked: float | None = None  # when discovery last said the API is not served
        self._adopted = False
        self._warned = False
        self.requests: dict[str, RequestState] = {}  # by application id
        self._notes: dict[str, str] = {}
        self.writes = 0

    def notes(self) -> Mapping[str, str]:
        """What each consumer pod's condition adds about its gang's request (a new mapping on change)."""
        return self._notes

    def tick(self, now: float | None = None) -> int:
        """One pass (at most once per interval); the writes made."""
        now = self._clock() if now is None else now
        if self._last is not None and now - self._last < self._interval():
            return 0
        self._last = now
        enabled = self._settings().provisioning_requests
        if not enabled and not self.requests:
            return 0
        version = self._served(now)
        if version is None:
            return 0
        made = 0
        try:
            self._read(version)
            view = self._view()
            plan = plan_requests(view.gangs, self.requests, enabled)
            for state in plan.delete:
                made += self._delete(version, state)
            for need, attempt in plan.create:
                made += self._create(version, need, attempt)
            made += self._annotate_newcomers(view)
            self._note(view)
        except Exception as error:  # the API server may be away: the next pass tries again
            log.warning("ProvisioningRequests: %s", error)
        self.writes += made
        return made

    # -- discovery and reading -------------------------------------------------------------
    def _served(self, now: float) -> str | None:
        if self._version is not None:
            return self._version
        if self._checked is not None and now - self._checked < RECHECK:
            return None
        try:
            self._version = self._api.served_version()
        except Exception as error:  # the API server may be away: asked again next pass
            log.debug("ProvisioningRequests: discovery failed: %s", error)
            return None
        if self._version is None:
            self._checked = now
            if not self._warned:
                self._warned = True
                log.warning(
                    "autoscaling.provisioningRequests is on, but the API server does not serve"
                    " autoscaling.x-k8s.io (install cluster-autoscaler's ProvisioningRequest CRD):"
                    " gangs get no ProvisioningRequest; looking again every %.0fs",
                    RECHECK,
                )
        else:
            log.info("ProvisioningRequests: autoscaling.x-k8s.io/%s is served", self._version)
        return self._version

    def _read(self, version: str) -> None:
        if self._adopted and not self.requests:
            return
        found = {
            (str(meta_of(obj).get("namespace")), str(meta_of(obj).get("name"))): obj
            for obj in self._api.list_requests(version)
            if (meta_of(obj).get("labels") or {}).get(MANAGED_BY) == "herder"
        }
        if not self._adopted:
            self._adopted = True
            for obj in found.values():
                state = adopted_request(obj)
                if state is not None and state.application_id not in self.requests:
                    self.requests[state.application_id] = state
                    log.info("ProvisioningRequests: adopted %s/%s", state.namespace, state.name)
            return
        for app_id, known in list(self.requests.items()):
            seen = found.get((known.namespace, known.name))
            if seen is None:  # deleted by someone else: made again if the gang still needs it
                del self.requests[app_id]
            else:
                known.read_conditions(request_conditions(seen))

    # -- writing ----------------------------------------------------------------------------
    def _create(self, version: str, need: GangNeed, attempt: int) -> int:
        originator = self._pod(need.originator)
        if originator is None:
            return 0
        settings = self._settings()
        namespace = need.namespace or str(meta_of(originator).get("namespace") or "default")
        name = request_name(namespace, need.application_id, attempt)
        templates: list[tuple[str, int]] = []
        try:
            for group, count in need.groups:
                template = template_name(name, group.name)
                body = placeholder_template(
                    originator,
                    need.application_id,
                    group.name,
                    settings.placeholder_image,
                    settings.scheduler_name,
                    template,
                )
                body["metadata"]["labels"] = {MANAGED_BY: "herder"}
                templates.append((template, count))
                _tolerate_conflict(partial(self._api.create_template, namespace, body))
        except ConversionError as error:
            log.warning("ProvisioningRequests: gang %s: %s", need.application_id, error)
            return 0
        request = request_manifest(version, namespace, name, need.application_id, templates)
        try:
            _tolerate_conflict(partial(self._api.create_request, version, namespace, request))
        except Exception:
            for template, _ in templates:
                _tolerate_missing(partial(self._api.delete_template, namespace, template))
            raise
        state = RequestState(need.application_id, namespace, name, attempt, tuple(t for t, _ in templates))
        self.requests[need.application_id] = state
        log.info("ProvisioningRequests: %s/%s made for gang %s", namespace, name, need.application_id)
        annotated = []
        for key in need.pods:
            if self._annotate(key, name):
                annotated.append(key)
        state.pods = tuple(annotated)
        return 1 + len(templates) + len(annotated)

    def _delete(self, version: str, state: RequestState) -> int:
        _tolerate_missing(partial(self._api.delete_request, version, state.namespace, state.name))
        for template in state.templates:
            _tolerate_missing(partial(self._api.delete_template, state.namespace, template))
        made = 1 + len(state.templates)
        for key in state.pods:  # a pod still waiting must not point at a request that is gone
            pod = self._pod(key)
            if pod is not None and not map_at(pod, "spec").get("nodeName") and self._annotate(key, None):
                made += 1
        del self.requests[state.application_id]
        log.info("ProvisioningRequests: %s/%s deleted", state.namespace, state.name)
        return made

    def _annotate_newcomers(self, view: ScaleUpView) -> int:
        """Pods of a gang with a request that do not say so yet (come later, or after a restart)."""
        made = 0
        for need in view.gangs:
            state = self.requests.get(need.application_id)
            if state is None:
                continue
            missing = [key for key in need.pods if key not in state.pods]
            annotated = [key for key in missing if self._annotate(key, state.name)]
            if annotated:
                state.pods = (*state.pods, *annotated)
                made += len(annotated)
        return made

    def _annotate(self, key: str, request: str | None) -> bool:
        pod = self._pod(key)
        if pod is None:
            return False
        meta = meta_of(pod)
        try:
            self._api.annotate_pod(str(meta.get("namespace")), str(meta.get("name")), consumer_annotations(request))
        except Exception as error:
            if getattr(error, "status", None) != 404:
                log.warning("ProvisioningRequests: could not annotate pod %s: %s", key, error)
            return False
        return True

    def _note(self, view: ScaleUpView) -> None:
        notes = {}
        for need in view.gangs:
            state = self.requests.get(need.application_id)
            if state is not None:
                for key in need.pods:
                    notes[key] = state.note()
        if notes != self._notes:
            self._notes = notes


def _tolerate_conflict(call: Callable[[], None]) -> None:
    """Create: 409 means it is there already (an earlier pass or leader made it)."""
    try:
        call()
    except Exception as error:
        if getattr(error, "status", None) != 409:
            raise


def _tolerate_missing(call: Callable[[], None]) -> None:
    """Delete: 404 means it is gone already."""
    try:
        call()
    except Exception as error:
        if getattr(error, "status", None) != 404:
            raise
