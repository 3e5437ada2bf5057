"""Kubernetes objects (plain dicts as the API returns them) to the core's inputs.

Shared by the simulator and the kopf operator: pods become asks or allocations, nodes become
node infos, namespaces become application tags and ElasticQuota objects become quota specs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from core.elastic.spec import ElasticQuotaSpec
from core.objects.ask import (
    DEFAULT_USER,
    FOREIGN_DEFAULT,
    FOREIGN_STATIC,
    TAG_GUARANTEED,
    TAG_MAX_APPS,
    TAG_NAMESPACE,
    TAG_PARENT_QUEUE,
    TAG_QUOTA,
    Allocation,
    Ask,
    UserGroup,
)
from core.objects.constraints import (
    NodeConstraints,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Taint,
    Toleration,
)
from core.objects.node_info import NodeInfo
from core.resources import QuantityError, Resource, resource_from_kubernetes

YK_PREFIX = "yunikorn.apache.org/"
LABEL_APP_ID = YK_PREFIX + "app-id"
ANNOTATION_APP_ID = YK_PREFIX + "app-id"
LABEL_APPLICATION_ID = "applicationId"
LABEL_SPARK_APP = "spark-app-selector"
LABEL_QUEUE = YK_PREFIX + "queue"
ANNOTATION_QUEUE = YK_PREFIX + "queue"
LABEL_QUEUE_PLAIN = "queue"
ANNOTATION_USER_INFO = YK_PREFIX + "user.info"
ANNOTATION_PARENT_QUEUE = YK_PREFIX + "parentqueue"
ANNOTATION_NS_QUOTA = YK_PREFIX + "namespace.quota"
ANNOTATION_NS_MAX_CPU = YK_PREFIX + "namespace.max.cpu"
ANNOTATION_NS_MAX_MEMORY = YK_PREFIX + "namespace.max.memory"
ANNOTATION_NS_GUARANTEED = YK_PREFIX + "namespace.guaranteed"
ANNOTATION_NS_MAX_APPS = YK_PREFIX + "namespace.maxApps"

KOORD_PREFIX = "quota.scheduling.koordinator.sh/"
LABEL_QUOTA_NAME = KOORD_PREFIX + "name"
LABEL_PREEMPTIBLE = KOORD_PREFIX + "preemptible"
LABEL_PARENT = KOORD_PREFIX + "parent"
LABEL_IS_PARENT = KOORD_PREFIX + "is-parent"
LABEL_ALLOW_LENT = KOORD_PREFIX + "allow-lent-resource"
ANNOTATION_SHARED_WEIGHT = KOORD_PREFIX + "shared-weight"
ANNOTATION_RUNTIME = KOORD_PREFIX + "runtime"
ANNOTATION_REQUEST = KOORD_PREFIX + "request"
ANNOTATION_CHILD_REQUEST = KOORD_PREFIX + "child-request"
ANNOTATION_GUARANTEED = KOORD_PREFIX + "guaranteed"
ANNOTATION_ALLOCATED = KOORD_PREFIX + "allocated"
ANNOTATION_NON_PREEMPTIBLE_REQUEST = KOORD_PREFIX + "non-preemptible-request"
ANNOTATION_NON_PREEMPTIBLE_USED = KOORD_PREFIX + "non-preemptible-used"

PODS = "pods"


class ConversionError(ValueError):
    """A Kubernetes object Herder cannot read; the message names the object and the field."""


def _map(obj: Mapping[str, Any] | None, *path: str) -> Mapping[str, Any]:
    cur: Any = obj or {}
    for key in path:
        cur = cur.get(key) if isinstance(cur, Mapping) else None
        if cur is None:
            return {}
    return cur if isinstance(cur, Mapping) else {}


def _list(obj: Mapping[str, Any], *path: str) -> list[Any]:
    parent = _map(obj, *path[:-1])
    value = parent.get(path[-1])
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str) else []


def _meta(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return _map(obj, "metadata")


def _labels(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return _map(obj, "metadata", "labels")


def _annotations(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return _map(obj, "metadata", "annotations")


def object_name(obj: Mapping[str, Any] | None) -> str:
    """`<namespace>/<name>` (or just the name for cluster-scoped objects)."""
    meta = _meta(obj)
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    return f"{ns}/{name}" if ns else str(name)


# --- pod size -------------------------------------------------------------------------------


def _requests(pod: Mapping[str, Any], container: Mapping[str, Any], kind: str) -> Resource:
    where = f"pod {object_name(pod)} {kind} {container.get('name', '?')!r} requests"
    try:
        return resource_from_kubernetes(_map(container, "resources", "requests"), where)
    except QuantityError as err:
        raise ConversionError(str(err)) from None


def _add(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    out = dict(a)
    for key, value in b.items():
        out[key] = out.get(key, 0) + value
    return out


def _max(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    out = dict(a)
    for key, value in b.items():
        out[key] = max(out.get(key, 0), value)
    return out


def pod_resource(pod: Mapping[str, Any]) -> Resource:
    """What a pod occupies on its node (DESIGN "Queues and placement", pod size).

    Containers' requests summed; per resource the larger of that plus all sidecars (init
    containers with restartPolicy Always) and each init container's requests plus the sidecars
    started before it; pod-level requests replace what they name; plus overhead and `pods: 1`.
    """
    spec = _map(pod, "spec")
    total: dict[str, int] = {}
    for container in _list(spec, "containers"):
        total = _add(total, _requests(pod, container, "container"))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in _list(spec, "initContainers"):
        req = _requests(pod, container, "init container")
        if container.get("restartPolicy") == "Always":
            sidecars = _add(sidecars, req)
            init_peak = _max(init_peak, sidecars)
        else:
            init_peak = _max(init_peak, _add(req, sidecars))
    total = _max(_add(total, sidecars), init_peak)
    pod_level = _map(spec, "resources", "requests")
    if pod_level:
        try:
            total.update(
                resource_from_kubernetes(pod_level, f"pod {object_name(pod)} spec.resources.requests")
            )
        except QuantityError as err:
            raise ConversionError(str(err)) from None
    try:
        overhead = resource_from_kubernetes(_map(spec, "overhead"), f"pod {object_name(pod)} spec.overhead")
    except QuantityError as err:
        raise ConversionError(str(err)) from None
    total = _add(total, overhead)
    total[PODS] = 1
    return Resource(total)


# --- pod identity ---------------------------------------------------------------------------


def is_herder_pod(pod: Mapping[str, Any], scheduler_name: str) -> bool:
    return _map(pod, "spec").get("schedulerName") == scheduler_name


def _first(*candidates: Any) -> str | None:
    for value in candidates:
        if isinstance(value, str) and value:
            return value
    return None


def application_id(pod: Mapping[str, Any]) -> str:
    labels, annotations = _labels(pod), _annotations(pod)
    found = _first(
        labels.get(LABEL_APP_ID),
        annotations.get(ANNOTATION_APP_ID),
        labels.get(LABEL_APPLICATION_ID),
        labels.get(LABEL_SPARK_APP),
    )
    if found:
        return found
    for owner in _list(pod, "metadata", "ownerReferences"):
        if isinstance(owner, Mapping) and owner.get("controller") is True:
            return f"{owner.get('kind', '')}-{owner.get('name', '')}".lower()
    return f"{_meta(pod).get('namespace', 'default')}-autogen"


def queue_name(pod: Mapping[str, Any]) -> str | None:
    labels = _labels(pod)
    return _first(
        labels.get(LABEL_QUEUE), _annotations(pod).get(ANNOTATION_QUEUE), labels.get(LABEL_QUEUE_PLAIN)
    )


def user_info(pod: Mapping[str, Any]) -> UserGroup:
    raw = _annotations(pod).get(ANNOTATION_USER_INFO)
    if raw is None:
        return UserGroup()
    where = f"pod {object_name(pod)} annotation {ANNOTATION_USER_INFO}"
    try:
        data = json.loads(raw)
    except (TypeError, ValueError) as err:
        raise ConversionError(f"{where}: not JSON ({err}): {raw!r}") from None
    if not isinstance(data, Mapping):
        raise ConversionError(f"{where}: expected an object with user and groups, got {raw!r}")
    user = data.get("user") or DEFAULT_USER
    groups = data.get("groups") or []
    if (
        not isinstance(user, str)
        or not isinstance(groups, list)
        or not all(isinstance(g, str) for g in groups)
    ):
        raise ConversionError(f"{where}: user must be a string and groups a list of strings, got {raw!r}")
    return UserGroup(user=user, groups=tuple(groups))


# --- namespace tags -------------------------------------------------------------------------


def _canonical(resource: Mapping[str, int]) -> str:
    return json.dumps(dict(resource), sort_keys=True, separators=(", ", ": "))


def _namespace_resource(annotations: Mapping[str, Any], key: str, where: str) -> Resource:
    raw = annotations[key]
    try:
        data = json.loads(raw)
    except (TypeError, ValueError):
        raise ConversionError(f"{where} annotation {key}: not JSON: {raw!r}") from None
    if not isinstance(data, Mapping):
        raise ConversionError(f"{where} annotation {key}: expected a map of quantities, got {raw!r}")
    try:
        return resource_from_kubernetes(data, f"{where} annotation {key}")
    except QuantityError as err:
        raise ConversionError(f"{err} (value {raw!r})") from None


def _namespace_read(namespace: Mapping[str, Any] | None) -> tuple[dict[str, str], list[str]]:
    if not namespace:
        return {}, []
    name = str(_meta(namespace).get("name", ""))
    where = f"namespace {name}"
    annotations = _annotations(namespace)
    tags: dict[str, str] = {TAG_NAMESPACE: name}
    problems: list[str] = []
    parent = annotations.get(ANNOTATION_PARENT_QUEUE)
    if isinstance(parent, str) and parent:
        tags[TAG_PARENT_QUEUE] = parent
    if ANNOTATION_NS_QUOTA in annotations:
        try:
            tags[TAG_QUOTA] = _canonical(_namespace_resource(annotations, ANNOTATION_NS_QUOTA, where))
        except ConversionError as err:
            problems.append(str(err))
    else:
        legacy: dict[str, int] = {}
        for key, resource in ((ANNOTATION_NS_MAX_CPU, "cpu"), (ANNOTATION_NS_MAX_MEMORY, "memory")):
            if key in annotations:
                try:
                    legacy.update(
                        resource_from_kubernetes({resource: annotations[key]}, f"{where} annotation {key}")
                    )
                except QuantityError as err:
                    problems.append(f"{err} (value {annotations[key]!r})")
        if legacy:
            tags[TAG_QUOTA] = _canonical(legacy)
    if ANNOTATION_NS_GUARANTEED in annotations:
        try:
            tags[TAG_GUARANTEED] = _canonical(
                _namespace_resource(annotations, ANNOTATION_NS_GUARANTEED, where)
            )
        except ConversionError as err:
            problems.append(str(err))
    if ANNOTATION_NS_MAX_APPS in annotations:
        raw = annotations[ANNOTATION_NS_MAX_APPS]
        try:
            value = int(str(raw).strip())
            if value < 0:
                raise ValueError
            tags[TAG_MAX_APPS] = str(value)
        except ValueError:
            problems.append(
                f"{where} annotation {ANNOTATION_NS_MAX_APPS}: expected an integer >= 0, got {raw!r}"
            )
    return tags, problems


def namespace_tags(namespace: Mapping[str, Any] | None) -> dict[str, str]:
    """Application tags from a Namespace's annotations; malformed annotations are left out."""
    return _namespace_read(namespace)[0]


