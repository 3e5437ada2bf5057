"""A StatefulSet with volumeClaimTemplates on the default StorageClass (WaitForFirstConsumer on
kind): Herder picks each pod's node, the claim is provisioned there, and only then the pod is
bound. On kind the local-path provisioner makes the volumes; on the emulator a test provisioner
that works like it (tests/kube/storage_controller.py)."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from e2e.backends import Cluster
from e2e.workloads import eventually

SELECTED_NODE = "volume.kubernetes.io/selected-node"


def stateful_set(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "schedulerName": "herder",
                    "terminationGracePeriodSeconds": 0,
                    "containers": [
                        {
                            "name": "work",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m", "memory": "16Mi"}},
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                        }
                    ],
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "16Mi"}}},
                }
            ],
        },
    }


def test_a_stateful_set_gets_its_claims_provisioned_on_the_nodes_herder_chose(cluster: Cluster, namespace: str) -> None:
    cluster.apps.create_namespaced_stateful_set(namespace, stateful_set("db", 2))

    def bound_pods() -> list[client.V1Pod] | None:
        pods = [
            cluster.core.read_namespaced_pod(f"db-{i}", namespace)
            for i in range(2)
            if _exists(cluster, namespace, f"db-{i}")
        ]
        return pods if len(pods) == 2 and all(pod.spec.node_name for pod in pods) else None

    pods = eventually(bound_pods, "both StatefulSet pods bound", 120)
    for pod in pods:
        claim = cluster.core.read_namespaced_persistent_volume_claim(f"data-{pod.metadata.name}", namespace)
        assert claim.status.phase == "Bound"
        assert (claim.metadata.annotations or {}).get(SELECTED_NODE) == pod.spec.node_name
        volume = cluster.core.read_persistent_volume(claim.spec.volume_name)
        terms = volume.spec.node_affinity.required.node_selector_terms
        hosts = {value for term in terms for expr in term.match_expressions or [] for value in expr.values or []}
        assert pod.spec.node_name in hosts  # the volume lives where the pod runs


def _exists(cluster: Cluster, namespace: str, name: str) -> bool:
    try:
        cluster.core.read_namespaced_pod(name, namespace)
    except client.ApiException as error:
        if error.status == 404:
            return False
        raise
    return True
