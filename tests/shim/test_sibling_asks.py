"""Pods of one template share their ask's reading (shim/convert/sibling_asks.py), and the ask a
pod gets that way is always the ask reading it whole gives: whatever differs between two pods,
and whichever order they come in."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shim.convert.gang_sources import kind_of
from shim.convert.pod_view import read_pod
from shim.convert.pods import pod_key, pod_to_ask
from shim.convert.sibling_asks import SiblingAsks

NAMESPACE = {"metadata": {"name": "ml", "labels": {"team": "ml"}, "annotations": {}}}


def job_pod(index: int, node: str | None = "node-1") -> dict[str, Any]:
    """A Job's pod as the API server lists it once it runs."""
    spec: dict[str, Any] = {
        "schedulerName": "herder",
        "priority": 100,
        "nodeSelector": {"pool": "gpu"},
        "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 10,
                        "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                    }
                ]
            }
        },
        "containers": [{"name": "train", "resources": {"requests": {"cpu": "2", "memory": "4Gi"}}}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "shared"}}],
    }
    status: dict[str, Any] = {"phase": "Pending"}
    if node is not None:
        spec["nodeName"] = node
        status = {
            "phase": "Running",
            "startTime": f"2026-11-27T10:00:{index % 60:02d}Z",
            "containerStatuses": [{"name": "train", "containerID": f"containerd://{index}", "ready": True}],
        }
    return {
        "metadata": {
            "name": f"train-{index}",
            "namespace": "ml",
            "uid": f"uid-{index}",
            "creationTimestamp": f"2026-11-27T09:{index % 60:02d}:00Z",
            "labels": {"job-name": "train", "applicationId": "train"},
            "annotations": {"yunikorn.apache.org/user.info": '{"user": "ana", "groups": ["ml"]}'},
            "ownerReferences": [{"kind": "Job", "name": "train", "uid": "job-uid", "controller": True}],
        },
        "spec": spec,
        "status": status,
    }


def _read(siblings: SiblingAsks, pod: dict[str, Any], namespace: dict[str, Any]) -> Any:
    view = read_pod(pod)
    return siblings.ask(view, namespace, "herder", pod_key(view))


def test_a_jobs_running_pods_share_the_first_ones_reading_with_their_own_identity() -> None:
    siblings = SiblingAsks()
    pods = [job_pod(index, f"node-{index % 3}") for index in range(5)]
    asks = [_read(siblings, pod, NAMESPACE) for pod in pods]
    assert siblings.shared == 4
    assert asks == [pod_to_ask(pod, NAMESPACE) for pod in pods]
    assert [(ask.key, ask.name) for ask in asks] == [(f"uid-{i}", f"ml/train-{i}") for i in range(5)]
    assert len({ask.created for ask in asks}) == 5


def test_a_pod_resized_in_place_takes_its_siblings_ask_at_its_own_size() -> None:
    siblings = SiblingAsks()
    first, resized = job_pod(0), job_pod(1)
    resized["status"]["containerStatuses"][0]["resources"] = {"requests": {"cpu": "3", "memory": "4Gi"}}
    _read(siblings, first, NAMESPACE)
    ask = _read(siblings, resized, NAMESPACE)
    assert siblings.shared == 1
    assert ask == pod_to_ask(resized, NAMESPACE)
    assert ask.resource["vcore"] == 3000


def test_a_changed_namespace_object_is_read_again() -> None:
    siblings = SiblingAsks()
    _read(siblings, job_pod(0), NAMESPACE)
    moved = copy.deepcopy(NAMESPACE)
    moved["metadata"]["annotations"] = {"yunikorn.apache.org/parentqueue": "root.research"}
    ask = _read(siblings, job_pod(1), moved)
    assert siblings.shared == 0
    assert ask == pod_to_ask(job_pod(1), moved)


def test_pods_of_another_owner_without_an_application_label_are_read_whole() -> None:
    siblings = SiblingAsks()
    first, other = job_pod(0), job_pod(1)
    for pod in (first, other):
        del pod["metadata"]["labels"]["applicationId"]
    other["metadata"]["ownerReferences"] = [{"kind": "Job", "name": "eval", "uid": "eval-uid", "controller": True}]
    asks = [_read(siblings, pod, NAMESPACE) for pod in (first, other)]
    assert siblings.shared == 0
    assert [ask.application_id for ask in asks] == ["job-train", "job-eval"]


