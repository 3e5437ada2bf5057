"""Atomic scale-up for gangs through the whole operator, against an API emulator that serves
cluster-autoscaler's ProvisioningRequests (the test plays cluster-autoscaler): one request per
gang that lacks only nodes, its pods marked as consumers, deleted once the gang runs; a failed
request leaves the gang waiting with the reason; without the API Herder still schedules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from shim.autoscaling import ATOMIC_CLASS, CLASS_ANNOTATION, CONSUME_ANNOTATION, request_name
from tests.kube.conftest import Cluster, emulated_cluster, eventually, herder_pod
from tests.kube.emulator import node_body
from tests.kube.emulator_api import POD_TEMPLATES, PROVISIONING_REQUESTS
from tests.kube.test_operator_gangs import gang_pods

pytestmark = pytest.mark.timeout(120)

GROUP, VERSION, PLURAL = "autoscaling.x-k8s.io", "v1", "provisioningrequests"
SETTINGS = {"autoscaling.provisioningRequests": "true", "status.interval": "0.2s"}
REQUEST = request_name("ml", "train", 1)


@pytest.fixture
def autoscaled() -> Iterator[Cluster]:
    with emulated_cluster(autoscaling=True) as handle:
        yield handle


def start(cluster: Cluster) -> None:
    """Herder with requests on; one node taken, so a gang of three 4-CPU workers lacks one node."""
    cluster.start_herder(settings=SETTINGS)
    cluster.create_namespace("busy")
    cluster.core.create_namespaced_pod("busy", herder_pod("filler", cpu="4"))
    cluster.bound("busy", "filler")
    cluster.create_namespace("ml")


def requests(cluster: Cluster) -> list[dict[str, Any]]:
    return cluster.server.objects(PROVISIONING_REQUESTS)


def request_posts(cluster: Cluster) -> int:
    return sum(1 for verb, path, _ in cluster.server.writes() if verb == "POST" and path.endswith(f"/{PLURAL}"))


def set_condition(cluster: Cluster, kind: str, reason: str, message: str) -> None:
    """What cluster-autoscaler writes on the request."""
    condition = {"type": kind, "status": "True", "reason": reason, "message": message, "lastTransitionTime": None}
    cluster.custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, "ml", PLURAL, REQUEST, {"status": {"conditions": [condition]}}
    )


def pending_condition(cluster: Cluster, name: str) -> tuple[str, str] | None:
    pod = cluster.core.read_namespaced_pod(name, "ml")
    for found in pod.status.conditions or [] if pod.status else []:
        if found.type == "PodScheduled" and found.status == "False":
            return str(found.reason), str(found.message)
    return None


def test_a_gang_lacking_a_node_gets_one_request_its_pods_consume_and_it_goes_once_the_gang_runs(
    autoscaled: Cluster,
) -> None:
    start(autoscaled)
    names = gang_pods(autoscaled, "ml", "train", 3, "4")
    [made] = eventually(lambda: requests(autoscaled), "a ProvisioningRequest for the gang")
    assert made["metadata"]["name"] == REQUEST
    assert made["spec"]["provisioningClassName"] == ATOMIC_CLASS
    template = f"{REQUEST}-worker"
    assert made["spec"]["podSets"] == [{"podTemplateRef": {"name": template}, "count": 1}]  # one placeholder waits
    [stored] = autoscaled.server.objects(POD_TEMPLATES)
    assert stored["metadata"]["name"] == template
    [container] = stored["template"]["spec"]["containers"]
    assert container["resources"]["requests"]["cpu"] == "4"
    assert "nodeName" not in stored["template"]["spec"]

    def consumers() -> bool:
        pods = autoscaled.core.list_namespaced_pod("ml").items
        real = [p for p in pods if p.metadata.name in names]
        return all(
            (p.metadata.annotations or {}).get(CONSUME_ANNOTATION) == REQUEST
            and (p.metadata.annotations or {}).get(CLASS_ANNOTATION) == ATOMIC_CLASS
            for p in real
        )

    eventually(consumers, "the gang's pods marked as the request's consumers")

    def says_requested() -> list[str] | None:
        shown = [pending_condition(autoscaled, name) for name in names]
        named = all(item and f"ProvisioningRequest ml/{REQUEST}" in item[1] for item in shown)
        return sorted(item[0] for item in shown if item) if named else None

    # one placeholder still waits: one real pod stands for it, the other two have theirs placed
    reasons = eventually(says_requested, "the gang's pods naming their request")
    assert reasons == ["SchedulingSkipped", "SchedulingSkipped", "Unschedulable"]

    set_condition(autoscaled, "Provisioned", "CapacityIsProvisioned", "Capacity is found in the cluster")
    autoscaled.core.create_node(node_body("node-3", cpu="4", memory="16Gi"))
    for name in names:
        autoscaled.bound("ml", name)
    eventually(lambda: not requests(autoscaled), "the request deleted once the gang runs")
    eventually(lambda: not autoscaled.server.objects(POD_TEMPLATES), "its PodTemplate deleted")
    assert request_posts(autoscaled) == 1


def test_a_failed_request_leaves_the_gang_waiting_with_the_reason(autoscaled: Cluster) -> None:
    start(autoscaled)
    names = gang_pods(autoscaled, "ml", "train", 3, "4")
    eventually(lambda: requests(autoscaled), "a ProvisioningRequest for the gang")
    set_condition(autoscaled, "Failed", "CapacityIsNotFound", "no node group can hold the pods")

    def says_failed() -> tuple[str, str] | None:
        shown = pending_condition(autoscaled, names[0])
        return shown if shown and "failed: CapacityIsNotFound: no node group can hold the pods" in shown[1] else None

    shown = eventually(says_failed, "the gang's pods telling the request failed")
    assert shown[1].startswith("waiting for all 3 placeholders of its gang to be allocated")
    assert all(autoscaled.node_of("ml", name) is None for name in names)
    assert len(requests(autoscaled)) == 1 and request_posts(autoscaled) == 1  # not made again


def test_without_the_provisioning_api_herder_makes_no_request_and_still_schedules() -> None:
    with emulated_cluster(autoscaling=False) as cluster:
        start(cluster)
        cluster.core.create_namespaced_pod("ml", herder_pod("single", cpu="1"))
        cluster.bound("ml", "single")
        names = gang_pods(cluster, "ml", "train", 3, "4")
        shown = eventually(
            lambda: all(pending_condition(cluster, name) for name in names) and pending_condition(cluster, names[0]),
            "the gang waiting with conditions",
        )
        assert "ProvisioningRequest" not in shown[1]
        writes = [path for verb, path, _ in cluster.server.writes() if PLURAL in path or "podtemplates" in path]
        assert writes == []
        assert all(cluster.node_of("ml", name) is None for name in names)


def test_a_restarted_herder_adopts_the_request_instead_of_making_another(autoscaled: Cluster) -> None:
    start(autoscaled)
    names = gang_pods(autoscaled, "ml", "train", 3, "4")
    eventually(lambda: requests(autoscaled), "a ProvisioningRequest for the gang")
    autoscaled.replicas[0].stop()
    autoscaled.start_herder("herder-1", settings=SETTINGS)
    autoscaled.core.create_node(node_body("node-3", cpu="4", memory="16Gi"))
    for name in names:
        autoscaled.bound("ml", name)
    eventually(lambda: not requests(autoscaled), "the adopted request deleted once the gang runs")
    assert request_posts(autoscaled) == 1
