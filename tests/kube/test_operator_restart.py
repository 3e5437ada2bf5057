"""A restarted Herder rebuilds queues, user/group trackers and quota usage exactly, and binds nothing twice.

The cluster runs a mix a restart must get right: pods under a parent queue from a namespace
annotation, a user limit holding one user back, a two-level ElasticQuota tree with a quota that
is full, and a foreign pod. The state dump's queues, usage and quotas must be the same before
and after a restart; pods that changed while Herder was down must be accounted as they are now.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
import yaml

from tests.kube.conftest import QUEUES, QUOTAS, Cluster, eventually, herder_pod, quota_body
from tests.kube.emulator import HerderReplica

pytestmark = pytest.mark.timeout(90)


def limited_queues() -> dict[str, Any]:
    config = json.loads(json.dumps(QUEUES))
    teams = config["partitions"][0]["queues"][0]["queues"][0]
    teams["limits"] = [{"limit": "alice", "users": ["alice"], "maxresources": {"vcore": "2"}}]
    return config


def user(name: str, *groups: str) -> dict[str, str]:
    return {"yunikorn.apache.org/user.info": json.dumps({"user": name, "groups": list(groups)})}


def start_first(cluster: Cluster) -> HerderReplica:
    cluster.set_config({"queues.yaml": yaml.safe_dump(limited_queues())})
    return cluster.start_herder("herder-0")


def build_world(cluster: Cluster) -> list[tuple[str, str]]:
    """Namespaces, quotas and pods (one application per user); returns every Herder pod as (namespace, name)."""
    cluster.create_namespace("team-a", {"yunikorn.apache.org/parentqueue": "root.teams"})
    cluster.create_namespace("team-b")
    cluster.create_namespace("infra")
    parent = quota_body(
        "org", "team-a", {"cpu": "4"}, {"cpu": "8"}, **{"quota.scheduling.koordinator.sh/is-parent": "true"}
    )
    child = {"quota.scheduling.koordinator.sh/parent": "org"}
    for body in (
        parent,
        quota_body("team-a", "team-a", {"cpu": "2"}, {"cpu": "5"}, **child),
        quota_body("team-b", "team-b", {"cpu": "2"}, {"cpu": "2"}, **child),
    ):
        meta = body["metadata"]
        cluster.custom.create_namespaced_custom_object(*QUOTAS[:2], meta["namespace"], QUOTAS[2], body)
    cluster.core.create_namespaced_pod(
        "infra", herder_pod("agent", cpu="1", scheduler="default-scheduler", node="node-2")
    )
    pods: list[tuple[str, str]] = []
    for index, who in enumerate(["alice", "alice", "alice", "bob", "bob", "carol"]):
        name = f"a-{index}"
        pod = herder_pod(name, labels={"applicationId": f"{who}-job"}, annotations=user(who, "ml"))
        cluster.core.create_namespaced_pod("team-a", pod)
        pods.append(("team-a", name))
    for index in range(3):
        name = f"b-{index}"
        pod = herder_pod(name, labels={"applicationId": "dave-job"}, annotations=user("dave", "ops"))
        cluster.core.create_namespaced_pod("team-b", pod)
        pods.append(("team-b", name))
    return pods


def settled(cluster: Cluster, herder: HerderReplica, pods: list[tuple[str, str]]) -> dict[str, str | None]:
    """Wait until every Herder pod is bound or has the core's verdict why not; node of each pod."""

    def probe() -> dict[str, str | None] | None:
        nodes: dict[str, str | None] = {}
        for namespace, name in pods:
            pod = cluster.core.read_namespaced_pod(name, namespace)
            if pod.spec.node_name:
                if herder.scheduler.allocation(pod.metadata.uid) is None:
                    return None
            elif herder.scheduler.pending_reason(pod.metadata.uid) is None:
                return None
            nodes[f"{namespace}/{name}"] = pod.spec.node_name
        return nodes

    return eventually(probe, "every pod bound or held back with a reason", timeout=30)


def trackers(herder: HerderReplica) -> dict[str, Any]:
    dump = herder.scheduler.state_dump()
    return {"queues": dump["queues"], "usage": dump["usage"], "quotas": dump["quotas"]}


def successful_bindings(cluster: Cluster) -> Counter[str]:
    return Counter(f"{b.namespace}/{b.name}" for b in cluster.server.bindings() if b.code == 201)


def test_restart_rebuilds_every_tracker_exactly_and_binds_nothing_twice(cluster: Cluster) -> None:
    first = start_first(cluster)
    pods = build_world(cluster)
    placed = settled(cluster, first, pods)
    bound = {pod for pod, node in placed.items() if node}
    assert 0 < len(bound) < len(pods), "the world should hold some pods back"
    before = trackers(first)
    first.stop()

    second = cluster.start_herder("herder-1")
    assert settled(cluster, second, pods) == placed
    assert trackers(second) == before
    assert set(successful_bindings(cluster)) == bound
    assert max(successful_bindings(cluster).values()) == 1
    assert all(b.code == 201 for b in cluster.server.bindings())


def test_pods_that_changed_while_herder_was_down_are_counted_as_they_are_now(cluster: Cluster) -> None:
    first = start_first(cluster)
    pods = build_world(cluster)
    placed = settled(cluster, first, pods)
    first.stop()

    running = sorted(pod for pod, node in placed.items() if node and pod.startswith("team-b/"))
    gone = running[0]
    cluster.core.delete_namespaced_pod(gone.split("/")[1], "team-b")
    cluster.core.create_namespaced_pod("team-b", herder_pod("b-new", annotations=user("dave", "ops")))
    pods = [p for p in pods if f"{p[0]}/{p[1]}" != gone] + [("team-b", "b-new")]

    second = cluster.start_herder("herder-1")
    now = settled(cluster, second, pods)
    team_b_running = [pod for pod, node in now.items() if node and pod.startswith("team-b/")]
    assert len(team_b_running) == 2, "the deleted pod's room in quota team-b went to a waiting pod"
    quota = next(q for q in second.scheduler.quotas_document() if q["name"] == "org")
    team_b = next(q for q in quota["children"] if q["name"] == "team-b")
    assert team_b["used"]["vcore"] == 2000
    assert max(successful_bindings(cluster).values()) == 1
