"""How long simulated pods live and when they come: `activeDeadlineSeconds` ends a pod as the
kubelet would, and a workload entry's `every` spreads its copies over time."""

from __future__ import annotations

import pytest

from shim.sim.scenario import ScenarioError, parse_scenario
from tests.sim.scenarios import node, pod, simulate


def test_a_pod_that_runs_past_its_active_deadline_fails_at_the_deadline() -> None:
    report = simulate(
        {
            "nodes": [node(cpu="4")],
            "workload": [
                pod("overrun", duration=60, activeDeadlineSeconds=10),
                pod("in-time", duration=5, activeDeadlineSeconds=10),
                pod("no-limit", duration=30),
            ],
        }
    )
    overrun, in_time, no_limit = (report["pods"][f"default/{n}"] for n in ("overrun", "in-time", "no-limit"))
    assert (overrun["state"], overrun["finished"]) == ("Failed", 10) and "DeadlineExceeded" in overrun["reason"]
    assert (in_time["state"], in_time["finished"]) == ("Succeeded", 5)
    assert (no_limit["state"], no_limit["finished"]) == ("Succeeded", 30)
    assert report["summary"]["failed"] == 1 and report["summary"]["finished"] == 2


def test_a_bad_active_deadline_keeps_the_pod_pending_with_the_field_named() -> None:
    report = simulate({"nodes": [node()], "workload": [pod("bad", activeDeadlineSeconds=-5)]})
    entry = report["pods"]["default/bad"]
    assert entry["state"] == "Pending" and "spec.activeDeadlineSeconds" in entry["reason"]


def test_every_spreads_the_copies_of_an_entry_over_time() -> None:
    entry = pod("tick", at=2, count=4, duration=1)
    entry["every"] = 1.5
    report = simulate({"nodes": [node()], "workload": [entry]})
    assert [report["pods"][f"default/tick-{i}"]["created"] for i in range(4)] == [2, 3.5, 5, 6.5]


@pytest.mark.parametrize("every", [0, -1, "often", True])
def test_every_must_be_a_positive_number_of_seconds(every: object) -> None:
    entry = pod("tick", count=2)
    entry["every"] = every
    with pytest.raises(ScenarioError) as err:
        parse_scenario({"workload": [entry]}, "test")
    assert err.value.problems[0].startswith("workload[0].every: must be a positive number of seconds")
