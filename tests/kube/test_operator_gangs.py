"""Gangs through the whole operator against the API emulator: placeholder pods created on
their nodes, deleted as real pods take their place, and adopted (none duplicated, none leaked)
by a Herder restarted in the middle of a gang."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from tests.kube.conftest import Cluster, eventually, herder_pod
from tests.kube.emulator import node_body

pytestmark = pytest.mark.timeout(120)

PLACEHOLDER = "internal.yunikorn.apache.org/placeholder"


def gang_pods(cluster: Cluster, namespace: str, app: str, count: int, cpu: str, **policy: str) -> list[str]:
    groups = [{"name": "worker", "minMember": count, "minResource": {"cpu": cpu, "memory": "64Mi"}}]
    annotations = {
        "yunikorn.apache.org/task-group-name": "worker",
        "yunikorn.apache.org/task-groups": json.dumps(groups),
    }
    if policy:
        annotations["yunikorn.apache.org/schedulingPolicyParameters"] = " ".join(f"{k}={v}" for k, v in policy.items())
    names = [f"{app}-{i}" for i in range(count)]
    for name in names:
        pod = herder_pod(name, cpu=cpu, labels={"applicationId": app}, annotations=annotations)
        pod["spec"]["priorityClassName"] = "batch"
        pod["spec"]["imagePullSecrets"] = [{"name": "registry"}]
        cluster.core.create_namespaced_pod(namespace, pod)
    return names


def busy_fourth_node(cluster: Cluster, namespace: str) -> None:
    """A fourth node of 4 CPUs, taken whole by another scheduler's pod: a gang of 4 x 4 CPUs fits
    the cluster's size (it is not larger than the cluster) but only three of its members fit now."""
    cluster.core.create_node(node_body("node-3", cpu="4", memory="16Gi"))
    busy = herder_pod("busy", cpu="4", scheduler="default-scheduler", node="node-3")
    cluster.core.create_namespaced_pod(namespace, busy)


def placeholder_pods(cluster: Cluster, namespace: str) -> dict[str, Any]:
    pods = cluster.core.list_namespaced_pod(namespace).items
    return {p.metadata.name: p for p in pods if (p.metadata.annotations or {}).get(PLACEHOLDER) == "true"}


def placeholder_writes(cluster: Cluster, method: str) -> list[str]:
    """Pods Herder itself created or deleted (only placeholders ever are)."""
    return [
        path
        for verb, path, agent in cluster.server.writes()
        if verb == method and agent.startswith("herder/") and _is_pod_path(path)
    ]


def _is_pod_path(path: str) -> bool:
    """/api/v1/namespaces/<ns>/pods or .../pods/<name>, not a subresource."""
    parts = path.split("?")[0].strip("/").split("/")
    return len(parts) in (5, 6) and parts[4] == "pods"


def test_placeholders_are_created_on_their_nodes_and_real_pods_take_their_places(cluster: Cluster) -> None:
    cluster.create_namespace("ml")
    herder = cluster.start_herder()
    names = gang_pods(cluster, "ml", "train", 3, "2")
    nodes = {name: cluster.bound("ml", name) for name in names}
    eventually(lambda: not placeholder_pods(cluster, "ml"), "the placeholders to be deleted")
    created = placeholder_writes(cluster, "POST")
    deleted = placeholder_writes(cluster, "DELETE")
    # A placeholder replaced before its creation started is never written at all.
    assert len(created) <= 3 and len(deleted) == len(created)
    assert all(path.rsplit("/", 1)[1].startswith("tg-train-worker-") for path in deleted)
    assert herder.operator is not None
    url = f"http://127.0.0.1:{herder.operator.rest_port}/ws/v1/partition/default/application/train"
    with urllib.request.urlopen(url, timeout=10) as response:  # the REST object, YuniKorn's field names
        doc = json.load(response)
    assert doc["taskGroups"] == [{"name": "worker", "minMember": 3, "minResource": doc["taskGroups"][0]["minResource"]}]
    assert doc["placeholderData"][0] | {"minResource": None} == {
        "taskGroupName": "worker",
        "count": 3,
        "minResource": None,
        "replaced": 3,
        "timedout": 0,
    }
    used = {a["allocationKey"]: (a["nodeId"], a["placeholderUsed"]) for a in doc["allocations"]}
    assert sorted(node for node, _ in used.values()) == sorted(nodes.values())
    assert all(flag for _, flag in used.values())


