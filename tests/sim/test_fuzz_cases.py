"""Scenarios `herder bench --fuzz` found failing, minimised (entries deleted while the failure
stayed) and kept as they were written: each must now keep every bound and settle.

- `quota-room-taken-by-a-lower-pod.yaml` (seed 600986): an in-quota preemptor evicted a pod to
  fit its quota's runtime; a gang's placeholder of a lower priority, tried first, took the quota
  room the eviction freed; the preemptor evicted the placeholder, the gang made another one, and
  the moment never settled ("still binding or evicting after 1000 rounds").
- `node-room-taken-by-a-lower-pod.yaml` (seed 601724): the same on node room; in-quota
  preemption now holds the node room its victims free, as cross-queue preemption does.
- `held-preemptor-whose-quota-still-refuses.yaml` (seed 701914): with that hold, a preemptor
  whose victims were gone but whose quota still refused it waited for ever; the hold is now let
  go there and a new plan made.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config.safe_yaml import load_yaml
from shim.bench.scenario_checks import check_scenario

CASES = sorted((Path(__file__).parent / "fuzz_cases").glob("*.yaml"))


@pytest.mark.parametrize("path", CASES, ids=[case.stem for case in CASES])
def test_a_scenario_the_fuzzer_found_failing_now_keeps_every_bound(path: Path) -> None:
    outcome = check_scenario(load_yaml(path.read_text()))
    assert not outcome.refused and outcome.problems == []
