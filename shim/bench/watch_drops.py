"""`herder bench --watch-drops SECONDS`: Herder through a proxy that cuts every connection every 2-8 s.

The suite runs `tests/kube/test_watch_drops.py` for 20 s with cuts every 0.5-2 s. This runs the
same test for as long as asked (180 s: the figure issue 34 sets), cuts every 2-8 s and quiet
spells of 5-20 s between the nodes it adds, and reports what it measured: how soon each node
added was used (its waiting pod bound there; the target is 5 s), the pods bound twice and lost
(both must be 0), the cuts and how each watch came back. It needs a source checkout with the
dev extra, like `--soak`.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from shim.bench.soak import run_suite_test

DROPS_TEST = Path("tests") / "kube" / "test_watch_drops.py"
NODE_FRESH_SECONDS = 5.0  # a node added must be used within this (issue 34)


def run_watch_drops(seconds: float, every: str = "2-8", quiet: str = "5-20") -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        report = Path(directory) / "drops.json"
        env = {
            "HERDER_DROPS_SECONDS": str(seconds),
            "HERDER_DROPS_EVERY": every,
            "HERDER_DROPS_QUIET": quiet,
            "HERDER_DROPS_REPORT": str(report),
        }
        passed, outcome, wall, cpu = run_suite_test(DROPS_TEST, env, "--watch-drops")
        figures: dict[str, Any] = json.loads(report.read_text()) if report.is_file() else {}
    restarts = figures.pop("watch_restarts", {})
    if restarts:
        figures["watch_restarts"] = ", ".join(f"{kind} {count}" for kind, count in restarts.items())
    fresh = figures.get("node_used_after_max_seconds", float("inf")) <= NODE_FRESH_SECONDS
    return {
        **figures,
        "held": passed and fresh,
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(cpu, 1),
        "outcome": outcome,
    }
