"""`herder bench --emulator` runs end to end: every pod bound once, a restart binds nothing again."""

from __future__ import annotations

import argparse

import pytest

from shim.bench.emulator import run_emulator_bench, run_restart

pytestmark = pytest.mark.timeout(180)


def test_the_emulator_bench_binds_every_pod_and_a_restart_binds_none_again() -> None:
    figures = run_emulator_bench(argparse.Namespace(nodes=3, pods=30))
    assert figures["pods"] == 30
    assert figures["pods_bound_per_second"] > 0
    assert figures["emulator_ceiling_pods_per_second"] > 0
    assert figures["herder_cpu_ms_per_pod"] == pytest.approx(figures["herder_cpu_seconds"] / 30 * 1000, abs=0.2)
    assert figures["bindings_after_restart"] == 0
    assert figures["recovered_vcore"] == 30 * 100  # 100m each, recovered by the second replica


def test_the_restart_bench_times_herder_run_to_ready_on_a_bound_cluster_and_it_binds_nothing() -> None:
    figures = run_restart(argparse.Namespace(nodes=20, pods=200))
    assert (figures["nodes"], figures["pods"]) == (20, 200)
    assert figures["ready_seconds"] > 0
    assert figures["sync_seconds"] is not None and figures["sync_seconds"] <= figures["ready_seconds"]
    assert figures["bindings_after_restart"] == 0
    assert figures["recovered_pods"] == 200  # every bound pod read and recovered


def test_repeated_rounds_report_medians_and_each_rounds_share_of_the_ceiling() -> None:
    figures = run_emulator_bench(argparse.Namespace(nodes=3, pods=20, repeat=3))
    assert figures["rounds"] == 3
    shares = [float(share) for share in figures["fraction_of_ceiling_each_round"].split(", ")]
    assert len(shares) == 3
    assert figures["fraction_of_ceiling"] == pytest.approx(sorted(shares)[1], abs=0.006)
    assert figures["emulator_cpu_ms_per_pod"] > 0 and figures["ceiling_emulator_cpu_ms_per_pod"] > 0
    assert figures["bindings_after_restart"] == 0
    assert figures["recovered_vcore"] == 20 * 100  # the last round's cluster, restarted on
