"""The simulated cluster-autoscaler: it buys nodes only for pods Herder marks Unschedulable, never
for pods a queue max holds back; removes nodes empty for long enough; scales a gang up whole
through a ProvisioningRequest or not at all; and the example shows what the old marking costs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shim.sim.scenario import ScenarioError, parse_scenario
from tests.sim.scenarios import node, pod, simulate, simulate_example


def group(name: str = "workers", cpu: str = "4", **extra: Any) -> dict[str, Any]:
    return {"name": name, "node": {"allocatable": {"cpu": cpu, "memory": "16Gi"}}, "max": 10, **extra}


def scenario_events(report: dict[str, Any], reason: str) -> list[dict[str, Any]]:
    return [e for e in report["events"] if e["type"] == "SCENARIO" and e["reason"] == reason]


def triggered(report: dict[str, Any]) -> list[str]:
    return [e["objectID"] for e in scenario_events(report, "TriggeredScaleUp")]


def test_with_the_fix_no_node_is_bought_for_pods_a_queue_max_holds_back() -> None:
    fixed = simulate_example("autoscaling.yaml")
    batch = [name for name in triggered(fixed) if name.startswith("batch/")]
    running_at_start = sum(1 for name, p in fixed["pods"].items() if name.startswith("batch/") and p["bound"] == 0)
    assert running_at_start + len(batch) <= 8  # root.batch's max: 8 one-core pods
    assert fixed["autoscaler"]["groups"]["workers"]["peak"] == 2


def test_without_the_fix_nodes_are_bought_for_held_pods_and_cost_more_for_the_same_work() -> None:
    fixed = simulate_example("autoscaling.yaml")
    old = simulate_example("autoscaling.yaml", {"autoscaling.schedulingSkipped": "false"})
    held = [name for name in triggered(old) if name.startswith("batch/")]
    assert len(held) > 8 - sum(1 for name, p in old["pods"].items() if name.startswith("batch/") and p["bound"] == 0)
    assert old["autoscaler"]["groups"]["workers"]["peak"] > fixed["autoscaler"]["groups"]["workers"]["peak"]
    assert old["autoscaler"]["nodeHours"] > fixed["autoscaler"]["nodeHours"]
    assert old["autoscaler"]["groups"]["workers"]["cost"] > fixed["autoscaler"]["groups"]["workers"]["cost"]
    for report in (fixed, old):  # the same work, done at the same time
        assert report["summary"]["finished"] == 32
    assert fixed["summary"]["sim_seconds"] == old["summary"]["sim_seconds"]


def test_pods_that_lack_a_node_get_one_which_goes_once_empty_for_long_enough() -> None:
    report = simulate(
        {
            "nodeGroups": [group(scaleUpDelay=30, scaleDownAfter=120)],
            "workload": [pod("job", count=6, cpu="2", duration=300)],
        }
    )
    ups, downs = scenario_events(report, "ScaleUp"), scenario_events(report, "ScaleDown")
    assert len(ups) == 3 and {e["timestamp"] for e in ups} == {0}
    assert all(p["bound"] == 30 for p in report["pods"].values())  # the nodes joined 30 s later
    assert {e["timestamp"] for e in downs} == {330 + 120}  # empty at 330, gone 120 s later
    workers = report["autoscaler"]["groups"]["workers"]
    assert (workers["added"], workers["removed"], workers["nodes"]) == (3, 3, 0)
    assert workers["nodeHours"] == pytest.approx(3 * 450 / 3600, abs=1e-3)
    assert [s["nodes"]["workers"] for s in report["timeline"]][:1] == [3]


def test_a_group_keeps_its_min_and_a_pod_no_group_can_take_is_told_so() -> None:
    report = simulate(
        {
            "nodeGroups": [group(min=1, scaleDownAfter=60)],
            "workload": [pod("huge", cpu="16"), pod("small", cpu="1", duration=10)],
        }
    )
    assert report["autoscaler"]["groups"]["workers"]["nodes"] == 1
    assert report["pods"]["default/small"]["node"] == "workers-0"
    assert [e["objectID"] for e in scenario_events(report, "NotTriggerScaleUp")] == ["default/huge"]
    assert report["pods"]["default/huge"]["condition"] == "Unschedulable"
    assert scenario_events(report, "ScaleUp") == [] and scenario_events(report, "ScaleDown") == []


GANG = json.dumps([{"name": "w", "minMember": 3, "minResource": {"cpu": "4", "memory": "1Gi"}}])


def gang(name: str, count: int = 3) -> dict[str, Any]:
    annotations = {"yunikorn.apache.org/task-group-name": "w", "yunikorn.apache.org/task-groups": GANG}
    return pod(name, count=count, cpu="4", duration=600, labels={"applicationId": name}, annotations=annotations)


def test_a_provisioning_request_scales_a_gang_up_whole_and_goes_once_it_runs() -> None:
    report = simulate(
        {
            "settings": {"autoscaling.provisioningRequests": True},
            "nodes": [node("base", cpu="4")],
            "nodeGroups": [group(max=2)],
            "workload": [gang("train")],
        }
    )
    [request] = report["autoscaler"]["provisioningRequests"]
    assert request["application"] == "train" and request["provisioned"] == 0 and request["deleted"] is not None
    ups = scenario_events(report, "ScaleUp")
    assert len(ups) == 2 and {e["timestamp"] for e in ups} == {0}  # both nodes at once
    assert triggered(report) == []  # the gang's pods consume the request, not a scale-up of their own
    assert report["summary"]["finished"] == 3


def test_a_gang_the_groups_cannot_hold_whole_gets_no_node_at_all() -> None:
    report = simulate(
        {
            "settings": {"autoscaling.provisioningRequests": True},
            "nodeGroups": [group(max=2)],
            "workload": [gang("train")],
        }
    )
    assert scenario_events(report, "ScaleUp") == []
    assert scenario_events(report, "ProvisioningRequestNotProvisioned")
    assert all(p["state"] == "Pending" for p in report["pods"].values())


def test_node_groups_are_read_strictly() -> None:
    bad = {
        "nodes": [node("workers")],
        "nodeGroups": [
            {"name": "workers", "node": {"allocatable": {"cpu": "4"}}, "min": 3, "max": 2},
            {"name": "gpu", "max": 1, "scaleDownAfter": -5},
        ],
    }
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(bad)
    assert caught.value.problems == [
        "nodeGroups[0].min: 3 is above max (2)",
        "nodeGroups[1].node: required: the template node, e.g. {allocatable: {cpu: '4', memory: 16Gi}}",
        "nodeGroups[0].name: workers is a node of nodes: its nodes' names would clash",
    ]
