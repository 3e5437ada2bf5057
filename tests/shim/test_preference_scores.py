"""Preferences break ties among the nodes the node sort policy ranks equally: preferred node
affinity, PreferNoSchedule taints, preferred pod affinity and anti-affinity, ScheduleAnyway spread.
Pods with no requests take no share of a node, so they change no node's rank."""

from __future__ import annotations

from typing import Any

import pytest

from tests.shim.pod_rules_world import ZONE, Cluster, expr

FAIR = """
partitions:
  - name: default
    nodesortpolicy: {type: fair}
    queues: [{name: root, submitacl: '*', queues: [{name: default}]}]
"""
NO_REQUESTS = [{"name": "main"}]


def weighted(kind: str, weight: int, key: str, **labels: str) -> dict[str, Any]:
    term = {"topologyKey": key, "labelSelector": {"matchLabels": labels}}
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": weight, "podAffinityTerm": term}]}}


def three_empty_nodes(config: str | None = None) -> Cluster:
    cluster = Cluster(config)
    cluster.node("a", zone="z1")
    cluster.node("b", zone="z1")
    cluster.node("c", zone="z2")
    return cluster


def placed(cluster: Cluster, **spec: Any) -> str:
    cluster.submit("p", **spec)
    found = cluster.schedule()
    assert set(found) == {"p"}
    return found["p"]


def test_without_preferences_ties_go_to_the_first_name() -> None:
    assert placed(three_empty_nodes()) == "a"


def test_preferred_node_affinity_takes_the_heaviest_matching_node() -> None:
    preferences = [
        {"weight": 10, "preference": {"matchExpressions": [expr(ZONE, "In", "z2")]}},
        {"weight": 5, "preference": {"matchExpressions": [expr(ZONE, "In", "z1")]}},
    ]
    spec = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferences}}}
    assert placed(three_empty_nodes(), **spec) == "c"


def test_a_prefer_no_schedule_taint_is_avoided_when_another_node_is_as_good() -> None:
    cluster = Cluster()
    cluster.node("a", taints=({"key": "spot", "value": "true", "effect": "PreferNoSchedule"},))
    cluster.node("b")
    assert placed(cluster) == "b"
    cluster = Cluster()
    cluster.node("a", taints=({"key": "spot", "value": "true", "effect": "PreferNoSchedule"},))
    cluster.node("b", cpu="16")  # a half-empty node still loses to the fuller one under binpacking
    cluster.running("busy", "a", herder=True, containers=[{"name": "m", "resources": {"requests": {"cpu": "4"}}}])
    assert placed(cluster) == "a"


def test_preferred_pod_affinity_draws_the_pod_to_the_domain_of_matching_pods() -> None:
    cluster = three_empty_nodes(FAIR)
    cluster.node("0-db", zone="z2")
    cluster.running(
        "db", "0-db", labels={"app": "db"}, containers=[{"name": "m", "resources": {"requests": {"cpu": "1"}}}]
    )
    assert placed(cluster) == "a"  # fair: an empty node, the first by name
    cluster.submit("q", affinity=weighted("podAffinity", 50, ZONE, app="db"))
    assert cluster.schedule() == {"q": "c"}  # the empty node in the db's zone


def test_preferred_anti_affinity_and_schedule_anyway_spread_avoid_crowded_domains() -> None:
    cluster = three_empty_nodes()
    cluster.running("web-0", "a", labels={"app": "web"}, containers=NO_REQUESTS)
    anti = {"affinity": weighted("podAntiAffinity", 100, ZONE, app="web")}
    assert placed(cluster, labels={"app": "web"}, containers=NO_REQUESTS, **anti) == "c"
    cluster = three_empty_nodes()
    cluster.running("web-0", "a", labels={"app": "web"}, containers=NO_REQUESTS)
    soft = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    assert placed(cluster, labels={"app": "web"}, containers=NO_REQUESTS, topologySpreadConstraints=[soft]) == "c"


