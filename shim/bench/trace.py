"""`herder bench --trace N`: how long a replay of N pods' history takes (docs/what-if.md).

A week of synthetic history: N pods arriving one by one (a Poisson stream over 7 days), in
applications of three pods across 20 namespaces and 200 users, four sizes (500m to 4 cores),
one in four with priority 100, running 1 minute to 2 hours each, on 200 nodes of 32 cores (the
cluster is busy but not full: the replay measures the simulator, not a queue that never
drains). The trace is written as CSV and replayed through the whole of `herder simulate`:
reading the trace, the run and the report. Fixed seed: every run replays the same history.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from shim.sim.engine import Simulation
from shim.sim.report import build_report
from shim.sim.scenario import load_scenario

WEEK = 7 * 24 * 3600
NODES = 200


def synthetic_trace(pods: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    rows = ["arrival,duration,namespace,user,cpu,memory,pods,application,priority"]
    moment = 0.0
    for index in range(pods):
        moment += rng.expovariate(pods / WEEK)
        app = index // 3
        size = rng.choice(("500m", "1", "2", "4"))
        memory = rng.choice(("1Gi", "2Gi", "8Gi"))
        priority = 100 if rng.random() < 0.25 else 0
        duration = rng.randint(60, 7200)
        rows.append(f"{moment:.1f},{duration},team-{app % 20},u{app % 200},{size},{memory},1,job-{app},{priority}")
    return "\n".join(rows) + "\n"


def run_trace_bench(pods: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="herder-trace-") as directory:
        folder = Path(directory)
        (folder / "week.csv").write_text(synthetic_trace(pods))
        scenario = {
            "name": "trace-bench",
            "nodes": [{"name": "node", "count": NODES, "allocatable": {"cpu": "32", "memory": "128Gi"}}],
            "trace": "week.csv",
        }
        (folder / "replay.yaml").write_text(yaml.safe_dump(scenario))
        wall, cpu = time.perf_counter(), time.process_time()
        simulation = Simulation(load_scenario(folder / "replay.yaml"))
        simulation.run()
        report = build_report(simulation)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    summary = report["summary"]
    return {
        "pods": pods,
        "nodes": NODES,
        "simulated_seconds": summary["sim_seconds"],
        "bound": summary["bound"],
        "cpu_seconds": round(cpu, 2),
        "wall_seconds": round(wall, 2),
        "microseconds_per_pod": round(cpu / max(pods, 1) * 1e6, 1),
    }
