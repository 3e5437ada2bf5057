"""Rules between pods on a cluster: the real operator reads every pod's labels and rules from the
API (foreign pods included) and binds replicas of a Deployment-like group one per node.

Runs the real operator (kopf, the pod and node watches, the binder over HTTP) against the
emulated API server, on its three 4-CPU nodes labelled with their hostname.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.kube.conftest import Cluster, eventually, herder_pod

pytestmark = pytest.mark.timeout(60)

HOSTNAME = "kubernetes.io/hostname"


def with_anti_affinity(pod: dict[str, Any], namespaces: tuple[str, ...] = (), **labels: str) -> dict[str, Any]:
    term: dict[str, Any] = {"topologyKey": HOSTNAME, "labelSelector": {"matchLabels": labels}}
    if namespaces:
        term["namespaces"] = list(namespaces)  # else the pod's own namespace only
    pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return pod


def test_replicas_with_anti_affinity_avoid_each_other_and_a_foreign_pods_rule(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.create_namespace("ops")
    guard = with_anti_affinity(
        herder_pod("guard", cpu="100m", scheduler="default-scheduler", node="node-0"), ("web",), app="web"
    )
    cluster.core.create_namespaced_pod("ops", guard)
    eventually(
        lambda: any(
            a for n in herder.scheduler.nodes_document() if n["nodeID"] == "node-0" for a in n["foreignAllocations"]
        ),
        "the foreign guard pod on node-0",
    )
    cluster.create_namespace("web")
    for i in range(3):
        pod = with_anti_affinity(herder_pod(f"web-{i}", cpu="100m", labels={"app": "web"}), app="web")
        cluster.core.create_namespaced_pod("web", pod)

    def two_bound() -> dict[str, str] | None:
        nodes = {f"web-{i}": cluster.node_of("web", f"web-{i}") for i in range(3)}
        placed = {name: node for name, node in nodes.items() if node}
        return placed if len(placed) == 2 else None

    placed = eventually(two_bound, "two replicas bound")
    assert sorted(placed.values()) == ["node-1", "node-2"]
    [waiting] = {"web-0", "web-1", "web-2"} - set(placed)
    uid = cluster.core.read_namespaced_pod(waiting, "web").metadata.uid
    reason = eventually(lambda: herder.scheduler.pending_reason(uid), f"a reason for {waiting}")
    assert reason == f"no node fits: 2 pod anti-affinity on {HOSTNAME}, 1 anti-affinity of pods running on {HOSTNAME}"
    cluster.core.delete_namespaced_pod("guard", "ops")
    assert cluster.bound("web", waiting) == "node-0"