def test_the_placeholder_pod_carries_the_originators_identity(cluster: Cluster) -> None:
    cluster.create_namespace("ml")
    busy_fourth_node(cluster, "ml")
    cluster.start_herder()
    gang_pods(cluster, "ml", "big", 4, "4")  # only three of four fit: the placeholders stay
    held = eventually(
        lambda: len(placeholder_pods(cluster, "ml")) == 3 and placeholder_pods(cluster, "ml"), "3 placeholders"
    )
    pod = next(iter(held.values()))
    assert pod.spec.node_name and pod.spec.priority_class_name == "batch"
    assert [s.name for s in pod.spec.image_pull_secrets] == ["registry"]
    assert pod.spec.containers[0].image == "registry.k8s.io/pause:3.10"
    assert pod.metadata.owner_references[0].kind == "Pod"
    assert pod.metadata.annotations["yunikorn.apache.org/task-group-name"] == "worker"
    for name in ("big-0", "big-1", "big-2", "big-3"):
        assert cluster.node_of("ml", name) is None, "no real pod runs while a placeholder is missing"


def test_a_restart_mid_gang_adopts_the_placeholders_and_neither_duplicates_nor_leaks(cluster: Cluster) -> None:
    cluster.create_namespace("ml")
    busy_fourth_node(cluster, "ml")
    first = cluster.start_herder("herder-0")
    names = gang_pods(cluster, "ml", "big", 4, "4")
    before = eventually(
        lambda: len(placeholder_pods(cluster, "ml")) == 3 and set(placeholder_pods(cluster, "ml")), "3 placeholders"
    )
    first.stop()

    second = cluster.start_herder("herder-1")
    doc = eventually(
        lambda: (d := second.scheduler.application_document("big")) and len(d["allocations"]) == 3 and d,
        "the placeholders adopted",
    )
    assert {a["allocationKey"].split("/")[1] for a in doc["allocations"]} == before
    assert set(placeholder_pods(cluster, "ml")) == before, "no placeholder duplicated or deleted by the restart"
    assert len(placeholder_writes(cluster, "POST")) == 3

    cluster.core.delete_namespaced_pod("busy", "ml")  # the fourth node's room comes free
    for name in names:
        cluster.bound("ml", name)
    eventually(lambda: not placeholder_pods(cluster, "ml"), "every placeholder deleted")
    created = len(placeholder_writes(cluster, "POST"))
    assert created in (3, 4)  # at most the missing fourth was made
    assert len(placeholder_writes(cluster, "DELETE")) == created
    assert all(b.code == 201 for b in cluster.server.bindings())
    assert len(cluster.server.bindings()) == 4


def test_a_malformed_policy_parameter_runs_the_gang_and_warns_on_the_pod(cluster: Cluster) -> None:
    cluster.create_namespace("ml")
    cluster.start_herder()
    names = gang_pods(cluster, "ml", "spark", 2, "1", gangSchedulingStyle="Firm", placeholderTimeoutInSeconds="soon")
    for name in names:
        assert cluster.bound("ml", name), f"{name} runs, as on YuniKorn"

    def warned() -> list[dict[str, Any]]:
        return [e for e in cluster.events_about("Pod", names[0]) if e["reason"] == "AnnotationIgnored"]

    [event] = eventually(warned, "a warning Event on the pod naming what was ignored")
    assert event["type"] == "Warning"
    assert "gangSchedulingStyle must be Soft or Hard, got 'Firm'; the gang is Soft" in event["message"]
    assert "placeholderTimeoutInSeconds must be whole seconds, got 'soon'" in event["message"]


def test_a_hard_gang_that_times_out_fails_its_pods_so_their_controller_sees_it(cluster: Cluster) -> None:
    cluster.create_namespace("ml")
    cluster.start_herder()
    names = gang_pods(cluster, "ml", "big", 4, "4", placeholderTimeoutInSeconds="2", gangSchedulingStyle="Hard")

    def failed() -> list[Any]:
        pods = [cluster.core.read_namespaced_pod(name, "ml") for name in names]
        return pods if all(p.status.phase == "Failed" for p in pods) else []

    for pod in eventually(failed, "every pod of the gang Failed, as YuniKorn's shim fails them"):
        assert pod.status.reason == "ResourceReservationTimeout"
        assert "not all allocated within 2s" in pod.status.message
        assert pod.spec.node_name is None
    eventually(lambda: not placeholder_pods(cluster, "ml"), "the placeholders released")


def test_with_fail_pods_off_a_hard_gangs_pods_stay_pending_with_the_reason(cluster: Cluster) -> None:
    cluster.create_namespace("ml")
    cluster.start_herder(settings={"gang.failPodsOnTimeout": "false"})
    names = gang_pods(cluster, "ml", "big", 4, "4", placeholderTimeoutInSeconds="2", gangSchedulingStyle="Hard")

    def reason() -> str | None:
        pod = cluster.core.read_namespaced_pod(names[0], "ml")
        found = [c.message for c in pod.status.conditions or [] if c.type == "PodScheduled" and c.status == "False"]
        return found[0] if found and "ResourceReservationTimeout" in found[0] else None

    eventually(reason, "the pod to say its gang failed")
    assert {cluster.core.read_namespaced_pod(name, "ml").status.phase for name in names} == {"Pending"}
