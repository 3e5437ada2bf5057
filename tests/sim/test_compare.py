"""`herder simulate SCENARIO --compare CANDIDATE`: the pods whose fate changes, and nothing else.

Each case is small enough to check by hand: which pods run, wait or are evicted under the
configuration in force and under the candidate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from shim.cli import main
from shim.sim.candidate import apply_candidate, candidate_kind
from shim.sim.compare import compare_reports, fates
from shim.sim.scenario import ScenarioError
from tests.sim.scenarios import EXAMPLES, node, pod, quota, simulate


def _queues(max_a: int) -> dict[str, Any]:
    return {
        "partitions": [
            {
                "name": "default",
                "placementrules": [{"name": "provided"}],
                "queues": [
                    {
                        "name": "root",
                        "submitacl": "*",
                        "queues": [{"name": "a", "resources": {"max": {"vcore": max_a}}}],
                    }
                ],
            }
        ]
    }


def _queue_scenario() -> dict[str, Any]:
    """One 4-core node; root.a (max 2) gets a one-core pod at t=0, 1, 2 and 3; none ends."""
    workload = [pod(f"a-{i}", at=i, labels={"yunikorn.apache.org/queue": "root.a"}) for i in range(4)]
    return {"config": _queues(2), "nodes": [node("n", cpu="4")], "workload": workload, "until": 100}


def _compare(document: dict[str, Any], candidate: object) -> dict[str, Any]:
    return compare_reports(simulate(document), simulate(apply_candidate(document, candidate)))


def test_a_raised_queue_max_lists_the_one_pod_that_now_runs() -> None:
    comparison = _compare(_queue_scenario(), _queues(3))
    assert comparison["changed"] == {
        "default/a-2": {
            "baseline": "waits",
            "candidate": "ran",
            "reason": "queue root.a would exceed max vcore: 2000m allocated + 1000m asked > 2000m",
        }
    }
    assert comparison["moves"] == {"waits -> ran": 1}
    queue = comparison["candidate"]["queues"]["root.a"]
    assert (queue["pods"], queue["ran"], queue["waits"]) == (4, 3, 1)
    # a-3 came at t=3 and waits until the end (t=100) in both runs; a-2 waited 98 s, then none
    assert comparison["baseline"]["queues"]["root.a"]["wait_mean"] == pytest.approx((98 + 97) / 4)
    assert comparison["candidate"]["queues"]["root.a"]["wait_mean"] == pytest.approx(97 / 4)


def test_a_candidate_that_changes_nothing_lists_no_pod() -> None:
    comparison = _compare(_queue_scenario(), {"scheduler.interval": "0.2s"})
    assert comparison["changed"] == {}
    assert comparison["baseline"]["queues"] == comparison["candidate"]["queues"]


def test_a_shorter_recycle_delay_lists_the_recycled_pods_and_the_lender_pods_they_make_room_for() -> None:
    """8 cores lent to team-a (min 4); team-b asks for its 2 at t=10. With the recycler's delay
    of 120 s nothing moves before the end (t=100); with 30 s the two newest of team-a's pods are
    recycled at t=40 and team-b's two run."""
    a = [pod(f"a-{i}", namespace="team-a", at=i * 0.1) for i in range(8)]
    b = [pod(f"b-{i}", namespace="team-b", at=10) for i in range(2)]
    document = {
        "settings": {"quota.recycle.delay": "120s"},
        "nodes": [node("n", cpu="8", memory="64Gi")],
        "quotas": [
            quota("team-a", min_cpu="4", max_cpu="8"),
            quota("team-b", min_cpu="4", max_cpu="8"),
        ],
        "workload": [*a, *b],
        "until": 100,
    }
    comparison = _compare(document, {"quota.recycle.delay": "30s"})
    assert {name: (c["baseline"], c["candidate"]) for name, c in comparison["changed"].items()} == {
        "team-a/a-6": ("ran", "recycled"),
        "team-a/a-7": ("ran", "recycled"),
        "team-b/b-0": ("waits", "ran"),
        "team-b/b-1": ("waits", "ran"),
    }
    assert comparison["candidate"]["evictions"] == {"preempted": 0, "recycled": 2, "removed": 0}