# kube-scheduler TestPodTopologySpreadScore, "one constraint on node, 3 out of 4 nodes are
# candidates, one node doesn't match topology key": matching pods 4 / 2 (no hostname label) / 1,
# and 3 on a node that cannot take the pod; kube-scheduler scores x 100, a 16, b 0.
def test_schedule_anyway_spread_ranks_a_node_without_the_topology_key_last() -> None:
    def cluster_with(candidates: tuple[str, ...]) -> Cluster:
        cluster = Cluster()
        untolerated = ({"key": "off", "value": "", "effect": "NoSchedule"},)
        for name, pods in (("node-a", 4), ("node-b", 2), ("node-x", 1), ("node-y", 3)):
            if name == "node-b":
                cluster.node(name, hostname=False, n="node-b")
            else:
                cluster.node(name, taints=() if name in candidates else untolerated)
            for i in range(pods):
                cluster.running(f"{name}-{i}", name, labels={"foo": ""}, containers=NO_REQUESTS)
        return cluster

    soft = {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchExpressions": [expr("foo", "Exists")]},
    }
    pod = {"labels": {"foo": ""}, "containers": NO_REQUESTS, "topologySpreadConstraints": [soft]}
    assert placed(cluster_with(("node-a", "node-x")), **pod) == "node-x"
    assert placed(cluster_with(("node-a",)), **pod) == "node-a"  # 4 pods, still above node-b


# kube-scheduler TestTaintTolerationScore: a node scores by the PreferNoSchedule taints the pod
# does not tolerate (tolerated ones count for nothing; fewer is better). Each row is played with
# the node names both ways round, so the first name never decides it, and for a plain pod, a pod
# with preferences of its own and a pod with rules between pods (three ways Herder chooses).
def prefer_no(key: str, value: str) -> dict[str, str]:
    return {"key": key, "value": value, "effect": "PreferNoSchedule"}


def tolerate(key: str, value: str, effect: str = "PreferNoSchedule") -> dict[str, str]:
    return {"key": key, "operator": "Equal", "value": value, "effect": effect}


POD_KINDS = {
    "plain": {},
    "with-preferences": {
        "affinity": {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": {"matchExpressions": [expr("nowhere", "Exists")]}}
                ]
            }
        }
    },
    "with-rules": {"containers": [{"name": "m", "ports": [{"containerPort": 80, "hostPort": 8080}]}]},
}
TAINT_ROWS = {
    # "node with taints tolerated by the pod, gets a higher score than those node with intolerable taints"
    "tolerated-beats-intolerable": (
        [tolerate("foo", "bar")],
        {"A": (prefer_no("foo", "bar"),), "B": (prefer_no("foo", "blah"),)},
        {"A"},
    ),
    # "the more intolerable taints a node has, the lower score it gets" (node A left out)
    "fewer-intolerable-wins": (
        [tolerate("foo", "bar")],
        {"B": (prefer_no("cpu-type", "arm64"),), "C": (prefer_no("cpu-type", "arm64"), prefer_no("disk-type", "ssd"))},
        {"B"},
    ),
    # "the nodes that all of their taints are tolerated by the pod, get the same score, no matter
    # how many tolerable taints a node has"
    "all-tolerated-tie": (
        [tolerate("cpu-type", "arm64"), tolerate("disk-type", "ssd")],
        {
            "A": (),
            "B": (prefer_no("cpu-type", "arm64"),),
            "C": (prefer_no("cpu-type", "arm64"), prefer_no("disk-type", "ssd")),
        },
        {"A", "B", "C"},
    ),
    # "only taints and tolerations that have effect PreferNoSchedule are checked"
    "only-prefer-no-schedule-counts": (
        [tolerate("cpu-type", "arm64", "NoSchedule"), tolerate("disk-type", "ssd", "NoSchedule")],
        {
            "A": (),
            "B": ({"key": "cpu-type", "value": "arm64", "effect": "NoSchedule"},),
            "C": (prefer_no("cpu-type", "arm64"), prefer_no("disk-type", "ssd")),
        },
        {"A", "B"},
    ),
}


@pytest.mark.parametrize("kind", list(POD_KINDS))
@pytest.mark.parametrize("row", list(TAINT_ROWS))
@pytest.mark.parametrize("reverse_names", [False, True])
def test_prefer_no_schedule_taints_count_only_when_not_tolerated(kind: str, row: str, reverse_names: bool) -> None:
    tolerations, taints_by_node, best = TAINT_ROWS[row]
    names = sorted(taints_by_node, reverse=reverse_names)
    node_names = {node: f"n{position}-{node}" for position, node in enumerate(names)}  # sorted as `names`
    cluster = Cluster()
    for node, name in node_names.items():
        cluster.node(name, taints=taints_by_node[node])
    spec = {"containers": NO_REQUESTS, **POD_KINDS[kind]}
    # equally good nodes go to the first name, as every other tie
    assert placed(cluster, tolerations=tolerations, **spec) == min(node_names[node] for node in best)
