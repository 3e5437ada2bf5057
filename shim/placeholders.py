"""The placeholder pod Herder creates for a gang member the core placed (core/gang/).

Built from the originator pod (the one that carried the task-groups annotation) and the
core's placeholder allocation, as YuniKorn builds them: the pause image from the setting
`service.placeholderImage`, requests = limits = the group's `minResource`, restartPolicy Never,
grace period 0, non-root; the originator as owner, its priority class, priority and image
pull secrets; the group's nodeSelector, tolerations, affinity, topology spread, labels and
annotations. It is created already bound (`spec.nodeName`): the core chose the node.

The annotations let a restarted Herder rebuild the gang from the placeholders alone:
`internal.yunikorn.apache.org/placeholder`, the group's name, and copies of the originator's
task-groups, scheduling policy parameters, topology and user annotations; the application,
queue and elastic quota labels are copied too, so the placeholder lands in the same
application, queue and quota (and its gang in the same topology) when read back.

A placeholder of a PodGroup API's gang (core/gang/spec.py `from_pods`) is cut from the member
pod it stands for instead (`ask.gang.originator`): its requests are the pod's size, its node
rules the pod's, its owner the pod, and it names the same group as the pod (the group label,
annotation or spec field, and Volcano's task), so a restarted Herder reads it back into the
same gang (with Kueue's topology annotations, if the pod has them). It carries none of the
pod's other labels: a Job or training operator selecting its
pods by label must never count (or adopt) a placeholder.

Shared by the simulator and the operator's placeholder writer (shim/kube/write/placeholders.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from core.objects.ask import Allocation
from core.resources import VCORE, Resource
from shim.convert.gangs import coscheduling, kubernetes_pod_group, kubernetes_workload, volcano
from shim.convert.gangs.topology import TOPOLOGY_ANNOTATIONS
from shim.convert.gangs.yunikorn import (
    ANNOTATION_PLACEHOLDER,
    ANNOTATION_POLICY,
    ANNOTATION_TASK_GROUP_NAME,
    ANNOTATION_TASK_GROUPS,
    group_fields,
    is_placeholder,
    placement_spec,
)
from shim.convert.identity import ANNOTATION_QUEUE, ANNOTATION_USER_INFO, LABEL_APP_ID, LABEL_QUEUE, LABEL_QUEUE_PLAIN
from shim.convert.objects import ConversionError, annotations_of, labels_of, map_at, meta_of
from shim.convert.quotas import LABEL_PREEMPTIBLE, LABEL_QUOTA_NAME

_COPIED_ANNOTATIONS = (
    ANNOTATION_TASK_GROUPS,
    ANNOTATION_POLICY,
    ANNOTATION_USER_INFO,
    ANNOTATION_QUEUE,
    *TOPOLOGY_ANNOTATIONS,
)
_COPIED_LABELS = (LABEL_QUEUE, LABEL_QUEUE_PLAIN, LABEL_QUOTA_NAME, LABEL_PREEMPTIBLE)
# What names a member pod's group (and task): copied onto the placeholders cut from it.
_GROUP_LABELS = (coscheduling.LABEL, coscheduling.LEGACY_LABEL, volcano.TASK_KEY)
_GROUP_ANNOTATIONS = (
    volcano.ANNOTATION,
    volcano.TASK_KEY,
    ANNOTATION_USER_INFO,
    ANNOTATION_QUEUE,
    *TOPOLOGY_ANNOTATIONS,
)
_GROUP_SPEC = (kubernetes_pod_group.POD_FIELD, kubernetes_workload.POD_FIELD)
_MEMBER_PLACEMENT = ("nodeSelector", "tolerations", "affinity", "topologySpreadConstraints")


def placeholder_manifest(
    originator: Mapping[str, Any], allocation: Allocation, image: str, scheduler_name: str
) -> dict[str, Any]:
    """The pod to create for a placeholder allocation; ConversionError when the originator no
    longer defines the placeholder's group."""
    ask = allocation.ask
    assert ask is not None and ask.placeholder
    if ask.gang is not None and ask.gang.from_pods:
        return _member_placeholder(originator, allocation, image, scheduler_name)
    labels, annotations, pod_spec = _member(originator, ask.application_id, ask.task_group, image, scheduler_name)
    pod_spec["nodeName"] = allocation.node_id
    return _placeholder_pod(allocation.key, originator, labels, annotations, pod_spec)


def _placeholder_pod(
    key: str, originator: Mapping[str, Any], labels: dict[str, str], annotations: dict[str, str], spec: dict[str, Any]
) -> dict[str, Any]:
    """The placeholder pod `key` (namespace/name), owned by the pod it was made from."""
    namespace, _, name = key.rpartition("/")
    meta = meta_of(originator)
    owners = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": str(meta.get("name", "")),
            "uid": str(meta.get("uid", "")),
            "controller": False,
            "blockOwnerDeletion": False,
        }
    ]
    if is_placeholder(originator):  # after a restart a recovered placeholder is the template: same owner
        owners = [dict(owner) for owner in meta.get("ownerReferences") or []]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace or str(meta.get("namespace", "default")),
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": owners,
        },
        "spec": spec,
    }


