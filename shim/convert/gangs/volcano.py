"""Volcano's PodGroup -> a gang from its pods (core/gang/spec.py).

    PodGroup  scheduling.volcano.sh/v1beta1
      spec.minMember        the gang's minimum of pods (0: no gang)
      spec.minTaskMember    {task: minimum}: the gang also waits for each task's minimum
      spec.minResources     resources the gang needs at least, together
    pods join it by annotation   scheduling.k8s.io/group-name: <name>
    a pod's task                 volcano.sh/task-spec (annotation, else label)

Volcano has no timeout: a gang that cannot reserve releases its placeholders after the default
placeholder timeout and reserves again later. `spec.queue` (a Volcano Queue) and
`spec.priorityClassName` are not read: the pods' own queue keys and priority class decide, as
for every pod. Nor is `spec.networkTopology` (`mode`, `highestTierAllowed`): its tiers are
Volcano's HyperNode objects, not node labels; each pod of such a group gets a warning naming
it, and Kueue's `kueue.x-k8s.io/podset-required-topology: <node label>` on the pods keeps the
gang in one domain of a node label instead. The PodGroup's `status.phase` (Inqueue, Running,
Completed) is written back by the operator (shim/kube/write/group_status.py): Volcano's job
controller creates a job's pods only once its PodGroup is Inqueue.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from core.gang.spec import RETRY, GangSpec, TaskGroup
from core.resources import Resource
from shim.convert.gangs.pod_gang import (
    GroupDefinition,
    GroupRef,
    min_resources,
    object_display,
    string_field,
    whole_number,
)
from shim.convert.objects import ConversionError, map_at
from shim.convert.pod_size import PODS
from shim.convert.pod_view import PodView

API = "Volcano"
KIND = "PodGroup"
GROUP = "scheduling.volcano.sh"
VERSION = "v1beta1"
PLURAL = "podgroups"
ANNOTATION = "scheduling.k8s.io/group-name"
TASK_KEY = "volcano.sh/task-spec"


def group_ref(pod: PodView) -> GroupRef | None:
    """The PodGroup the pod's annotation names (with the pod's task), or None."""
    name = string_field(pod.annotations.get(ANNOTATION), f"pod {pod.name} annotation {ANNOTATION}")
    if not name:
        return None
    task = pod.annotations.get(TASK_KEY) or pod.labels.get(TASK_KEY)
    task = string_field(task, f"pod {pod.name} {TASK_KEY}")
    return GroupRef(API, KIND, pod.namespace or "default", name, task=task)


def definition(obj: Mapping[str, Any]) -> GroupDefinition:
    where = object_display(API, KIND, obj)
    spec = map_at(obj, "spec")
    try:
        members = whole_number(spec.get("minMember", 0), f"{where} spec.minMember")
        resources = min_resources(spec.get("minResources"), f"{where} spec.minResources")
        tasks = _task_minimums(spec.get("minTaskMember"), f"{where} spec.minTaskMember")
    except ConversionError as err:
        return GroupDefinition(problem=str(err))
    notices: tuple[str, ...] = ()
    if spec.get("networkTopology") is not None:
        notices = (
            f"{where} spec.networkTopology is not read (its tiers are Volcano HyperNodes, not node labels):"
            " the gang is placed without it; kueue.x-k8s.io/podset-required-topology on its pods names a node label",
        )
    if members == 0 and not tasks:
        return GroupDefinition(MappingProxyType({"": None}), notices=notices)
    gang = GangSpec(
        groups=tuple(TaskGroup(task, count, Resource({PODS: 1})) for task, count in tasks),
        style=RETRY,
        min_members=members,
        min_resources=resources,
        from_pods=True,
        source=where,
    )
    return GroupDefinition(MappingProxyType({"": gang}), notices=notices)


def _task_minimums(value: Any, where: str) -> list[tuple[str, int]]:
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise ConversionError(f"{where}: must be a map of task names to counts, got {value!r}")
    tasks = [(str(task), whole_number(count, f"{where}.{task}")) for task, count in value.items()]
    return sorted((task, count) for task, count in tasks if count > 0)
