"""Workload traces (CSV or JSON lines) replayed as a scenario's workload, and `herder trace
--from-pods` turning a cluster's pod history into one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from shim.cli import main
from shim.sim.scenario import ScenarioError, load_scenario
from shim.sim.trace import TraceError, read_trace
from tests.sim.scenarios import node

HEADER = "arrival,duration,namespace,queue,user,groups,cpu,memory,gpu,pods,application,gang,priority,scheduler,name\n"


def _scenario(tmp_path: Path, trace: str, name: str = "week.csv", **extra: Any) -> Path:
    (tmp_path / name).write_text(trace)
    scenario = tmp_path / "replay.yaml"
    scenario.write_text(yaml.safe_dump({"nodes": [node("n", count=2, cpu="4")], "trace": name, **extra}))
    return scenario


def _run(path: Path) -> dict[str, Any]:
    scenario = load_scenario(path)
    from shim.sim.engine import Simulation
    from shim.sim.report import build_report

    simulation = Simulation(scenario)
    simulation.run()
    return build_report(simulation)


def test_a_csv_trace_replays_its_rows_as_pods_with_their_arrival_duration_user_and_size(tmp_path: Path) -> None:
    trace = HEADER + (
        "0,60,batch,,ann,ml;ops,2,1Gi,,2,etl,,,,etl\n"
        "30,,web,,bob,,500m,,,1,,,100,,frontend\n"
        "45,10,web,,,,1,,,1,,,,default-scheduler,other\n"
    )
    report = _run(_scenario(tmp_path, trace))
    pods = report["pods"]
    assert sorted(pods) == ["batch/etl-0", "batch/etl-1", "web/frontend", "web/other"]
    etl = pods["batch/etl-0"]
    assert (etl["created"], etl["bound"], etl["finished"], etl["user"], etl["state"]) == (0, 0, 60, "ann", "Succeeded")
    frontend = pods["web/frontend"]
    assert (frontend["created"], frontend["state"], frontend["user"]) == (30, "Running", "bob")
    assert pods["web/other"]["state"] == "Foreign"
    apps = {app["applicationID"]: app for app in report["state"]["applications"]}
    assert apps["etl"]["groups"] == ["ml", "ops"]


def test_a_gang_row_starts_none_of_its_pods_until_all_fit(tmp_path: Path) -> None:
    """Two 4-core nodes: a gang of three 3-core pods cannot start (only two fit); a gang of two
    one-core pods (in another namespace's queue) fits beside what the first gang reserves."""
    trace = "arrival,namespace,cpu,pods,gang,application\n0,a,3,3,3,big\n0,b,1,2,2,small\n"
    report = _run(_scenario(tmp_path, trace, until=100))
    real = {name: pod for name, pod in report["pods"].items() if not pod.get("placeholder")}
    assert {name: pod["bound"] is not None for name, pod in real.items()} == {
        "a/big-1-0": False,
        "a/big-1-1": False,
        "a/big-1-2": False,
        "b/small-2-0": True,
        "b/small-2-1": True,
    }


def test_json_lines_take_any_resource_by_name(tmp_path: Path) -> None:
    trace = (
        '{"arrival": 0, "requests": {"cpu": "1", "example.com/fpga": 1}, "name": "fpga"}\n{"arrival": 5, "cpu": "1"}\n'
    )
    path = _scenario(tmp_path, trace, name="week.jsonl", nodes=[node("n", cpu="4", **{})])
    report = _run(path)
    fpga = report["pods"]["default/fpga"]
    assert fpga["state"] == "Pending"  # no node offers example.com/fpga
    assert "example.com/fpga" in fpga["reason"]
    assert report["pods"]["default/trace-2-2"]["state"] == "Running"


def test_every_bad_row_is_named_by_line_and_column() -> None:
    trace = "arrival,cpu,pods,gang\n0,1,1,\nsoon,1,1,\n5,1,0,\n5,1,2,3\n"
    with pytest.raises(TraceError) as raised:
        read_trace(trace, "week.csv")
    assert raised.value.problems == [
        "week.csv:3: arrival: must be a number of seconds, got 'soon'",
        "week.csv:4: pods: must be from 1 to 100000, got 0",
        "week.csv:5: gang: 3 members but the row makes 2 pods",
    ]


def test_an_unknown_column_is_refused_with_the_columns_a_trace_has() -> None:
    with pytest.raises(TraceError, match=r"week.csv:1: unknown column 'cores' \(columns: arrival, duration"):
        read_trace("arrival,cores\n0,1\n", "week.csv")


def test_a_scenario_whose_trace_is_missing_or_bad_is_refused_naming_the_file(tmp_path: Path) -> None:
    scenario = tmp_path / "replay.yaml"
    scenario.write_text(yaml.safe_dump({"nodes": [node("n")], "trace": "nowhere.csv"}))
    with pytest.raises(ScenarioError, match=r"trace: cannot read .*nowhere\.csv"):
        load_scenario(scenario)
    bad = _scenario(tmp_path, "arrival\n-5\n")
    with pytest.raises(ScenarioError, match=r"week\.csv:2: arrival: must be from 0"):
        load_scenario(bad)


def test_the_trace_option_adds_a_trace_to_any_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "t.csv").write_text("arrival,cpu,pods\n0,1,3\n")
    scenario = tmp_path / "cluster.yaml"
    scenario.write_text(yaml.safe_dump({"nodes": [node("n", cpu="8")]}))
    assert main(["simulate", str(scenario), "--trace", str(tmp_path / "t.csv"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["bound"] == 3


def _pod_history(name: str, created: str, **extra: Any) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "batch", "creationTimestamp": created, "labels": {}, "annotations": {}},
        "spec": {
            "schedulerName": "herder",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}}],
        },
        "status": {},
    }
    for key, value in extra.items():
        pod[key].update(value)
    return pod


