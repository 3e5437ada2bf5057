"""`herder bench --leaves N`: what a decision costs with N leaf queues, against 10.

Every namespace is its own leaf queue under root (placement rule `tag` on the namespace, the
usual one-queue-per-team setup); 20,000 pods of 100m/128Mi (or `--leaf-pods`) are spread evenly
over the queues on 200 nodes of 64 cores (more for more pods), so every pod fits. The figure is
CPU time inside `schedule()` per placement. Each run is a fresh interpreter whose start-up
state is frozen out of the cyclic collector after setup, as `herder run` does after its initial
sync.

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
from collections.abc import Callable
from typing import Any

from core.config import load_config
from core.scheduler import Scheduler
from shim.bench.callbacks import CountingCallbacks
from shim.command import collect_garbage_less_often, freeze_long_lived
from shim.convert.nodes import node_to_info
from shim.convert.pods import pod_to_ask

BASELINE_LEAVES = 10
PODS = 20000
ARRIVALS = 2000
NODES = 200
PODS_PER_NODE = 200  # of the 250 a node holds: more pods bring more nodes


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


def _cluster(leaves: int, nodes: int, priorities: bool = False) -> tuple[Scheduler, dict[str, dict[str, Any]]]:
    """A scheduler with `nodes` empty nodes and the namespaces of `leaves` queues; with
    `priorities`, root sets `priority.offset`, so queue priorities order its children."""
    root: dict[str, Any] = {"name": "root", "submitacl": "*"}
    if priorities:
        root["properties"] = {"priority.offset": "0"}
    config = load_config(
        {
            "partitions": [
                {
                    "name": "default",
                    "placementrules": [{"name": "tag", "value": "namespace", "create": True}],
                    "queues": [root],
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
    leaves: int,
    pods: int = PODS,
    nodes: int | None = None,
    freeze: bool = True,
    apps: int | None = None,
    priorities: bool = False,
) -> dict[str, Any]:
    """Place `pods` pods spread over `leaves` namespace queues, in one application per queue or
    in `apps` applications spread over the queues; CPU per decision."""
    nodes = nodes or max(NODES, -(-pods // PODS_PER_NODE))
    scheduler, namespaces = _cluster(leaves, nodes, priorities)
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
        "nodes": nodes,
        "placed": placed,
        "cpu_seconds": round(cpu, 3),
        "us_per_decision": round(cpu / placed * 1e6, 1) if placed else 0.0,
    }


def run_arrivals(
    leaves: int, pods: int = ARRIVALS, nodes: int = NODES, freeze: bool = True, priorities: bool = False
) -> dict[str, Any]:
    """Every one of `leaves` queues runs a pod; then `pods` more arrive one at a time, spread over
    the queues, each added and placed by a cycle of its own (as a live cluster's pods come):
    CPU per arriving pod."""
    scheduler, namespaces = _cluster(leaves, nodes, priorities)
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


def _isolated(
    leaves: int, pods: int, apps: int = 0, arrivals: bool = False, priorities: bool = False
) -> dict[str, Any]:
    """One run in a fresh interpreter (`run_arrivals` when `arrivals`, else `run_leaves`)."""
    shape = "arrivals" if arrivals else "batch"
    command = [sys.executable, "-m", __name__, str(leaves), str(pods), str(apps), shape, str(int(priorities))]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench with {leaves} leaf queues failed: {done.stderr.strip()[-2000:]}")
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def run_leaf_bench(
    leaves: int,
    pods: int = PODS,
    rounds: int = 2,
    priorities: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """`leaves` queues against `BASELINE_LEAVES`, alternating, each `rounds` times: a batch with
    one application per queue, a batch with `leaves` applications in both, and pods arriving
    one at a time; the best run of each. `progress` hears of each run."""
    shapes: dict[str, tuple[dict[str, Any], str]] = {
        "batch": ({}, "us_per_decision"),
        "same_applications": ({"apps": leaves}, "us_per_decision"),
        "arrivals": ({"arrivals": True}, "us_per_pod"),
    }
    wide: dict[str, list[float]] = {shape: [] for shape in shapes}
    narrow: dict[str, list[float]] = {shape: [] for shape in shapes}
    runs, total = 0, rounds * len(shapes) * 2
    for _ in range(rounds):
        for shape, (options, figure) in shapes.items():
            count = ARRIVALS if shape == "arrivals" else pods
            for width, figures in ((BASELINE_LEAVES, narrow), (leaves, wide)):
                runs += 1
                if progress is not None:
                    what = shape.replace("_", " ")
                    progress(f"run {runs} of {total}: {width:,} leaf queues, {count:,} pods, {what}")
                figures[shape].append(float(_isolated(width, count, priorities=priorities, **options)[figure]))
    batch = _compared(wide["batch"], narrow["batch"], "us_per_decision")
    return {
        "leaves": leaves,
        "baseline_leaves": BASELINE_LEAVES,
        "queue_priorities": priorities,
        "pods": pods,
        **batch,
        "same_applications": {
            "applications": leaves,
            **_compared(wide["same_applications"], narrow["same_applications"], "us_per_decision"),
        },
        "arrivals": {"pods": ARRIVALS, **_compared(wide["arrivals"], narrow["arrivals"], "us_per_pod")},
    }


def _compared(wide: list[float], narrow: list[float], figure: str) -> dict[str, Any]:
    """The best of the wide runs against the best of the narrow ones, and every run."""
    return {
        figure: min(wide),
        f"baseline_{figure}": min(narrow),
        "ratio": round(min(wide) / min(narrow), 2),
        "runs_us": wide,
        "baseline_runs_us": narrow,
    }


if __name__ == "__main__":
    collect_garbage_less_often()  # as `herder` does
    leaves, pods, apps, priorities = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[5] == "1"
    if sys.argv[4] == "arrivals":
        figures = run_arrivals(leaves, pods, priorities=priorities)
    else:
        figures = run_leaves(leaves, pods, apps=apps or None, priorities=priorities)
    print(json.dumps(figures))
