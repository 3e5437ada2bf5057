"""scheduler-plugins' coscheduling PodGroup -> a gang from its pods (core/gang/spec.py).

    PodGroup  scheduling.x-k8s.io/v1alpha1 (older clusters: scheduling.sigs.k8s.io/v1alpha1)
      spec.minMember               the gang's minimum of pods (0: no gang)
      spec.minResources            resources the gang needs at least, together
      spec.scheduleTimeoutSeconds  how long its placeholders may wait (unset: 60 s, the
                                   coscheduling plugin's permitWaitingTimeSeconds)
    pods join it by label           scheduling.x-k8s.io/pod-group: <name>
                                    (older: pod-group.scheduling.sigs.k8s.io: <name>)

What Kubeflow's training operators, Spark and Argo create for coscheduling. The PodGroup's
status (`phase`, `scheduled`, `running`, `succeeded`, `failed`) is written back by the operator
(shim/kube/write/group_status.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from core.gang.spec import RETRY, GangSpec
from shim.convert.gangs.pod_gang import (
    GroupDefinition,
    GroupRef,
    min_resources,
    object_display,
    string_field,
    whole_number,
)
from shim.convert.objects import ConversionError, map_at
from shim.convert.pod_view import PodView

API = "scheduler-plugins"
KIND = "PodGroup"
GROUP = "scheduling.x-k8s.io"
LEGACY_GROUP = "scheduling.sigs.k8s.io"
VERSION = "v1alpha1"
PLURAL = "podgroups"
LABEL = "scheduling.x-k8s.io/pod-group"
LEGACY_LABEL = "pod-group.scheduling.sigs.k8s.io"
DEFAULT_TIMEOUT = 60.0


def group_ref(pod: PodView) -> GroupRef | None:
    """The PodGroup the pod's label names, or None."""
    labels = pod.labels
    label = LABEL if LABEL in labels else LEGACY_LABEL
    name = string_field(labels.get(label), f"pod {pod.name} label {label}")
    return GroupRef(API, KIND, pod.namespace or "default", name) if name else None


def definition(obj: Mapping[str, Any]) -> GroupDefinition:
    where = object_display(API, KIND, obj)
    spec = map_at(obj, "spec")
    try:
        members = whole_number(spec.get("minMember", 0), f"{where} spec.minMember")
        resources = min_resources(spec.get("minResources"), f"{where} spec.minResources")
        timeout = DEFAULT_TIMEOUT
        raw_timeout = spec.get("scheduleTimeoutSeconds")
        if raw_timeout is not None:
            timeout = float(whole_number(raw_timeout, f"{where} spec.scheduleTimeoutSeconds", least=1))
    except ConversionError as err:
        return GroupDefinition(problem=str(err))
    if members == 0:
        return GroupDefinition(MappingProxyType({"": None}))
    gang = GangSpec(
        groups=(),
        timeout=timeout,
        style=RETRY,
        min_members=members,
        min_resources=resources,
        from_pods=True,
        source=where,
    )
    return GroupDefinition(MappingProxyType({"": gang}))