def test_pod_history_becomes_a_trace_that_replays_the_same_pods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = json.dumps({"user": "ann", "groups": ["ml"]})
    finished = {"containerStatuses": [{"state": {"terminated": {"finishedAt": "2026-11-01T10:02:00Z"}}}]}
    history = {
        "kind": "List",
        "items": [
            _pod_history(
                "train",
                "2026-11-01T10:00:00Z",
                metadata={"annotations": {"yunikorn.apache.org/user.info": user}, "labels": {"app": "x"}},
                status={"startTime": "2026-11-01T10:00:30Z", **finished},
            ),
            _pod_history(
                "serve", "2026-11-01T10:01:00Z", spec={"priority": 100}, status={"startTime": "2026-11-01T10:01:00Z"}
            ),
        ],
    }
    pods_file = tmp_path / "pods.json"
    pods_file.write_text(json.dumps(history))
    assert main(["trace", "--from-pods", str(pods_file), "--out", str(tmp_path / "week.csv")]) == 0
    rows = (tmp_path / "week.csv").read_text().splitlines()
    assert rows[0] == HEADER.strip()
    assert rows[1].startswith("0,90,batch,,ann,ml,1500m,1073741824,,1,")
    assert rows[2].startswith("60,,batch,,,,1500m,1073741824,,1,")
    assert ",100,herder,serve" in rows[2]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump({"nodes": [node("n", cpu="8")], "trace": "week.csv"}))
    report = _run(tmp_path / "cluster.yaml")
    assert report["pods"]["batch/train"]["finished"] == 90
    assert report["pods"]["batch/serve"]["created"] == 60


def _trace_manifest(row_text: str, name: str) -> dict[str, Any]:
    from shim.sim.manifests import pod_manifest
    from shim.sim.trace import trace_pod

    [row] = read_trace(HEADER + row_text, "week.csv")
    return pod_manifest(trace_pod(row), name, 30.0, f"uid-{name}")


@pytest.mark.parametrize(
    "rows",
    [
        ("0,60,batch,,ann,ml;ops,2,1Gi,,1,etl-1,,,,a\n", "5,60,batch,,ann,ml;ops,2,1Gi,,1,etl-2,,,,b\n"),
        ("0,,web,root.web,bob,,500m,,1,1,svc-1,,100,,a\n", "9,,web,root.web,bob,,500m,,1,1,svc-9,,100,,b\n"),
        ("0,,default,,,,1,,,1,x-1,,,,a\n", "1,,default,,,,1,,,1,x-2,,,,b\n"),
    ],
)
def test_a_rows_shape_gives_its_later_pods_the_ask_a_full_read_gives(rows: tuple[str, str]) -> None:
    from shim.convert.pods import ask_for_sibling, pod_to_ask
    from shim.sim.manifests import namespace_manifest

    first, later = _trace_manifest(rows[0], "a"), _trace_manifest(rows[1], "b")
    namespace = namespace_manifest(first["metadata"]["namespace"])
    sibling = ask_for_sibling(pod_to_ask(first, namespace), later)
    assert sibling is not None
    assert sibling == pod_to_ask(later, namespace)
    assert sibling.application_id != pod_to_ask(first, namespace).application_id


def test_a_pod_whose_other_labels_differ_is_read_whole() -> None:
    from shim.convert.pods import ask_for_sibling, pod_to_ask

    first = _trace_manifest("0,,batch,,,,1,,,1,etl-1,,,,a\n", "a")
    later = _trace_manifest("0,,batch,,,,1,,,1,etl-2,,,,b\n", "b")
    later["metadata"] = {**later["metadata"], "labels": {**later["metadata"]["labels"], "tier": "gold"}}
    assert ask_for_sibling(pod_to_ask(first, None), later) is None


def test_rows_of_one_shape_follow_their_namespace_when_it_changes(tmp_path: Path) -> None:
    """Rows of one shape share the first pod's ask only while their namespace stays as read: the
    namespace's parent queue annotation changes at t=50, and later rows go under the new parent."""
    config = {
        "partitions": [
            {
                "name": "default",
                "placementrules": [
                    {
                        "name": "tag",
                        "value": "namespace",
                        "create": True,
                        "parent": {"name": "tag", "value": "namespace.parentqueue"},
                    }
                ],
                "queues": [
                    {
                        "name": "root",
                        "submitacl": "*",
                        "queues": [{"name": "research", "parent": True}, {"name": "production", "parent": True}],
                    }
                ],
            }
        ]
    }
    annotation = "yunikorn.apache.org/parentqueue"
    trace = "arrival,duration,namespace,cpu,application\n" + "".join(
        f"{t},10,team,1,job-{t}\n" for t in (0, 20, 40, 60, 80)
    )
    scenario = _scenario(
        tmp_path,
        trace,
        config=config,
        namespaces=[{"metadata": {"name": "team", "annotations": {annotation: "root.research"}}}],
        events=[
            {
                "at": 50,
                "action": "apply",
                "object": {"metadata": {"name": "team", "annotations": {annotation: "root.production"}}},
            }
        ],
    )
    apps = {app["applicationID"]: app["queueName"] for app in _run(scenario)["state"]["applications"]}
    assert apps == {
        "job-0": "root.research.team",
        "job-20": "root.research.team",
        "job-40": "root.research.team",
        "job-60": "root.production.team",
        "job-80": "root.production.team",
    }
