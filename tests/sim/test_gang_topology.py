"""Topology-aware gangs through `herder simulate`: Kueue's annotations on YuniKorn gangs' pods,
read by the shim's conversion and placed by the core on a simulated cluster of racks."""

from __future__ import annotations

import json
from typing import Any

from tests.sim.scenarios import node, pod, simulate
from tests.sim.test_reservations import OFF, as_gang, entry, example

RACK = "topology.example.com/rack"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"


def rack(name: str, count: int, cpu: str = "8") -> dict[str, Any]:
    return node(f"{name}n", count=count, cpu=cpu, labels={RACK: name})


def gang(
    name: str, members: int, cpu: str, *, at: float = 0, duration: float = 100, topology: str = REQUIRED
) -> dict[str, Any]:
    groups = json.dumps([{"name": "w", "minMember": members, "minResource": {"cpu": cpu}}])
    annotations = {
        "yunikorn.apache.org/task-group-name": "w",
        "yunikorn.apache.org/task-groups": groups,
        topology: RACK,
    }
    return pod(
        name, at=at, count=members, duration=duration, cpu=cpu, labels={"applicationId": name}, annotations=annotations
    )


def racks_of(report: dict[str, Any], name: str, members: int) -> set[str]:
    """The racks a gang's pods ran in (node names are `<rack>n-<i>`)."""
    return {report["pods"][f"default/{name}-{i}"]["node"].partition("n")[0] for i in range(members)}


def test_a_required_gang_runs_whole_in_the_tightest_rack_that_holds_it() -> None:
    report = simulate(
        {
            "nodes": [rack("r1", 2), rack("r2", 4), rack("r3", 3), node("loose", cpu="64")],
            "workload": [gang("small", 4, "4"), gang("big", 8, "4", at=1)],
        }
    )
    assert racks_of(report, "small", 4) == {"r1"}  # 16 cores: every rack holds it, r1 the tightest
    assert racks_of(report, "big", 8) == {"r2"}  # 32 cores: only r2 (the loose node has no rack)
    assert {report["pods"][f"default/big-{i}"]["bound"] for i in range(8)} == {1}


def test_a_gang_no_rack_can_hold_waits_with_the_reason_then_runs_in_one_rack() -> None:
    report = simulate(
        {
            "nodes": [rack("r1", 2), rack("r2", 4), rack("r3", 3)],
            "workload": [
                gang("first", 8, "4"),  # takes r2 until t=100
                gang("second", 8, "4", at=1),  # 32 cores: r1 has 16, r3 24
                pod("plain", at=2, count=4, duration=10, cpu="2", labels={"applicationId": "plain"}),
            ],
            "until": 50,
        }
    )
    pods = report["pods"]
    assert all(pods[f"default/plain-{i}"]["state"] == "Succeeded" for i in range(4))
    for i in range(8):
        assert pods[f"default/second-{i}"]["state"] == "Pending"
        assert pods[f"default/second-{i}"]["reason"] == (
            f"waiting for all 8 placeholders of its gang to be allocated: no rack (label {RACK}) can hold"
            " the gang's 8 x 4 cores"
        )
    waiting = [
        e["message"] for e in report["events"] if e["reason"] == "Unschedulable" and "tg-second" in e["objectID"]
    ]
    assert f"no rack (label {RACK}) can hold the gang's 8 x 4 cores: largest free 24 cores in rack r3" in waiting
    assert report["summary"]["placeholders"] == 8  # first's, replaced; second made none it could place


def test_the_waiting_gang_runs_whole_in_one_rack_once_one_is_free() -> None:
    report = simulate(
        {
            "nodes": [rack("r1", 2), rack("r2", 4), rack("r3", 3)],
            "workload": [gang("first", 8, "4"), gang("second", 8, "4", at=1)],
        }
    )
    assert racks_of(report, "second", 8) == {"r2"}
    assert {report["pods"][f"default/second-{i}"]["bound"] for i in range(8)} == {100}


def test_a_preferred_gang_takes_one_rack_when_it_can_and_spills_over_the_fewest_when_not() -> None:
    report = simulate(
        {
            "nodes": [rack("r1", 2), rack("r2", 2), rack("r3", 1)],
            "workload": [
                gang("one", 3, "4", topology=PREFERRED),  # 12 cores: r1
                gang("two", 6, "4", at=1, topology=PREFERRED),  # 24 of the 28 left: r2 then r3
            ],
        }
    )
    assert racks_of(report, "one", 3) == {"r1"}
    assert racks_of(report, "two", 6) == {"r2", "r3"}
    assert all(report["pods"][f"default/two-{i}"]["bound"] == 1 for i in range(6))


def starving_rack_gang() -> dict[str, Any]:
    """examples/starvation.yaml with its large pod as a gang of two 4-core pods that must share a
    rack: rack r1 is the two 4-core nodes the stream of small pods keeps busy, rack r2 one node
    of 2 cores (too small for the gang)."""
    doc = as_gang(example())
    entry(doc, "big")["pod"]["metadata"]["annotations"][REQUIRED] = RACK
    doc["nodes"] = [rack("r1", 2, cpu="4"), rack("r2", 1, cpu="2")]
    return doc


def test_a_gang_waiting_for_a_rack_reserves_its_nodes_there_and_does_not_starve() -> None:
    report = simulate(starving_rack_gang())
    bound = [report["pods"][f"default/big-{i}"] for i in range(2)]
    assert {pod["node"].partition("n")[0] for pod in bound} == {"r1"}
    assert max(pod["bound"] for pod in bound) < 30
    reserved = [e for e in report["events"] if e["reason"] == "Reserved" and "tg-big" in e["objectID"]]
    assert reserved and all("r1n" in e["message"] for e in reserved)
    # Without reservations the stream keeps the rack busy until it stops.
    starved = simulate(starving_rack_gang(), OFF)
    assert min(starved["pods"][f"default/big-{i}"]["bound"] for i in range(2)) > 250
