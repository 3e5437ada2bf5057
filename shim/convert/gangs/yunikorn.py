"""YuniKorn's gang annotations on a pod -> the core's task groups (core/gang/spec.py).

    yunikorn.apache.org/task-groups                 JSON list of task groups (first pod)
    yunikorn.apache.org/task-group-name             the group this pod belongs to
    yunikorn.apache.org/schedulingPolicyParameters  "placeholderTimeoutInSeconds=60 gangSchedulingStyle=Hard"
    kueue.x-k8s.io/podset-required-topology         a node label: all members in one domain of it
    kueue.x-k8s.io/podset-preferred-topology        (on the pod with task-groups; gangs/topology.py)

A task group's keys are matched as Go's JSON matches them (case does not matter). Unreadable
task groups are a problem naming the annotation and what is wrong: the pod then waits with that
reason (the whole application, when the pod is the one defining the gang). Malformed scheduling
policy parameters are read past with their defaults, as YuniKorn's shim reads them, and named
in the gang's notices (a warning Event on the pod), never a reason to wait. The placeholder
pods Herder makes carry `internal.yunikorn.apache.org/placeholder: "true"` and copies of the
gang annotations, so a restarted Herder reads them back with these same functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from core.gang.spec import DEFAULT_TIMEOUT, SOFT, STYLES, GangSpec, TaskGroup
from core.resources import QuantityError, Resource, resource_from_kubernetes
from shim.convert.constraints import pod_constraints
from shim.convert.gangs.pod_gang import PodGang
from shim.convert.gangs.topology import gang_topology
from shim.convert.objects import ConversionError, parse_json
from shim.convert.pod_size import PODS
from shim.convert.pod_view import PodLike, as_view
from shim.convert.rules import pod_rules

ANNOTATION_TASK_GROUPS = "yunikorn.apache.org/task-groups"
ANNOTATION_TASK_GROUP_NAME = "yunikorn.apache.org/task-group-name"
ANNOTATION_POLICY = "yunikorn.apache.org/schedulingPolicyParameters"
ANNOTATION_PLACEHOLDER = "internal.yunikorn.apache.org/placeholder"
TIMEOUT_PARAMETER = "placeholderTimeoutInSeconds"
STYLE_PARAMETER = "gangSchedulingStyle"

_GROUP_KEYS = (
    "name",
    "minMember",
    "minResource",
    "nodeSelector",
    "tolerations",
    "affinity",
    "topologySpreadConstraints",
    "labels",
    "annotations",
)
_PLACEMENT_KEYS = ("nodeSelector", "tolerations", "affinity", "topologySpreadConstraints")


def is_placeholder(pod: PodLike) -> bool:
    return bool(as_view(pod).annotations.get(ANNOTATION_PLACEHOLDER) == "true")


def pod_gang(
    pod: PodLike,
    key: str,
    namespace: Mapping[str, Any] | None = None,
    app_labels: Mapping[str, str] | None = None,
) -> tuple[PodGang, list[str]]:
    """The pod's gang annotations, read; unreadable ones become problems (and are left out).
    `app_labels`: the application labels Herder puts on the gang's placeholders."""
    pod = as_view(pod)
    annotations = pod.annotations
    name = pod.name
    problems: list[str] = []
    group = annotations.get(ANNOTATION_TASK_GROUP_NAME) or ""
    if not isinstance(group, str):
        problems.append(f"pod {name} annotation {ANNOTATION_TASK_GROUP_NAME}: expected a string, got {group!r}")
        group = ""
    spec = None
    notices: tuple[str, ...] = ()
    if ANNOTATION_TASK_GROUPS in annotations:
        try:
            where = f"pod {name} annotation {ANNOTATION_TASK_GROUPS}"
            groups = task_groups(annotations[ANNOTATION_TASK_GROUPS], where, pod.namespace, namespace, app_labels)
            timeout, style, notices = policy_parameters(
                annotations.get(ANNOTATION_POLICY), f"pod {name} annotation {ANNOTATION_POLICY}"
            )
            topology = gang_topology(annotations, f"pod {name}")
            spec = GangSpec(groups, timeout, style, key, topology)
        except ConversionError as err:
            problems.append(str(err))
    return PodGang(group, spec, is_placeholder(pod), notices), problems


def task_groups(
    raw: Any,
    where: str,
    pod_namespace: str = "",
    namespace: Mapping[str, Any] | None = None,
    app_labels: Mapping[str, str] | None = None,
) -> tuple[TaskGroup, ...]:
    """The groups of a task-groups annotation; the namespace of the pod carrying it (and that
    Namespace object) and its application's labels are what the placeholders' own labels and
    rules are read in."""
    data = parse_json(raw, where)
    if not isinstance(data, list):
        raise ConversionError(f"{where}: expected a JSON list of task groups, got {type(data).__name__}")
    groups: list[TaskGroup] = []
    for index, item in enumerate(data):
        groups.append(_task_group(item, f"{where} [{index}]", pod_namespace, namespace, app_labels or {}))
    names = [group.name for group in groups]
    for name in names:
        if names.count(name) > 1:
            raise ConversionError(f"{where}: task group {name!r} is defined more than once")
    return tuple(groups)


