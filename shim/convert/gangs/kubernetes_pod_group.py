"""Kubernetes' own PodGroup (1.36 onwards) -> a gang from its pods (core/gang/spec.py).

    PodGroup  scheduling.k8s.io/v1alpha2 (1.36; 1.37 serves v1alpha3 and v1beta1, read alike)
      spec.schedulingPolicy.gang.minCount   the gang's minimum of pods
      spec.schedulingPolicy.basic: {}        no gang: its pods are scheduled one by one
      spec.schedulingConstraints.topology[].key
                                             a node label: every member in one domain of it
                                             (required; one constraint, as the API allows)
    pods join it by                          spec.schedulingGroup.podGroupName: <name>

As kube-scheduler's GangScheduling plugin does, the gang waits for its PodGroup and for
`minCount` pods, then places at least `minCount` together or none; placeholders that cannot
all be allocated are released after 300 s (kube-scheduler's fixed timeout) and the gang tries
again later. The PodGroup's `PodGroupScheduled` condition (`PodGroupInitiallyScheduled` from
v1alpha3 on) is written back by the operator (shim/kube/write/group_status.py).

The topology constraint is Kubernetes' topology-aware workload scheduling (1.36, alpha): the
whole gang in one domain of the label, chosen where it fits, or none placed. It maps to a
required GangTopology (core/gang/topology.py); Kueue's annotations on the pods are read only
when the PodGroup states none (shim/convert/gang_sources.py). On a `basic` policy it is not
read: without a gang there is nothing to keep together before the pods are placed.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from core.gang.spec import RETRY, GangSpec, GangTopology
from shim.convert.gangs.pod_gang import (
    GroupDefinition,
    GroupRef,
    gang_policy_minimum,
    object_display,
    string_field,
)
from shim.convert.gangs.topology import label_key
from shim.convert.objects import ConversionError, map_at
from shim.convert.pod_view import PodView

API = "Kubernetes"
KIND = "PodGroup"
GROUP = "scheduling.k8s.io"
VERSIONS = ("v1beta1", "v1alpha3", "v1alpha2")  # the newest the server serves is watched
POD_FIELD = "schedulingGroup"  # where a pod names its group
PLURAL = "podgroups"
DEFAULT_TIMEOUT = 300.0


def group_ref(pod: PodView) -> GroupRef | None:
    """The PodGroup the pod's spec.schedulingGroup names, or None."""
    group = pod.spec.get(POD_FIELD)
    if not isinstance(group, Mapping):
        return None
    name = string_field(group.get("podGroupName"), f"pod {pod.name} spec.schedulingGroup.podGroupName")
    return GroupRef(API, KIND, pod.namespace or "default", name) if name else None


def definition(obj: Mapping[str, Any]) -> GroupDefinition:
    where = object_display(API, KIND, obj)
    policy = map_at(obj, "spec", "schedulingPolicy")
    try:
        members = gang_policy_minimum(policy, f"{where} spec.schedulingPolicy")
        topology = _topology(map_at(obj, "spec").get("schedulingConstraints"), f"{where} spec.schedulingConstraints")
    except ConversionError as err:
        return GroupDefinition(problem=str(err))
    if members is None:
        return GroupDefinition(MappingProxyType({"": None}))
    gang = GangSpec(
        groups=(),
        timeout=DEFAULT_TIMEOUT,
        style=RETRY,
        min_members=members,
        from_pods=True,
        source=where,
        topology=topology,
    )
    return GroupDefinition(MappingProxyType({"": gang}))


def _topology(constraints: Any, where: str) -> GangTopology | None:
    """`schedulingConstraints.topology`: at most one `{key: <node label>}`, a required topology."""
    if constraints is None:
        return None
    if not isinstance(constraints, Mapping):
        raise ConversionError(f"{where}: must be an object with topology, got {constraints!r}")
    items = constraints.get("topology")
    if items is None or items == []:
        return None
    if not isinstance(items, list) or len(items) != 1 or not isinstance(items[0], Mapping):
        raise ConversionError(f"{where}.topology: must be a list of one {{key: <node label>}}, got {items!r}")
    return GangTopology(label_key(items[0].get("key"), f"{where}.topology[0].key"), required=True)
