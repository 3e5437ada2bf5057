"""The PodGroup APIs side by side: which group object a pod names, which kinds of object define
gangs, and the pod's gang read from the group it names.

    GROUP_KINDS   the objects that define gangs, each with its API groups, versions and plural
                  (what the operator watches when the server serves it, and what a scenario's
                  `objects:` may hold) and its reader in shim/convert/gangs/
    group_ref     the group a pod names (scheduler-plugins label, Volcano annotation,
                  Kubernetes spec.schedulingGroup or spec.workloadRef), or None
    group_gang    the pod's gang from that group's definition; a group that does not exist
                  (yet) or cannot be read is a problem the pod waits on, naming the object.
                  Kueue's topology annotations on the pod (shim/convert/gangs/topology.py)
                  give the gang its topology when the group states none

A pod that carries YuniKorn's own gang annotations is read by shim/convert/gangs/yunikorn.py
instead, whatever group it names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from shim.convert.gangs import coscheduling, kubernetes_pod_group, kubernetes_workload, volcano
from shim.convert.gangs.pod_gang import GroupDefinition, GroupRef, PodGang
from shim.convert.gangs.topology import gang_topology
from shim.convert.gangs.yunikorn import ANNOTATION_TASK_GROUP_NAME, ANNOTATION_TASK_GROUPS, is_placeholder
from shim.convert.objects import ConversionError, meta_of
from shim.convert.pod_view import PodView

GroupKey = tuple[str, str, str, str]  # (api, kind, namespace, name): GroupRef.key
GroupLookup = Callable[[GroupKey], "GroupDefinition | None"]


@dataclass(frozen=True, slots=True)
class GroupKind:
    """A kind of object that defines gangs, as the API server serves it."""

    api: str
    kind: str
    groups: tuple[str, ...]  # its API groups, the preferred first
    versions: tuple[str, ...]  # the versions read, the newest first
    plural: str
    definition: Callable[[Mapping[str, Any]], GroupDefinition]
    status: bool  # Herder writes its status (shim/kube/write/group_status.py)

    @property
    def name(self) -> str:
        return f"{self.api} {self.kind}"

    def key(self, obj: Mapping[str, Any]) -> GroupKey:
        meta = meta_of(obj)
        return (self.api, self.kind, str(meta.get("namespace") or "default"), str(meta.get("name") or ""))


GROUP_KINDS = (
    GroupKind(
        coscheduling.API,
        coscheduling.KIND,
        (coscheduling.GROUP, coscheduling.LEGACY_GROUP),
        (coscheduling.VERSION,),
        coscheduling.PLURAL,
        coscheduling.definition,
        status=True,
    ),
    GroupKind(
        volcano.API,
        volcano.KIND,
        (volcano.GROUP,),
        (volcano.VERSION,),
        volcano.PLURAL,
        volcano.definition,
        status=True,
    ),
    GroupKind(
        kubernetes_pod_group.API,
        kubernetes_pod_group.KIND,
        (kubernetes_pod_group.GROUP,),
        kubernetes_pod_group.VERSIONS,
        kubernetes_pod_group.PLURAL,
        kubernetes_pod_group.definition,
        status=True,
    ),
    GroupKind(
        kubernetes_workload.API,
        kubernetes_workload.KIND,
        (kubernetes_workload.GROUP,),
        (kubernetes_workload.VERSION,),
        kubernetes_workload.PLURAL,
        kubernetes_workload.definition,
        status=False,
    ),
)

_REFS = (
    coscheduling.group_ref,
    volcano.group_ref,
    kubernetes_pod_group.group_ref,
    kubernetes_workload.group_ref,
)


def no_groups(key: GroupKey) -> GroupDefinition | None:
    """The lookup of a caller that knows no group object."""
    return None


def kind_of(obj: Mapping[str, Any]) -> GroupKind | None:
    """The gang-defining kind an object (with its apiVersion and kind) is, or None."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    group, _, version = api_version.rpartition("/")
    for candidate in GROUP_KINDS:
        if candidate.kind == kind and group in candidate.groups and version in candidate.versions:
            return candidate
    return None


def uses_yunikorn_gang(pod: PodView) -> bool:
    annotations = pod.annotations
    return ANNOTATION_TASK_GROUPS in annotations or ANNOTATION_TASK_GROUP_NAME in annotations


# Where a pod names a group, looked up first: most pods name none, and this is read for each.
_GROUP_LABELS = (coscheduling.LABEL, coscheduling.LEGACY_LABEL)
_GROUP_ANNOTATION = volcano.ANNOTATION
_GROUP_SPEC = (kubernetes_pod_group.POD_FIELD, kubernetes_workload.POD_FIELD)


def group_ref(pod: PodView) -> GroupRef | None:
    """The group object the pod names, or None (ConversionError for a malformed reference)."""
    labels, spec = pod.labels, pod.spec
    if (
        _GROUP_LABELS[0] not in labels
        and _GROUP_LABELS[1] not in labels
        and _GROUP_ANNOTATION not in pod.annotations
        and _GROUP_SPEC[0] not in spec
        and _GROUP_SPEC[1] not in spec
    ):
        return None
    if uses_yunikorn_gang(pod):
        return None
    for read in _REFS:
        ref = read(pod)
        if ref is not None:
            return ref
    return None


def group_gang(pod: PodView, ref: GroupRef, lookup: GroupLookup) -> tuple[PodGang, list[str]]:
    """The pod's gang as its group defines it; the problems it waits on."""
    placeholder = is_placeholder(pod)
    definition = lookup(ref.key)
    if definition is None:
        missing = f"waits for {ref.kind} {ref.namespace}/{ref.name} ({ref.api}), which does not exist yet"
        return PodGang(placeholder=placeholder), [missing]
    if definition.problem:
        return PodGang(placeholder=placeholder), [f"its gang cannot be read: {definition.problem}"]
    if ref.part not in definition.gangs:
        defined = ", ".join(sorted(definition.gangs)) or "none"
        return PodGang(placeholder=placeholder), [
            f"names pod group {ref.part!r} of {ref.kind} {ref.namespace}/{ref.name}, which defines {defined}"
        ]
    spec = definition.gangs[ref.part]
    if spec is None:
        return PodGang(placeholder=placeholder, notices=definition.notices), []
    if spec.topology is None:
        try:
            topology = gang_topology(pod.annotations, f"pod {pod.name}")
        except ConversionError as err:
            return PodGang(placeholder=placeholder), [str(err)]
        if topology is not None:
            spec = replace(spec, topology=topology)
    return PodGang(ref.task_group, spec, placeholder, definition.notices), []
