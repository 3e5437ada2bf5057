"""The placeholder pod built for a gang member: YuniKorn's shape, and read back after a restart
into the same placeholder (same key, application, queue, group and gang)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from core.gang.gang import placeholder_ask, stand_in_ask
from core.objects.ask import Allocation
from shim.convert.gang_sources import kind_of
from shim.convert.pods import pod_to_allocation, pod_to_ask
from shim.placeholders import placeholder_manifest

GROUPS = [
    {
        "name": "worker",
        "minMember": 2,
        "minResource": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"},
        "nodeSelector": {"pool": "gpu"},
        "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "labels": {"role": "worker"},
        "annotations": {"team": "ml"},
    }
]

ORIGINATOR: dict[str, Any] = {
    "metadata": {
        "name": "train-0",
        "namespace": "ml",
        "uid": "uid-train-0",
        "labels": {"applicationId": "train", "queue": "root.ml", "quota.scheduling.koordinator.sh/name": "ml"},
        "annotations": {
            "yunikorn.apache.org/task-group-name": "worker",
            "yunikorn.apache.org/task-groups": json.dumps(GROUPS),
            "yunikorn.apache.org/schedulingPolicyParameters": "gangSchedulingStyle=Hard",
            "yunikorn.apache.org/user.info": json.dumps({"user": "ana", "groups": ["ml"]}),
            "kueue.x-k8s.io/podset-required-topology": "topology.example.com/rack",
        },
        "creationTimestamp": "2026-01-01T00:00:00Z",
    },
    "spec": {
        "schedulerName": "herder",
        "priorityClassName": "training",
        "priority": 1000,
        "imagePullSecrets": [{"name": "registry"}],
        "containers": [{"name": "c", "image": "trainer", "resources": {"requests": {"cpu": "2", "memory": "4Gi"}}}],
    },
}


def placeholder_allocation() -> Allocation:
    originator = pod_to_ask(ORIGINATOR, None)
    assert originator.gang is not None
    ask = placeholder_ask(originator, originator.gang, originator.gang.groups[0], set(), 0)
    return Allocation.for_ask(ask, "gpu-1", 5.0)


def test_the_placeholder_pod_has_yunikorns_shape() -> None:
    allocation = placeholder_allocation()
    pod = placeholder_manifest(ORIGINATOR, allocation, "registry.k8s.io/pause:3.10", "herder")
    meta, spec = pod["metadata"], pod["spec"]
    assert f"ml/{meta['name']}" == allocation.key and meta["name"].startswith("tg-train-worker-")
    assert meta["ownerReferences"][0]["uid"] == "uid-train-0"
    assert meta["annotations"]["internal.yunikorn.apache.org/placeholder"] == "true"
    assert meta["annotations"]["team"] == "ml" and meta["labels"]["role"] == "worker"
    assert spec["nodeName"] == "gpu-1" and spec["schedulerName"] == "herder"
    assert (spec["priorityClassName"], spec["priority"]) == ("training", 1000)
    assert spec["imagePullSecrets"] == [{"name": "registry"}]
    assert spec["nodeSelector"] == {"pool": "gpu"} and spec["tolerations"][0]["key"] == "gpu"
    container = spec["containers"][0]
    assert container["image"] == "registry.k8s.io/pause:3.10"
    assert container["resources"]["requests"] == container["resources"]["limits"] == GROUPS[0]["minResource"]
    assert (spec["restartPolicy"], spec["terminationGracePeriodSeconds"]) == ("Never", 0)


def test_a_restarted_herder_reads_the_placeholder_back_as_the_same_placeholder() -> None:
    allocation = placeholder_allocation()
    pod = placeholder_manifest(ORIGINATOR, allocation, "pause", "herder")
    pod["metadata"]["uid"] = "uid-of-the-placeholder"
    pod["metadata"]["creationTimestamp"] = "2026-01-01T00:00:05Z"
    read = pod_to_allocation(pod, None)
    ask, made = read.ask, allocation.ask
    assert ask is not None and made is not None
    assert (read.key, read.node_id, read.resource) == (allocation.key, "gpu-1", allocation.resource)
    assert ask.placeholder and ask.problems == ()
    assert (ask.application_id, ask.queue, ask.task_group, ask.user, ask.priority, ask.quota) == (
        made.application_id,
        made.queue,
        made.task_group,
        made.user,
        made.priority,
        made.quota,
    )
    assert ask.gang is not None and made.gang is not None
    assert replace(ask.gang, originator="") == replace(made.gang, originator="")
    assert ask.gang.topology is not None and ask.gang.topology.key == "topology.example.com/rack"
    assert ask.constraints == made.constraints


MEMBER: dict[str, Any] = {
    "metadata": {
        "name": "train-worker-3",
        "namespace": "ml",
        "uid": "uid-train-worker-3",
        "labels": {
            "scheduling.x-k8s.io/pod-group": "train",
            "training.kubeflow.org/job-name": "train",
            "training.kubeflow.org/replica-index": "3",
            "queue": "root.ml",
        },
        "annotations": {"yunikorn.apache.org/user.info": json.dumps({"user": "ana", "groups": ["ml"]})},
        "creationTimestamp": "2026-01-01T00:00:00Z",
    },
    "spec": {
        "schedulerName": "herder",
        "priorityClassName": "training",
        "nodeSelector": {"pool": "gpu"},
        "containers": [
            {"name": "c", "image": "trainer", "resources": {"requests": {"cpu": "1500m", "nvidia.com/gpu": "1"}}}
        ],
    },
}
POD_GROUP = {
    "apiVersion": "scheduling.x-k8s.io/v1alpha1",
    "kind": "PodGroup",
    "metadata": {"name": "train", "namespace": "ml"},
    "spec": {"minMember": 4},
}


def member_placeholder() -> tuple[Allocation, Any]:
    kind = kind_of(POD_GROUP)
    assert kind is not None
    groups = {kind.key(POD_GROUP): kind.definition(POD_GROUP)}.get
    member = pod_to_ask(MEMBER, None, groups=groups)
    assert member.gang is not None
    ask = stand_in_ask(member, member.gang, set(), 0)
    return Allocation.for_ask(ask, "gpu-2", 5.0), groups


def test_a_placeholder_cut_from_a_pod_group_member_is_that_pod_and_names_the_same_group() -> None:
    allocation, _ = member_placeholder()
    pod = placeholder_manifest(MEMBER, allocation, "registry.k8s.io/pause:3.10", "herder")
    requests = {"cpu": "1500m", "nvidia.com/gpu": "1"}
    assert pod["spec"]["containers"][0]["resources"] == {"requests": requests, "limits": requests}
    assert pod["spec"]["nodeSelector"] == {"pool": "gpu"} and pod["spec"]["nodeName"] == "gpu-2"
    assert pod["spec"]["priorityClassName"] == "training"
    assert pod["metadata"]["ownerReferences"][0]["name"] == "train-worker-3"
    labels = pod["metadata"]["labels"]
    # the group and the queue, never the training operator's own labels (it must not count or adopt it)
    assert labels == {
        "scheduling.x-k8s.io/pod-group": "train",
        "queue": "root.ml",
        "yunikorn.apache.org/app-id": "ml-train",
    }
    assert "yunikorn.apache.org/task-group-name" not in pod["metadata"]["annotations"]


def test_a_pod_group_placeholder_reads_back_into_the_same_gang_after_a_restart() -> None:
    allocation, groups = member_placeholder()
    pod = placeholder_manifest(MEMBER, allocation, "registry.k8s.io/pause:3.10", "herder")
    back = pod_to_allocation(pod, None, "herder", groups=groups)
    ask = back.ask
    assert ask is not None and allocation.ask is not None
    assert back.key == allocation.key and ask.placeholder
    assert (ask.application_id, ask.task_group, ask.user, ask.queue) == (
        "ml-train",
        "train",
        allocation.ask.user,
        "root.ml",
    )
    assert ask.gang is not None and ask.gang.from_pods and ask.gang.min_members == 4
    assert back.resource == allocation.resource


def test_a_pod_group_placeholder_keeps_its_members_kueue_topology_after_a_restart() -> None:
    member = json.loads(json.dumps(MEMBER))
    member["metadata"]["annotations"]["kueue.x-k8s.io/podset-required-topology"] = "topology.example.com/rack"
    kind = kind_of(POD_GROUP)
    assert kind is not None
    groups = {kind.key(POD_GROUP): kind.definition(POD_GROUP)}.get
    ask = pod_to_ask(member, None, groups=groups)
    assert ask.gang is not None and ask.gang.topology is not None
    allocation = Allocation.for_ask(stand_in_ask(ask, ask.gang, set(), 0), "gpu-2", 5.0)
    pod = placeholder_manifest(member, allocation, "registry.k8s.io/pause:3.10", "herder")
    back = pod_to_allocation(pod, None, "herder", groups=groups).ask
    assert back is not None and back.gang is not None
    assert back.gang.topology == ask.gang.topology  # a gang rebuilt from its placeholders stays in its rack