def namespace_problems(namespace: Mapping[str, Any] | None) -> list[str]:
    """Malformed Herder annotations on a Namespace, each naming namespace, key and value."""
    return _namespace_read(namespace)[1]


# --- constraints ----------------------------------------------------------------------------


def _term(raw: Mapping[str, Any]) -> NodeSelectorTerm:
    reqs: list[NodeSelectorRequirement] = []
    for kind, is_field in (("matchExpressions", False), ("matchFields", True)):
        for expr in _list(raw, kind):
            reqs.append(
                NodeSelectorRequirement(
                    key=str(expr.get("key", "")),
                    operator=str(expr.get("operator", "")),
                    values=tuple(str(v) for v in expr.get("values") or ()),
                    field=is_field,
                )
            )
    return NodeSelectorTerm(requirements=tuple(reqs))


def _topology(term: Mapping[str, Any]) -> str:
    key = str(term.get("topologyKey", ""))
    return key.rsplit("/", 1)[-1] or "?"


def pod_constraints(pod: Mapping[str, Any]) -> NodeConstraints:
    spec = _map(pod, "spec")
    affinity = _map(spec, "affinity")
    node_aff = _map(affinity, "nodeAffinity")
    required = _map(node_aff, "requiredDuringSchedulingIgnoredDuringExecution")
    terms = tuple(_term(t) for t in _list(required, "nodeSelectorTerms") if isinstance(t, Mapping))
    tolerations = tuple(
        Toleration(
            key=str(t.get("key") or ""),
            operator=str(t.get("operator") or "Equal"),
            value=str(t.get("value") or ""),
            effect=str(t.get("effect") or ""),
        )
        for t in _list(spec, "tolerations")
        if isinstance(t, Mapping)
    )
    unsupported_required: list[str] = []
    unsupported_preferred: list[str] = []
    if _list(node_aff, "preferredDuringSchedulingIgnoredDuringExecution"):
        unsupported_preferred.append("preferred node affinity")
    for kind, text in (("podAffinity", "pod affinity"), ("podAntiAffinity", "pod anti-affinity")):
        block = _map(affinity, kind)
        for term in _list(block, "requiredDuringSchedulingIgnoredDuringExecution"):
            unsupported_required.append(f"{text} on {_topology(term)}")
        for term in _list(block, "preferredDuringSchedulingIgnoredDuringExecution"):
            unsupported_preferred.append(f"preferred {text} on {_topology(_map(term, 'podAffinityTerm'))}")
    for spread in _list(spec, "topologySpreadConstraints"):
        text = f"topology spread on {_topology(spread)}"
        if spread.get("whenUnsatisfiable", "DoNotSchedule") == "ScheduleAnyway":
            unsupported_preferred.append(text)
        else:
            unsupported_required.append(text)
    selector = _map(spec, "nodeSelector")
    return NodeConstraints(
        node_selector=tuple(sorted((str(k), str(v)) for k, v in selector.items())),
        required_terms=terms,
        tolerations=tolerations,
        unsupported_required=tuple(unsupported_required),
        unsupported_preferred=tuple(unsupported_preferred),
    )


