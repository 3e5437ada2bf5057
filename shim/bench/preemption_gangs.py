"""`herder bench --preemption-gangs NODES`: gangs that preempt to get their guarantee back.

The `gangs` and `queue-preemption` examples scaled up (issue 33): NODES nodes of 16 cores and
64 GiB; queue `root.batch` (no guarantee) fills the cluster at t=0 with two-core pods that
run for two hours; from t=60 s to t=660 s, NODES/5 gangs of 8 to 32 two-core members (YuniKorn
task groups, `minMember` the whole gang) arrive in three queues each guaranteed a quarter of
the cluster, and run 5 to 10 minutes. `preemption.delay` is 30 s: every gang's placeholders
wait, then preempt batch pods, and its members replace them once all are placed. The run ends
at t=1,800 s. Fixed seed: every run plays the same history.

The scenario goes through the whole of `herder simulate` in this process (reading it, the run,
the report), timed in CPU seconds. `python -m shim.bench.preemption_gangs NODES` prints the
scenario as YAML instead, so any checkout can run the same file with `herder simulate FILE`.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from shim.sim.engine import Simulation
from shim.sim.report import build_report
from shim.sim.scenario import load_scenario

NODE_CORES = 16
NODE_MEMORY_GI = 64
TEAMS = ("ml-a", "ml-b", "ml-c")
BATCH_APP_PODS = 64  # batch pods per application (workload entry)
GANG_ARRIVALS = (60, 660)  # first and last gang arrival, simulated seconds
UNTIL = 1800


def _pod(name: str, namespace: str, app: str, queue: str, cpu: int, memory_gi: int) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"yunikorn.apache.org/app-id": app, "yunikorn.apache.org/queue": queue},
        },
        "spec": {
            "schedulerName": "herder",
            "containers": [
                {
                    "name": "main",
                    "image": "work",
                    "resources": {"requests": {"cpu": str(cpu), "memory": f"{memory_gi}Gi"}},
                }
            ],
        },
    }


def scenario(nodes: int, seed: int = 33) -> dict[str, Any]:
    """The scenario for `nodes` nodes, as `herder simulate` reads it."""
    rng = random.Random(seed)
    cores = nodes * NODE_CORES
    share = {"vcore": f"{cores // 4 * 1000}m", "memory": f"{nodes * NODE_MEMORY_GI // 4}Gi"}
    config = {
        "partitions": [
            {
                "name": "default",
                "placementrules": [{"name": "provided"}],
                "queues": [
                    {
                        "name": "root",
                        "submitacl": "*",
                        "properties": {"preemption.delay": "30s"},
                        "queues": [{"name": "batch"}]
                        + [{"name": team, "resources": {"guaranteed": share}} for team in TEAMS],
                    }
                ],
            }
        ]
    }
    workload: list[dict[str, Any]] = []
    batch_pods = cores // 2
    for index, start in enumerate(range(0, batch_pods, BATCH_APP_PODS)):
        count = min(BATCH_APP_PODS, batch_pods - start)
        pod = _pod(f"batch-{index}", "batch", f"batch-{index}", "root.batch", 2, 8)
        workload.append({"at": 0, "count": count, "duration": 7200, "pod": pod})
    gangs = max(1, nodes // 5)
    first, last = GANG_ARRIVALS
    for index in range(gangs):
        members = rng.randint(8, 32)
        team = TEAMS[index % len(TEAMS)]
        app = f"gang-{index}"
        pod = _pod(app, team, app, f"root.{team}", 2, 4)
        pod["metadata"]["annotations"] = {
            "yunikorn.apache.org/task-group-name": "worker",
            "yunikorn.apache.org/task-groups": (
                f'[{{"name": "worker", "minMember": {members}, "minResource": {{"cpu": "2", "memory": "4Gi"}}}}]'
            ),
        }
        at = first + (last - first) * index // max(1, gangs - 1)
        workload.append({"at": at, "count": members, "duration": rng.randint(300, 600), "pod": pod})
    return {
        "name": f"preemption-gangs-{nodes}",
        "config": config,
        "nodes": [
            {
                "name": "worker",
                "count": nodes,
                "allocatable": {"cpu": str(NODE_CORES), "memory": f"{NODE_MEMORY_GI}Gi", "pods": "110"},
            }
        ],
        "namespaces": [{"metadata": {"name": name}} for name in ("batch", *TEAMS)],
        "workload": workload,
        "until": UNTIL,
    }


def run_preemption_gangs_bench(nodes: int) -> dict[str, Any]:
    """Simulate the scenario for `nodes` nodes; CPU and wall time of reading, running, reporting."""
    with tempfile.TemporaryDirectory(prefix="herder-preemption-gangs-") as directory:
        path = Path(directory) / "scenario.yaml"
        path.write_text(yaml.safe_dump(scenario(nodes), sort_keys=False))
        wall, cpu = time.perf_counter(), time.process_time()
        simulation = Simulation(load_scenario(path))
        simulation.run()
        report = build_report(simulation)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    summary = report["summary"]
    preempted = sum(1 for pod in report["pods"].values() if str(pod.get("reason", "")).startswith("preempted by"))
    return {
        "nodes": nodes,
        "gangs": max(1, nodes // 5),
        "pods": len(report["pods"]),
        "bound": summary["bound"],
        "preempted": preempted,
        "cpu_seconds": round(cpu, 2),
        "wall_seconds": round(wall, 2),
    }


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        print("usage: python -m shim.bench.preemption_gangs NODES  (prints the scenario as YAML)", file=sys.stderr)
        sys.exit(2)
    yaml.safe_dump(scenario(int(sys.argv[1])), sys.stdout, sort_keys=False)
