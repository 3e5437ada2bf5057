"""Where a snapshot's objects come from: the API server, or a running Herder's REST state dump.

From the API server (a kubeconfig, read only): the kinds the operator reads (nodes, namespaces,
pods, ElasticQuotas, storage objects, PriorityClasses, the PodGroup APIs' groups the server
serves, the scheduler ConfigMap), plus
PodDisruptionBudgets where the credentials may list them (the operator never lists them: the
Eviction API applies them; a snapshot without them says so).

From `GET /ws/v1/fullstatedump` of a running Herder: what the core knows, rebuilt as objects.
Nodes keep their labels, taints and capacity; pods are rebuilt from allocations and pending
requests with their size, priority, application, queue and user. What the core does not keep
as a pod's spec is missing from such a snapshot: node selectors, affinity, tolerations,
volumes. Prefer the API server when you can reach it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypeVar

from kubernetes import client

from core.config.settings import Settings
from shim.convert.identity import ANNOTATION_USER_INFO, LABEL_APP_ID, LABEL_QUEUE
from shim.convert.quotas import ANNOTATION_SHARED_WEIGHT, LABEL_ALLOW_LENT, LABEL_IS_PARENT, LABEL_PARENT
from shim.kube.watch.groups import served_kinds
from shim.kube.watch.listing import ClusterReader
from shim.whatif.snapshot import ClusterObjects

STORAGE_KINDS = (
    ("storageclasses", "StorageClass", "storage.k8s.io/v1"),
    ("persistentvolumes", "PersistentVolume", "v1"),
    ("persistentvolumeclaims", "PersistentVolumeClaim", "v1"),
)
T = TypeVar("T")
NAMESPACE_TAG = "kubernetes.io/meta/namespace"
POD_NAME_TAG = "kubernetes.io/meta/podName"


def _raw_items(call: Any, timeout: float) -> list[dict[str, Any]]:
    answer = call(_preload_content=False, _request_timeout=timeout)
    items: list[dict[str, Any]] = json.loads(answer.data).get("items") or []
    return items


def _first(listing: Callable[..., tuple[list[dict[str, Any]], str]], *args: str) -> list[dict[str, Any]]:
    """The objects of a listing, without its resourceVersion."""
    return listing(*args)[0]


def _optional(what: str, read: Callable[[], list[T]], notes: list[str]) -> list[T]:
    """A listing the credentials may not allow, or whose API is not served: an empty list and a note."""
    try:
        return read()
    except client.ApiException as error:
        if error.status in (401, 403, 404):
            notes.append(f"{what} not read ({error.status} {error.reason})")
            return []
        raise


def from_api_server(
    api: client.ApiClient, namespace: str, config_map: str, source: str, now: float, timeout: float = 60.0
) -> ClusterObjects:
    reader = ClusterReader(api, timeout)
    notes: list[str] = []
    objects: list[dict[str, Any]] = []
    for plural, kind, version in STORAGE_KINDS:
        for item in _optional(plural, partial(_first, reader.storage_listing, plural), notes):
            objects.append({"apiVersion": version, "kind": kind, **item})
    budgets = _optional(
        "poddisruptionbudgets",
        lambda: _raw_items(client.PolicyV1Api(api).list_pod_disruption_budget_for_all_namespaces, timeout),
        notes,
    )
    objects.extend({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", **item} for item in budgets)
    for served in _optional("the gang APIs' discovery", lambda: served_kinds(api, timeout), notes):
        listing = partial(_first, reader.custom_listing, served.group, served.version, served.kind.plural)
        for item in _optional(served.name, listing, notes):
            objects.append({"apiVersion": served.api_version, "kind": served.kind.kind, **item})
    quotas = reader.quotas()
    if quotas is None:
        notes.append("ElasticQuotas not read (the CRD is not installed)")
    priority_classes = _optional(
        "priorityclasses", lambda: _raw_items(client.SchedulingV1Api(api).list_priority_class, timeout), notes
    )
    config = reader.configmap(namespace, config_map)
    if config is None:
        notes.append(f"ConfigMap {namespace}/{config_map} not found: Herder's default configuration")
    return ClusterObjects(
        taken_at=now,
        source=source,
        nodes=reader.nodes(),
        namespaces=reader.namespaces(),
        quotas=quotas or [],
        priority_classes=priority_classes,
        objects=objects,
        pods=reader.pods(),
        config_map=config,
        notes=notes,
    )


def _timestamp(nanoseconds: object) -> str | None:
    if not isinstance(nanoseconds, int) or isinstance(nanoseconds, bool) or nanoseconds <= 0:
        return None
    return datetime.fromtimestamp(nanoseconds / 1e9, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _requests(resource: Mapping[str, int]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in resource.items():
        if key == "pods":
            continue
        if key == "vcore":
            out["cpu"] = f"{value}m"
        else:
            out[key] = str(value)
    return out


def _pod(
    key: str,
    tags: Mapping[str, str],
    resource: Mapping[str, int],
    *,
    scheduler: str,
    node: str | None = None,
    created: object = None,
    started: object = None,
    priority: object = None,
    app: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    namespace = tags.get(NAMESPACE_TAG) or key.partition("/")[0] or "default"
    name = tags.get(POD_NAME_TAG) or key.rpartition("/")[2] or key
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": key}
    if app is not None:
        meta["labels"] = {LABEL_APP_ID: app["applicationID"], LABEL_QUEUE: app["queueName"]}
        user = {"user": app.get("user") or "nobody", "groups": list(app.get("groups") or [])}
        meta["annotations"] = {ANNOTATION_USER_INFO: json.dumps(user)}
    stamp = _timestamp(created)
    if stamp:
        meta["creationTimestamp"] = stamp
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "main", "image": "snapshot", "resources": {"requests": _requests(resource)}}],
    }
    if node:
        spec["nodeName"] = node
    if priority is not None:
        with contextlib.suppress(ValueError):
            spec["priority"] = int(str(priority))
    pod: dict[str, Any] = {"metadata": meta, "spec": spec, "status": {"phase": "Running" if node else "Pending"}}
    started_stamp = _timestamp(started)
    if started_stamp:
        pod["status"]["startTime"] = started_stamp
    return pod


def _node(doc: Mapping[str, Any]) -> dict[str, Any]:
    capacity = dict(doc.get("capacity") or {})
    allocatable = _requests(capacity)
    if "pods" in capacity:
        allocatable["pods"] = str(capacity["pods"])
    return {
        "metadata": {"name": doc["nodeID"], "labels": dict(doc.get("attributes") or {})},
        "spec": {"taints": list(doc.get("taints") or []), "unschedulable": not doc.get("schedulable", True)},
        "status": {
            "allocatable": allocatable,
            "conditions": [{"type": "Ready", "status": "True" if doc.get("ready", True) else "False"}],
        },
    }


def _quotas(docs: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for doc in docs:
        if doc["name"] not in ("system", "default"):
            labels = {LABEL_PARENT: doc.get("parent") or ""}
            if doc.get("isParent"):
                labels[LABEL_IS_PARENT] = "true"
            if doc.get("allowLentResource") is False:
                labels[LABEL_ALLOW_LENT] = "false"
            annotations = {}
            if doc.get("sharedWeight"):
                annotations[ANNOTATION_SHARED_WEIGHT] = json.dumps(_requests(doc["sharedWeight"]))
            out.append(
                {
                    "metadata": {
                        "name": doc["name"],
                        "namespace": doc.get("namespace") or "default",
                        "labels": labels,
                        "annotations": annotations,
                    },
                    "spec": {"min": _requests(doc.get("min") or {}), "max": _requests(doc.get("max") or {})},
                }
            )
        out.extend(_quotas(doc.get("children") or []))
    return out


def from_state_dump(dump: Mapping[str, Any], source: str, now: float) -> ClusterObjects:
    """A running Herder's full state dump as cluster objects (see the module's docstring)."""
    apps = {app["applicationID"]: app for app in dump.get("applications") or []}
    pods: list[dict[str, Any]] = []
    for node in dump.get("nodes") or []:
        for alloc in [*(node.get("allocations") or []), *(node.get("foreignAllocations") or [])]:
            tags = alloc.get("allocationTags") or {}
            foreign = "foreign" in tags
            pods.append(
                _pod(
                    alloc["allocationKey"],
                    tags,
                    alloc.get("resource") or {},
                    scheduler="default-scheduler" if foreign else "herder",
                    node=node["nodeID"],
                    created=alloc.get("requestTime"),
                    started=alloc.get("allocationTime"),
                    priority=alloc.get("priority"),
                    app=None if foreign else apps.get(alloc.get("applicationId", "")),
                )
            )
    for app in apps.values():
        for request in app.get("requests") or []:
            pods.append(
                _pod(
                    request["allocationKey"],
                    request.get("allocationTags") or {},
                    request.get("resource") or {},
                    scheduler="herder",
                    created=request.get("requestTime"),
                    priority=request.get("priority"),
                    app=app,
                )
            )
    config = dump.get("config") or {}
    data: dict[str, Any] = {}
    if config.get("partitions"):
        data["queues.yaml"] = json.dumps({"partitions": config["partitions"]})
    defaults = Settings().to_dict()
    for key, value in (config.get("settings") or {}).items():
        if value is not None and value != defaults.get(key):  # typed values, as a scenario's settings take them
            data[key] = value
    namespaces = sorted({p["metadata"]["namespace"] for p in pods})
    return ClusterObjects(
        taken_at=now,
        source=source,
        nodes=[_node(doc) for doc in dump.get("nodes") or []],
        namespaces=[{"metadata": {"name": name}} for name in namespaces],
        quotas=_quotas(dump.get("quotas") or []),
        pods=pods,
        config_map={"data": data},
        notes=["rebuilt from Herder's state dump: pods keep their size, priority, application, queue and user only"],
    )
