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

It needs a source checkout with the dev extra (kmock and tests/kube/emulator.py).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import resource
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


def run_emulator_bench(args: argparse.Namespace, progress: Step | None = None) -> dict[str, Any]:
    emulator = _emulator_module()
    step = progress or _silent

    nodes = max(1, min(int(args.nodes), MAX_NODES))
    pods = max(1, min(int(args.pods), MAX_PODS))

    step(f"the emulator's ceiling: {pods:,} pods bound on {nodes:,} nodes by the cheapest client, no Herder")
    with EmulatorProcess(nodes) as alone:
        ceiling = measure_ceiling(alone, pods, nodes)

    memory_before = _maxrss_mib()
    with EmulatorProcess(nodes) as server:
        step(f"Herder through the Kubernetes shim: taking the Lease, then binding a burst of {pods:,} pods")
        replica = emulator.HerderReplica
        first = replica(server, _options("bench-0")).start(timeout=SETTLE_TIMEOUT)
        _wait(lambda: first.leading, "the Lease")
        cpu_before = time.process_time()
        server.create_pods(pods)
        _wait(lambda: server.bound() >= pods, f"{pods} bindings")
        cpu_seconds = time.process_time() - cpu_before
        began, ended = server.span()
        bind_seconds = ended - began
        latencies = server.latencies()
        operator = first.operator
        assert operator is not None
        round_trip = operator.metrics.bind_latency
        rt50, rt99 = round_trip.quantile(0.5), round_trip.quantile(0.99)
        first.stop()

        step("a second replica restarting on the bound cluster (it must bind nothing)")
        bindings_before = server.bindings()
        began_restart = time.monotonic()
        second = replica(server, _options("bench-1")).start(timeout=SETTLE_TIMEOUT)
        recovery_seconds = time.monotonic() - began_restart
        recovered = second.scheduler.queue_document("root")
        second.stop()
        rebinds = server.bindings() - bindings_before

    rate = pods / bind_seconds if bind_seconds > 0 else float("inf")
    return {
        "nodes": nodes,
        "pods": pods,
        "pods_bound_per_second": round(rate, 1),
        "bind_latency_p50_ms": round(quantile(latencies, 0.5) * 1000, 1),
        "bind_latency_p99_ms": round(quantile(latencies, 0.99) * 1000, 1),
        "emulator_ceiling_pods_per_second": ceiling["pods_per_second"],
        "emulator_ceiling_latency_p50_ms": ceiling["latency_p50_ms"],
        "emulator_ceiling_latency_p99_ms": ceiling["latency_p99_ms"],
        "fraction_of_ceiling": round(rate / ceiling["pods_per_second"], 2) if ceiling["pods_per_second"] else 0.0,
        "all_bound_seconds": round(bind_seconds, 2),
        "herder_cpu_seconds": round(cpu_seconds, 2),
        "herder_cpu_ms_per_pod": round(cpu_seconds / pods * 1000, 3),
        "bind_request_p50_ms": round(rt50 * 1000, 1),
        "bind_request_p99_ms": round(rt99 * 1000, 1),
        "restart_recovery_seconds": round(recovery_seconds, 2),
        "recovered_vcore": (recovered or {}).get("allocatedResource", {}).get("vcore", 0),
        "bindings_after_restart": rebinds,
        "memory_mib": round(_maxrss_mib() - memory_before),
    }
