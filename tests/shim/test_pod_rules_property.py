"""A property over random clusters: after every scheduling decision no required rule of a pod
Herder placed is broken, and every DoNotSchedule spread stays within its maxSkew.

Nodes carry a hostname and (most of them) a zone; other schedulers' pods already run, some
with required anti-affinity; Herder's pods come one by one with anti-affinity, affinity or a
zone spread. The check below reads the final cluster with its own brute-force counting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.shim.pod_rules_world import HOSTNAME, ZONE, Cluster, affinity, spread

APPS = ("a", "b", "c")
KEYS = (HOSTNAME, ZONE)


@dataclass(frozen=True)
class PodCase:
    app: str
    rule: str  # none | anti | affinity | spread
    key: str
    target: str


pod_cases = st.builds(
    PodCase,
    app=st.sampled_from(APPS),
    rule=st.sampled_from(("none", "anti", "affinity", "spread")),
    key=st.sampled_from(KEYS),
    target=st.sampled_from(APPS),
)


def rule_spec(case: PodCase, skew: int) -> tuple[dict[str, str], dict[str, Any]]:
    """The pod's labels and spec; spread pods form their own group ("s") sharing one constraint."""
    selector = {"matchLabels": {"app": case.target}}
    if case.rule == "anti":
        return {"app": case.app}, {"affinity": affinity(anti=({"topologyKey": case.key, "labelSelector": selector},))}
    if case.rule == "affinity":
        return {"app": case.app}, {"affinity": affinity({"topologyKey": ZONE, "labelSelector": selector})}
    if case.rule == "spread":
        constraint = spread(ZONE, skew, labelSelector={"matchLabels": {"app": "s"}})
        return {"app": "s"}, {"topologySpreadConstraints": [constraint]}
    return {"app": case.app}, {}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    zones=st.lists(st.sampled_from(("z1", "z2", "z3", None)), min_size=2, max_size=6),
    existing=st.lists(st.tuples(st.integers(0, 5), pod_cases), max_size=5),
    incoming=st.lists(pod_cases, min_size=1, max_size=12),
    skew=st.integers(1, 2),
)
def test_no_required_rule_is_broken_after_any_decision(
    zones: list[str | None], existing: list[tuple[int, PodCase]], incoming: list[PodCase], skew: int
) -> None:
    cluster = Cluster()
    node_labels: dict[str, dict[str, str]] = {}
    for i, zone in enumerate(zones):
        labels = {ZONE: zone} if zone else {}
        cluster.node(f"n{i}", cpu="4", **labels)
        node_labels[f"n{i}"] = {HOSTNAME: f"n{i}", **labels}
    pods: dict[str, tuple[str, dict[str, str], PodCase]] = {}  # name -> (node, labels, case)
    order: list[str] = []
    for j, (node_no, case) in enumerate(existing):
        if case.rule in ("affinity", "spread"):
            case = PodCase(case.app, "none", case.key, case.target)  # foreign pods: only anti-affinity matters
        node = f"n{node_no % len(zones)}"
        labels, spec = rule_spec(case, skew)
        cluster.running(f"f{j}", node, labels=labels, **spec)
        pods[f"f{j}"] = (node, labels, case)
        order.append(f"f{j}")
    herder: list[str] = []
    for k, case in enumerate(incoming):
        labels, spec = rule_spec(case, skew)
        cluster.submit(f"h{k}", labels=labels, cpu="1", **spec)
        for name, node in cluster.schedule().items():
            index = int(name[1:])
            pods[name] = (node, rule_spec(incoming[index], skew)[0], incoming[index])
            order.append(name)
            herder.append(name)
        check(pods, order, herder, node_labels, skew)


def check(
    pods: dict[str, tuple[str, dict[str, str], PodCase]],
    order: list[str],
    herder: list[str],
    node_labels: dict[str, dict[str, str]],
    skew: int,
) -> None:
    def domain(name: str, key: str) -> str | None:
        return node_labels[pods[name][0]].get(key)

    for name in herder:
        node, labels, case = pods[name]
        if case.rule == "anti" and domain(name, case.key) is not None:
            clash = [
                other
                for other in pods
                if other != name
                and pods[other][1].get("app") == case.target
                and domain(other, case.key) == domain(name, case.key)
            ]
            assert clash == [], f"{name} on {node} shares {case.key} with {clash}"
        if case.rule == "affinity":
            assert domain(name, ZONE) is not None, f"{name} placed on {node} without a zone"
            before = order[: order.index(name)]
            # kube-scheduler's first-pod exception counts only matching pods on nodes with the key.
            matching_before = [
                o for o in before if pods[o][1].get("app") == case.target and domain(o, ZONE) is not None
            ]
            near = [
                o
                for o in pods
                if o != name and pods[o][1].get("app") == case.target and domain(o, ZONE) == domain(name, ZONE)
            ]
            first_of_group = not matching_before and labels.get("app") == case.target
            assert near or first_of_group, f"{name} on {node} has no app={case.target} in its zone"
    for holder, (_, _, case) in pods.items():
        if case.rule != "anti" or domain(holder, case.key) is None:
            continue
        for name in herder:
            if name != holder and pods[name][1].get("app") == case.target:
                assert domain(name, case.key) != domain(holder, case.key), f"{name} next to {holder}'s anti-affinity"
    per_zone = {zone: 0 for labels in node_labels.values() if (zone := labels.get(ZONE))}
    for name in herder:
        if pods[name][2].rule == "spread":
            zone = domain(name, ZONE)
            assert zone is not None, f"spread pod {name} on a node without a zone"
            per_zone[zone] += 1
    if per_zone:
        assert max(per_zone.values()) - min(per_zone.values()) <= skew, per_zone
