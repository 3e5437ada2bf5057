"""A pod -> the core's inputs: a pending Herder pod becomes an ask, a bound pod an allocation
(Herder's own, with its ask, or a foreign one that only counts on its node).

The pod's parts are read by their own modules in this room (size, constraints, rules, identity,
gang, claims); this one puts them together and keeps the problems a pending pod waits on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from functools import lru_cache
from typing import Any

from core.objects.ask import FOREIGN_DEFAULT, FOREIGN_STATIC, NO_USER, Allocation, Ask
from core.resources import Resource
from shim.convert.constraints import shared_pod_constraints
from shim.convert.deadline import active_deadline, foreign_deadline
from shim.convert.gang_sources import GroupLookup, group_gang, group_ref, no_groups
from shim.convert.gangs.yunikorn import is_placeholder, pod_gang
from shim.convert.identity import LABEL_APP_ID, application_id, is_herder_pod, queue_name, user_info
from shim.convert.namespaces import namespace_read
from shim.convert.objects import ConversionError
from shim.convert.pod_size import PODS, pod_resource
from shim.convert.pod_view import PodLike, PodView, as_view
from shim.convert.priority import allows_preemption, pod_priority
from shim.convert.quotas import LABEL_PREEMPTIBLE, LABEL_QUOTA_NAME
from shim.convert.rules import as_strings, pod_rules_or_problem
from shim.convert.storage import pod_claims
from shim.interning import Interner

shared_resource: Interner[Resource] = Interner()


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


def pod_created(pod: PodView) -> float:
    """`metadata.creationTimestamp` in Unix seconds (0 when unset); ConversionError when it is not a time."""
    return _timestamp(pod.created, f"pod {pod.name} metadata.creationTimestamp")


def pod_key(pod: PodLike) -> str:
    """A pod's key in the core: its uid; for a gang placeholder its `<namespace>/<name>`, the key
    the core chose when it made the placeholder (before the pod, and its uid, existed)."""
    pod = as_view(pod)
    return pod.uid if pod.uid and not is_placeholder(pod) else pod.name


def pod_to_ask(
    pod: PodLike,
    namespace: Mapping[str, Any] | None,
    scheduler_name: str = "herder",
    key: str = "",
    groups: GroupLookup = no_groups,
) -> Ask:
    """A pending Herder pod; unreadable parts go into `problems` so the pod stays pending with a
    reason. `key`: its `pod_key`, when the caller has it already; `groups`: the group objects
    (PodGroups, Workloads) the caller knows, by key."""
    pod = as_view(pod)
    labels = pod.labels
    name = pod.name
    problems: list[str] = []
    tags, ns_problems = namespace_read(namespace)
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
        priority = pod_priority(pod)
    except ConversionError as err:
        problems.append(str(err))
        priority = 0
    try:
        created = pod_created(pod)
    except ConversionError as err:
        problems.append(str(err))
        created = 0.0
    rules, problem = pod_rules_or_problem(pod, namespace)
    if problem is not None:
        problems.append(problem)
    try:
        deadline = active_deadline(pod)
    except ConversionError as err:
        problems.append(str(err))
        deadline = None
    quota = labels.get(LABEL_QUOTA_NAME)
    key = key or pod_key(pod)
    try:
        ref = group_ref(pod)
    except ConversionError as err:
        problems.append(str(err))
        ref = None
    if ref is not None:  # a PodGroup API's pod: the group is its application and its gang
        app_id = ref.application_id
        gang, gang_problems = group_gang(pod, ref, groups)
    else:
        app_id = application_id(pod)
        gang, gang_problems = pod_gang(pod, key, namespace, {LABEL_APP_ID: app_id})
    problems.extend(gang_problems)
    return Ask(
        key=key,
        application_id=app_id,
        resource=shared_resource(resource),
        name=name,
        namespace=pod.namespace,
        queue=queue_name(pod),
        tags=tags,
        user=user,
        priority=priority,
        constraints=shared_pod_constraints(pod),
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
        notices=gang.notices,
        active_deadline=deadline,
    )


def ask_for_copy(like: Ask, pod: PodLike) -> Ask | None:
    """The ask of `pod`, a copy of the pod `like` was made from that differs only in its name,
    uid and creation time (a workload entry's replicas in the simulator), without reading the
    pod again; None when part of the ask depends on those (a problem naming the pod, a gang, an
    ephemeral volume's claim named after the pod): convert it then."""
    if like.problems or like.gang is not None or like.task_group or like.placeholder:
        return None
    pod = as_view(pod)
    if any((type(v) is dict or isinstance(v, Mapping)) and "ephemeral" in v for v in pod.volumes):
        return None
    try:
        created = pod_created(pod)
    except ConversionError:
        return None
    return like.copy_as(pod_key(pod), pod.name, created)


def ask_for_sibling(like: Ask, pod: PodLike) -> Ask | None:
    """The ask of `pod`, made from the same template as the pod `like` was made from but for
    another application: it differs in its name, uid, creation time and application label (a
    trace's rows of one shape in the simulator). None when more of the ask depends on those
    (as `ask_for_copy`), when its rules between pods are more than its labels, or when its
    other labels differ: convert it then."""
    rules = like.pod
    if like.notices or rules.has_filters() or rules.has_scores():
        return None
    view = as_view(pod)
    labels = as_strings(view.labels)
    if _other_labels(labels) != _other_labels(rules.labels):
        return None
    copy = ask_for_copy(like, view)
    if copy is None:
        return None
    return copy._replace(application_id=application_id(view), pod=replace(rules, labels=labels))


def _other_labels(labels: Mapping[str, str]) -> dict[str, str]:
    return {key: value for key, value in labels.items() if key != LABEL_APP_ID}


def pod_is_finished(pod: PodLike) -> bool:
    return as_view(pod).phase in ("Succeeded", "Failed")


def pod_node(pod: PodLike) -> str | None:
    return as_view(pod).node


def bound_allocation(pod: PodView, ask: Ask) -> Allocation:
    """Herder's pod `pod`, bound to a node, with its `ask` (read from it or from a sibling)."""
    node = pod.node
    if node is None:
        raise ConversionError(f"pod {pod.name} spec.nodeName: the pod is not bound to a node")
    started_raw = pod.started
    started = _timestamp(started_raw, f"pod {pod.name} status.startTime") if started_raw else ask.created
    return Allocation.for_ask(ask, node, started)


def pod_to_allocation(
    pod: PodLike,
    namespace: Mapping[str, Any] | None,
    scheduler_name: str = "herder",
    key: str = "",
    groups: GroupLookup = no_groups,
) -> Allocation:
    """A pod bound to a node: Herder's own (with its ask) or a foreign one ("static" when a Node
    owns it). `key`: its `pod_key`, when the caller has it already; `groups` as for `pod_to_ask`."""
    pod = as_view(pod)
    node = pod.node
    name = pod.name
    if node is None:
        raise ConversionError(f"pod {name} spec.nodeName: the pod is not bound to a node")
    started_raw = pod.started
    if is_herder_pod(pod, scheduler_name):
        return bound_allocation(pod, pod_to_ask(pod, namespace, scheduler_name, key, groups))
    static = any(owner.get("kind") == "Node" for owner in pod.owners)
    created = pod_created(pod)
    started = _timestamp(started_raw, f"pod {name} status.startTime") if started_raw else created
    return Allocation(
        key=key or pod_key(pod),
        node_id=node,
        resource=pod_resource(pod),
        priority=pod_priority(pod),
        allocation_time=started,
        request_time=created,
        name=name,
        foreign=FOREIGN_STATIC if static else FOREIGN_DEFAULT,
        pod=pod_rules_or_problem(pod, namespace)[0],
        foreign_claims=pod_claims(pod),
        foreign_deadline=foreign_deadline(pod),
    )
