"""Kubernetes objects (plain dicts as the API returns them) to the core's inputs.

Shared by the simulator and the kopf operator: pods become asks or allocations, nodes become
node infos, namespaces become application tags and ElasticQuota objects become quota specs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any

from core.elastic.spec import DEFAULT_QUOTA, SYSTEM_QUOTA, ElasticQuotaSpec
from core.objects.ask import (
    DEFAULT_USER,
    FOREIGN_DEFAULT,
    FOREIGN_STATIC,
    NO_USER,
    TAG_GUARANTEED,
    TAG_MAX_APPS,
    TAG_NAMESPACE,
    TAG_PARENT_QUEUE,
    TAG_QUOTA,
    Allocation,
    Ask,
    UserGroup,
)
from core.objects.constraints import NodeConstraints, Taint
from core.objects.node_info import NodeInfo
from core.resources import QuantityError, Resource, resource_from_kubernetes
from shim.convert_gang import is_placeholder, pod_gang
from shim.convert_pod import (
    PODS,
    ConversionError,
    allows_preemption,
    annotations_of,
    labels_of,
    list_at,
    map_at,
    meta_of,
    object_name,
    parse_json,
    pod_constraints,
    pod_resource,
)
from shim.convert_rules import pod_rules_or_problem
from shim.convert_volumes import pod_claims
from shim.interning import ByIdentity, Interner
from shim.resource_text import ResourceTextError, resource_list_text

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
# Koordinator's objects for the quota groups outside the tree, read as Herder's groups.
GROUP_ALIASES = {"koordinator-system-quota": SYSTEM_QUOTA, "koordinator-default-quota": DEFAULT_QUOTA}
ANNOTATION_RUNTIME = KOORD_PREFIX + "runtime"
ANNOTATION_REQUEST = KOORD_PREFIX + "request"
ANNOTATION_CHILD_REQUEST = KOORD_PREFIX + "child-request"
ANNOTATION_GUARANTEED = KOORD_PREFIX + "guaranteed"
ANNOTATION_ALLOCATED = KOORD_PREFIX + "allocated"
ANNOTATION_NON_PREEMPTIBLE_REQUEST = KOORD_PREFIX + "non-preemptible-request"
ANNOTATION_NON_PREEMPTIBLE_USED = KOORD_PREFIX + "non-preemptible-used"


# --- pod identity ---------------------------------------------------------------------------


shared_resource: Interner[Resource] = Interner()
shared_constraints: Interner[NodeConstraints] = Interner()
shared_user: Interner[UserGroup] = Interner()


def is_herder_pod(pod: Mapping[str, Any], scheduler_name: str) -> bool:
    return map_at(pod, "spec").get("schedulerName") == scheduler_name


def _first(*candidates: Any) -> str | None:
    for value in candidates:
        if isinstance(value, str) and value:
            return value
    return None


def application_id(pod: Mapping[str, Any]) -> str:
    labels, annotations = labels_of(pod), annotations_of(pod)
    found = _first(
        labels.get(LABEL_APP_ID),
        annotations.get(ANNOTATION_APP_ID),
        labels.get(LABEL_APPLICATION_ID),
        labels.get(LABEL_SPARK_APP),
    )
    if found:
        return found
    for owner in list_at(pod, "metadata", "ownerReferences"):
        if isinstance(owner, Mapping) and owner.get("controller") is True:
            return f"{owner.get('kind', '')}-{owner.get('name', '')}".lower()
    return f"{meta_of(pod).get('namespace', 'default')}-autogen"


def queue_name(pod: Mapping[str, Any]) -> str | None:
    labels = labels_of(pod)
    return _first(labels.get(LABEL_QUEUE), annotations_of(pod).get(ANNOTATION_QUEUE), labels.get(LABEL_QUEUE_PLAIN))


def user_info(pod: Mapping[str, Any]) -> UserGroup:
    raw = annotations_of(pod).get(ANNOTATION_USER_INFO)
    if raw is None:
        return NO_USER
    where = f"pod {object_name(pod)} annotation {ANNOTATION_USER_INFO}"
    data = parse_json(raw, where)
    if not isinstance(data, Mapping):
        raise ConversionError(f"{where}: expected an object with user and groups, got {raw!r}")
    user = data.get("user") or DEFAULT_USER
    groups = data.get("groups") or []
    if not isinstance(user, str) or not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise ConversionError(f"{where}: user must be a string and groups a list of strings, got {raw!r}")
    return shared_user(UserGroup(user=user, groups=tuple(groups)))


# --- namespace tags -------------------------------------------------------------------------


def _canonical(resource: Mapping[str, int]) -> str:
    return json.dumps(dict(resource), sort_keys=True, separators=(", ", ": "))


def _namespace_resource(annotations: Mapping[str, Any], key: str, where: str, shorthand: bool = False) -> Resource:
    raw = annotations[key]
    if shorthand:
        try:
            data: object = resource_list_text(raw)
        except ResourceTextError as err:
            raise ConversionError(f"{where} annotation {key}: {err}") from None
    else:
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


_namespace_reads: ByIdentity[Mapping[str, Any], tuple[dict[str, str], list[str]]] = ByIdentity()


def _namespace_read(namespace: Mapping[str, Any] | None) -> tuple[dict[str, str], list[str]]:
    """The namespace's tags (shared by every pod of the namespace: nobody changes them) and problems."""
    if not namespace:
        return {}, []
    tags, problems = _namespace_reads(namespace, _read_namespace)
    return tags, list(problems)


