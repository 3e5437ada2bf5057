"""kube-scheduler's VolumeZone, VolumeBinding and VolumeRestrictions filters, row by row as their
test tables judge them: which nodes may take a pod, given its claims and the volumes and classes
the cluster has (objects converted by the shim, verdicts from `Scheduler.node_verdicts`)."""

from __future__ import annotations

from typing import Any

import pytest

from shim.convert.storage import claim_from, storage_class_from, volume_from
from tests.shim.pod_rules_world import Cluster

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
LEGACY_ZONE = "failure-domain.beta.kubernetes.io/zone"


def pv(
    name: str, cls: str = "", claim: str | None = None, size: str = "10Gi", on: str | None = None, **labels: str
) -> dict[str, Any]:
    spec: dict[str, Any] = {"storageClassName": cls, "capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"]}
    if claim is not None:
        spec["claimRef"] = {"namespace": "default", "name": claim}
    if on is not None:
        term = {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [on]}]}
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    return {"metadata": {"name": name, "labels": labels}, "spec": spec}


def pvc(
    name: str, cls: str | None = None, volume: str = "", modes: tuple[str, ...] = ("ReadWriteOnce",)
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": list(modes),
        "resources": {"requests": {"storage": "1Gi"}},
        "volumeName": volume,
    }
    if cls is not None:
        spec["storageClassName"] = cls
    return {"metadata": {"name": name, "namespace": "default"}, "spec": spec}


def sc(name: str, wait: bool, provisioner: str = "kubernetes.io/no-provisioner", **extra: Any) -> dict[str, Any]:
    mode = "WaitForFirstConsumer" if wait else "Immediate"
    return {"metadata": {"name": name}, "provisioner": provisioner, "volumeBindingMode": mode, **extra}


class Storage:
    def __init__(self, cluster: Cluster) -> None:
        self.sched = cluster.world.sched

    def add(self, *objects: dict[str, Any]) -> Storage:
        for obj in objects:
            if "provisioner" in obj:
                self.sched.update_storage_class(storage_class_from(obj))
            elif "claimRef" in obj["spec"] or "capacity" in obj["spec"]:
                self.sched.update_volume(volume_from(obj))
            else:
                self.sched.update_claim(claim_from(obj))
        return self


