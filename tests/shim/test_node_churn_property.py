"""A property over clusters whose nodes come and go between scheduling decisions.

Node churn is ordinary (an autoscaler's scale-down, a node relabelled by an operator, a cordon
before maintenance), and every rule kept per node must follow it: the node index's columns,
topology domains and spread eligibility, the placed pods counted per node, host ports, scores.
Pods of every rule kind arrive one by one: required anti-affinity and affinity, hard and soft
topology spread, preferred affinity, a host port, a node selector; between two decisions a node
is added, removed, relabelled, cordoned or uncordoned. Every decision must complete (no
exception), and what Herder placed must fit its node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.objects.node_info import NodeInfo
from shim.convert.nodes import node_to_info
from tests.shim.pod_rules_world import HOSTNAME, ZONE, Cluster, affinity, spread

RULES = ("none", "anti", "affinity", "spread", "soft-spread", "preferred", "port", "selector")
ZONES = ("z1", "z2", "z3", None)


@dataclass(frozen=True)
class NodeChange:
    kind: str  # add | remove | relabel | cordon | uncordon
    node: int
    zone: str | None


node_changes = st.builds(
    NodeChange,
    kind=st.sampled_from(("add", "remove", "relabel", "cordon", "uncordon")),
    node=st.integers(0, 7),
    zone=st.sampled_from(ZONES),
)


def pod_spec(rule: str, app: str) -> tuple[dict[str, str], dict[str, Any]]:
    selector = {"matchLabels": {"app": app}}
    if rule == "anti":
        return {"app": app}, {"affinity": affinity(anti=({"topologyKey": HOSTNAME, "labelSelector": selector},))}
    if rule == "affinity":
        return {"app": app}, {"affinity": affinity({"topologyKey": ZONE, "labelSelector": selector})}
    if rule == "spread":
        hard = spread(ZONE, 1, labelSelector={"matchLabels": {"app": "s"}})
        return {"app": "s"}, {"topologySpreadConstraints": [hard]}
    if rule == "soft-spread":
        soft = spread(ZONE, 1, labelSelector=selector, whenUnsatisfiable="ScheduleAnyway")
        return {"app": app}, {"topologySpreadConstraints": [soft]}
    if rule == "preferred":
        term = {"weight": 10, "podAffinityTerm": {"topologyKey": ZONE, "labelSelector": selector}}
        return {"app": app}, {"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}}
    if rule == "port":
        container = {"name": "main", "resources": {"requests": {"cpu": "1"}}}
        return {"app": app}, {"containers": [{**container, "ports": [{"containerPort": 80, "hostPort": 8080}]}]}
    if rule == "selector":
        return {"app": app}, {"nodeSelector": {ZONE: "z1"}}
    return {"app": app}, {}


def node_info(name: str, zone: str | None, cordoned: bool) -> NodeInfo:
    labels = {HOSTNAME: name, **({ZONE: zone} if zone else {})}
    return node_to_info(
        {
            "metadata": {"name": name, "labels": labels},
            "spec": {"unschedulable": cordoned},
            "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
        }
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    zones=st.lists(st.sampled_from(ZONES), min_size=1, max_size=5),
    steps=st.lists(
        st.tuples(st.sampled_from(RULES), st.sampled_from(("a", "b")), st.lists(node_changes, max_size=2)),
        min_size=1,
        max_size=14,
    ),
)
def test_every_decision_completes_while_nodes_come_and_go(
    zones: list[str | None], steps: list[tuple[str, str, list[NodeChange]]]
) -> None:
    cluster = Cluster()
    sched = cluster.world.sched
    nodes: dict[str, tuple[str | None, bool]] = {}  # name -> (zone, cordoned)
    for i, zone in enumerate(zones):
        nodes[f"n{i}"] = (zone, False)
        sched.update_node(node_info(f"n{i}", zone, False))
    placed: dict[str, str] = {}
    for k, (rule, app, changes) in enumerate(steps):
        labels, spec = pod_spec(rule, app)
        spec.setdefault("containers", [{"name": "main", "resources": {"requests": {"cpu": "1"}}}])
        cluster.submit(f"h{k}", labels=labels, **spec)
        placed.update(cluster.schedule())
        for change in changes:
            name = f"n{change.node}"
            if change.kind == "remove":
                if nodes.pop(name, None) is not None:
                    sched.remove_node(name)
                    placed = {pod: node for pod, node in placed.items() if node != name}
                continue
            zone, cordoned = nodes.get(name, (change.zone, False))
            if change.kind == "relabel":
                zone = change.zone
            elif change.kind in ("cordon", "uncordon"):
                cordoned = change.kind == "cordon"
            nodes[name] = (zone, cordoned)
            sched.update_node(node_info(name, zone, cordoned))
        placed.update(cluster.schedule())
    per_node: dict[str, int] = {}
    for pod, node in placed.items():
        assert node in nodes, f"{pod} placed on {node}, which had left"
        per_node[node] = per_node.get(node, 0) + 1
    assert all(count <= 4 for count in per_node.values()), per_node
