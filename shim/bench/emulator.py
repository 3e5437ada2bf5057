"""`herder bench --emulator`: the whole Kubernetes shim timed against kmock's API emulator.

What it measures is the shim's own cost on top of the core: the pod and node watches, the conversions,
the binder's HTTP round trips, the start-up listing and a restart's recovery. The emulator runs
in a process of its own (`bench_emulator_process.py`), as an API server runs elsewhere, so
Herder and the emulator each get a core. Beside Herder's figures the bench prints the
emulator's own ceiling: the same burst of pods bound by the cheapest client possible, with no
Herder at all; Herder cannot be measured above it here.

The run: Herder starts on an empty cluster of `--nodes` nodes and takes the Lease; then the
emulator creates `--pods` pending pods in one burst. Throughput is pods over the time from the
first creation to the last binding; latency is each pod's creation to its binding, both taken
by the emulator. A second replica then restarts on the bound cluster and must bind nothing.

The two cores are shared by Herder, the emulator and whatever else runs, so one run's share of
the ceiling moves a lot (0.59-0.85 for one commit on a quiet machine). `--repeat N` measures the
ceiling and Herder's burst N times in alternation, each pair within the same minute, and reports
each figure's median (the share of the ceiling taken within each pair), each round's share, and
the CPU per pod of both processes on both sides: the emulator's CPU per pod serving Herder
against serving the ceiling's client says how much more work Herder's requests make for the
API server, whatever the load.

It needs a source checkout with the dev extra (kmock and tests/kube/emulator.py).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shim.bench.emulator_process import EmulatorProcess, measure_ceiling, quantile
from shim.bench.restart import run_restart_bench
from shim.kube.operator import OperatorOptions
from shim.kube.watch.reload import ConfigSource

HERDER_NAMESPACE = "herder-system"

MAX_NODES = 500
MAX_PODS = 20000
MAX_REPEAT = 20
MAX_RESTART_NODES = 20000
MAX_RESTART_PODS = 200000
SETTLE_TIMEOUT = 600.0


Step = Callable[[str], None]  # hears of each step of a bench (shim.bench.output.Progress.step)


def _silent(what: str) -> None:
    """No progress to tell."""


def _wait(predicate: Any, what: str) -> float:
    began = time.monotonic()
    while not predicate():
        if time.monotonic() - began > SETTLE_TIMEOUT:
            raise RuntimeError(f"bench through the emulator: gave up waiting for {what}")
        time.sleep(0.05)
    return time.monotonic() - began


def _maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _source_checkout() -> None:
    """Put the checkout holding this module on sys.path (the `herder` script does not), for tests.kube."""
    root = Path(__file__).resolve().parents[2]
    if (root / "tests" / "kube" / "emulator.py").exists() and str(root) not in sys.path:
        sys.path.append(str(root))


def _options(identity: str) -> OperatorOptions:
    """What `herder run` uses by default (not the tests' short timeouts), with no REST server."""
    return OperatorOptions(source=ConfigSource(namespace=HERDER_NAMESPACE), identity=identity, rest_port=None)


def _emulator_module() -> Any:
    if importlib.util.find_spec("kmock") is None:
        raise RuntimeError(
            "--emulator runs kmock's Kubernetes API emulator, a development dependency that is not installed: "
            "in a source checkout, pip install -e '.[dev]'"
        )
    _source_checkout()
    try:
        # Test code, not part of the installed package: imported by name so type checks of shim stay apart.
        return importlib.import_module("tests.kube.emulator")
    except ImportError as error:
        raise RuntimeError(
            f"--emulator needs a source checkout with the dev extra (pip install -e '.[dev]'): {error}"
        ) from None


def run_restart(args: argparse.Namespace, progress: Step | None = None) -> dict[str, Any]:
    """`--emulator --restart`: `herder run` to ready on a big bound cluster (shim/bench/restart.py)."""
    _emulator_module()
    nodes = max(1, min(int(args.nodes), MAX_RESTART_NODES))
    pods = max(0, min(int(args.pods), MAX_RESTART_PODS))
    return run_restart_bench(nodes, pods, progress)


def _herder_burst(emulator: Any, server: EmulatorProcess, pods: int) -> dict[str, float]:
    """One Herder replica takes the Lease, then binds a burst of `pods` pods; its figures."""
    first = emulator.HerderReplica(server, _options("bench-0")).start(timeout=SETTLE_TIMEOUT)
    _wait(lambda: first.leading, "the Lease")
    cpu_before, emulator_before = time.process_time(), server.cpu_seconds()
    server.create_pods(pods)
    _wait(lambda: server.bound() >= pods, f"{pods} bindings")
    cpu_seconds = time.process_time() - cpu_before
    emulator_cpu = server.cpu_seconds() - emulator_before
    began, ended = server.span()
    latencies = server.latencies()
    operator = first.operator
    assert operator is not None
    round_trip = operator.metrics.bind_latency
    first.stop()
    seconds = ended - began
    return {
        "pods_per_second": pods / seconds if seconds > 0 else float("inf"),
        "seconds": seconds,
        "latency_p50": quantile(latencies, 0.5),
        "latency_p99": quantile(latencies, 0.99),
        "cpu_seconds": cpu_seconds,
        "emulator_cpu_seconds": emulator_cpu,
        "request_p50": round_trip.quantile(0.5),
        "request_p99": round_trip.quantile(0.99),
    }


def _pair(ceiling: dict[str, float], burst: dict[str, float], pods: int) -> dict[str, Any]:
    """The figures of one round: the ceiling and Herder's burst measured one after the other."""
    rate, ceiling_rate = burst["pods_per_second"], ceiling["pods_per_second"]
    return {
        "pods_bound_per_second": round(rate, 1),
        "bind_latency_p50_ms": round(burst["latency_p50"] * 1000, 1),
        "bind_latency_p99_ms": round(burst["latency_p99"] * 1000, 1),
        "emulator_ceiling_pods_per_second": ceiling_rate,
        "emulator_ceiling_latency_p50_ms": ceiling["latency_p50_ms"],
        "emulator_ceiling_latency_p99_ms": ceiling["latency_p99_ms"],
        "fraction_of_ceiling": round(rate / ceiling_rate, 2) if ceiling_rate else 0.0,
        "all_bound_seconds": round(burst["seconds"], 2),
        "herder_cpu_seconds": round(burst["cpu_seconds"], 2),
        "herder_cpu_ms_per_pod": round(burst["cpu_seconds"] / pods * 1000, 3),
        "emulator_cpu_ms_per_pod": round(burst["emulator_cpu_seconds"] / pods * 1000, 3),
        "ceiling_emulator_cpu_ms_per_pod": ceiling["emulator_cpu_ms_per_pod"],
        "ceiling_client_cpu_ms_per_pod": ceiling["client_cpu_ms_per_pod"],
        "bind_request_p50_ms": round(burst["request_p50"] * 1000, 1),
        "bind_request_p99_ms": round(burst["request_p99"] * 1000, 1),
    }


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the rounds (a round's fraction is taken within its own pair)."""
    return {key: round(statistics.median(run[key] for run in runs), 3) for key in runs[0]}


def run_emulator_bench(args: argparse.Namespace, progress: Step | None = None) -> dict[str, Any]:
    """`--emulator`: the ceiling, then Herder's burst, `--repeat` times in alternation (each in a fresh
    emulator), then a second replica restarting on the last round's bound cluster."""
    emulator = _emulator_module()
    step = progress or _silent

    nodes = max(1, min(int(args.nodes), MAX_NODES))
    pods = max(1, min(int(args.pods), MAX_PODS))
    rounds = max(1, min(int(getattr(args, "repeat", 1) or 1), MAX_REPEAT))
    load_before = os.getloadavg()[0]
    memory_before = _maxrss_mib()
    runs: list[dict[str, Any]] = []
    restart: dict[str, Any] = {}
    for round_ in range(1, rounds + 1):
        of = f" (round {round_} of {rounds})" if rounds > 1 else ""
        step(f"the emulator's ceiling: {pods:,} pods bound on {nodes:,} nodes by the cheapest client, no Herder{of}")
        with EmulatorProcess(nodes) as alone:
            ceiling = measure_ceiling(alone, pods, nodes)
        with EmulatorProcess(nodes) as server:
            step(f"Herder through the Kubernetes shim: taking the Lease, then binding a burst of {pods:,} pods{of}")
            runs.append(_pair(ceiling, _herder_burst(emulator, server, pods), pods))
            if round_ == rounds:
                step("a second replica restarting on the bound cluster (it must bind nothing)")
                restart = _restart(emulator, server)

    figures: dict[str, Any] = {"nodes": nodes, "pods": pods}
    figures.update(runs[0] if rounds == 1 else _medians(runs))
    if rounds > 1:
        figures["rounds"] = rounds
        figures["fraction_of_ceiling_each_round"] = ", ".join(f"{run['fraction_of_ceiling']:.2f}" for run in runs)
        figures["herder_cpu_ms_per_pod_each_round"] = ", ".join(f"{run['herder_cpu_ms_per_pod']:.3f}" for run in runs)
    figures.update(restart)
    figures["memory_mib"] = round(_maxrss_mib() - memory_before)
    figures["load_average"] = f"{load_before:.1f} -> {os.getloadavg()[0]:.1f}"
    return figures


def _restart(emulator: Any, server: EmulatorProcess) -> dict[str, Any]:
    """A second replica starting on the bound cluster: how soon it is ready, what it recovered, and
    how many pods it bound again (must be none)."""
    bindings_before = server.bindings()
    began_restart = time.monotonic()
    second = emulator.HerderReplica(server, _options("bench-1")).start(timeout=SETTLE_TIMEOUT)
    recovery_seconds = time.monotonic() - began_restart
    recovered = second.scheduler.queue_document("root")
    second.stop()
    return {
        "restart_recovery_seconds": round(recovery_seconds, 2),
        "recovered_vcore": (recovered or {}).get("allocatedResource", {}).get("vcore", 0),
        "bindings_after_restart": server.bindings() - bindings_before,
    }
