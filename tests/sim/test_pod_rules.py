"""Rules between pods through `herder simulate`: Deployments with anti-affinity and zone spread,
and a foreign pod whose anti-affinity keeps Herder's pods away."""

from __future__ import annotations

from typing import Any

from tests.sim.scenarios import node, pod, simulate, simulate_example

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def anti_affinity(key: str, **labels: str) -> dict[str, Any]:
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": key, "labelSelector": {"matchLabels": labels}}
            ]
        }
    }


def zones(*counts: int) -> list[dict[str, Any]]:
    return [node(f"zone{z}", count=count, cpu="4", labels={ZONE: f"z{z}"}) for z, count in enumerate(counts, 1)]


def test_replicas_with_hostname_anti_affinity_take_one_node_each_and_the_rest_wait() -> None:
    web = pod("web", count=4, cpu="1", labels={"app": "web"}, affinity=anti_affinity(HOSTNAME, app="web"))
    report = simulate({"nodes": [node("n", count=3, cpu="8")], "workload": [web]})
    pods = report["pods"]
    nodes = [p["node"] for p in pods.values() if p["node"]]
    assert sorted(nodes) == ["n-0", "n-1", "n-2"]
    waiting = [p for p in pods.values() if p["node"] is None]
    assert len(waiting) == 1
    assert waiting[0]["reason"] == f"no node fits: 3 pod anti-affinity on {HOSTNAME}"


def test_zone_spread_keeps_a_deployment_balanced_as_it_grows() -> None:
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "train"}},
        }
    ]
    first = pod("worker", count=5, cpu="1", labels={"app": "train"}, topologySpreadConstraints=spread)
    later = pod("late", at=10, count=4, cpu="1", labels={"app": "train"}, topologySpreadConstraints=spread)
    report = simulate({"nodes": zones(2, 1, 1), "workload": [first, later], "until": 20})
    per_zone: dict[str, int] = {}
    for p in report["pods"].values():
        assert p["node"] is not None, p
        zone = p["node"].split("-")[0]
        per_zone[zone] = per_zone.get(zone, 0) + 1
    assert per_zone == {"zone1": 3, "zone2": 3, "zone3": 3}


def test_a_foreign_pods_anti_affinity_keeps_herder_pods_without_rules_off_its_node() -> None:
    guard = pod(
        "guard",
        scheduler="default-scheduler",
        cpu="1",
        nodeSelector={HOSTNAME: "a"},
        affinity=anti_affinity(HOSTNAME, team="noisy"),
    )
    noisy = pod("noisy", at=1, count=2, cpu="1", labels={"team": "noisy"})
    quiet = pod("quiet", at=1, cpu="1", nodeSelector={HOSTNAME: "a"})
    report = simulate({"nodes": [node("a", cpu="8"), node("b", cpu="8")], "workload": [guard, noisy, quiet]})
    pods = report["pods"]
    assert pods["default/guard"]["node"] == "a"
    assert {pods[f"default/noisy-{i}"]["node"] for i in range(2)} == {"b"}
    assert pods["default/quiet"]["node"] == "a"


def test_the_placement_rules_example_runs_as_its_comments_say() -> None:
    report = simulate_example("placement-rules.yaml")
    pods = report["pods"]
    db = pods["shop/db"]["node"]
    web = [pods[f"shop/web-{i}"] for i in range(4)]
    assert sorted(p["node"] for p in web[:3]) == ["zone1", "zone2", "zone3"]
    assert web[3]["bound"] == 30 and web[3]["node"] == "zone1-extra"
    waited = [e["message"] for e in report["events"] if e["reason"] == "Unschedulable" and e["name"] == "shop/web-3"]
    assert waited == [f"no node fits: 3 pod anti-affinity on {HOSTNAME}"]
    assert {pods[f"shop/cache-{i}"]["node"] for i in range(2)} == {db}
    per_node: dict[str, int] = {}
    for i in range(6):
        node_name = pods[f"ml/train-{i}"]["node"]
        per_node[node_name] = per_node.get(node_name, 0) + 1
    assert sorted(per_node.values()) == [2, 2, 2]


def _affine_to_db_in_prod_namespaces() -> dict[str, Any]:
    return {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "topologyKey": HOSTNAME,
                    "labelSelector": {"matchLabels": {"app": "db"}},
                    "namespaceSelector": {"matchLabels": {"env": "prod"}},
                }
            ]
        }
    }


def test_a_namespace_selector_follows_the_namespaces_labels_as_they_change() -> None:
    db = pod("db", namespace="data", cpu="1", labels={"app": "db"}, nodeSelector={HOSTNAME: "b"})
    cache = pod("cache", namespace="web", cpu="1", affinity=_affine_to_db_in_prod_namespaces())
    relabel = {"at": 10, "action": "apply", "object": {"metadata": {"name": "data", "labels": {"env": "prod"}}}}
    report = simulate(
        {
            "nodes": [node("a", cpu="8"), node("b", cpu="8")],
            "namespaces": [{"metadata": {"name": "data", "labels": {"env": "dev"}}}, {"metadata": {"name": "web"}}],
            "workload": [db, cache],
            "events": [relabel],
            "until": 20,
        }
    )
    pods = report["pods"]
    assert pods["data/db"]["node"] == "b"
    # `data` is not env=prod until t=10: the db there does not count before, and does after.
    assert (pods["web/cache"]["node"], pods["web/cache"]["bound"]) == ("b", 10)


def test_zone_spread_keeps_scheduling_after_a_node_leaves() -> None:
    """A scale-down between two batches of a spread deployment: the second batch is placed
    over the nodes left (the index's node count changed under the kept spread masks)."""
    constraint = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "train"}},
    }
    first = pod("w", count=4, duration=100, labels={"app": "train"}, topologySpreadConstraints=[constraint])
    second = pod("v", at=20, count=4, duration=100, labels={"app": "train"}, topologySpreadConstraints=[constraint])
    scenario = {
        "nodes": zones(3, 3),
        "workload": [first, second],
        "events": [{"at": 10, "action": "remove-node", "name": "zone2-2"}],
        "until": 200,
    }
    pods = simulate(scenario)["pods"]
    assert all(p["state"] == "Succeeded" for p in pods.values()), pods
    assert sorted(p["node"][:5] for p in pods.values()).count("zone1") == 4
