"""Small scenarios for the simulator tests, written as a user would write them (plain dicts).

`pod(...)` builds a workload entry, `node(...)` a node entry; `simulate(doc)` runs the whole
simulator (scenario reading, cluster, core, report) and returns the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shim.sim.engine import Simulation
from shim.sim.report import build_report
from shim.sim.scenario import load_scenario, parse_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "shim" / "sim" / "examples"


def node(name: str = "worker", count: int = 1, cpu: str = "8", memory: str = "32Gi", **extra: Any) -> dict[str, Any]:
    return {"name": name, "count": count, "allocatable": {"cpu": cpu, "memory": memory}, **extra}


def pod(
    name: str,
    *,
    namespace: str = "default",
    at: float = 0,
    count: int = 1,
    duration: float | None = None,
    cpu: str = "1",
    memory: str = "1Gi",
    scheduler: str | None = "herder",
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    priority: int | None = None,
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
        **spec,
    }
    if scheduler is not None:
        body["schedulerName"] = scheduler
    if priority is not None:
        body["priority"] = priority
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    entry: dict[str, Any] = {"at": at, "count": count, "pod": {"metadata": metadata, "spec": body}}
    if duration is not None:
        entry["duration"] = duration
    return entry


def namespace_queues(**root: Any) -> dict[str, Any]:
    """queues.yaml placing each namespace in its own queue under root; `root` adds keys to root."""
    return {
        "partitions": [
            {
                "name": "default",
                "placementrules": [{"name": "tag", "value": "namespace", "create": True}],
                "queues": [{"name": "root", "submitacl": "*", **root}],
            }
        ]
    }


def quota(name: str, namespace: str | None = None, *, min_cpu: str, max_cpu: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": name, "namespace": namespace or name, "labels": dict(labels)},
        "spec": {"min": {"cpu": min_cpu}, "max": {"cpu": max_cpu}},
    }


def simulate(document: Mapping[str, Any], overrides: Mapping[str, str] | None = None) -> dict[str, Any]:
    simulation = Simulation(parse_scenario(dict(document), "test", overrides))
    simulation.run()
    return build_report(simulation)


def simulate_example(name: str, overrides: Mapping[str, str] | None = None) -> dict[str, Any]:
    simulation = Simulation(load_scenario(EXAMPLES / name, overrides))
    simulation.run()
    return build_report(simulation)


def queue_of(state: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    found = find_queue(state, path)
    assert found is not None, f"no queue {path}"
    return found


def find_queue(state: Mapping[str, Any], path: str) -> Mapping[str, Any] | None:
    def walk(doc: Mapping[str, Any]) -> Mapping[str, Any] | None:
        if doc["queuename"] == path:
            return doc
        for child in doc["children"]:
            found = walk(child)
            if found is not None:
                return found
        return None

    return walk(state["queues"])


def quota_doc(state: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    def walk(docs: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
        for doc in docs:
            if doc["name"] == name:
                return doc
            found = walk(doc["children"])
            if found is not None:
                return found
        return None

    found = walk(state["quotas"])
    assert found is not None, f"no quota {name}"
    return found


def node_doc(state: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    return next(n for n in state["nodes"] if n["nodeID"] == name)


def events(report: Mapping[str, Any], reason: str) -> list[Mapping[str, Any]]:
    return [e for e in report["events"] if e["reason"] == reason]
