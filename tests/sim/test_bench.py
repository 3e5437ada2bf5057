"""`herder bench` on tiny clusters: the figures it reports are complete and describe a run in
which every pod that fits was placed. Speed is measured by the bench, never asserted here."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from shim.bench.output import figure_lines
from shim.bench.soak import run_suite_test
from shim.cli import main
from shim.sim.scenario import load_scenario

FIGURES = {
    "nodes",
    "pods",
    "placed",
    "pending",
    "pending_reasons",
    "parked",
    "decisions_per_second",
    "decisions_per_cpu_second",
    "latency_p50_us",
    "latency_p99_us",
    "schedule_seconds",
    "schedule_cpu_seconds",
    "setup_seconds",
    "memory_mib",
    "memory_measure",
}


def bench_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["bench", *args, "--json"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def test_every_pod_is_placed_on_a_cluster_with_room_for_all(capsys: pytest.CaptureFixture[str]) -> None:
    run = bench_json(capsys, "--nodes", "20", "--pods", "200")["scheduling"]
    assert set(run) >= FIGURES
    assert (run["nodes"], run["pods"]) == (20, 200)
    assert run["placed"] == 200
    assert run["pending"] == 0
    assert run["binds"] == 200  # every placement reached the shim's bind callback
    assert run["decisions_per_second"] > 0
    assert 0 < run["latency_p50_us"] <= run["latency_p99_us"]


def test_pods_that_do_not_fit_stay_pending_with_a_reason(capsys: pytest.CaptureFixture[str]) -> None:
    run = bench_json(capsys, "--nodes", "3", "--pods", "300")["scheduling"]
    assert 0 < run["placed"] < 300
    assert run["placed"] + run["pending"] == 300
    assert run["parked"] >= run["pending"]  # each was tried at least once
    # They wait for room: on the nodes or under a queue's max, never for anything else.
    for reason in run["pending_reasons"]:
        assert reason.startswith(("no node fits", "queue ")), reason


def test_settings_reach_the_benched_core(capsys: pytest.CaptureFixture[str]) -> None:
    at_once = bench_json(capsys, "--nodes", "3", "--pods", "300", "--set", "reservation.delay=0s")["scheduling"]
    assert at_once["reservations"] > 0  # the queues' front pods reserved in the first cycle
    default = bench_json(capsys, "--nodes", "3", "--pods", "300")["scheduling"]
    assert default["reservations"] == 0  # the bench's clock never reaches the 2 s delay
    assert main(["bench", "--nodes", "3", "--pods", "3", "--set", "reservation.delay=soon"]) == 2


def test_limits_on_every_queue_leave_the_same_pods_placed(capsys: pytest.CaptureFixture[str]) -> None:
    ugm = bench_json(capsys, "--nodes", "20", "--pods", "200", "--users", "10", "--groups", "3")["ugm"]
    alone, without, limited = ugm["one_user"], ugm["without_limits"], ugm["with_limits"]
    assert set(alone) >= FIGURES and set(without) >= FIGURES and set(limited) >= FIGURES
    assert (alone["users"], without["users"], limited["users"]) == (0, 10, 10)
    assert (without["limits"], limited["limits"]) == (False, True)
    assert alone["placed"] == without["placed"] == limited["placed"] == 200
    assert isinstance(ugm["overhead_percent"], float)
    assert isinstance(ugm["overhead_vs_one_user_percent"], float)


def test_quota_bench_times_a_full_and_an_incremental_recompute(capsys: pytest.CaptureFixture[str]) -> None:
    report = bench_json(capsys, "--quotas", "50")
    assert set(report) == {"quotas"}
    assert report["quotas"]["quotas"] == 50
    assert report["quotas"]["full_ms"] > 0 and report["quotas"]["incremental_ms"] > 0


def test_text_report_names_each_figure(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--nodes", "10", "--pods", "50"]) == 0
    out = capsys.readouterr().out
    for label in ("decisions/s", "p50 decision", "p99 decision", "setup (s)", "ru_maxrss"):
        assert label in out


def test_benches_missing_from_an_install_are_said_plainly(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "shim.bench.scheduling", None)  # as in the container image
    assert main(["bench"]) == 1
    err = capsys.readouterr().err
    assert "not installed" in err and "pip install -e '.[dev]'" in err


def test_emulator_bench_without_kmock_says_how_to_install_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "kmock", None)  # a runtime-only install: no dev extra
    assert main(["bench", "--emulator", "--nodes", "1", "--pods", "1"]) == 1
    err = capsys.readouterr().err
    assert "kmock" in err and "pip install -e '.[dev]'" in err


def test_users_without_groups_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--nodes", "10", "--pods", "50", "--users", "5"]) == 2
    assert "--groups" in capsys.readouterr().err


def test_preemption_bench_preempts_for_the_guaranteed_teams_when_the_cluster_is_full(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = bench_json(capsys, "--nodes", "3", "--pods", "300", "--preemption")["scheduling"]
    assert run["preemption"] is True and run["placed"] + run["pending"] == 300
    assert run["preempted"] > 0  # the bench's callbacks never end a victim, so it stops there


def test_soak_without_kmock_says_how_to_install_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "kmock", None)  # a runtime-only install: no dev extra
    assert main(["bench", "--soak", "10"]) == 1
    err = capsys.readouterr().err
    assert "kmock" in err and "pip install -e '.[dev]'" in err


@pytest.mark.slow
def test_soak_runs_the_binding_soak_and_reports_that_it_held(capsys: pytest.CaptureFixture[str]) -> None:
    soak = bench_json(capsys, "--soak", "12", "--soak-delays", "0.01-0.05")["soak"]
    assert soak["held"] is True and soak["pods"] == 12
    assert "1 passed" in soak["outcome"]


def test_leaf_bench_places_every_pod_over_many_queues_and_compares_with_ten(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = bench_json(capsys, "--leaves", "100", "--leaf-pods", "400")
    assert set(report) == {"leaves"}
    leaves = report["leaves"]
    assert (leaves["leaves"], leaves["baseline_leaves"], leaves["pods"]) == (100, 10, 400)
    assert leaves["us_per_decision"] > 0 and leaves["baseline_us_per_decision"] > 0
    assert leaves["ratio"] == round(leaves["us_per_decision"] / leaves["baseline_us_per_decision"], 2)
    same = leaves["same_applications"]
    assert same["applications"] == 100 and len(same["runs_us"]) == len(same["baseline_runs_us"]) == 2
    assert same["ratio"] == round(same["us_per_decision"] / same["baseline_us_per_decision"], 2)
    arrivals = leaves["arrivals"]
    assert arrivals["us_per_pod"] > 0 and len(arrivals["runs_us"]) == 2
    assert arrivals["ratio"] == round(arrivals["us_per_pod"] / arrivals["baseline_us_per_pod"], 2)


def test_a_leaf_queue_per_namespace_gets_its_pods() -> None:
    from shim.bench.queues import run_leaves

    run = run_leaves(50, pods=200, nodes=4, freeze=False)
    assert (run["placed"], run["applications"]) == (200, 50)
    spread = run_leaves(10, pods=200, nodes=4, freeze=False, apps=50)  # five applications a queue
    assert (spread["placed"], spread["applications"]) == (200, 50)


def test_the_leaf_bench_with_queue_priorities_sets_them_on_root_and_places_every_pod() -> None:
    from shim.bench.queues import _cluster, run_leaves

    scheduler, _ = _cluster(5, 1, priorities=True)
    assert scheduler.queue_document("root")["properties"] == {"priority.offset": "0"}
    run = run_leaves(50, pods=200, nodes=4, freeze=False, priorities=True)
    assert run["placed"] == 200


def test_more_pods_than_the_leaf_bench_nodes_hold_bring_more_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    from shim.bench import queues

    monkeypatch.setattr(queues, "NODES", 1)  # a node holds 250 pods
    monkeypatch.setattr(queues, "PODS_PER_NODE", 100)
    run = queues.run_leaves(10, pods=300, freeze=False)
    assert (run["nodes"], run["placed"]) == (3, 300)


def test_pods_arriving_one_at_a_time_are_each_placed_by_their_own_cycle() -> None:
    from shim.bench.queues import run_arrivals

    run = run_arrivals(50, pods=120, nodes=4, freeze=False)
    assert (run["placed"], run["pods"]) == (120, 120)


def test_node_affinity_on_every_pod_is_reported_with_the_memory_of_a_pending_pod(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from shim.bench.scheduling import synthetic_namespaces, synthetic_pods
    from shim.convert.pods import pod_to_ask

    namespaces = synthetic_namespaces()
    for pod in synthetic_pods(50, list(namespaces), affinity=True):
        ask = pod_to_ask(pod, namespaces[pod["metadata"]["namespace"]])
        assert ask.constraints.required_terms  # the zones (and no GPU nodes for a pod without GPUs)
    run = bench_json(capsys, "--nodes", "30", "--pods", "200", "--node-affinity")["scheduling"]
    assert run["node_affinity"] is True
    assert run["placed"] + run["pending"] == 200 and run["placed"] > 0
    assert isinstance(run["memory_per_pending_pod_kib"], float)  # the size itself is the bench's to measure


def test_each_step_is_said_on_stderr_and_stdout_keeps_the_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--nodes", "3", "--pods", "300"]) == 0
    out, err = capsys.readouterr()
    steps = err.splitlines()
    assert re.fullmatch(r"herder bench: building 3 nodes and 300 pending pods \.\.\. \(\d+\.\d s\)", steps[0])
    assert re.fullmatch(r"herder bench: placing the 300 pods \.\.\. \(\d+\.\d s\)", steps[1])
    assert "herder bench" not in out
    # the reasons pods wait, counted, one a line: no Python dict
    assert "{" not in out
    reasons = out.split("pending because (the most frequent first rules that held them):\n")[1].splitlines()
    counts = [int(line.split()[0].replace(",", "")) for line in reasons]
    pending = int(re.search(r"\npending +([\d,]+)\n", out).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert 0 < sum(counts) <= pending and counts == sorted(counts, reverse=True)
    assert all(len(line.split(None, 1)) == 2 for line in reasons)  # a count, then the reason


def test_json_keeps_stdout_to_the_json_alone(capsys: pytest.CaptureFixture[str]) -> None:
    report = bench_json(capsys, "--quotas", "20")
    assert set(report) == {"quotas"}


def test_help_gives_each_size_and_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Without options: 5,000 nodes and 50,000 pending pods, built and placed" in text
    assert "nodes in the synthetic cluster (default 5000)" in text
    assert "pending pods to place (default 50000)" in text
    assert "events/s added (default 10000)" in text


def test_figures_print_as_labelled_lines() -> None:
    lines = figure_lines({"pods_bound_per_second": 1270.5, "bindings_after_restart": 0, "held": True, "new_one": 3})
    assert lines == [
        "  pods bound per second                  1,270.5",
        "  restart: pods bound again (must be 0)  0",
        "  every check held                       yes",
        "  new one                                3",
    ]


def test_the_decode_bench_times_every_pod_reaching_the_core(monkeypatch: pytest.MonkeyPatch) -> None:
    from shim.bench import decode

    report = decode.run_decode_bench(pods=40, rounds=1)
    assert report["pods"] == 40
    assert all(report[name] > 0 for name in ("pod_to_ask_us", "apply_pending_us", "apply_bound_us"))
    # A pod left waiting would time a shortcut: the bench refuses to report it.
    monkeypatch.setattr(decode, "NAMESPACE", "elsewhere")  # the pods' namespace never appears
    monkeypatch.setattr(decode, "namespace_object", lambda: {"metadata": {"name": "other"}})
    with pytest.raises(RuntimeError, match="0 of 10 pods reached the core as ask"):
        decode.run_decode_bench(pods=10, rounds=1)


def test_the_reservation_cost_scenario_is_valid() -> None:
    path = Path(__file__).resolve().parents[2] / "shim" / "bench" / "scenarios" / "starvation-1000.yaml"
    scenario = load_scenario(path)
    assert sum(node.count for node in scenario.nodes) == 1000
    assert {entry.pod["metadata"]["name"] for entry in scenario.workload} >= {"batch", "report", "wide", "huge"}


def test_gangs_kept_in_one_rack_all_run_on_a_cluster_of_racks(capsys: pytest.CaptureFixture[str]) -> None:
    from shim.bench.scheduling import RACK, synthetic_nodes

    racks = {node["metadata"]["name"]: node["metadata"]["labels"][RACK] for node in synthetic_nodes(64, racks=True)}
    assert len(set(racks.values())) == 4  # racks of 16 nodes
    args = ("--nodes", "64", "--pods", "500", "--gangs", "20", "--gang-topology", "required")
    run = bench_json(capsys, *args)["scheduling"]
    assert run["gang_topology"] == "required"
    assert (run["placeholders"], run["placed"], run["pending"]) == (100, 600, 0)  # 4 gangs, each whole
    assert main(["bench", "--gang-topology", "required"]) == 2  # without --gangs
    assert "--gang-topology needs --gangs" in capsys.readouterr().err


def test_gangs_preempt_the_queue_filling_the_cluster_and_every_pod_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from shim.bench.preemption_gangs import scenario

    run = bench_json(capsys, "--preemption-gangs", "20")["preemption_gangs"]
    every_pod = sum(entry["count"] for entry in scenario(20)["workload"])
    assert run["preempted"] > 0  # the guaranteed teams took their room back from root.batch
    assert run["bound"] == every_pod  # every batch pod and every gang member was bound
    assert run["gangs"] == 4 and run["cpu_seconds"] > 0


def test_the_preemption_bench_evicts_the_same_pods_in_every_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # Pods placed at one moment share a start time, so the victim order falls to their names:
    # two runs evict the same pods from the same nodes (the bench's figures are comparable).
    from shim.bench.callbacks import CountingCallbacks
    from shim.bench.scheduling import run_scheduling

    evicted: list[tuple[str, str]] = []
    monkeypatch.setattr(
        CountingCallbacks, "evict", lambda self, alloc, reason: evicted.append((alloc.key, alloc.node_id))
    )
    runs = []
    for _ in range(3):
        evicted.clear()
        assert run_scheduling(20, 2000, preemption=True)["preempted"] > 0
        runs.append(list(evicted))
    assert runs[0] and runs[0] == runs[1] == runs[2]


def test_a_suite_test_run_at_full_size_says_which_check_broke(tmp_path: Path) -> None:
    broken = tmp_path / "test_broken.py"
    broken.write_text(
        "def test_count() -> None:\n    drops = [(1500, 1499)]\n    assert not drops, f'count went down: {drops}'\n"
    )
    passed, outcome, _, _ = run_suite_test(broken, {}, "--soak")
    assert not passed
    assert "1 failed" in outcome and "count went down: [(1500, 1499)]" in outcome
