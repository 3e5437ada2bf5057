"""`herder bench --soak N`: the binding soak at full size (issue 15, point 8).

The suite runs `tests/kube/test_binding_soak.py` bounded (120 pods, short delays). This runs the
same test, with its own emulator and operator, at the size the issue sets (2,000 pods, 20% of
requests delayed 1-3 s, binding responses lost after commit, 500s and 429s, watches cut and
expired, pods deleted and foreign pods created meanwhile) and reports whether every check held:
every pod bound exactly once, no node over its allocatable, Herder's view equal to the server's,
the placed count never going down while nothing was deleted. It needs a source checkout with the
dev extra (pytest, kmock and the test emulator), like `--emulator`.
"""

from __future__ import annotations

import importlib.util
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SOAK_TEST = Path("tests") / "kube" / "test_binding_soak.py"


def run_soak(pods: int, delays: str) -> dict[str, Any]:
    env = {"HERDER_SOAK_PODS": str(pods), "HERDER_SOAK_SLOW": delays}
    held, outcome, seconds, cpu = run_suite_test(SOAK_TEST, env, "--soak")
    return {
        "pods": pods,
        "delays_seconds": delays,
        "held": held,
        "wall_seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "outcome": outcome,
    }


def run_suite_test(test: Path, env: dict[str, str], flag: str) -> tuple[bool, str, float, float]:
    """Run one of the suite's emulator tests at a size `env` sets: (it passed, its last line and
    the first line of a failed assertion, wall seconds, CPU seconds of the run); RuntimeError
    when this is no source checkout."""
    root = Path(__file__).resolve().parents[2]
    missing = [name for name in ("pytest", "kmock") if importlib.util.find_spec(name) is None]
    if missing or not (root / test).is_file():
        raise RuntimeError(
            f"{flag} runs {test} against kmock's Kubernetes API emulator, which needs a source "
            "checkout with the development dependencies: pip install -e '.[dev]'"
        )
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)]
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    done = subprocess.run(command, cwd=root, env={**os.environ, **env}, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - began
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    outcome = lines[-1] if lines else done.stderr.strip()[-500:]
    # what broke, as pytest said it: the first line of the failed assertion
    broken = next((line[1:].strip() for line in lines if line.startswith("E ")), None)
    return done.returncode == 0, f"{outcome}: {broken[:300]}" if broken else outcome, seconds, cpu