def claims(*names: str) -> dict[str, Any]:
    return {"volumes": [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": n}} for i, n in enumerate(names)]}


def zoned_nodes(cluster: Cluster) -> Cluster:
    cluster.node("node-a", **{ZONE: "us-west1-a", REGION: "us-west1"})
    cluster.node("node-b", **{ZONE: "us-west1-b", REGION: "us-west1"})
    cluster.node("node-c", **{ZONE: "us-east1-a", REGION: "us-east1"})
    return cluster


# VolumeZone: a bound volume's zone and region labels against the node's.
ZONE_ROWS: list[tuple[str, dict[str, str], set[str]]] = [
    ("volume without zone labels", {}, {"node-a", "node-b", "node-c"}),
    ("zone label matches one node", {ZONE: "us-west1-a"}, {"node-a"}),
    ("region label", {REGION: "us-west1"}, {"node-a", "node-b"}),
    ("several zones joined with __", {ZONE: "us-west1-a__us-east1-a"}, {"node-a", "node-c"}),
    ("zone and region both must match", {ZONE: "us-west1-a", REGION: "us-east1"}, set()),
]


@pytest.mark.parametrize(("name", "labels", "expected"), ZONE_ROWS, ids=[row[0] for row in ZONE_ROWS])
def test_volume_zone(name: str, labels: dict[str, str], expected: set[str]) -> None:
    cluster = zoned_nodes(Cluster())
    Storage(cluster).add(pv("vol", claim="data", **labels), pvc("data", cls="", volume="vol"))
    assert cluster.fits(**claims("data")) == expected


def test_volume_zone_legacy_labels_and_nodes_without_any_zone() -> None:
    cluster = Cluster()
    cluster.node("node-a", **{LEGACY_ZONE: "us-west1-a"})
    cluster.node("node-b", **{LEGACY_ZONE: "us-west1-b"})
    cluster.node("node-plain")  # no zone or region label at all (a one-zone cluster's node) passes
    Storage(cluster).add(pv("vol", claim="data", **{LEGACY_ZONE: "us-west1-b"}), pvc("data", cls="", volume="vol"))
    assert cluster.fits(**claims("data")) == {"node-b", "node-plain"}


def test_volume_binding_bound_claims_follow_their_volumes_node_affinity() -> None:
    cluster = zoned_nodes(Cluster())
    Storage(cluster).add(pv("vol", claim="data", on="node-b"), pvc("data", cls="", volume="vol"))
    verdicts = cluster.verdicts(**claims("data"))
    assert verdicts["node-b"] is None
    assert verdicts["node-a"] == "volume node affinity conflict (volume vol)"


def test_volume_binding_claims_that_refuse_every_node() -> None:
    cluster = zoned_nodes(Cluster())
    Storage(cluster).add(
        sc("immediate", wait=False),
        pvc("unbound-immediate", cls="immediate"),
        pvc("to-missing-volume", cls="", volume="ghost"),
    )
    reasons = {
        "no-such-claim": 'persistentvolumeclaim "default/no-such-claim" not found',
        "unbound-immediate": "unbound immediate PersistentVolumeClaim default/unbound-immediate",
        "to-missing-volume": 'persistentvolume "ghost" of claim default/to-missing-volume not found',
    }
    for claim, reason in reasons.items():
        verdicts = cluster.verdicts(**claims(claim))
        assert all(why is not None and why.startswith(reason) for why in verdicts.values()), (claim, verdicts)
    # one missing claim among bound ones still refuses
    Storage(cluster).add(pv("vol", claim="ok"), pvc("ok", cls="", volume="vol"))
    assert cluster.fits(**claims("ok", "no-such-claim")) == set()


def test_volume_binding_wait_for_first_consumer_claims() -> None:
    cluster = zoned_nodes(Cluster())
    Storage(cluster).add(
        sc("local", wait=True),
        sc(
            "dynamic",
            wait=True,
            provisioner="example.com/csi",
            allowedTopologies=[{"matchLabelExpressions": [{"key": ZONE, "values": ["us-west1-b", "us-east1-a"]}]}],
        ),
        pv("local-a", cls="local", on="node-a"),
        pv("local-small", cls="local", size="100Mi", on="node-b"),  # too small for the 1Gi claim
        pvc("static", cls="local"),
        pvc("dynamic", cls="dynamic"),
    )
    assert cluster.fits(**claims("static")) == {"node-a"}
    assert (
        cluster.verdicts(**claims("static"))["node-b"]
        == "no available PersistentVolume for claim default/static on this node"
    )
    assert cluster.fits(**claims("dynamic")) == {"node-b", "node-c"}  # allowedTopologies
    assert cluster.fits(**claims("static", "dynamic")) == set()  # no node has both


def test_volume_restrictions_read_write_once_pod_admits_one_pod() -> None:
    cluster = zoned_nodes(Cluster())
    Storage(cluster).add(
        pv("vol", claim="solo"),
        pvc("solo", cls="", volume="vol", modes=("ReadWriteOncePod",)),
        pv("vol2", claim="shared"),
        pvc("shared", cls="", volume="vol2", modes=("ReadWriteOnce",)),
    )
    cluster.running("first", "node-a", herder=True, **claims("solo", "shared"))
    verdicts = cluster.verdicts(**claims("solo"))
    assert set(verdicts.values()) == {"claim default/solo is ReadWriteOncePod and in use by pod default/first"}
    assert cluster.fits(**claims("shared")) == {"node-a", "node-b", "node-c"}  # ReadWriteOnce: not a scheduler rule