# --- pods -----------------------------------------------------------------------------------


def _timestamp(value: Any, where: str) -> float:
    if value is None or value == "":
        return 0.0
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, datetime):
        return value.timestamp()
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise ConversionError(f"{where}: not an RFC3339 time: {value!r}") from None


def _priority(pod: Mapping[str, Any]) -> int:
    value = _map(pod, "spec").get("priority")
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConversionError(f"pod {object_name(pod)} spec.priority: expected an integer, got {value!r}")
    return value


def pod_key(pod: Mapping[str, Any]) -> str:
    uid = _meta(pod).get("uid")
    return str(uid) if uid else object_name(pod)


def pod_to_ask(
    pod: Mapping[str, Any], namespace: Mapping[str, Any] | None, scheduler_name: str = "herder"
) -> Ask:
    """A pending Herder pod; unreadable parts go into `problems` so the pod stays pending with a reason."""
    meta, labels = _meta(pod), _labels(pod)
    name = object_name(pod)
    problems: list[str] = []
    tags, ns_problems = _namespace_read(namespace)
    problems.extend(ns_problems)
    try:
        resource = pod_resource(pod)
    except ConversionError as err:
        problems.append(str(err))
        resource = Resource({PODS: 1})
    try:
        user = user_info(pod)
    except ConversionError as err:
        problems.append(str(err))
        user = UserGroup()
    try:
        priority = _priority(pod)
    except ConversionError as err:
        problems.append(str(err))
        priority = 0
    try:
        created = _timestamp(meta.get("creationTimestamp"), f"pod {name} metadata.creationTimestamp")
    except ConversionError as err:
        problems.append(str(err))
        created = 0.0
    quota = labels.get(LABEL_QUOTA_NAME)
    return Ask(
        key=pod_key(pod),
        application_id=application_id(pod),
        resource=resource,
        name=name,
        namespace=str(meta.get("namespace", "")),
        queue=queue_name(pod),
        tags=tags,
        user=user,
        priority=priority,
        constraints=pod_constraints(pod),
        quota=str(quota) if quota else None,
        preemptible=labels.get(LABEL_PREEMPTIBLE) != "false",
        created=created,
        problems=tuple(problems),
    )


