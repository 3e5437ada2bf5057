"""The pending list and `herder explain` name the order the scheduler really places pods in.

A one-cpu node runs one pod at a time; three applications wait behind it. The list taken
while they wait must be the order in which the simulator then binds them, one each time the
running pod ends.
"""

from __future__ import annotations

from typing import Any

from shim.sim.cluster import SimCluster
from shim.sim.engine import Simulation
from shim.sim.report import build_report
from shim.sim.scenario import parse_scenario
from tests.sim.scenarios import node, pod


def app_pod(name: str, app: str, *, at: float, count: int, priority: int | None = None) -> dict[str, Any]:
    entry = pod(name, at=at, count=count, cpu="1", duration=10, labels={"yunikorn.apache.org/app-id": app})
    if priority is not None:
        entry["pod"]["spec"]["priority"] = priority
    return entry


SCENARIO = {
    "nodes": [node(cpu="1")],
    "workload": [
        app_pod("first", "first", at=0, count=3),
        app_pod("second", "second", at=1, count=2),
        app_pod("urgent", "urgent", at=2, count=2, priority=100),
        app_pod("later", "first", at=3, count=1),  # joins the first application: served with it
    ],
}


def test_the_pending_list_is_the_order_pods_are_then_placed() -> None:
    taken: dict[str, Any] = {}
    simulation: Simulation

    def look(t: float, cluster: SimCluster) -> None:
        if t == 3 and not taken:
            taken["line"] = simulation.scheduler.pending_document("root")
            taken["explain"] = simulation.scheduler.explain("default/second-1")

    simulation = Simulation(parse_scenario(SCENARIO, "test"), look)
    simulation.run()
    report = build_report(simulation)

    line = taken["line"]
    assert [entry["position"] for entry in line] == list(range(1, len(line) + 1))
    listed = [entry["name"] for entry in line]
    placed_after = sorted(
        (pods["bound"], name)
        for name, pods in report["pods"].items()
        if pods["bound"] is not None and pods["bound"] > 3
    )
    assert listed == [name for _, name in placed_after]
    assert listed[:2] == ["default/urgent-0", "default/urgent-1"]  # priority first, then submission
    assert {entry["blockedBy"] for entry in line} <= {"no-node-fits", ""}

    explained = taken["explain"]
    assert explained["state"] == "Pending" and explained["waiting"] == len(line)
    assert explained["position"] == listed.index("default/second-1") + 1


def test_with_queue_priorities_the_pending_list_ranks_queues_as_the_cycle_does() -> None:
    """team-a already runs a pod, so fairly team-b would go first; team-a's priority.offset puts
    its pods first, in the list as in the placements that follow."""
    config = {
        "partitions": [
            {
                "name": "default",
                "placementrules": [{"name": "tag", "value": "namespace"}],
                "queues": [
                    {
                        "name": "root",
                        "submitacl": "*",
                        "queues": [
                            {"name": "team-a", "properties": {"priority.offset": "50"}},
                            {"name": "team-b"},
                        ],
                    }
                ],
            }
        ]
    }
    scenario = {
        "config": config,
        "nodes": [node(cpu="1")],
        "workload": [
            pod("running", namespace="team-a", at=0, count=1, cpu="1", duration=10),
            pod("b", namespace="team-b", at=1, count=2, cpu="1", duration=10),
            pod("a", namespace="team-a", at=2, count=2, cpu="1", duration=10),
        ],
    }
    taken: dict[str, Any] = {}
    simulation: Simulation

    def look(t: float, cluster: SimCluster) -> None:
        if t == 2 and not taken:
            taken["line"] = simulation.scheduler.pending_document("root")

    simulation = Simulation(parse_scenario(scenario, "test"), look)
    simulation.run()
    report = build_report(simulation)
    listed = [entry["name"] for entry in taken["line"]]
    placed_after = [
        name for _, name in sorted((p["bound"], name) for name, p in report["pods"].items() if p["bound"] > 2)
    ]
    assert listed == placed_after
    assert listed[:2] == ["team-a/a-0", "team-a/a-1"]
