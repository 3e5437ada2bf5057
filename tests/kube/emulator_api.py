"""kmock's Kubernetes emulator, completed with what a scheduler needs from an API server.

kmock 0.8 stores objects and serves list/watch/get/create/patch/delete, but assigns no uid,
resourceVersion or creationTimestamp, cannot parse `/api/v1/namespaces`, has no binding or
eviction subresources and no optimistic concurrency (../shared/reference/kopf-kmock.md). This
module adds them the way the real API server behaves:

- create: uid, creationTimestamp, resourceVersion, the namespace from the URL, `generateName`;
  a pod created with `spec.nodeName` starts Running (as the kubelet would make it);
- patch: a `metadata.resourceVersion` in the body must match the stored one (409 otherwise);
  every write gets a new resourceVersion;
- `pods/{name}/binding`: 409 when the pod is already bound or the Binding's `metadata.uid`
  names another pod of that name, else sets `spec.nodeName` (and the
  kubelet's Running phase); faults (5xx, timeouts) can be injected at a chosen rate, and a
  binding can be committed and then its response dropped (the connection closed) or held
  past the client's timeout (`BindingFaults.lost_rate`);
- an overloaded server (`ApiLoad`): a share of requests answered 1-3 s late, a share answered
  500 or 429 having done nothing, and MODIFIED watch events delivered late;
- `pods/{name}/eviction`: deletes the pod unless a "PodDisruptionBudget" protects it (429);
- deleting a namespace deletes what lives in it (pods first, as the garbage collector would);
- pods and ElasticQuotas go through Herder's admission webhooks when they are registered
  (tests/kube/emulator_admission.py), as the API server calls them;
- an object named in the URL (read, create, update, delete) is found by its key, as the API
  server's storage finds it; kmock compared every stored object with the request, so with
  10,000 pods stored each Event, Lease renewal or ConfigMap read cost the emulator as much as
  a dozen bindings;
- a listing carries the current resourceVersion and is paged with `limit`/`continue` (every page cut
  from the first page's snapshot); tests can end every open watch of a kind
  (`end_watches`, as an API server restart or a load balancer does) and make versions
  expire (`expire_versions`: a watch from an older one gets a 410 Gone ERROR event). A watch
  still replays every object as ADDED first, whatever resourceVersion it asks for (kmock).

Every mutation goes through kmock's own code path so watchers see ADDED/MODIFIED/DELETED.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import random
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import aiohttp.web
import attrs
import kmock
from kmock._internal import enums, parsing, rendering

from tests.kube.emulator_admission import WebhookRoute, admit, status, status_body

PODS = kmock.resource("", "v1", "pods")
NODES = kmock.resource("", "v1", "nodes")
NAMESPACES = kmock.resource("", "v1", "namespaces")
CONFIGMAPS = kmock.resource("", "v1", "configmaps")
EVENTS = kmock.resource("", "v1", "events")
NEW_EVENTS = kmock.resource("events.k8s.io", "v1", "events")
LEASES = kmock.resource("coordination.k8s.io", "v1", "leases")
QUOTAS = kmock.resource("scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas")
PRIORITY_CLASSES = kmock.resource("scheduling.k8s.io", "v1", "priorityclasses")
DEPLOYMENTS = kmock.resource("apps", "v1", "deployments")
STATEFULSETS = kmock.resource("apps", "v1", "statefulsets")
CLAIMS = kmock.resource("", "v1", "persistentvolumeclaims")
VOLUMES = kmock.resource("", "v1", "persistentvolumes")
STORAGE_CLASSES = kmock.resource("storage.k8s.io", "v1", "storageclasses")
# cluster-autoscaler's API, served only by an emulator made with `autoscaling=True`
PROVISIONING_REQUESTS = kmock.resource("autoscaling.x-k8s.io", "v1", "provisioningrequests")
POD_TEMPLATES = kmock.resource("", "v1", "podtemplates")
BUDGETS = kmock.resource("policy", "v1", "poddisruptionbudgets")

_READ_WRITE = ["get", "list", "watch", "create", "patch", "update", "delete"]
RESOURCES: dict[Any, kmock.ResourceInfo] = {
    PODS: kmock.ResourceInfo(
        kind="Pod", namespaced=True, verbs=_READ_WRITE, subresources=["binding", "eviction", "status"]
    ),
    NODES: kmock.ResourceInfo(kind="Node", namespaced=False, verbs=_READ_WRITE, subresources=["status"]),
    NAMESPACES: kmock.ResourceInfo(kind="Namespace", namespaced=False, verbs=_READ_WRITE),
    CONFIGMAPS: kmock.ResourceInfo(kind="ConfigMap", namespaced=True, verbs=_READ_WRITE),
    EVENTS: kmock.ResourceInfo(kind="Event", namespaced=True, verbs=_READ_WRITE),
    NEW_EVENTS: kmock.ResourceInfo(kind="Event", namespaced=True, verbs=_READ_WRITE),
    LEASES: kmock.ResourceInfo(kind="Lease", namespaced=True, verbs=_READ_WRITE),
    QUOTAS: kmock.ResourceInfo(
        kind="ElasticQuota", namespaced=True, verbs=_READ_WRITE, subresources=["status"], shortnames=["eq"]
    ),
    PRIORITY_CLASSES: kmock.ResourceInfo(kind="PriorityClass", namespaced=False, verbs=_READ_WRITE),
    DEPLOYMENTS: kmock.ResourceInfo(kind="Deployment", namespaced=True, verbs=_READ_WRITE, subresources=["status"]),
    STATEFULSETS: kmock.ResourceInfo(kind="StatefulSet", namespaced=True, verbs=_READ_WRITE, subresources=["status"]),
    CLAIMS: kmock.ResourceInfo(
        kind="PersistentVolumeClaim", namespaced=True, verbs=_READ_WRITE, subresources=["status"], shortnames=["pvc"]
    ),
    VOLUMES: kmock.ResourceInfo(
        kind="PersistentVolume", namespaced=False, verbs=_READ_WRITE, subresources=["status"], shortnames=["pv"]
    ),
    STORAGE_CLASSES: kmock.ResourceInfo(kind="StorageClass", namespaced=False, verbs=_READ_WRITE, shortnames=["sc"]),
    BUDGETS: kmock.ResourceInfo(
        kind="PodDisruptionBudget", namespaced=True, verbs=_READ_WRITE, subresources=["status"], shortnames=["pdb"]
    ),
}
AUTOSCALING: dict[Any, kmock.ResourceInfo] = {
    PROVISIONING_REQUESTS: kmock.ResourceInfo(
        kind="ProvisioningRequest", namespaced=True, verbs=_READ_WRITE, subresources=["status"], shortnames=["provreq"]
    ),
    POD_TEMPLATES: kmock.ResourceInfo(kind="PodTemplate", namespaced=True, verbs=_READ_WRITE),
}
# What a namespace deletion takes with it: workloads first (no pod is made again), then pods so
# quotas are no longer in use.
NAMESPACED_ORDER = (DEPLOYMENTS, STATEFULSETS, PODS, CLAIMS, QUOTAS, BUDGETS, CONFIGMAPS, EVENTS, NEW_EVENTS, LEASES)

_original_parse_path = parsing.parse_path


def _parse_path(path: str) -> parsing.ParsedPath:
    """kmock reads `/api/v1/namespaces[/name]` as a namespace prefix; read it as the resource."""
    parts = path.strip("/").split("/")
    if parts[:3] == ["api", "v1", "namespaces"] and (
        len(parts) <= 4 or (len(parts) == 5 and parts[4] in ("status", "finalize"))
    ):
        name = parts[3] if len(parts) >= 4 else None
        sub = parts[4] if len(parts) == 5 else None
        return parsing.ParsedPath("", "v1", "namespaces", None, name, sub)
    return _original_parse_path(path)


parsing.parse_path = _parse_path


def now_rfc3339() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class BindingFaults:
    """Injected failures on pods/binding: `rate` of requests fail, half as 5xx, half as timeouts.

    A timeout holds the response for `delay` seconds (longer than the client waits); whether
    the binding was applied before the client gave up is random, as with a real slow server.
    """

    rate: float = 0.0
    delay: float = 1.5
    seed: int = 7
    lost_rate: float = 0.0  # bindings committed whose response is then dropped or held too long
    kinds: tuple[str, ...] = ("error", "timeout-applied", "timeout-lost")  # what a fault is
    _random: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def draw(self) -> str | None:
        if self.rate <= 0 or self._random.random() >= self.rate:
            return None
        return self._random.choice(self.kinds)

    def draw_lost(self) -> str | None:
        """After a commit: "dropped" (the connection closes, no answer), "late" (the answer comes
        after the client gave up) or None (answered)."""
        if self.lost_rate <= 0 or self._random.random() >= self.lost_rate:
            return None
        return self._random.choice(("dropped", "late"))


@dataclass
class ApiLoad:
    """An overloaded API server: `slow_rate` of requests (watch streams excepted) answered after a
    delay drawn from [slow_min, slow_max] s, and `error_rate` answered 500 or 429 having done
    nothing (as an apiserver under priority-and-fairness pressure does)."""

    slow_rate: float = 0.0
    slow_min: float = 1.0
    slow_max: float = 3.0
    error_rate: float = 0.0
    seed: int = 11
    clients: str = "herder/"  # whose requests suffer (by User-Agent): the tests' own client does not
    _random: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def draw(self) -> tuple[float, int | None]:
        """(seconds to wait, status to answer instead of doing the request or None)."""
        delay = 0.0
        if self.slow_rate > 0 and self._random.random() < self.slow_rate:
            delay = self._random.uniform(self.slow_min, self.slow_max)
        error = None
        if self.error_rate > 0 and self._random.random() < self.error_rate:
            error = self._random.choice((500, 429))
        return delay, error


class DroppedResponse(aiohttp.web.StreamResponse):
    """No answer at all: the connection is closed under the client (a proxy or an apiserver
    restarting after it committed the request)."""

    async def prepare(self, request: aiohttp.web.BaseRequest) -> None:
        if request.transport is not None:
            request.transport.abort()
        raise ConnectionResetError("the emulator dropped this response")


def _uid_mismatch(binding: Any, stored: Any) -> bool:
    """A Binding naming a uid (a precondition) for a pod that now has another one."""
    wanted = ((binding or {}).get("metadata") or {}).get("uid") if isinstance(binding, Mapping) else None
    return bool(wanted) and wanted != (stored.get("metadata") or {}).get("uid")


@dataclass(frozen=True, slots=True)
class BindingRecord:
    namespace: str
    name: str
    node: str
    code: int


_KEEP_REQUESTS = 16  # bindings kmock logs before the log is cut (a longer log slowed every request)
_END_OF_WATCH = "END-OF-WATCH"  # put on a watch bus to end the streams reading it
_OPERATIONS = {enums.action.CREATE: "CREATE", enums.action.UPDATE: "UPDATE", enums.action.DELETE: "DELETE"}


@attrs.define(kw_only=True)
class HerderEmulator(kmock.KubernetesEmulator):
    """The emulator with the API server behaviour listed in the module docstring."""

    faults: BindingFaults = attrs.field(factory=BindingFaults)
    autoscaling: bool = False  # serve cluster-autoscaler's ProvisioningRequests (and PodTemplates)
    load: ApiLoad = attrs.field(factory=ApiLoad)
    protected: set[tuple[str, str]] = attrs.field(factory=set)  # (namespace, pod) a PDB protects
    bindings: list[BindingRecord] = attrs.field(factory=list)
    webhook_url: str | None = None  # base URL of Herder's admission webhook server (a Service)
    webhooks: list[WebhookRoute] = attrs.field(factory=list)  # what the webhook configurations route there
    users: dict[str, dict[str, Any]] = attrs.field(factory=dict)  # bearer token -> userInfo
    audit: list[tuple[str, str, str]] = attrs.field(factory=list)  # (method, path, user agent) of writes
    refused: set[int] = attrs.field(factory=set)  # indexes in `audit` of writes answered with an error
    watches: list[tuple[str, dict[str, str]]] = attrs.field(factory=list)  # (plural, query) per watch
    expired_before: dict[str, int] = attrs.field(factory=dict)  # plural -> oldest version still kept
    _versions: Any = attrs.field(factory=lambda: itertools.count(1))
    _version: int = 0
    _writes: asyncio.Lock | None = attrs.field(default=None)
    _in_flight: dict[int, rendering.Request] = attrs.field(factory=dict)  # id() -> request being served
    # continue token -> (version, items) of a paged listing still being read
    _list_snapshots: dict[str, tuple[str, list[Any]]] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        for resource, info in RESOURCES.items():
            self.resources[resource] = info
        if self.autoscaling:
            for resource, info in AUTOSCALING.items():
                self.resources[resource] = info

    def _KubernetesEmulator__get_obj(self, request: rendering.Request, strict: bool) -> Any:
        """The stored object a request names, by its key (kmock's own, name-mangled, compares every
        stored object with the request). kmock's writes find the object by the same key."""
        if strict and request.resource is not None and request.name is not None:
            return self._objects._objects.get((request.resource, request.namespace, request.name))
        return super()._KubernetesEmulator__get_obj(request, strict)  # type: ignore[misc]

    # -- request routing --------------------------------------------------------------------
    async def _handle(self, request: rendering.Request) -> aiohttp.web.StreamResponse:
        method = str(request.method.value)
        audited = None
        if method not in ("GET", "HEAD", "OPTIONS"):
            audited = len(self.audit)
            self.audit.append((method, str(request.url.path), str(request.headers.get("User-Agent", ""))))
        # A binding or an eviction is served here and never reaches kmock's reactions, so it
        # is not kept in kmock's request log (see `_forget_old_requests`).
        reaches_kmock = not (request.subresource in ("binding", "eviction") and method == "POST")
        if reaches_kmock:
            self._in_flight[id(request)] = request
            self._forget_old_requests()
        elif len(self._requests) > _KEEP_REQUESTS:
            self._forget_old_requests()
        try:
            response = await self._route(request)
            if audited is not None and response.status >= 400:
                self.refused.add(audited)
            return response
        finally:
            if reaches_kmock:
                del self._in_flight[id(request)]

    def _forget_old_requests(self) -> None:
        """kmock matches a request against its reactions by looking for it, by identity, in every
        reaction's filtered view of all requests received so far (each criterion checked on each
        logged request), so the log keeps only the requests being served that will reach kmock: a
        create waits for the admission webhook, and one dropped meanwhile would match no reaction
        when it reaches kmock. A longer log made every Lease renewal or ConfigMap read in a burst
        of bindings cost the emulator milliseconds."""
        self._requests[:] = [request for request in self._requests if id(request) in self._in_flight]

    async def _route(self, request: rendering.Request) -> aiohttp.web.StreamResponse:
        if request.action != enums.action.WATCH and str(request.headers.get("User-Agent", "")).startswith(
            self.load.clients
        ):
            delay, error = self.load.draw()
            if delay:
                await asyncio.sleep(delay)
            if error is not None:
                reason = "TooManyRequests" if error == 429 else "InternalError"
                return status(error, reason, "injected load: the server is overloaded")
        if request.resource is None or request.action in (enums.action.LIST, enums.action.WATCH):
            return await super()._handle(request)
        if request.action == enums.action.FETCH:
            return await super()._handle(request)
        if self._writes is None:
            self._writes = asyncio.Lock()
        if request.resource == PODS and request.subresource == "binding" and request.method == "POST":
            return await self._bind(request)
        if request.resource == PODS and request.subresource == "eviction" and request.method == "POST":
            return await self._evict(request)
        operation = _OPERATIONS.get(request.action)
        if operation is not None:
            refused = await admit(self, request, operation)
            if refused is not None:
                return refused
        async with self._writes:
            if request.action == enums.action.CREATE:
                self._stamp_new(request)
            elif request.action == enums.action.UPDATE:
                conflict = self._check_version(request)
                if conflict is not None:
                    return conflict
                self._stamp_update(request)
            elif request.action == enums.action.DELETE and request.resource == NAMESPACES:
                await self._delete_contents(str(request.name))
            return await super()._handle(request)

    # -- create / update bookkeeping --------------------------------------------------------
    def _next_version(self) -> str:
        self._version = next(self._versions)
        return str(self._version)

    # -- watches ----------------------------------------------------------------------------
    async def _serve_list(self, request: rendering.Request) -> rendering.Payload:
        limit = int(request.params.get("limit") or 0)
        token = request.params.get("continue") or ""
        snapshot = self._list_snapshots.get(token) if token else None
        if snapshot is None:
            listing: Any = await super()._serve_list(request)
            snapshot = (str(self._version), listing["items"])
        if limit <= 0:
            return {"metadata": {"resourceVersion": snapshot[0]}, "items": snapshot[1]}
        # Paged as the API server pages (`limit`, `continue`), every page from the snapshot the
        # first one was cut from: the token names it and where the next page starts.
        version, items = snapshot
        offset = int(token.rsplit(":", 1)[1]) if token else 0
        page: dict[str, Any] = {"metadata": {"resourceVersion": version}, "items": items[offset : offset + limit]}
        if offset + limit < len(items):
            following = f"{id(items)}:{offset + limit}"
            self._list_snapshots.pop(token, None)
            self._list_snapshots[following] = snapshot
            while len(self._list_snapshots) > 64:  # listings abandoned half way
                del self._list_snapshots[next(iter(self._list_snapshots))]
            page["metadata"]["continue"] = following
            page["metadata"]["remainingItemCount"] = len(items) - offset - limit
        else:
            self._list_snapshots.pop(token, None)
        return page

    async def _serve_watch(self, request: rendering.Request) -> AsyncIterator[rendering.Payload]:
        plural = request.resource.plural if request.resource is not None else ""
        self.watches.append((plural, dict(request.params)))
        since = str(request.params.get("resourceVersion") or "")
        if since.isdigit() and int(since) < self.expired_before.get(plural, 0):
            yield b""
            yield {"type": "ERROR", "object": status_body(410, "Expired", f"too old resource version: {since}")}
            return
        lagging = str(request.headers.get("User-Agent", "")).startswith(self.load.clients)
        async for payload in super()._serve_watch(request):
            if isinstance(payload, Mapping) and payload.get("type") == _END_OF_WATCH:
                return
            if lagging and isinstance(payload, Mapping) and payload.get("type") == "MODIFIED":
                delay, _ = self.load.draw()
                if delay:
                    await asyncio.sleep(delay)  # an overloaded server's watch falls behind
            yield payload

    async def end_watches(self, resource: Any) -> None:
        """Close every open watch stream of `resource` (the clients must reconnect)."""
        await self._buses[resource].put({"type": _END_OF_WATCH, "object": {}})

    def expire_versions(self, resource: Any) -> None:
        """Compact the history: a watch from any version older than the next write's gets 410 Gone."""
        self._next_version()  # as the writes of other kinds move the store's version on
        self.expired_before[resource.plural] = self._version

    def _stamp_new(self, request: rendering.Request) -> None:
        data = request.data
        if not isinstance(data, dict):
            return
        meta = data.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = f"{meta['generateName']}{uuid.uuid4().hex[:5]}"
        if request.namespace and not meta.get("namespace"):
            meta["namespace"] = request.namespace
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        meta["resourceVersion"] = self._next_version()
        if request.resource == PODS:
            spec = data.setdefault("spec", {})
            spec.setdefault("schedulerName", "default-scheduler")
            state = data.setdefault("status", {})
            if spec.get("nodeName"):
                state.update(phase="Running", startTime=meta["creationTimestamp"])
            else:
                state.setdefault("phase", "Pending")

    def stored(self, resource: Any, namespace: str | None, name: str | None) -> Any:
        key = (resource, namespace, name)
        if key not in self.objects or self.objects[key].deleted:
            return None
        return self.objects[key]

    def _check_version(self, request: rendering.Request) -> aiohttp.web.Response | None:
        data = request.data
        if not isinstance(data, Mapping):
            return None
        wanted = (data.get("metadata") or {}).get("resourceVersion")
        stored = self.stored(request.resource, request.namespace, request.name)
        if wanted is None or stored is None:
            return None
        current = (stored.get("metadata") or {}).get("resourceVersion")
        if str(wanted) != str(current):
            return status(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {request.resource.plural} "{request.name}": '
                "the object has been modified; please apply your changes to the latest version and try again",
            )
        return None

    def _stamp_update(self, request: rendering.Request) -> None:
        version = self._next_version()
        if isinstance(request.data, dict):
            request.data.setdefault("metadata", {})["resourceVersion"] = version
        elif isinstance(request.data, list):
            request.data.append({"op": "add", "path": "/metadata/resourceVersion", "value": version})

    async def _patch(self, resource: Any, namespace: str | None, name: str, patch: dict[str, Any]) -> None:
        """Patch through kmock's locked store and notify watchers (the caller holds `_writes`)."""
        patch.setdefault("metadata", {})["resourceVersion"] = self._next_version()
        async with self._lock:
            stored = self.objects[(resource, namespace, name)]
            stored.patch(patch)
            await self._buses[resource].put({"type": "MODIFIED", "object": stored.raw})

    async def _remove(self, resource: Any, namespace: str | None, name: str) -> None:
        async with self._lock:
            stored = self.objects[(resource, namespace, name)]
            stored.delete()
            await self._buses[resource].put({"type": "DELETED", "object": stored.last.raw})

    async def _delete_contents(self, namespace: str) -> None:
        for resource in NAMESPACED_ORDER:
            doomed = [
                key
                for key, stored in list(self.objects.items())
                if key[0] == resource and key[1] == namespace and not stored.deleted
            ]
            for key in doomed:
                await self._remove(*key)

    # -- subresources -----------------------------------------------------------------------
    async def _bind(self, request: rendering.Request) -> aiohttp.web.StreamResponse:
        namespace, name = request.namespace, str(request.name)
        node = str(((request.data or {}).get("target") or {}).get("name") or "")
        fault = self.faults.draw()
        if fault == "error":
            self.bindings.append(BindingRecord(str(namespace), name, node, 500))
            return status(500, "InternalError", "injected fault: etcdserver: request timed out")
        async with self._writes:  # type: ignore[union-attr]
            stored = self.stored(PODS, namespace, name)
            if stored is None:
                code, answer = 404, status(404, "NotFound", f'pods "{name}" not found')
            elif _uid_mismatch(request.data, stored):
                why = (
                    f'Operation cannot be fulfilled on pods/binding "{name}": the UID in the precondition does '
                    "not match the UID in record; the object might have been deleted and then recreated"
                )
                code, answer = 409, status(409, "Conflict", why)
            elif (stored.get("spec") or {}).get("nodeName"):
                bound_to = stored["spec"]["nodeName"]
                code, answer = 409, status(409, "Conflict", f"pod {name} is already assigned to node {bound_to!r}")
            elif fault == "timeout-lost":
                code, answer = 0, status(504, "Timeout", "injected fault: lost")
            else:
                started = now_rfc3339()
                await self._patch(
                    PODS,
                    namespace,
                    name,
                    {
                        "spec": {"nodeName": node},
                        "status": {
                            "phase": "Running",
                            "startTime": started,
                            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": started}],
                        },
                    },
                )
                code, answer = 201, status(201, "Created", "bound")
            self.bindings.append(BindingRecord(str(namespace), name, node, code))
        if fault is not None and fault.startswith("timeout"):
            await asyncio.sleep(self.faults.delay)
            return status(504, "Timeout", "injected fault: the response came too late")
        lost = self.faults.draw_lost() if code == 201 else None
        if lost == "late":
            await asyncio.sleep(self.faults.delay)
        elif lost == "dropped":
            return DroppedResponse()
        return answer

    async def _evict(self, request: rendering.Request) -> aiohttp.web.StreamResponse:
        namespace, name = request.namespace, str(request.name)
        async with self._writes:  # type: ignore[union-attr]
            if self.stored(PODS, namespace, name) is None:
                return status(404, "NotFound", f'pods "{name}" not found')
            if (namespace, name) in self.protected:
                return status(
                    429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget."
                )
            await self._remove(PODS, namespace, name)
        return status(201, "Created", "evicted")
