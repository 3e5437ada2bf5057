"""Scenario files that hung or crashed `herder simulate`: each is now one clear error, at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.scheduler import Scheduler
from shim.cli import main
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
        ("settings: {quota.recycle.delay: .nan}", "settings.quota.recycle.delay: not a finite duration"),
        ("settings: {quota.recycle.delay: '1e400'}", "settings.quota.recycle.delay: not a finite duration"),
        (f"settings: {{quota.recycle.delay: {10**400}}}", "settings.quota.recycle.delay: not a finite duration"),
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


CLAIM = "{kind: PersistentVolumeClaim, metadata: {name: data}"
VOLUME = "{kind: PersistentVolume, metadata: {name: pv}"


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (f"objects: [{CLAIM}, spec: hello}}]", "objects[0].spec: expected a mapping, got str 'hello'"),
        (f"objects: [{CLAIM}, spec: {{resources: [1]}}}}]", "objects[0].spec.resources: expected a mapping, got list"),
        (f"objects: [{CLAIM}, spec: {{}}, status: 3}}]", "objects[0].status: expected a mapping, got int 3"),
        (f"objects: [{VOLUME}, spec: {{claimRef: [a]}}}}]", "objects[0].spec.claimRef: expected a mapping, got list"),
        (
            f"objects: [{VOLUME}, spec: {{nodeAffinity: {{required: x}}}}}}]",
            "objects[0].spec.nodeAffinity.required: expected a mapping, got str 'x'",
        ),
        (
            "objects: [{kind: StorageClass, metadata: {name: s}, allowedTopologies: 5}]",
            "objects[0].allowedTopologies: expected a list, got int 5",
        ),
        (
            "objects: [{kind: PodDisruptionBudget, metadata: {name: b}, spec: {selector: app}}]",
            "objects[0].spec.selector: expected a mapping, got str 'app'",
        ),
        (
            f"events: [{{at: 1, action: apply, object: {CLAIM}, spec: [x]}}}}]",
            "events[0].object.spec: expected a mapping, got list",
        ),
        (
            "workload: [{pod: {metadata: {name: p}, spec: {containers: [{name: m}], volumes: [{name: v, "
            "ephemeral: {volumeClaimTemplate: {metadata: [], spec: {}}}}]}}}]",
            "workload[0].pod.spec.volumes[0].ephemeral.volumeClaimTemplate.metadata: expected a mapping, got list",
        ),
        (
            "workload: [{pod: {metadata: {name: p}, spec: {containers: [{name: m}], volumes: {a: 1}}}}]",
            "workload[0].pod.spec.volumes: expected a list, got dict",
        ),
    ],
)
def test_objects_of_the_wrong_shape_are_refused_as_the_api_server_would(tmp_path: Path, body: str, named: str) -> None:
    """Parts of storage objects, budgets and pods' volumes the simulator's controllers read and
    write: a string where a mapping goes used to raise AttributeError or TypeError mid-run."""
    path = tmp_path / "scenario.yaml"
    path.write_text(NODES + body + "\n")
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    assert any(problem.startswith(named) for problem in refused.value.problems), refused.value.problems


def test_a_claim_whose_spec_is_a_string_exits_1_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(NODES + f"objects: [{CLAIM}, spec: hello}}]\n")
    assert main(["simulate", str(path), "--quiet"]) == 1
    _, err = capsys.readouterr()
    assert "objects[0].spec: expected a mapping, got str 'hello'" in err and "Traceback" not in err


def test_null_parts_of_storage_objects_are_empty_ones() -> None:
    """`spec: null` on a claim or a volume is read as no spec (the controllers write into it)."""
    objects = [
        {"kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "p", "volumeBindingMode": "Immediate"},
        {"kind": "PersistentVolume", "metadata": {"name": "pv", "annotations": None}, "spec": None, "status": None},
        {"kind": "PersistentVolumeClaim", "metadata": {"name": "c", "annotations": None}, "spec": None},
    ]
    report = simulate({"nodes": [{"name": "n", "allocatable": {"cpu": "4"}}], "objects": objects})
    assert report["summary"]["pods"] == 0
