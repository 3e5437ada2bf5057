"""`herder bench --leaves N`: what a decision costs with N leaf queues, against 10.

Every namespace is its own leaf queue under root (placement rule `tag` on the namespace, the
usual one-queue-per-team setup), with one application; 20,000 pods of 100m/128Mi are spread
evenly over the queues (N = 10,000: two pods per queue) on 200 nodes of 64 cores, so every pod
fits and the only difference between the two runs is the width of the tree. The figure is CPU
time inside `schedule()` per placement. Each run is a fresh interpreter whose start-up state is
frozen out of the cyclic collector after setup, as `herder run` does after its initial sync.
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
NODES = 200


def _pod(index: int, namespace: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"p{index}",
            "namespace": namespace,
            "uid": f"uid-{index}",
            "labels": {"applicationId": f"app-{namespace}"},
        },
        "spec": {
            "schedulerName": "herder",
            "containers": [{"name": "main", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
        },
    }


def run_leaves(leaves: int, pods: int = PODS, nodes: int = NODES, freeze: bool = True) -> dict[str, Any]:
    """Place `pods` pods spread over `leaves` namespace queues; CPU per decision."""
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
    namespaces = {f"ns-{index}": {"metadata": {"name": f"ns-{index}"}} for index in range(leaves)}
    for index in range(pods):
        name = f"ns-{index % leaves}"
        scheduler.add_ask(pod_to_ask(_pod(index, name), namespaces[name]), now=0.0)
    if freeze:
        freeze_long_lived()
    placed = 0
    began = time.process_time()
    while done := scheduler.schedule(now=1.0):
        placed += done
    cpu = time.process_time() - began
    return {
        "leaves": leaves,
        "pods": pods,
        "placed": placed,
        "cpu_seconds": round(cpu, 3),
        "us_per_decision": round(cpu / placed * 1e6, 1) if placed else 0.0,
    }


def _isolated(leaves: int, pods: int) -> dict[str, Any]:
    command = [sys.executable, "-m", __name__, str(leaves), str(pods)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench with {leaves} leaf queues failed: {done.stderr.strip()[-2000:]}")
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def run_leaf_bench(leaves: int, pods: int = PODS, rounds: int = 2) -> dict[str, Any]:
    """`leaves` queues against `BASELINE_LEAVES`, alternating, each `rounds` times; the best of each."""
    wide: list[dict[str, Any]] = []
    narrow: list[dict[str, Any]] = []
    for _ in range(rounds):
        narrow.append(_isolated(BASELINE_LEAVES, pods))
        wide.append(_isolated(leaves, pods))
    best_wide = min(wide, key=lambda run: float(run["us_per_decision"]))
    best_narrow = min(narrow, key=lambda run: float(run["us_per_decision"]))
    return {
        "leaves": leaves,
        "baseline_leaves": BASELINE_LEAVES,
        "pods": pods,
        "us_per_decision": best_wide["us_per_decision"],
        "baseline_us_per_decision": best_narrow["us_per_decision"],
        "ratio": round(float(best_wide["us_per_decision"]) / float(best_narrow["us_per_decision"]), 2),
        "runs_us": [run["us_per_decision"] for run in wide],
        "baseline_runs_us": [run["us_per_decision"] for run in narrow],
    }


if __name__ == "__main__":
    collect_garbage_less_often()  # as `herder` does
    print(json.dumps(run_leaves(int(sys.argv[1]), int(sys.argv[2]))))
