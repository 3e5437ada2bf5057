"""Scenario files that hung or crashed `herder simulate`: each is now one clear error, at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.scheduler import Scheduler
from shim.kube.watch.reload import ConfigReloader, ConfigSource
from shim.sim.scenario import ScenarioError, load_scenario
from tests.shim.rest_world import Recorder
from tests.sim.scenarios import simulate

POD = "{metadata: {name: p}, spec: {schedulerName: herder, containers: [{name: m}]}}"
NODES = "nodes: [{name: n, allocatable: {cpu: '4'}}]\n"
LABELS = "quota.scheduling.koordinator.sh"


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (f"workload: [{{at: .nan, pod: {POD}}}]", "workload[0].at: must be a number of seconds from 0"),
        (f"workload: [{{at: 1.0e+308, pod: {POD}}}]", "workload[0].at: must be a number of seconds from 0"),
        (f"workload: [{{at: 1, duration: .nan, pod: {POD}}}]", "workload[0].duration: must be a positive number"),
        (f"workload: [{{count: 1000000000, pod: {POD}}}]", "workload[0].count: must be a whole number from 1 to"),
        ("until: .inf", "until: must be a positive number of seconds"),
        ("quotas: [{kind: ElasticQuota, metadata: {name: q, labels: 5}, spec: {}}]", "quotas[0].metadata.labels"),
    ],
)
def test_hostile_numbers_and_shapes_are_refused_naming_the_key(tmp_path: Path, body: str, named: str) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(NODES + body + "\n")
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    assert any(named in problem for problem in refused.value.problems), refused.value.problems


def test_a_scenario_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_bytes(b"nodes: [{name: \xff}]\n")
    with pytest.raises(ScenarioError, match=r"not UTF-8 text \(byte 15\)"):
        load_scenario(path)


def test_the_total_pod_count_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    entries = ", ".join(
        f"{{count: 100000, pod: {{metadata: {{name: p{i}}}, spec: {{containers: [{{name: m}}]}}}}}}" for i in range(11)
    )
    path.write_text(NODES + f"workload: [{entries}]\n")
    with pytest.raises(ScenarioError, match="1100000 pods in all"):
        load_scenario(path)


def test_a_quota_chain_500_deep_is_refused_past_32_parents_without_recursion() -> None:
    quotas: list[dict[str, Any]] = []
    for i in range(500):
        labels = {f"{LABELS}/is-parent": "true"}
        if i:
            labels[f"{LABELS}/parent"] = f"q{i - 1}"
        meta = {"name": f"q{i}", "namespace": f"q{i}", "labels": labels}
        quotas.append({"kind": "ElasticQuota", "metadata": meta, "spec": {"max": {"cpu": "4"}}})
    report = simulate({"nodes": [{"name": "n", "allocatable": {"cpu": "4"}}], "quotas": quotas})
    refusals = [e["message"] for e in report["events"] if e["reason"] == "QuotaRefused"]
    assert "quota q33: 33 parent quotas above it, more than the 32 allowed" in refusals[0]


@pytest.mark.parametrize("data", [["queues.yaml", "x"], "partitions: []", 5])
def test_a_configmap_whose_data_is_not_a_mapping_is_refused_and_the_config_stays(data: Any) -> None:
    scheduler = Scheduler(Recorder())
    before = scheduler.config.checksum
    reloader = ConfigReloader(scheduler, ConfigSource(namespace="herder"), lambda: {"data": data}, None)
    assert reloader.check() is False
    assert scheduler.config.checksum == before
