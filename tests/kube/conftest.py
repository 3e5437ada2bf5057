"""Fixtures for the operator's integration tests: an emulated cluster and Herder replicas on it.

`cluster` is a fresh emulator with three 4-CPU nodes and Herder's namespace; `start_herder()`
starts a replica (the real operator: kopf, threads, REST) and stops it after the test.
Helpers build the objects users apply and wait for what users wait for.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
import yaml
from kubernetes import client

from shim.kube.watch.reload import ConfigSource
from tests.kube.emulator import (
    HERDER_NAMESPACE,
    EmulatorServer,
    HerderReplica,
    namespace_body,
    node_body,
    replica_options,
)
from tests.kube.emulator_api import EVENTS

T = TypeVar("T")
QUOTAS = ("scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas")

QUEUES = {
    "partitions": [
        {
            "name": "default",
            "placementrules": [
                {
                    "name": "tag",
                    "value": "namespace",
                    "create": True,
                    "parent": {"name": "tag", "value": "namespace.parentqueue"},
                },
                {"name": "tag", "value": "namespace", "create": True},
            ],
            "queues": [
                {
                    "name": "root",
                    "submitacl": "*",
                    "queues": [{"name": "teams", "parent": True, "resources": {"max": {"vcore": "6"}}}],
                }
            ],
        }
    ]
}

logging.getLogger("kopf").setLevel(logging.WARNING)


def eventually(probe: Callable[[], T | None], what: str, timeout: float = 30.0) -> T:
    """Wait until `probe` gives something truthy a user would wait for; fail naming it (not a speed assertion)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.05)


def herder_pod(
    name: str,
    cpu: str = "1",
    labels: dict[str, str] | None = None,
    scheduler: str = "herder",
    node: str | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "work", "image": "pause", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}],
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}, "annotations": annotations or {}},
        "spec": spec,
    }


def team_pod(name: str, cpu: str = "1") -> dict[str, Any]:
    """A pending Herder pod in namespace team-a with a fixed uid, as the status writers' tests submit it."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "team-a", "uid": f"uid-{name}"},
        "spec": {
            "schedulerName": "herder",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
        },
    }


def quota_body(name: str, namespace: str, min_: dict[str, str], max_: dict[str, str], **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"min": min_, "max": max_},
    }


@dataclass
class Cluster:
    server: EmulatorServer
    core: client.CoreV1Api
    custom: client.CustomObjectsApi
    replicas: list[HerderReplica]

    def start_herder(
        self, identity: str = "herder-0", settings: dict[str, str] | None = None, **options: Any
    ) -> HerderReplica:
        """A replica; `settings` are its `--set` options (they win over the ConfigMap)."""
        if settings:
            options["source"] = ConfigSource(namespace=HERDER_NAMESPACE, overrides=settings)
        replica = HerderReplica(self.server, replica_options(identity, **options)).start()
        self.replicas.append(replica)
        return replica

    def node_of(self, namespace: str, pod: str) -> str | None:
        name: str | None = self.core.read_namespaced_pod(pod, namespace).spec.node_name
        return name

    def bound(self, namespace: str, pod: str, timeout: float = 30.0) -> str:
        return eventually(lambda: self.node_of(namespace, pod), f"{namespace}/{pod} to be bound", timeout)

    def all_bound(self, namespace: str, timeout: float = 30.0) -> dict[str, str]:
        def probe() -> dict[str, str] | None:
            pods = self.core.list_namespaced_pod(namespace).items
            nodes = {p.metadata.name: p.spec.node_name for p in pods}
            return nodes if all(nodes.values()) else None

        return eventually(probe, f"every pod in {namespace} to be bound", timeout)

    def create_namespace(self, name: str, annotations: dict[str, str] | None = None) -> str:
        self.core.create_namespace(namespace_body(name, annotations))
        return name

    def create_pods(self, namespace: str, count: int, prefix: str = "job", **kwargs: Any) -> list[str]:
        names = [f"{prefix}-{index}" for index in range(count)]
        for name in names:
            self.core.create_namespaced_pod(namespace, herder_pod(name, **kwargs))
        return names

    def set_config(self, data: dict[str, str]) -> None:
        self.core.patch_namespaced_config_map("herder-config", HERDER_NAMESPACE, {"data": data})

    def events_about(self, kind: str, name: str) -> list[dict[str, Any]]:
        events = self.server.objects(EVENTS)
        return [e for e in events if e["involvedObject"]["kind"] == kind and e["involvedObject"]["name"] == name]


@contextmanager
def emulated_cluster(autoscaling: bool = False) -> Iterator[Cluster]:
    """Three nodes of 4 CPUs, Herder's namespace and its ConfigMap (QUEUES); with `autoscaling`
    the API server also serves cluster-autoscaler's ProvisioningRequests."""
    with EmulatorServer(autoscaling=autoscaling) as server:
        api_client = server.api_client()
        core = client.CoreV1Api(api_client)
        for index in range(3):
            core.create_node(node_body(f"node-{index}", cpu="4", memory="16Gi"))
        core.create_namespace(namespace_body(HERDER_NAMESPACE))
        core.create_namespaced_config_map(
            HERDER_NAMESPACE,
            {
                "metadata": {"name": "herder-config", "namespace": HERDER_NAMESPACE},
                "data": {"queues.yaml": yaml.safe_dump(QUEUES)},
            },
        )
        handle = Cluster(server, core, client.CustomObjectsApi(api_client), [])
        try:
            yield handle
        finally:
            for replica in handle.replicas:
                replica.stop()


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    """Three nodes of 4 CPUs, Herder's namespace and its ConfigMap (QUEUES)."""
    with emulated_cluster() as handle:
        yield handle