def test_a_pod_with_an_ephemeral_volume_claims_its_own() -> None:
    siblings = SiblingAsks()
    pods = [job_pod(index) for index in range(2)]
    for pod in pods:
        pod["spec"]["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}]
    asks = [_read(siblings, pod, NAMESPACE) for pod in pods]
    assert [ask.claims for ask in asks] == [("ml/train-0-scratch",), ("ml/train-1-scratch",)]


def test_pods_naming_a_group_follow_its_definition_as_it_changes() -> None:
    """A PodGroup that asks for no gang (minMember 0), then for one: the next pod is read with it."""
    siblings = SiblingAsks()
    pods = [job_pod(index, node=None) for index in range(2)]
    for pod in pods:
        pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = "train"
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "train", "namespace": "ml"},
    }
    kind = kind_of(group)
    assert kind is not None
    known: dict[Any, Any] = {kind.key(group): kind.definition({**group, "spec": {"minMember": 0}})}
    view = read_pod(pods[0])
    assert siblings.ask(view, NAMESPACE, "herder", pod_key(view), known.get).gang is None
    known[kind.key(group)] = kind.definition({**group, "spec": {"minMember": 2}})
    view = read_pod(pods[1])
    ask = siblings.ask(view, NAMESPACE, "herder", pod_key(view), known.get)
    assert ask.gang is not None and ask == pod_to_ask(pods[1], NAMESPACE, groups=known.get)


def _set(path: tuple[str, ...], value: Any) -> Any:
    def change(pod: dict[str, Any]) -> None:
        target = pod
        for key in path[:-1]:
            target = target.setdefault(key, {})
        target[path[-1]] = value

    return change


def _drop(path: tuple[str, ...]) -> Any:
    def change(pod: dict[str, Any]) -> None:
        target = pod
        for key in path[:-1]:
            target = target.get(key, {})
        target.pop(path[-1], None)

    return change


# Each changes what a pod's ask is read from (or makes it unreadable, or unshareable); a pod is
# a Job pod with some of them, and the pods come in any order.
CHANGES = [
    _set(("metadata", "labels", "applicationId"), "other"),
    _set(("metadata", "labels", "yunikorn.apache.org/queue"), "root.fast"),
    _set(("metadata", "labels", "quota.scheduling.koordinator.sh/name"), "gold"),
    _set(("metadata", "labels", "bad"), {"not": "hashable"}),
    _set(("metadata", "annotations", "yunikorn.apache.org/user.info"), '{"user": "bo"}'),
    _set(("metadata", "annotations", "yunikorn.apache.org/user.info"), "not json"),
    _set(("metadata", "annotations", "yunikorn.apache.org/allow-preemption"), "false"),
    _set(("metadata", "annotations", "yunikorn.apache.org/task-group-name"), "workers"),
    _set(("metadata", "labels", "scheduling.x-k8s.io/pod-group"), "pg"),
    _set(("metadata", "ownerReferences"), [{"kind": "ReplicaSet", "name": "web", "uid": "rs", "controller": True}]),
    _drop(("metadata", "labels", "applicationId")),
    _set(("metadata", "creationTimestamp"), "yesterday"),
    _set(("metadata", "uid"), ""),
    _set(("spec", "priority"), 7),
    _set(("spec", "priority"), "high"),
    _set(("spec", "nodeSelector"), {"pool": "cpu"}),
    _set(("spec", "tolerations"), []),
    _set(("spec", "activeDeadlineSeconds"), 60),
    _set(("spec", "containers"), [{"name": "train", "resources": {"requests": {"cpu": "1"}}}]),
    _set(("spec", "containers"), [{"name": "train", "resources": {"requests": {"cpu": "lots"}}}]),
    _set(("spec", "volumes"), [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}]),
    _set(("spec", "affinity"), {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": "bad"}}),
    _set(("spec", "nodeName"), "node-9"),
    _set(("status", "resize"), "Infeasible"),
    _set(("status", "containerStatuses"), [{"name": "train", "resources": {"requests": {"cpu": "5"}}}]),
    _set(("status", "containerStatuses"), [{"name": "train", "allocatedResources": {"cpu": "nope"}}]),
    _drop(("status",)),
]

_pods = st.lists(
    st.tuples(st.integers(0, 40), st.lists(st.sampled_from(range(len(CHANGES))), max_size=3), st.booleans()),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(_pods)
def test_every_pod_gets_the_ask_its_whole_reading_gives(pods: list[tuple[int, list[int], bool]]) -> None:
    siblings = SiblingAsks()
    other = copy.deepcopy(NAMESPACE)
    for index, changes, own_namespace in pods:
        pod = job_pod(index, node=f"node-{index % 4}" if index % 5 else None)
        for change in changes:
            CHANGES[change](pod)
        namespace = other if own_namespace else NAMESPACE
        assert _read(siblings, pod, namespace) == pod_to_ask(pod, namespace)
