"""Building and watching the pods and quotas the e2e scenarios use."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar

from kubernetes import client

from e2e.backends import Cluster

T = TypeVar("T")
GROUP, VERSION, PLURAL = "scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas"


def eventually(probe: Callable[[], T | None], what: str, timeout: float = 60.0) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (value := probe()) is not None and value is not False:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def herder_pod(name: str, cpu: str = "100m", labels: dict[str, str] | None = None) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels or {}),
        spec=client.V1PodSpec(
            scheduler_name="herder",
            termination_grace_period_seconds=0,
            containers=[
                client.V1Container(
                    name="work",
                    image="registry.k8s.io/pause:3.10",
                    resources=client.V1ResourceRequirements(requests={"cpu": cpu, "memory": "16Mi"}),
                )
            ],
        ),
    )


def create_quota(
    cluster: Cluster,
    namespace: str,
    min_: dict[str, str],
    max_: dict[str, str],
    name: str | None = None,
    labels: dict[str, str] | None = None,
) -> None:
    """An ElasticQuota named after its namespace (the pods there use it) unless `name` says otherwise."""
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ElasticQuota",
        "metadata": {"name": name or namespace, "namespace": namespace, "labels": labels or {}},
        "spec": {"min": min_, "max": max_},
    }
    cluster.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)


def quota(cluster: Cluster, namespace: str) -> dict[str, Any]:
    found: dict[str, Any] = cluster.custom.get_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURAL, namespace
    )
    return found


def quota_used_once(cluster: Cluster, namespace: str, cpu: tuple[str, ...]) -> dict[str, Any]:
    """The quota's status.used once its cpu reads as one of `cpu` (Herder writes it after binds)."""

    def used() -> dict[str, Any] | None:
        found: dict[str, Any] = quota(cluster, namespace).get("status", {}).get("used") or {}
        return found if found.get("cpu") in cpu else None

    return eventually(used, f"status.used cpu of quota {namespace} to read {' or '.join(cpu)}")


def node_of(cluster: Cluster, namespace: str, pod: str) -> str | None:
    name: str | None = cluster.core.read_namespaced_pod(pod, namespace).spec.node_name
    return name


def bound(cluster: Cluster, namespace: str, pod: str, timeout: float = 60.0) -> str:
    return eventually(lambda: node_of(cluster, namespace, pod), f"{namespace}/{pod} to be bound", timeout)


def unschedulable_reason(cluster: Cluster, namespace: str, pod: str) -> str | None:
    status = cluster.core.read_namespaced_pod(pod, namespace).status
    for condition in status.conditions or []:
        if condition.type == "PodScheduled" and condition.status == "False":
            return str(condition.reason or "Unschedulable")
    return None


def rest(cluster: Cluster, path: str) -> Any:
    with urllib.request.urlopen(f"{cluster.herder_url}{path}", timeout=10) as response:
        return json.loads(response.read())


def queue_names(tree: Any) -> set[str]:
    """Every queuename in a REST queue tree (YuniKorn's nested `children` shape)."""
    names: set[str] = set()
    stack = tree if isinstance(tree, list) else [tree]
    while stack:
        queue = stack.pop()
        names.add(queue.get("queuename", ""))
        stack.extend(queue.get("children") or [])
    return names


def set_settings(cluster: Cluster, settings: dict[str, str]) -> dict[str, str]:
    """Patch the scheduler ConfigMap; returns the previous values so a test can restore them."""
    current = cluster.core.read_namespaced_config_map("herder-config", cluster.herder_namespace).data or {}
    previous = {key: current[key] for key in settings if key in current}
    cluster.core.patch_namespaced_config_map("herder-config", cluster.herder_namespace, {"data": settings})
    return previous
