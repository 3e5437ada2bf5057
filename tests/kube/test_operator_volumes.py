"""Pods with claims through the real operator: the storage watches, the volume plan written to the
API (a static volume's claimRef), the pod bound only once its claim is bound, and given back, with
an Event naming the claim, when the claim does not bind in time."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from tests.kube.conftest import Cluster, eventually, herder_pod
from tests.kube.storage_controller import StorageController

pytestmark = pytest.mark.timeout(60)


def local_volume(name: str, node: str) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "storageClassName": "local",
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce"],
            "local": {"path": "/mnt/disk"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
        },
    }


def test_a_claim_is_bound_to_the_static_volume_on_the_chosen_node_before_the_pod(cluster: Cluster) -> None:
    storage = client.StorageV1Api(cluster.server.api_client())
    storage.create_storage_class(
        {
            "metadata": {"name": "local"},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    cluster.core.create_persistent_volume(local_volume("disk-on-node-2", "node-2"))
    herder = cluster.start_herder(volume_bind_timeout=1.0)
    cluster.create_namespace("db")
    claim = {
        "metadata": {"name": "data", "namespace": "db"},
        "spec": {
            "storageClassName": "local",
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }
    cluster.core.create_namespaced_persistent_volume_claim("db", claim)
    pod = herder_pod("postgres", cpu="100m")
    pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    cluster.core.create_namespaced_pod("db", pod)

    # Herder writes the volume's claimRef; with no PersistentVolume controller the claim never binds.
    eventually(
        lambda: cluster.core.read_persistent_volume("disk-on-node-2").spec.claim_ref or None,
        "the volume's claimRef written by Herder",
    )
    failed = eventually(
        lambda: [e for e in cluster.events_about("Pod", "postgres") if e["reason"] == "FailedBinding"],
        "a FailedBinding event on the pod",
    )
    assert "claim db/data not bound within 1s" in failed[0]["message"]
    assert cluster.node_of("db", "postgres") is None

    controller = StorageController(cluster.server.api_client()).start()  # the cluster's PV controller
    try:
        assert cluster.bound("db", "postgres") == "node-2"
    finally:
        controller.stop()
    assert cluster.core.read_namespaced_persistent_volume_claim("data", "db").spec.volume_name == "disk-on-node-2"
    assert herder.scheduler.allocation(cluster.core.read_namespaced_pod("postgres", "db").metadata.uid) is not None


def test_a_pod_whose_claim_does_not_exist_waits_naming_it_until_it_is_created(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.create_namespace("app")
    pod = herder_pod("reader", cpu="100m")
    pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "later"}}]
    cluster.core.create_namespaced_pod("app", pod)
    uid = cluster.core.read_namespaced_pod("reader", "app").metadata.uid
    reason = eventually(lambda: herder.scheduler.pending_reason(uid), "a reason for the pod")
    assert 'persistentvolumeclaim "app/later" not found' in reason
    volume = local_volume("any-disk", "node-1")
    volume["spec"]["claimRef"] = {"namespace": "app", "name": "later"}
    cluster.core.create_persistent_volume(volume)
    claim = {
        "metadata": {"name": "later", "namespace": "app"},
        "spec": {
            "storageClassName": "local",
            "volumeName": "any-disk",
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
        },
        "status": {"phase": "Bound"},
    }
    cluster.core.create_namespaced_persistent_volume_claim("app", claim)
    assert cluster.bound("app", "reader") == "node-1"  # the bound volume's node affinity
