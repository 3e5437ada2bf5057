"""Kubernetes' Workload of 1.35 -> a gang from its pods per pod group (core/gang/spec.py).

    Workload  scheduling.k8s.io/v1alpha1 (1.35, feature gate GenericWorkload)
      spec.podGroups[].name                  a pod group of the workload
      spec.podGroups[].policy.gang.minCount  its gang's minimum of pods
      spec.podGroups[].policy.basic: {}      no gang: its pods are scheduled one by one
    pods join it by    spec.workloadRef.name (the Workload), .podGroup (its pod group) and
                       .podGroupReplicaKey (optional: pods with different keys are different gangs)

Each pod group (and replica) is a gang of its own, as kube-scheduler's GangScheduling plugin
treats it: its pods wait until the Workload, the pod group and `minCount` pods exist, then at
least `minCount` are placed together or none (300 s, then released and tried again). The 1.35
Workload has no status to write back.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from core.gang.spec import RETRY, GangSpec
from shim.convert.gangs.pod_gang import (
    GroupDefinition,
    GroupRef,
    gang_policy_minimum,
    object_display,
    string_field,
)
from shim.convert.objects import ConversionError, list_at
from shim.convert.pod_view import PodView

API = "Kubernetes"
KIND = "Workload"
GROUP = "scheduling.k8s.io"
VERSION = "v1alpha1"
POD_FIELD = "workloadRef"  # where a pod names its group
PLURAL = "workloads"
DEFAULT_TIMEOUT = 300.0


def group_ref(pod: PodView) -> GroupRef | None:
    """The Workload pod group the pod's spec.workloadRef names, or None."""
    ref = pod.spec.get(POD_FIELD)
    if not isinstance(ref, Mapping):
        return None
    where = f"pod {pod.name} spec.workloadRef"
    name = string_field(ref.get("name"), f"{where}.name")
    if not name:
        return None
    part = string_field(ref.get("podGroup"), f"{where}.podGroup")
    if not part:
        raise ConversionError(f"{where}.podGroup: required with spec.workloadRef.name")
    replica = string_field(ref.get("podGroupReplicaKey"), f"{where}.podGroupReplicaKey")
    return GroupRef(API, KIND, pod.namespace or "default", name, part=part, replica=replica)


def definition(obj: Mapping[str, Any]) -> GroupDefinition:
    where = object_display(API, KIND, obj)
    gangs: dict[str, GangSpec | None] = {}
    try:
        for index, group in enumerate(list_at(obj, "spec", "podGroups")):
            at = f"{where} spec.podGroups[{index}]"
            if not isinstance(group, Mapping):
                raise ConversionError(f"{at}: must be an object with name and policy, got {group!r}")
            name = string_field(group.get("name"), f"{at}.name")
            if not name or name in gangs:
                raise ConversionError(f"{at}.name: must be a name no other pod group has, got {name!r}")
            policy = group.get("policy")
            members = gang_policy_minimum(policy if isinstance(policy, Mapping) else {}, f"{at}.policy")
            gangs[name] = None
            if members is not None:
                gangs[name] = GangSpec(
                    groups=(),
                    timeout=DEFAULT_TIMEOUT,
                    style=RETRY,
                    min_members=members,
                    from_pods=True,
                    source=f"{where} pod group {name}",
                )
    except ConversionError as err:
        return GroupDefinition(problem=str(err))
    return GroupDefinition(MappingProxyType(gangs))
