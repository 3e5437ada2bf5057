"""The fuzz test's checker (shim/bench/scenario_checks.py) on scenarios whose answer is known:
a maxapplications lowered below what already runs lets the running applications place their
pods (as YuniKorn does) and is no violation; a new application still waits."""

from __future__ import annotations

from typing import Any

from shim.bench.scenario_checks import check_scenario
from tests.sim.scenarios import node, pod


def config(max_apps: int | None) -> dict[str, Any]:
    batch: dict[str, Any] = {"name": "batch"}
    if max_apps is not None:
        batch["maxapplications"] = max_apps
    return {
        "partitions": [
            {
                "name": "default",
                "placementrules": [{"name": "provided", "create": False}],
                "queues": [{"name": "root", "submitacl": "*", "queues": [batch]}],
            }
        ]
    }


def app_pod(app: str, name: str, at: float) -> dict[str, Any]:
    return pod(name, at=at, duration=100, labels={"applicationId": app, "queue": "root.batch"})


def test_a_running_application_places_more_pods_under_a_lowered_maxapplications_and_a_new_one_waits() -> None:
    document = {
        "name": "lowered",
        "config": config(None),
        "nodes": [node("n", cpu="2")],
        "workload": [app_pod("a", "a-0", 0), app_pod("b", "b-0", 0), app_pod("a", "a-1", 6), app_pod("c", "c-0", 6)],
        "events": [
            {"at": 5, "action": "apply", "object": {"config": config(1)}},
            {"at": 10, "action": "add-node", "node": {"name": "m", "allocatable": {"cpu": "4", "memory": "32Gi"}}},
        ],
        "until": 50,
    }
    outcome = check_scenario(document)
    assert not outcome.refused and outcome.problems == []
    pods = outcome.report["pods"]
    assert pods["default/a-1"]["bound"] == 10, "application a runs already: its pod is placed once a node comes"
    assert pods["default/c-0"]["bound"] is None, "a new application waits while two run above the max of 1"