def pod_is_finished(pod: Mapping[str, Any]) -> bool:
    return _map(pod, "status").get("phase") in ("Succeeded", "Failed")


def pod_node(pod: Mapping[str, Any]) -> str | None:
    node = _map(pod, "spec").get("nodeName")
    return str(node) if node else None


def pod_to_allocation(
    pod: Mapping[str, Any], namespace: Mapping[str, Any] | None, scheduler_name: str = "herder"
) -> Allocation:
    """A pod bound to a node: Herder's own (with its ask) or a foreign one ("static" when a Node owns it)."""
    node = pod_node(pod)
    name = object_name(pod)
    if node is None:
        raise ConversionError(f"pod {name} spec.nodeName: the pod is not bound to a node")
    started_raw = _map(pod, "status").get("startTime")
    if is_herder_pod(pod, scheduler_name):
        ask = pod_to_ask(pod, namespace, scheduler_name)
        started = _timestamp(started_raw, f"pod {name} status.startTime") if started_raw else ask.created
        return Allocation.for_ask(ask, node, started)
    owners = _list(pod, "metadata", "ownerReferences")
    static = any(isinstance(o, Mapping) and o.get("kind") == "Node" for o in owners)
    created = _timestamp(_meta(pod).get("creationTimestamp"), f"pod {name} metadata.creationTimestamp")
    started = _timestamp(started_raw, f"pod {name} status.startTime") if started_raw else created
    return Allocation(
        key=pod_key(pod),
        node_id=node,
        resource=pod_resource(pod),
        priority=_priority(pod),
        allocation_time=started,
        request_time=created,
        name=name,
        foreign=FOREIGN_STATIC if static else FOREIGN_DEFAULT,
    )


