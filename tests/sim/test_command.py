"""`herder simulate` from the command line: JSON on stdout, files with --out, errors without tracebacks."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

from shim.cli import main
from tests.sim.scenarios import EXAMPLES, node, pod


def write(tmp_path: Path, document: object, name: str = "scenario.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document))
    return path


def test_json_prints_the_whole_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(EXAMPLES / "queues-with-quotas.yaml"), "--json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert list(report) == ["name", "until", "pods", "state", "snapshots", "summary", "events", "timeline"]
    assert report["name"] == "queues-with-quotas"
    assert set(report["summary"]) >= {"pods", "bound", "pending", "evicted", "finished", "sim_seconds", "wall_seconds"}
    assert set(report["pods"]["batch/batch-job-0"]) == {
        "state",
        "node",
        "created",
        "bound",
        "finished",
        "evicted",
        "reason",
        "queue",
        "quota",
        "user",
    }
    assert err == ""


def test_out_writes_the_report_and_charts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "run"
    assert main(["simulate", str(EXAMPLES / "elastic-borrowing.yaml"), "--out", str(out_dir), "--quiet"]) == 0
    written = sorted(p.name for p in out_dir.iterdir())
    assert written == ["pending-pods.png", "queue-usage.png", "quota-usage.png", "report.json"]
    for png in out_dir.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = json.loads((out_dir / "report.json").read_text())
    assert report["summary"]["evicted"] == 6
    out, _ = capsys.readouterr()
    assert "wrote " in out and "report.json" in out


def test_json_report_is_compact_unless_indentation_is_asked(capsys: pytest.CaptureFixture[str]) -> None:
    scenario = str(EXAMPLES / "elastic-borrowing.yaml")
    assert main(["simulate", scenario, "--json", "--quiet"]) == 0
    compact = capsys.readouterr().out
    assert main(["simulate", scenario, "--json", "--quiet", "--indent", "2"]) == 0
    indented = capsys.readouterr().out
    assert compact.count("\n") == 1 and ", " not in compact.split('"pods"')[0]
    assert indented.count("\n") > 100
    first, second = json.loads(compact), json.loads(indented)
    for report in (first, second):
        del report["summary"]["wall_seconds"]  # the one figure that is not the scenario's
    assert first == second


def test_human_summary_says_what_ran_and_why_pods_wait(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, {"nodes": [node(cpu="2")], "workload": [pod("job", count=3, cpu="1")], "until": 10})
    assert main(["simulate", str(path), "--quiet"]) == 0
    out, _ = capsys.readouterr()
    assert "Herder's pods: 3: 2 running, 0 finished, 0 evicted, 0 deleted before they ran, 1 pending" in out
    assert "root.default" in out
    assert "Why pods still wait:" in out and "default/job-2" in out


def test_human_summary_says_what_reservations_cost(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(EXAMPLES / "starvation.yaml"), "--quiet"]) == 0
    out, _ = capsys.readouterr()
    line = next(line for line in out.splitlines() if line.startswith("Reservations: "))
    assert re.fullmatch(
        r"Reservations: \d+ made for pods at the front of their queue's line, 1 backfill\(s\);"
        r" reserved nodes sat idle [\d.]+ core-seconds while they drained",
        line,
    )


def test_human_summary_lists_configuration_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old_units = {
        "partitions": [
            {
                "name": "default",
                "queues": [
                    {
                        "name": "root",
                        "queues": [{"name": "sandbox", "resources": {"max": {"memory": 100000, "vcore": 10000}}}],
                    }
                ],
            }
        ]
    }
    path = write(tmp_path, {"config": old_units, "nodes": [node(cpu="2")], "until": 1})
    assert main(["simulate", str(path), "--quiet"]) == 0
    out, _ = capsys.readouterr()
    assert "Configuration warnings (accepted, but read as Herder reads them):" in out
    assert "memory 100000 is read as 100000 bytes" in out and "write '10000m' for 10 cores" in out


def test_invalid_scenario_lists_its_problems_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, {"workload": [{**pod("a"), "count": "many"}], "until": -5})
    assert main(["simulate", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "is not a valid scenario" in err
    assert "  - workload[0].count: must be a whole number from 1 to 100000, got 'many'" in err
    assert "  - until: must be a positive number of seconds up to 3.1536e+08, got -5" in err
    assert "Traceback" not in err


def test_unreadable_scenario_and_bad_set_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(tmp_path / "missing.yaml")]) == 2
    path = write(tmp_path, {"nodes": [node()]})
    assert main(["simulate", str(path), "--set", "quota.recycle.delay"]) == 2
    assert main(["simulate", str(path), "--set", "quota.recycle.delay=never"]) == 2
    _, err = capsys.readouterr()
    assert "cannot read" in err and "expected key=value" in err and "--set quota.recycle.delay:" in err


def test_set_changes_a_setting_for_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["simulate", str(EXAMPLES / "elastic-borrowing.yaml"), "--json", "--quiet"]
    assert main([*args, "--set", "quota.recycle.enabled=false"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["evicted"] == 0
    assert report["state"]["config"]["settings"]["quota.recycle.enabled"] is False


def test_charts_are_optional(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    out_dir = tmp_path / "run"
    assert main(["simulate", str(EXAMPLES / "user-limits.yaml"), "--out", str(out_dir), "--quiet"]) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["report.json"]
    assert "no charts: matplotlib is not installed" in capsys.readouterr().err
