"""The operator schedules a cluster: pods bound through the API, foreign pods respected, room given back.

Each test runs the real operator (kopf, the pod and node watches, scheduling threads, the binder over HTTP)
against the emulated API server and checks what a user sees with the kubernetes client.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.kube.conftest import Cluster, eventually, herder_pod

pytestmark = pytest.mark.timeout(60)


def test_pending_pods_are_bound_and_no_node_gets_more_than_it_holds(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.create_namespace("batch")
    names = cluster.create_pods("batch", 13, cpu="1")

    def twelve_bound() -> dict[str, str] | None:
        nodes = {name: cluster.node_of("batch", name) for name in names}
        placed = {name: node for name, node in nodes.items() if node}
        return placed if len(placed) == 12 else None

    placed = eventually(twelve_bound, "12 of 13 one-CPU pods bound on 3 four-CPU nodes")
    assert max(Counter(placed.values()).values()) <= 4
    [left] = set(names) - set(placed)
    key = cluster.core.read_namespaced_pod(left, "batch").metadata.uid
    assert eventually(lambda: herder.scheduler.pending_reason(key), f"a pending reason for {left}")
    assert cluster.node_of("batch", left) is None


def test_foreign_pod_is_tracked_and_its_room_respected(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.create_namespace("other")
    cluster.core.create_namespaced_pod(
        "other", herder_pod("daemon", cpu="4", scheduler="default-scheduler", node="node-0")
    )

    def foreign_on_node_0() -> bool:
        node = next(n for n in herder.scheduler.nodes_document() if n["nodeID"] == "node-0")
        return any("other/daemon" in json.dumps(a) for a in node["foreignAllocations"])

    eventually(foreign_on_node_0, "the foreign pod among node-0's foreign allocations")
    cluster.create_namespace("batch")
    cluster.create_pods("batch", 8, cpu="1")
    placed = cluster.all_bound("batch")
    assert "node-0" not in placed.values()


def test_deleted_and_finished_pods_give_their_room_back(cluster: Cluster) -> None:
    cluster.start_herder()
    cluster.create_namespace("batch")
    cluster.create_pods("batch", 12, cpu="1")
    cluster.all_bound("batch")
    late = cluster.create_pods("batch", 2, prefix="late", cpu="1")

    def late_bound() -> int:
        return sum(1 for name in late if cluster.node_of("batch", name))

    cluster.core.delete_namespaced_pod("job-0", "batch")
    eventually(lambda: late_bound() == 1, "one late pod bound in the room of the deleted one")
    cluster.core.patch_namespaced_pod_status("job-1", "batch", {"status": {"phase": "Succeeded"}})
    eventually(lambda: late_bound() == 2, "the other late pod bound in the room of the finished one")


def test_namespace_annotations_put_pods_under_their_parent_queue_within_its_quota(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.create_namespace(
        "ml",
        {"yunikorn.apache.org/parentqueue": "root.teams", "yunikorn.apache.org/namespace.quota": '{"cpu": "2"}'},
    )
    names = cluster.create_pods("ml", 3, cpu="1")
    eventually(lambda: sum(1 for n in names if cluster.node_of("ml", n)) == 2, "two pods bound within 2 CPUs")
    [third] = [cluster.core.read_namespaced_pod(n, "ml") for n in names if not cluster.node_of("ml", n)]
    reason = eventually(lambda: herder.scheduler.pending_reason(third.metadata.uid), "the third held back")
    assert "root.teams.ml" in reason
    queue = herder.scheduler.queue_document("root.teams.ml")
    assert queue is not None
    assert queue["maxResource"]["vcore"] == 2000
    assert queue["allocatedResource"]["vcore"] == 2000


def test_kopf_writes_nothing_and_herder_writes_pods_only_through_subresources(cluster: Cluster) -> None:
    cluster.start_herder()
    cluster.create_namespace("batch")
    cluster.create_pods("batch", 6, cpu="1")
    cluster.all_bound("batch")
    cluster.core.delete_namespaced_pod("job-0", "batch")
    cluster.core.create_namespaced_pod("batch", herder_pod("foreign", scheduler="other", node="node-1"))
    cluster.create_pods("batch", 1, prefix="after", cpu="1")
    cluster.bound("batch", "after-0")

    writes = cluster.server.writes()
    assert [w for w in writes if w[2].startswith("kopf")] == []
    herder_writes = [(method, path) for method, path, agent in writes if agent.startswith("herder")]
    to_pods_or_nodes = [(m, p) for m, p in herder_writes if "/pods" in p or "/nodes" in p]
    assert to_pods_or_nodes
    for method, path in to_pods_or_nodes:
        assert (method, path.rsplit("/", 1)[-1]) in {("POST", "binding"), ("POST", "eviction"), ("PATCH", "status")}


def test_cordoned_and_deleted_nodes_get_no_new_pods(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.core.patch_node("node-0", {"spec": {"unschedulable": True}})
    cluster.core.delete_node("node-1")
    eventually(
        lambda: (
            {n["nodeID"]: n["schedulable"] for n in herder.scheduler.nodes_document()}
            == {"node-0": False, "node-2": True}
        ),
        "node-0 cordoned and node-1 gone in the core",
    )
    cluster.create_namespace("batch")
    names = cluster.create_pods("batch", 5, cpu="1")
    eventually(lambda: sum(1 for n in names if cluster.node_of("batch", n)) == 4, "node-2 filled")
    assert {cluster.node_of("batch", n) for n in names} == {"node-2", None}
