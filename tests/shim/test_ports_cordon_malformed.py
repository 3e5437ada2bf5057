"""NodePorts, NodeUnschedulable and malformed node affinity, as kube-scheduler's filters judge them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.shim.pod_rules_world import Cluster


def with_ports(*ports: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": "main", "ports": list(ports), "resources": {"requests": {"cpu": "100m"}}}]


def port(number: int, protocol: str = "TCP", ip: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"containerPort": number, "hostPort": number, "protocol": protocol}
    if ip:
        out["hostIP"] = ip
    return out


# (ports in use on the node, ports the incoming pod asks for, fits) as kube-scheduler's NodePorts table.
PORT_ROWS = [
    ("nothing running", [], [port(8080)], True),
    ("other port", [port(9090)], [port(8080)], True),
    ("same port, same ip", [port(8080, ip="127.0.0.1")], [port(8080, ip="127.0.0.1")], False),
    ("same port, other ip", [port(8080, ip="127.0.0.1")], [port(8080, ip="127.0.0.2")], True),
    ("same port, other protocol", [port(8080, "UDP")], [port(8080, "TCP")], True),
    ("wildcard in use takes every ip", [port(8001, ip="0.0.0.0")], [port(8001, ip="127.0.0.1")], False),
    ("wildcard asked conflicts with any ip", [port(8001, ip="127.0.0.1")], [port(8001)], False),
    ("containerPort alone takes no host port", [{"containerPort": 80}], [port(80)], True),
]


@pytest.mark.parametrize(("used", "asked", "fits"), [r[1:] for r in PORT_ROWS], ids=[r[0] for r in PORT_ROWS])
def test_host_ports(used: list[dict[str, Any]], asked: list[dict[str, Any]], fits: bool) -> None:
    cluster = Cluster()
    cluster.node("n1")
    if used:
        cluster.running("daemon", "n1", containers=with_ports(*used))
    verdict = cluster.verdicts(containers=with_ports(*asked))["n1"]
    assert (verdict is None) == fits
    if not fits:
        assert verdict is not None and verdict.startswith("host port ") and verdict.endswith(" in use")


def test_two_pods_asking_the_same_host_port_go_to_different_nodes() -> None:
    cluster = Cluster()
    cluster.node("n1")
    cluster.node("n2")
    for name in ("a", "b", "c"):
        cluster.submit(name, containers=with_ports(port(80)))
    placed = cluster.schedule()
    assert len(placed) == 2 and set(placed.values()) == {"n1", "n2"}
    waiting = ({"a", "b", "c"} - set(placed)).pop()
    assert cluster.reason(waiting) == "no node fits: 2 host port 0.0.0.0:80/TCP in use"


@pytest.mark.parametrize(
    ("tolerations", "fits"),
    [
        ([], False),
        ([{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}], True),
        ([{"operator": "Exists"}], True),
        ([{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoExecute"}], False),
    ],
)
def test_a_cordoned_node_takes_pods_that_tolerate_unschedulable(tolerations: list[dict[str, str]], fits: bool) -> None:
    cluster = Cluster()
    cluster.node("n1")
    cluster.world.sched.update_node(cluster.world.node("n1", schedulable=False, labels={}))
    verdict = cluster.verdicts(tolerations=tolerations)["n1"]
    assert verdict == (None if fits else "node unschedulable")


@pytest.mark.parametrize(
    ("required", "says"),
    [
        ({"nodeSelectorTerms": []}, "nodeSelectorTerms is empty: no node matches"),
        (
            {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In"}]}]},
            "nodeSelectorTerms[0].matchExpressions[0]: operator In needs values",
        ),
        (
            {"nodeSelectorTerms": [{"matchExpressions": [{"key": "cpus", "operator": "Gt", "values": ["many"]}]}]},
            "nodeSelectorTerms[0].matchExpressions[0]: operator Gt needs one integer value, got ['many']",
        ),
        (
            {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "Is", "values": ["n1"]}]}]},
            "nodeSelectorTerms[0].matchFields[0]: unknown operator 'Is'",
        ),
    ],
)
def test_malformed_node_affinity_matches_nothing_and_says_which_term(required: dict[str, Any], says: str) -> None:
    cluster = Cluster()
    cluster.node("n1", zone="z1")
    cluster.submit("p", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}})
    assert cluster.schedule() == {}
    assert cluster.reason("p") == (
        f"pod default/p spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.{says}"
    )
