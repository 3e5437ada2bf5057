"""`herder bench --leaves N`: what a decision costs with N leaf queues, against 10.

Every namespace is its own leaf queue under root (placement rule `tag` on the namespace, the
usual one-queue-per-team setup); 20,000 pods of 100m/128Mi are spread evenly over the queues
on 200 nodes of 64 cores, so every pod fits. The figure is CPU time inside `schedule()` per
placement. Each run is a fresh interpreter whose start-up state is frozen out of the cyclic
collector after setup, as `herder run` does after its initial sync.

Two comparisons of a batch placed at once, because the width of the tree is not the only
thing that differs:

- one application per queue (N = 10,000: two pods per application, against 2,000 for 10
  queues), so the wide run also pays for 9,990 more applications starting (their states,
  events and user tracking);
- the same N applications in both runs (for 10 queues, N / 10 applications in each), so the
  difference is the tree's width, though the narrow run then orders 1,000 applications in
  each of its queues.

And one of a live cluster's steady trickle: every queue runs a pod, then 2,000 pods arrive one
at a time, each added and placed by a cycle of its own; the figure is CPU per arriving pod.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from core.config import load_config
from core.scheduler import Scheduler
from shim.bench.callbacks import CountingCallbacks
from shim.command import collect_garbage_less_often, freeze_long_lived
from shim.convert import node_to_info, pod_to_ask

BASELINE_LEAVES = 10
PODS = 20000
ARRIVALS = 2000
NODES = 200


def _pod(index: int, namespace: str, application: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"p{index}",
            "namespace": namespace,
            "uid": f"uid-{index}",
            "labels": {"applicationId": application},
        },
        "spec": {
            "schedulerName": "herder",
            "containers": [{"name": "main", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
        },
    }


def _cluster(leaves: int, nodes: int) -> tuple[Scheduler, dict[str, dict[str, Any]]]:
    """A scheduler with `nodes` empty nodes and the namespaces of `leaves` queues."""
    config = load_config(
        {
            "partitions": [
                {
                    "name": "default",
                    "placementrules": [{"name": "tag", "value": "namespace", "create": True}],
                    "queues": [{"name": "root", "submitacl": "*"}],
                }
            ]
        }
    )
    scheduler = Scheduler(CountingCallbacks(), config)
    for index in range(nodes):
        node = {
            "metadata": {"name": f"node-{index}", "labels": {}},
            "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "250"}},
        }
        scheduler.update_node(node_to_info(node), now=0.0)
    return scheduler, {f"ns-{index}": {"metadata": {"name": f"ns-{index}"}} for index in range(leaves)}


def run_leaves(
    leaves: int, pods: int = PODS, nodes: int = NODES, freeze: bool = True, apps: int | None = None
) -> dict[str, Any]:
    """Place `pods` pods spread over `leaves` namespace queues, in one application per queue or
    in `apps` applications spread over the queues; CPU per decision."""
    scheduler, namespaces = _cluster(leaves, nodes)
    for index in range(pods):
        app = index % (apps or leaves)
        name = f"ns-{app % leaves}"
        application = f"app-{app}" if apps else f"app-{name}"
        scheduler.add_ask(pod_to_ask(_pod(index, name, application), namespaces[name]), now=0.0)
    if freeze:
        freeze_long_lived()
    placed = 0
    began = time.process_time()
    while done := scheduler.schedule(now=1.0):
        placed += done
    cpu = time.process_time() - began
    return {
        "leaves": leaves,
        "applications": apps or leaves,
        "pods": pods,
        "placed": placed,
        "cpu_seconds": round(cpu, 3),
        "us_per_decision": round(cpu / placed * 1e6, 1) if placed else 0.0,
    }


def run_arrivals(leaves: int, pods: int = ARRIVALS, nodes: int = NODES, freeze: bool = True) -> dict[str, Any]:
    """Every one of `leaves` queues runs a pod; then `pods` more arrive one at a time, spread over
    the queues, each added and placed by a cycle of its own (as a live cluster's pods come):
    CPU per arriving pod."""
    scheduler, namespaces = _cluster(leaves, nodes)
    names = list(namespaces)
    for index, name in enumerate(names):
        scheduler.add_ask(pod_to_ask(_pod(index, name, f"app-{name}"), namespaces[name]), now=0.0)
    while scheduler.schedule(now=1.0):
        pass
    arriving = [
        pod_to_ask(_pod(leaves + index, name, f"app-{name}"), namespaces[name])
        for index, name in ((index, names[index % leaves]) for index in range(pods))
    ]
    if freeze:
        freeze_long_lived()
    placed = 0
    began = time.process_time()
    for ask in arriving:
        scheduler.add_ask(ask, now=2.0)
        placed += scheduler.schedule(now=2.0)
    cpu = time.process_time() - began
    return {
        "leaves": leaves,
        "pods": pods,
        "placed": placed,
        "cpu_seconds": round(cpu, 3),
        "us_per_pod": round(cpu / pods * 1e6, 1) if pods else 0.0,
    }


def _isolated(leaves: int, pods: int, apps: int = 0, arrivals: bool = False) -> dict[str, Any]:
    command = [sys.executable, "-m", __name__, str(leaves), str(pods), str(apps), "arrivals" if arrivals else "batch"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench with {leaves} leaf queues failed: {done.stderr.strip()[-2000:]}")
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def run_leaf_bench(leaves: int, pods: int = PODS, rounds: int = 2) -> dict[str, Any]:
    """`leaves` queues against `BASELINE_LEAVES`, alternating, each `rounds` times, with one
    application per queue and with `leaves` applications in both; the best run of each."""
    names = ("wide", "narrow", "wide_same", "narrow_same", "wide_arrivals", "narrow_arrivals")
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for _ in range(rounds):
        runs["narrow"].append(_isolated(BASELINE_LEAVES, pods))
        runs["wide"].append(_isolated(leaves, pods))
        runs["narrow_same"].append(_isolated(BASELINE_LEAVES, pods, leaves))
        runs["wide_same"].append(_isolated(leaves, pods, leaves))
        runs["narrow_arrivals"].append(_isolated(BASELINE_LEAVES, ARRIVALS, arrivals=True))
        runs["wide_arrivals"].append(_isolated(leaves, ARRIVALS, arrivals=True))
    best = {
        name: min(float(run["us_per_decision"] if "us_per_decision" in run else run["us_per_pod"]) for run in found)
        for name, found in runs.items()
    }
    return {
        "leaves": leaves,
        "baseline_leaves": BASELINE_LEAVES,
        "pods": pods,
        "us_per_decision": best["wide"],
        "baseline_us_per_decision": best["narrow"],
        "ratio": _ratio(best["wide"], best["narrow"]),
        "runs_us": [run["us_per_decision"] for run in runs["wide"]],
        "baseline_runs_us": [run["us_per_decision"] for run in runs["narrow"]],
        "same_applications": {
            "applications": leaves,
            "us_per_decision": best["wide_same"],
            "baseline_us_per_decision": best["narrow_same"],
            "ratio": _ratio(best["wide_same"], best["narrow_same"]),
            "runs_us": [run["us_per_decision"] for run in runs["wide_same"]],
            "baseline_runs_us": [run["us_per_decision"] for run in runs["narrow_same"]],
        },
        "arrivals": {
            "pods": ARRIVALS,
            "us_per_pod": best["wide_arrivals"],
            "baseline_us_per_pod": best["narrow_arrivals"],
            "ratio": _ratio(best["wide_arrivals"], best["narrow_arrivals"]),
            "runs_us": [run["us_per_pod"] for run in runs["wide_arrivals"]],
            "baseline_runs_us": [run["us_per_pod"] for run in runs["narrow_arrivals"]],
        },
    }


def _ratio(wide: float, narrow: float) -> float:
    return round(float(wide) / float(narrow), 2)


if __name__ == "__main__":
    collect_garbage_less_often()  # as `herder` does
    leaves, pods, apps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    figures = run_arrivals(leaves, pods) if sys.argv[4] == "arrivals" else run_leaves(leaves, pods, apps=apps or None)
    print(json.dumps(figures))