def _read_namespace(namespace: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    name = str(meta_of(namespace).get("name", ""))
    where = f"namespace {name}"
    annotations = annotations_of(namespace)
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
                    legacy.update(resource_from_kubernetes({resource: annotations[key]}, f"{where} annotation {key}"))
                except QuantityError as err:
                    problems.append(f"{err} (value {annotations[key]!r})")
        if legacy:
            tags[TAG_QUOTA] = _canonical(legacy)
    if ANNOTATION_NS_GUARANTEED in annotations:
        try:
            tags[TAG_GUARANTEED] = _canonical(_namespace_resource(annotations, ANNOTATION_NS_GUARANTEED, where))
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
            problems.append(f"{where} annotation {ANNOTATION_NS_MAX_APPS}: expected an integer >= 0, got {raw!r}")
    return tags, problems


def namespace_tags(namespace: Mapping[str, Any] | None) -> dict[str, str]:
    """Application tags from a Namespace's annotations; malformed annotations are left out."""
    return _namespace_read(namespace)[0]


def namespace_problems(namespace: Mapping[str, Any] | None) -> list[str]:
    """Malformed Herder annotations on a Namespace, each naming namespace, key and value."""
    return _namespace_read(namespace)[1]


# --- pods -----------------------------------------------------------------------------------


def _timestamp(value: Any, where: str) -> float:
    if value is None or value == "":
        return 0.0
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, datetime):
        return value.timestamp()
    try:
        return _rfc3339_seconds(str(value))
    except ValueError:
        raise ConversionError(f"{where}: not an RFC3339 time: {value!r}") from None


