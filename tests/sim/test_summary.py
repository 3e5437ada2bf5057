"""The readable summary adds up: every pod of Herder's is counted once, in one state, and what
happened to gangs and applications (reserved, timed out, failed) is shown with its reason."""

from __future__ import annotations

import re

import pytest

from shim.sim.summary import human_summary
from tests.sim.scenarios import EXAMPLES, node, pod, simulate, simulate_example

STATES = ("pending", "running", "finished", "evicted", "deleted", "failed")


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_every_pod_is_in_exactly_one_state(example: str) -> None:
    report = simulate_example(example)
    summary = report["summary"]
    herder = [p for p in report["pods"].values() if p["state"] != "Foreign" and not p.get("placeholder")]
    assert summary["pods"] == len(herder) == sum(summary[state] for state in STATES)
    assert summary["bound"] == summary["running"] + summary["finished"] + summary["evicted"]
    line = next(line for line in human_summary(report).splitlines() if line.startswith("Herder's pods: "))
    total, parts = re.match(r"Herder's pods: (\d+): (.*); other", line).groups()  # type: ignore[union-attr]
    assert int(total) == sum(int(part.split()[0]) for part in parts.split(", "))


def test_a_pod_deleted_while_it_waited_is_deleted_not_evicted() -> None:
    report = simulate(
        {
            "nodes": [node(cpu="2")],
            "workload": [pod("fits", cpu="2"), pod("waits", cpu="2")],
            "events": [
                {"at": 10, "action": "delete", "kind": "Pod", "namespace": "default", "name": "waits"},
                {"at": 20, "action": "delete", "kind": "Pod", "namespace": "default", "name": "fits"},
            ],
        }
    )
    waits, fits = report["pods"]["default/waits"], report["pods"]["default/fits"]
    assert (waits["state"], waits["bound"], waits["evicted"], waits["finished"]) == ("Deleted", None, None, 10)
    assert waits["reason"].startswith("deleted by the scenario at 10s while waiting: queue root would exceed")
    assert (fits["state"], fits["evicted"]) == ("Evicted", 20)  # it ran: deleting it evicted it
    assert {key: report["summary"][key] for key in STATES} == {
        "pending": 0,
        "running": 0,
        "finished": 0,
        "evicted": 1,
        "deleted": 1,
        "failed": 0,
    }
    text = human_summary(report)
    assert "Herder's pods: 2: 0 running, 0 finished, 1 evicted, 1 deleted before they ran, 0 pending" in text
    assert "Evicted:\n  default/fits at 20 s: deleted by the scenario at 20s\n" in text
    assert "Deleted before they ran:\n  1 pod(s): deleted by the scenario at 10s while waiting:" in text


def test_the_gangs_summary_shows_the_reservations_and_the_timeout() -> None:
    text = human_summary(simulate_example("gangs.yaml"))
    assert (
        "Herder's pods: 15: 0 running, 9 finished, 6 failed (their activeDeadlineSeconds or their Hard gang's"
        " timeout), 0 evicted, 0 deleted before they ran, 0 pending" in text
    )
    assert "\nApplications and gangs:\n  at 0 s train-a: GangReserved: all 4 placeholders allocated\n" in text
    assert (
        "  at 90 s mpi-c: Failed: ResourceReservationTimeout: the gang's placeholders were not all allocated"
        " within 30s\n"
    ) in text
    assert "  placeholders: 10 placed: 2 released unused, 8 replaced by their pods" in text
    assert "Evicted:" not in text  # mpi-c's workers never ran
