"""README.md says CI runs exactly `bash .ci/run`: the GitHub workflow does, on every push and pull request."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_the_workflow_runs_the_readmes_check_on_every_push_and_pull_request() -> None:
    workflows = [yaml.safe_load(path.read_text()) for path in sorted((ROOT / ".github" / "workflows").glob("*.yml"))]
    running = [
        workflow
        for workflow in workflows
        for job in workflow["jobs"].values()
        if any(step.get("run", "").strip() == "bash .ci/run" for step in job["steps"])
    ]
    assert running, "no workflow job runs `bash .ci/run`"
    triggers = running[0][True]  # YAML 1.1 reads the key `on` as True
    assert "pull_request" in triggers and "push" in triggers
    assert "bash .ci/run" in (ROOT / "README.md").read_text()