# --- nodes and quotas -----------------------------------------------------------------------


def node_to_info(node: Mapping[str, Any]) -> NodeInfo:
    name = str(_meta(node).get("name", ""))
    try:
        capacity = resource_from_kubernetes(
            _map(node, "status", "allocatable"), f"node {name} status.allocatable"
        )
    except QuantityError as err:
        raise ConversionError(str(err)) from None
    taints = tuple(
        Taint(
            key=str(t.get("key", "")),
            value=str(t.get("value") or ""),
            effect=str(t.get("effect") or "NoSchedule"),
        )
        for t in _list(node, "spec", "taints")
        if isinstance(t, Mapping)
    )
    conditions = [c for c in _list(node, "status", "conditions") if isinstance(c, Mapping)]
    ready_conditions = [c for c in conditions if c.get("type") == "Ready"]
    ready = all(c.get("status") == "True" for c in ready_conditions)
    return NodeInfo(
        node_id=name,
        capacity=capacity,
        labels={str(k): str(v) for k, v in _labels(node).items()},
        taints=taints,
        schedulable=not _map(node, "spec").get("unschedulable", False),
        ready=ready,
    )


def quota_to_spec(eq: Mapping[str, Any]) -> ElasticQuotaSpec:
    """An ElasticQuota object with Koordinator's labels and annotations."""
    meta, labels, annotations = _meta(eq), _labels(eq), _annotations(eq)
    where = f"ElasticQuota {object_name(eq)}"
    spec = _map(eq, "spec")
    try:
        minimum = resource_from_kubernetes(_map(spec, "min"), f"{where} spec.min")
        maximum = resource_from_kubernetes(_map(spec, "max"), f"{where} spec.max")
    except QuantityError as err:
        raise ConversionError(str(err)) from None
    shared: Resource | None = None
    if ANNOTATION_SHARED_WEIGHT in annotations:
        shared = _namespace_resource(annotations, ANNOTATION_SHARED_WEIGHT, where)
    return ElasticQuotaSpec(
        name=str(meta.get("name", "")),
        namespace=str(meta.get("namespace", "")),
        min=minimum,
        max=maximum,
        parent=str(labels.get(LABEL_PARENT) or ""),
        is_parent=labels.get(LABEL_IS_PARENT) == "true",
        allow_lent_resource=labels.get(LABEL_ALLOW_LENT) != "false",
        shared_weight=shared,
    )