def group_fields(item: Mapping[str, Any]) -> dict[str, Any]:
    """A task group's known keys under their canonical names (Go matches JSON keys ignoring case)."""
    out: dict[str, Any] = {}
    canonical = {key.lower(): key for key in _GROUP_KEYS}
    for key, value in item.items():
        known = canonical.get(str(key).lower())
        if known is not None and known not in out:
            out[known] = value
    return out


def _task_group(
    item: Any,
    where: str,
    pod_namespace: str,
    namespace: Mapping[str, Any] | None,
    app_labels: Mapping[str, str],
) -> TaskGroup:
    if not isinstance(item, Mapping):
        raise ConversionError(f"{where}: expected an object, got {item!r}")
    fields = group_fields(item)
    name = fields.get("name")
    if not isinstance(name, str) or not name:
        raise ConversionError(f"{where}: 'name' must be a non-empty string, got {name!r}")
    where = f"{where} (task group {name!r})"
    members = fields.get("minMember")
    if not isinstance(members, int) or isinstance(members, bool) or members < 0:
        raise ConversionError(f"{where}: 'minMember' must be a whole number >= 0, got {members!r}")
    raw_resource = fields.get("minResource") or {}
    if not isinstance(raw_resource, Mapping):
        raise ConversionError(f"{where}: 'minResource' must be a map of quantities, got {raw_resource!r}")
    try:
        resource = resource_from_kubernetes(raw_resource, f"{where} minResource")
    except QuantityError as err:
        raise ConversionError(str(err)) from None
    resource = Resource({**resource, PODS: 1})
    for key in _PLACEMENT_KEYS:
        value = fields.get(key)
        expected = list if key in ("tolerations", "topologySpreadConstraints") else Mapping
        if value is not None and not isinstance(value, expected):
            raise ConversionError(f"{where}: '{key}' has the wrong shape: {value!r}")
    labels = fields.get("labels") or {}
    if not isinstance(labels, Mapping):
        raise ConversionError(f"{where}: 'labels' must be a map, got {labels!r}")
    # The placeholder pod as Herder will create it: the group's labels and rules, in the pod's namespace.
    stand_in = {
        "metadata": {
            "name": f"placeholder of {name}",
            "namespace": pod_namespace,
            "labels": {**{str(k): str(v) for k, v in labels.items()}, **app_labels},
        },
        "spec": placement_spec(fields),
    }
    try:
        rules = pod_rules(stand_in, namespace)
    except ConversionError as err:
        raise ConversionError(f"{where}: {err}") from None
    return TaskGroup(name, members, resource, pod_constraints(stand_in), rules)


def placement_spec(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The pod spec fields a placeholder of this group carries (its placement rules)."""
    return {key: fields[key] for key in _PLACEMENT_KEYS if fields.get(key) is not None}


# Go's strconv.ParseInt(value, 10, 64), which YuniKorn's shim reads the timeout with.
_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")
_INT64_MAX = 2**63 - 1


def policy_parameters(raw: Any, where: str) -> tuple[float, str, tuple[str, ...]]:
    """`placeholderTimeoutInSeconds` and `gangSchedulingStyle` from space-separated `k=v` pairs,
    and what was ignored. As YuniKorn's shim reads them, a malformed parameter never stops the
    gang: a pair that is not exactly `key=value` is skipped, a timeout that is not whole seconds
    is the default, a style other than Soft or Hard is Soft, a later pair overrides an earlier
    one, and unknown keys are skipped. Unlike YuniKorn (which only logs), each is named in a
    notice that becomes a warning Event on the pod."""
    timeout, style = DEFAULT_TIMEOUT, SOFT
    notices: list[str] = []
    if raw is None or raw == "":
        return timeout, style, ()
    if not isinstance(raw, str):
        raise ConversionError(f"{where}: expected a string of key=value pairs, got {raw!r}")
    for pair in raw.split():
        parts = pair.split("=")
        if len(parts) != 2:
            notices.append(f"{where}: {pair!r} is not key=value; ignored")
            continue
        key, value = parts
        if key == TIMEOUT_PARAMETER:
            timeout, notice = _timeout(value)
            if notice:
                notices.append(f"{where}: {notice}")
        elif key == STYLE_PARAMETER:
            if value in STYLES:
                style = value
            else:
                style = SOFT
                notices.append(f"{where}: {STYLE_PARAMETER} must be Soft or Hard, got {value!r}; the gang is Soft")
        else:
            notices.append(f"{where}: unknown parameter {pair!r} ignored")
    return timeout, style, tuple(notices)


def _timeout(value: str) -> tuple[float, str]:
    """The seconds in `value` (zero or less: the default) and what was wrong with it, if anything."""
    if not _WHOLE_NUMBER.fullmatch(value):
        return DEFAULT_TIMEOUT, (
            f"{TIMEOUT_PARAMETER} must be whole seconds, got {value!r}; the default ({DEFAULT_TIMEOUT:g} s) applies"
        )
    seconds = int(value)
    notice = ""
    if not -_INT64_MAX - 1 <= seconds <= _INT64_MAX:  # Go's ParseInt saturates, with an error
        seconds = _INT64_MAX if seconds > 0 else -_INT64_MAX - 1
        notice = f"{TIMEOUT_PARAMETER} {value!r} is out of range; read as {seconds}"
    # YuniKorn: zero or less means the default
    return (float(seconds) if seconds > 0 else DEFAULT_TIMEOUT), notice
