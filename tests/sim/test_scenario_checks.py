"""The fuzz test's checker (shim/bench/scenario_checks.py) on scenarios whose answer is known:
a maxapplications lowered below what already runs lets the running applications place their
pods (as YuniKorn does) and is no violation; a new application still waits. A quota's runtime
lowered by a default-quota pod placed after its own in one cycle is no violation either."""

from __future__ import annotations

from typing import Any

from shim.bench.scenario_checks import check_scenario
from tests.sim.scenarios import node, pod, quota, quota_doc


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


def test_a_default_quota_pod_placed_later_in_the_same_moment_may_lower_a_runtime_already_used() -> None:
    """The quota tree shares the cluster less what the default quota uses (Koordinator's
    totalResourceExceptSystemAndDefaultUsed): team-a is admitted within its runtime, then a pod
    of no quota placed in the same cycle shrinks the pool and team-a's runtime below its use."""
    labels = "quota.scheduling.koordinator.sh"
    parent = quota("org", min_cpu="8", max_cpu="8", **{f"{labels}/is-parent": "true"})
    document = {
        "name": "pool",
        "config": config(None),
        "nodes": [node("n", cpu="8")],
        "quotas": [
            parent,
            quota("team-a", min_cpu="1", max_cpu="8", **{f"{labels}/parent": "org"}),
            quota("team-b", min_cpu="4", max_cpu="8", **{f"{labels}/parent": "org"}),
        ],
        "workload": [
            # team-b asks for its min and can never run: it holds its share of org's runtime
            pod("b-0", namespace="team-b", cpu="4", nodeSelector={"zone": "none"}, labels={"queue": "root.batch"}),
            pod("a-0", namespace="team-a", cpu="3", labels={"applicationId": "a", "queue": "root.batch"}),
            pod("c-0", namespace="team-c", cpu="3", labels={"applicationId": "c", "queue": "root.batch"}),
        ],
        "until": 5,
    }
    outcome = check_scenario(document)
    assert not outcome.refused and outcome.problems == []
    report = outcome.report
    assert report["pods"]["team-a/a-0"]["bound"] == 0 and report["pods"]["team-c/c-0"]["bound"] == 0
    team_a = quota_doc(report["state"], "team-a")
    assert team_a["used"]["vcore"] > team_a["runtime"]["vcore"], "the later pod lowered team-a's runtime"