def test_the_shipped_example_names_the_sweep_pods_that_start_and_the_etl_pods_that_now_wait(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The what-if example: raising root.research's max lets sweep-4..7 run and leaves no room
    for the ETL job; the serving pods and the first half of the sweep are not named."""
    scenario, candidate = EXAMPLES / "what-if.yaml", EXAMPLES / "what-if" / "candidate.yaml"
    code = main(["simulate", str(scenario), "--compare", str(candidate), "--json", "--out", str(tmp_path)])
    assert code == 0
    comparison = json.loads(capsys.readouterr().out)
    moved = {name: (c["baseline"], c["candidate"]) for name, c in comparison["changed"].items()}
    assert moved == {
        **{f"research/sweep-{i}": ("waits", "ran") for i in range(4, 8)},
        **{f"prod/etl-{i}": ("ran", "waits") for i in range(4)},
    }
    assert json.loads((tmp_path / "comparison.json").read_text()) == comparison
    for side in ("baseline", "candidate"):
        report = json.loads((tmp_path / side / "report.json").read_text())
        assert report["summary"]["pods"] == 20
    assert (tmp_path / "compare-usage.png").stat().st_size > 0


def test_the_readable_comparison_names_each_changed_pod_with_why(capsys: pytest.CaptureFixture[str]) -> None:
    scenario, candidate = EXAMPLES / "what-if.yaml", EXAMPLES / "what-if" / "candidate.yaml"
    assert main(["simulate", str(scenario), "--compare", str(candidate)]) == 0
    out = capsys.readouterr().out
    assert "Pods whose fate changes: 8 (4 ran -> waits, 4 waits -> ran)" in out
    assert "research/sweep-4: waits -> ran: queue root.research would exceed max" in out
    assert "serving" not in out


@pytest.mark.parametrize(
    ("candidate", "kind"),
    [
        (_queues(3), "queues.yaml"),
        ({"kind": "ConfigMap", "data": {"queues.yaml": "partitions: []"}}, "ConfigMap"),
        ({"quota.recycle.delay": "30s"}, "settings"),
        ({"nodes": [node("n", cpu="8")], "until": 50}, "scenario patch"),
    ],
)
def test_the_candidate_kind_is_told_by_its_shape(candidate: dict[str, Any], kind: str) -> None:
    assert candidate_kind(candidate) == kind


def test_a_scenario_patch_replaces_entries_by_name_and_merges_settings() -> None:
    document = {
        "settings": {"quota.recycle.delay": "60s"},
        "nodes": [node("n", cpu="4"), node("m", cpu="4")],
        "until": 10,
    }
    patched = apply_candidate(document, {"settings": {"quota.minScaling": False}, "nodes": [node("n", cpu="16")]})
    assert patched["settings"] == {"quota.recycle.delay": "60s", "quota.minScaling": False}
    assert [(n["name"], n["allocatable"]["cpu"]) for n in patched["nodes"]] == [("n", "16"), ("m", "4")]
    assert document["nodes"][0]["allocatable"]["cpu"] == "4"  # the baseline is left as it was


def test_a_candidate_that_is_no_configuration_is_refused_naming_the_key() -> None:
    with pytest.raises(ScenarioError, match="'queues' is neither a scenario key"):
        candidate_kind({"queues": []})


def test_a_candidate_that_breaks_the_scenario_exits_1_with_every_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(_queue_scenario()))
    candidate = tmp_path / "c.yaml"
    candidate.write_text("quota.recycle.dealy: 30s\n")
    assert main(["simulate", str(scenario), "--compare", str(candidate)]) == 1
    err = capsys.readouterr().err
    assert "c.yaml cannot be applied" in err
    assert "quota.recycle.dealy" in err


def test_fates_leave_out_other_schedulers_pods() -> None:
    report = simulate(
        {"nodes": [node("n", cpu="2")], "workload": [pod("mine"), pod("theirs", scheduler="default-scheduler")]}
    )
    assert fates(report) == {"default/mine": "ran"}