def placeholder_template(
    originator: Mapping[str, Any], application_id: str, group: str, image: str, scheduler_name: str, name: str
) -> dict[str, Any]:
    """A PodTemplate of one member of the task group (a placeholder, not bound anywhere): what a
    ProvisioningRequest asks nodes for (shim/autoscaling.py). ConversionError when the
    originator does not define the group."""
    labels, annotations, pod_spec = _member(originator, application_id, group, image, scheduler_name)
    return {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": name, "namespace": str(meta_of(originator).get("namespace", "default"))},
        "template": {"metadata": {"labels": labels, "annotations": annotations}, "spec": pod_spec},
    }


def _member(
    originator: Mapping[str, Any], application_id: str, group: str, image: str, scheduler_name: str
) -> tuple[dict[str, str], dict[str, str], dict[str, Any]]:
    """A placeholder's labels, annotations and pod spec (without a node)."""
    fields = _group(originator, group)
    spec = map_at(originator, "spec")
    originator_labels, originator_annotations = labels_of(originator), annotations_of(originator)
    labels = {str(k): str(v) for k, v in (fields.get("labels") or {}).items()}
    labels.update({key: str(originator_labels[key]) for key in _COPIED_LABELS if key in originator_labels})
    labels[LABEL_APP_ID] = application_id
    annotations = {str(k): str(v) for k, v in (fields.get("annotations") or {}).items()}
    annotations.update(
        {key: str(originator_annotations[key]) for key in _COPIED_ANNOTATIONS if key in originator_annotations}
    )
    annotations[ANNOTATION_PLACEHOLDER] = "true"
    annotations[ANNOTATION_TASK_GROUP_NAME] = group
    resources = {str(k): str(v) for k, v in (fields.get("minResource") or {}).items()}
    pod_spec = {**_pause_spec(scheduler_name, image, resources), **placement_spec(fields)}
    for key in ("priorityClassName", "priority", "imagePullSecrets"):
        if spec.get(key) is not None:
            pod_spec[key] = spec[key]
    return labels, annotations, pod_spec


def _pause_spec(scheduler: str, image: str, requests: dict[str, str]) -> dict[str, Any]:
    """A placeholder's pod spec: one pause container holding `requests`, never restarted."""
    return {
        "schedulerName": scheduler,
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "securityContext": {"runAsNonRoot": True, "runAsUser": 65535},
        "containers": [
            {
                "name": "pause",
                "image": image,
                "imagePullPolicy": "IfNotPresent",
                "resources": {"requests": requests, "limits": dict(requests)},
            }
        ],
    }


def _group(originator: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    raw = annotations_of(originator).get(ANNOTATION_TASK_GROUPS)
    try:
        groups = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        groups = None
    for item in groups if isinstance(groups, list) else []:
        if isinstance(item, Mapping):
            fields = group_fields(item)
            if fields.get("name") == name:
                return fields
    raise ConversionError(f"the originator pod no longer defines task group {name!r}")


def _member_placeholder(
    member: Mapping[str, Any], allocation: Allocation, image: str, scheduler: str
) -> dict[str, Any]:
    """The placeholder cut from `member`, a pod of a PodGroup API's gang (see the module's docstring)."""
    ask = allocation.ask
    assert ask is not None
    spec = map_at(member, "spec")
    member_labels, member_annotations = labels_of(member), annotations_of(member)
    labels = {key: str(member_labels[key]) for key in (*_COPIED_LABELS, *_GROUP_LABELS) if key in member_labels}
    labels[LABEL_APP_ID] = ask.application_id
    annotations = {key: str(member_annotations[key]) for key in _GROUP_ANNOTATIONS if key in member_annotations}
    annotations[ANNOTATION_PLACEHOLDER] = "true"
    pod_spec = {**_pause_spec(scheduler, image, _requests(allocation.resource)), "nodeName": allocation.node_id}
    for key in (*_MEMBER_PLACEMENT, *_GROUP_SPEC, "priorityClassName", "priority", "imagePullSecrets"):
        if spec.get(key) is not None:
            pod_spec[key] = spec[key]
    return _placeholder_pod(allocation.key, member, labels, annotations, pod_spec)


def _requests(resource: Resource) -> dict[str, str]:
    """The pod's size as container requests (`pods` is the pod itself)."""
    out: dict[str, str] = {}
    for key, amount in sorted(resource.items()):
        if key == "pods" or amount <= 0:
            continue
        if key == VCORE:
            out["cpu"] = str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
        else:
            out[key] = str(amount)
    return out