@lru_cache(maxsize=4096)
def _rfc3339_seconds(text: str) -> float:
    """Pods created in the same second share the text: it is parsed once (a bad one raises each time)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _priority(pod: Mapping[str, Any]) -> int:
    value = map_at(pod, "spec").get("priority")
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConversionError(f"pod {object_name(pod)} spec.priority: expected an integer, got {value!r}")
    return value


def pod_key(pod: Mapping[str, Any]) -> str:
    """A pod's key in the core: its uid; for a gang placeholder its `<namespace>/<name>`, the key
    the core chose when it made the placeholder (before the pod, and its uid, existed)."""
    uid = meta_of(pod).get("uid")
    return str(uid) if uid and not is_placeholder(pod) else object_name(pod)


def pod_to_ask(
    pod: Mapping[str, Any], namespace: Mapping[str, Any] | None, scheduler_name: str = "herder", key: str = ""
) -> Ask:
    """A pending Herder pod; unreadable parts go into `problems` so the pod stays pending with a
    reason. `key`: its `pod_key`, when the caller has it already."""
    meta, labels = meta_of(pod), labels_of(pod)
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
        user = NO_USER
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
    rules, problem = pod_rules_or_problem(pod, namespace)
    if problem is not None:
        problems.append(problem)
    quota = labels.get(LABEL_QUOTA_NAME)
    key = key or pod_key(pod)
    app_id = application_id(pod)
    gang, gang_problems = pod_gang(pod, key, namespace, {LABEL_APP_ID: app_id})
    problems.extend(gang_problems)
    return Ask(
        key=key,
        application_id=app_id,
        resource=shared_resource(resource),
        name=name,
        namespace=str(meta.get("namespace", "")),
        queue=queue_name(pod),
        tags=tags,
        user=user,
        priority=priority,
        constraints=shared_constraints(pod_constraints(pod)),
        pod=rules,
        quota=str(quota) if quota else None,
        preemptible=labels.get(LABEL_PREEMPTIBLE) != "false",
        allow_preemption=allows_preemption(pod),
        created=created,
        problems=tuple(problems),
        task_group=gang.task_group,
        gang=gang.spec,
        placeholder=gang.placeholder,
        claims=pod_claims(pod),
    )


def ask_for_copy(like: Ask, pod: Mapping[str, Any]) -> Ask | None:
    """The ask of `pod`, a copy of the pod `like` was made from that differs only in its name,
    uid and creation time (a workload entry's replicas in the simulator), without reading the
    pod again; None when part of the ask depends on those (a problem naming the pod, a gang, an
    ephemeral volume's claim named after the pod): convert it then."""
    if like.problems or like.gang is not None or like.task_group or like.placeholder:
        return None
    if any(isinstance(v, Mapping) and "ephemeral" in v for v in list_at(pod, "spec", "volumes")):
        return None
    try:
        created = _timestamp(
            meta_of(pod).get("creationTimestamp"), f"pod {object_name(pod)} metadata.creationTimestamp"
        )
    except ConversionError:
        return None
    return like.copy_as(pod_key(pod), object_name(pod), created)


def pod_is_finished(pod: Mapping[str, Any]) -> bool:
    return map_at(pod, "status").get("phase") in ("Succeeded", "Failed")


def pod_node(pod: Mapping[str, Any]) -> str | None:
    node = map_at(pod, "spec").get("nodeName")
    return str(node) if node else None


def pod_to_allocation(
    pod: Mapping[str, Any], namespace: Mapping[str, Any] | None, scheduler_name: str = "herder", key: str = ""
) -> Allocation:
    """A pod bound to a node: Herder's own (with its ask) or a foreign one ("static" when a Node
    owns it). `key`: its `pod_key`, when the caller has it already."""
    node = pod_node(pod)
    name = object_name(pod)
    if node is None:
        raise ConversionError(f"pod {name} spec.nodeName: the pod is not bound to a node")
    started_raw = map_at(pod, "status").get("startTime")
    if is_herder_pod(pod, scheduler_name):
        ask = pod_to_ask(pod, namespace, scheduler_name, key)
        started = _timestamp(started_raw, f"pod {name} status.startTime") if started_raw else ask.created
        return Allocation.for_ask(ask, node, started)
    owners = list_at(pod, "metadata", "ownerReferences")
    static = any(isinstance(o, Mapping) and o.get("kind") == "Node" for o in owners)
    created = _timestamp(meta_of(pod).get("creationTimestamp"), f"pod {name} metadata.creationTimestamp")
    started = _timestamp(started_raw, f"pod {name} status.startTime") if started_raw else created
    return Allocation(
        key=key or pod_key(pod),
        node_id=node,
        resource=pod_resource(pod),
        priority=_priority(pod),
        allocation_time=started,
        request_time=created,
        name=name,
        foreign=FOREIGN_STATIC if static else FOREIGN_DEFAULT,
        pod=pod_rules_or_problem(pod, namespace)[0],
        foreign_claims=pod_claims(pod),
    )


# --- nodes and quotas -----------------------------------------------------------------------


def node_to_info(node: Mapping[str, Any]) -> NodeInfo:
    name = str(meta_of(node).get("name", ""))
    try:
        capacity = resource_from_kubernetes(map_at(node, "status", "allocatable"), f"node {name} status.allocatable")
    except QuantityError as err:
        raise ConversionError(str(err)) from None
    taints = tuple(
        Taint(
            key=str(t.get("key", "")),
            value=str(t.get("value") or ""),
            effect=str(t.get("effect") or "NoSchedule"),
        )
        for t in list_at(node, "spec", "taints")
        if isinstance(t, Mapping)
    )
    conditions = [c for c in list_at(node, "status", "conditions") if isinstance(c, Mapping)]
    ready_conditions = [c for c in conditions if c.get("type") == "Ready"]
    ready = all(c.get("status") == "True" for c in ready_conditions)
    return NodeInfo(
        node_id=name,
        capacity=capacity,
        labels={str(k): str(v) for k, v in labels_of(node).items()},
        taints=taints,
        schedulable=not map_at(node, "spec").get("unschedulable", False),
        ready=ready,
    )


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__


def quota_to_spec(eq: Mapping[str, Any]) -> ElasticQuotaSpec:
    """An ElasticQuota object with Koordinator's labels and annotations; Koordinator's names of the
    system and default groups stand for Herder's `system` and `default`. `shared-weight` may be
    JSON or seed 002's `{cpu: 4, memory: 8Gi}` shorthand."""
    meta, labels, annotations = meta_of(eq), labels_of(eq), annotations_of(eq)
    where = f"ElasticQuota {object_name(eq)}"
    raw_spec = eq.get("spec")
    if not isinstance(raw_spec, Mapping):
        # A spec that is not a mapping would read as no max at all: unlimited.
        raise ConversionError(f"{where} spec: expected a mapping with min and max, got {_kind(raw_spec)}")
    for part in ("min", "max"):
        if raw_spec.get(part) is not None and not isinstance(raw_spec.get(part), Mapping):
            raise ConversionError(f"{where} spec.{part}: expected a mapping of quantities, got {_kind(raw_spec[part])}")
    spec = map_at(eq, "spec")
    try:
        minimum = resource_from_kubernetes(map_at(spec, "min"), f"{where} spec.min")
        maximum = resource_from_kubernetes(map_at(spec, "max"), f"{where} spec.max")
    except QuantityError as err:
        raise ConversionError(str(err)) from None
    shared: Resource | None = None
    if ANNOTATION_SHARED_WEIGHT in annotations:
        shared = _namespace_resource(annotations, ANNOTATION_SHARED_WEIGHT, where, shorthand=True)
    name = str(meta.get("name", ""))
    return ElasticQuotaSpec(
        name=GROUP_ALIASES.get(name, name),
        namespace=str(meta.get("namespace", "")),
        min=minimum,
        max=maximum,
        parent=str(labels.get(LABEL_PARENT) or ""),
        is_parent=labels.get(LABEL_IS_PARENT) == "true",
        allow_lent_resource=labels.get(LABEL_ALLOW_LENT) != "false",
        shared_weight=shared,
    )
