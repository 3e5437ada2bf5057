"""`herder bench --fuzz N`: N random scenarios through the simulator, each checked (a soak).

The suite runs a few dozen of them (tests/sim/test_fuzz_inputs.py, drawn by Hypothesis); this
runs as many as asked, seeded so any failure is reproduced by its seed alone:
`herder bench --fuzz 1 --fuzz-seed S`. With `--fuzz-out DIR` each failing scenario is also
written as `DIR/fuzz-S.yaml`, ready for `herder simulate`. Every scenario must run (or be
refused with a clear error) within `EXAMPLE_SECONDS`, give the same report twice and keep every
bound (shim/bench/scenario_checks.py).
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path
from typing import Any

import yaml

from shim.bench.scenario_checks import Hang, check_scenario, time_limit
from shim.bench.scenario_fuzz import RandomChooser, generate_scenario

EXAMPLE_SECONDS = 60.0


def run_fuzz(count: int, first_seed: int = 0, out: Path | None = None) -> dict[str, Any]:
    """Run scenarios of seeds `first_seed` .. `first_seed + count - 1`; the figures and failures."""
    failures: list[dict[str, Any]] = []
    refused = 0
    began = time.monotonic()
    slowest = (0.0, first_seed)
    for seed in range(first_seed, first_seed + count):
        document = generate_scenario(RandomChooser(seed))
        started = time.monotonic()
        problems: list[str] = []
        try:
            with time_limit(EXAMPLE_SECONDS):
                outcome = check_scenario(document)
            problems = outcome.problems
            if outcome.refused:
                refused += 1
        except Hang as hang:
            problems = [f"hang: {hang}"]
        except Exception as error:  # a traceback is what this looks for
            problems = [f"traceback: {type(error).__name__}: {error}", traceback.format_exc(limit=-4)]
        slowest = max(slowest, (time.monotonic() - started, seed))
        if problems:
            failure: dict[str, Any] = {"seed": seed, "problems": problems}
            if out is not None:
                out.mkdir(parents=True, exist_ok=True)
                path = out / f"fuzz-{seed}.yaml"
                path.write_text(yaml.safe_dump(document, sort_keys=False))
                failure["scenario"] = str(path)
            failures.append(failure)
    return {
        "scenarios": count,
        "first_seed": first_seed,
        "refused": refused,
        "failed": len(failures),
        "failures": failures,
        "wall_seconds": round(time.monotonic() - began, 1),
        "slowest": {"seed": slowest[1], "seconds": round(slowest[0], 2)},
    }


def print_fuzz(report: dict[str, Any]) -> None:
    print(
        f"fuzz: {report['scenarios']} scenarios from seed {report['first_seed']} in {report['wall_seconds']} s"
        f" ({report['refused']} refused as invalid, {report['failed']} failed;"
        f" slowest seed {report['slowest']['seed']}: {report['slowest']['seconds']} s)"
    )
    for failure in report["failures"]:
        where = f" ({failure['scenario']})" if "scenario" in failure else ""
        print(f"  seed {failure['seed']}{where}:")
        for problem in failure["problems"][:5]:
            print(f"    {problem}")
