"""Rules between pods on a live cluster: a Deployment whose replicas must not share a node."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from e2e.backends import Cluster
from e2e.workloads import eventually

HOSTNAME = "kubernetes.io/hostname"


def schedulable_nodes(cluster: Cluster) -> set[str]:
    """Nodes a pod without tolerations may use: not cordoned, no NoSchedule/NoExecute taint."""
    names = set()
    for node in cluster.core.list_node().items:
        taints = node.spec.taints or []
        if not node.spec.unschedulable and not any(t.effect in ("NoSchedule", "NoExecute") for t in taints):
            names.add(node.metadata.name)
    return names


def one_per_node_deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "schedulerName": "herder",
                    "terminationGracePeriodSeconds": 0,
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {"labelSelector": {"matchLabels": labels}, "topologyKey": HOSTNAME}
                            ]
                        }
                    },
                    "containers": [
                        {
                            "name": "work",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m", "memory": "16Mi"}},
                        }
                    ],
                },
            },
        },
    }


def replicas_of(cluster: Cluster, namespace: str, app: str) -> list[client.V1Pod]:
    pods = cluster.core.list_namespaced_pod(namespace, label_selector=f"app={app}").items
    return [pod for pod in pods if pod.metadata.deletion_timestamp is None]


def unschedulable_message(pod: client.V1Pod) -> str | None:
    for condition in (pod.status and pod.status.conditions) or []:
        if condition.type == "PodScheduled" and condition.status == "False":
            return str(condition.message or "")
    return None


def test_deployment_with_required_anti_affinity_puts_one_replica_per_node(cluster: Cluster, namespace: str) -> None:
    nodes = schedulable_nodes(cluster)
    assert nodes, "the cluster has no node a plain pod may use"
    cluster.apps.create_namespaced_deployment(namespace, one_per_node_deployment("spread", len(nodes) + 1))

    def one_per_node_and_one_waiting() -> tuple[list[client.V1Pod], client.V1Pod] | None:
        pods = replicas_of(cluster, namespace, "spread")
        bound = [pod for pod in pods if pod.spec.node_name]
        waiting = [pod for pod in pods if not pod.spec.node_name and unschedulable_message(pod) is not None]
        if len(pods) == len(nodes) + 1 and len(bound) == len(nodes) and len(waiting) == 1:
            return bound, waiting[0]
        return None

    bound, waiting = eventually(one_per_node_and_one_waiting, f"{len(nodes)} replicas bound and one waiting", 90)
    assert {pod.spec.node_name for pod in bound} == nodes
    assert "anti-affinity" in (unschedulable_message(waiting) or "")

    cluster.apps.patch_namespaced_deployment("spread", namespace, {"spec": {"replicas": len(nodes)}})

    def all_bound() -> list[client.V1Pod] | None:
        pods = replicas_of(cluster, namespace, "spread")
        return pods if len(pods) == len(nodes) and all(pod.spec.node_name for pod in pods) else None

    final = eventually(all_bound, f"{len(nodes)} replicas, all bound", 90)
    assert {pod.spec.node_name for pod in final} == nodes
