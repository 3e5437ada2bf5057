"""Every example of the seeds, copied verbatim, runs through `herder simulate` (or `herder
validate`) with the outcome its seed describes; each test names its seed and section.

Examples covered elsewhere, verbatim too: seed 004 "Static queue definition" and "Namespace to
queue mapping" through `herder validate` (tests/shim/test_cli.py) and `POST /validate-conf`
(tests/shim/test_rest.py); seed 004 "Parent queue mapping" in the core
(tests/core/scheduling/test_dynamic_queues.py); seed 002's shared-weight shorthand
(tests/shim/test_convert.py) and its default-group (tests/core/elastic/test_quota_groups.py);
seed 001's limit objects (tests/core/config/test_parse.py).
"""

from __future__ import annotations

from typing import Any

import yaml

from tests.seeds import (
    SEED_002_PARENT,
    SEED_002_QUOTA,
    SEED_004_LABELS,
    SEED_004_NAMESPACE_MAPPING,
    SEED_004_NAMESPACE_QUOTA,
    SEED_004_PARENT_ANNOTATION,
    SEED_004_PARENT_MAPPING,
    SEED_004_POD,
    SEED_004_STATIC,
)
from tests.sim.scenarios import node, queue_of, simulate


def workload(namespace: str, name: str, spec: dict[str, Any], labels: dict[str, Any] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {}}
    return {"at": 0, "pod": {"metadata": metadata, "spec": {"schedulerName": "herder", **spec}}}


def hugepage_node() -> dict[str, Any]:
    worker = node(cpu="8", memory="8Gi")
    worker["allocatable"]["hugepages-1Gi"] = "2"
    return worker


def namespace(name: str, annotations: str | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, "annotations": yaml.safe_load(annotations) if annotations else {}}}


def test_seed_004_converting_resources_the_example_pod_counts_250m_1gi_and_one_hugepage() -> None:
    pod = yaml.safe_load(SEED_004_POD)
    example = workload("default", "example", pod["spec"])
    report = simulate({"nodes": [hugepage_node()], "workload": [example], "until": 5})
    assert report["pods"]["default/example"]["state"] == "Running"
    # The seed's vcore 250 and memory 1074 (MB); Herder keeps memory in bytes, as YuniKorn does today.
    assert queue_of(report["state"], "root")["allocatedResource"] == {
        "vcore": 250,
        "memory": 2**30,
        "hugepages-1Gi": 1,
        "pods": 1,
    }


def test_seed_004_static_queues_verbatim_warn_and_written_as_the_warning_says_run_the_workload() -> None:
    labels = yaml.safe_load(SEED_004_LABELS)["labels"]
    pod = workload("default", "my-test-app", yaml.safe_load(SEED_004_POD)["spec"], labels)
    verbatim = simulate({"config": SEED_004_STATIC, "nodes": [hugepage_node()], "workload": [pod], "until": 5})
    warnings = [e["message"] for e in verbatim["events"] if e["reason"] == "ConfigWarning"]
    assert any("root.sandbox.resources.max: memory 100000" in w and "write '100000M'" in w for w in warnings)
    waiting = verbatim["pods"]["default/my-test-app"]
    assert waiting["state"] == "Pending" and "queue root.sandbox would exceed max memory" in waiting["reason"]

    fixed = SEED_004_STATIC.replace("memory: 100000", "memory: 100000M").replace("vcore: 10000", "vcore: 10000m")
    report = simulate({"config": fixed, "nodes": [hugepage_node()], "workload": [pod], "until": 5})
    ran = report["pods"]["default/my-test-app"]
    assert (ran["state"], ran["queue"]) == ("Running", "root.sandbox")
    assert report["state"]["applications"][0]["applicationID"] == "my-test-app-01"


def test_seed_004_namespace_mapping_development_runs_in_root_development_with_the_annotated_quota() -> None:
    pod = workload("development", "job", {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]})
    report = simulate(
        {
            "config": SEED_004_NAMESPACE_MAPPING,
            "namespaces": [namespace("development", SEED_004_NAMESPACE_QUOTA)],
            "nodes": [node(cpu="8")],
            "workload": [pod],
            "until": 5,
        }
    )
    assert report["pods"]["development/job"]["queue"] == "root.development"
    assert queue_of(report["state"], "root.development")["maxResource"] == {"vcore": 64000, "memory": 100 * 2**30}


def test_seed_004_parent_mapping_finance_and_sales_under_production_dev_and_test_under_development() -> None:
    production = SEED_004_PARENT_ANNOTATION
    development = production.replace("root.production", "development")  # "you can thus omit the root. part"
    namespaces = [
        namespace("finance", production),
        namespace("sales", production),
        namespace("dev", development),
        namespace("test", development),
    ]
    small = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    pods = [workload(ns["metadata"]["name"], "job", small) for ns in namespaces]
    scenario = {"config": SEED_004_PARENT_MAPPING, "namespaces": namespaces, "nodes": [node(cpu="8")], "workload": pods}
    report = simulate({**scenario, "until": 5})
    queues = {name: pod["queue"] for name, pod in report["pods"].items()}
    assert queues == {
        "finance/job": "root.production.finance",
        "sales/job": "root.production.sales",
        "dev/job": "root.development.dev",
        "test/job": "root.development.test",
    }


def test_seed_002_the_example_quota_with_the_shorthand_annotations_admits_its_namespaces_pods() -> None:
    pods = [
        workload("test", f"job-{i}", {"containers": [{"name": "c", "resources": {"requests": {"cpu": "4"}}}]})
        for i in range(6)
    ]
    report = simulate(
        {
            "quotas": [yaml.safe_load(SEED_002_PARENT), yaml.safe_load(SEED_002_QUOTA)],
            "nodes": [node(cpu="32", memory="128Gi")],
            "workload": pods,
            "until": 5,
        }
    )
    assert not [e for e in report["events"] if e["reason"] == "QuotaRefused"]
    running = [p for p in report["pods"].values() if p["state"] == "Running"]
    assert len(running) == 5 and {p["quota"] for p in running} == {"test"}  # 5 x 4 cores = the max of 20
