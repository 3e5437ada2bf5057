"""Pods with PersistentVolumeClaims through `herder simulate`: where the volume lets a pod run,
claims resolved at placement (a static volume bound, or one provisioned on the chosen node), and
the claims that keep a pod waiting, each named in its reason."""

from __future__ import annotations

from typing import Any

from tests.sim.scenarios import node, pod, simulate, simulate_example

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def storage_class(
    name: str, *, wait: bool = True, provisioner: str = "example.com/disk", **extra: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": "WaitForFirstConsumer" if wait else "Immediate",
        **extra,
    }


def volume(name: str, cls: str, size: str = "10Gi", *, on: str | None = None, **labels: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"storageClassName": cls, "capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"]}
    if on is not None:
        term = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [on]}]}
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels}, "spec": spec}


def claim(
    name: str, cls: str | None = None, size: Any = "1Gi", modes: tuple[str, ...] = ("ReadWriteOnce",)
) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if cls is not None:
        spec["storageClassName"] = cls
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def using(name: str, *claims: str, **kw: Any) -> dict[str, Any]:
    volumes = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    return pod(name, volumes=volumes, **kw)


def two_zones() -> list[dict[str, Any]]:
    return [node("a", count=2, cpu="4", labels={ZONE: "za"}), node("b", count=2, cpu="4", labels={ZONE: "zb"})]


def run(objects: list[dict[str, Any]], workload: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return simulate({"nodes": two_zones(), "objects": objects, "workload": workload, **extra})


def test_a_wait_for_first_consumer_claim_is_provisioned_on_the_node_chosen_for_its_pod() -> None:
    report = run(
        [
            storage_class("fast", allowedTopologies=[{"matchLabelExpressions": [{"key": ZONE, "values": ["zb"]}]}]),
            claim("data", "fast"),
        ],
        [using("db", "data")],
    )
    db = report["pods"]["default/db"]
    assert db["state"] == "Running" and db["node"].startswith("b-")  # allowedTopologies: zone zb only
    provisioned = [e for e in report["events"] if e["reason"] == "Provisioned"]
    assert [e["objectID"] for e in provisioned] == ["default/data"]


def test_a_bound_volumes_node_affinity_and_zone_decide_where_the_pod_runs() -> None:
    objects = [
        storage_class("local", provisioner="kubernetes.io/no-provisioner"),
        storage_class("zonal", wait=False),
        volume("disk-on-b-1", "local", on="b-1"),
        volume("zonal-disk", "zonal", **{ZONE: "za"}),
        claim("local-data", "local"),
        claim("zonal-data", "zonal"),
    ]
    report = run(objects, [using("pinned", "local-data"), using("zoned", "zonal-data")])
    assert report["pods"]["default/pinned"]["node"] == "b-1"
    assert report["pods"]["default/zoned"]["node"].startswith("a-")


def test_two_pods_never_take_the_same_static_volume() -> None:
    objects = [
        storage_class("local", provisioner="kubernetes.io/no-provisioner"),
        volume("only-disk", "local", on="a-0"),
        claim("first", "local"),
        claim("second", "local"),
    ]
    report = run(objects, [using("one", "first"), using("two", "second")])
    pods = report["pods"]
    running = [name for name, p in pods.items() if p["state"] == "Running"]
    waiting = [p for p in pods.values() if p["state"] == "Pending"]
    assert running == ["default/one"] and pods["default/one"]["node"] == "a-0"
    assert "no available PersistentVolume for claim default/second" in waiting[0]["reason"]


def test_on_the_chosen_node_the_smallest_static_volume_that_fits_is_bound() -> None:
    objects = [
        storage_class("local", provisioner="kubernetes.io/no-provisioner"),
        volume("big", "local", "100Gi", on="b-0"),
        volume("small", "local", "5Gi", on="b-0"),
        volume("too-small", "local", "1Gi", on="b-0"),
        claim("data", "local", size="4Gi"),
    ]
    report = run(objects, [using("db", "data")])
    assert report["pods"]["default/db"]["node"] == "b-0"
    assert any(e["reason"] == "ClaimBound" and e["message"] == "bound to volume small" for e in report["events"])


def test_claims_that_keep_a_pod_waiting_are_named() -> None:
    objects = [
        storage_class("manual", wait=False, provisioner="kubernetes.io/no-provisioner"),
        claim("unbound", "manual"),
        claim("no-class", "gold"),
        claim("bad-size", "manual", size="lots"),
    ]
    workload = [using("p1", "unbound"), using("p2", "nowhere"), using("p3", "no-class"), using("p4", "bad-size")]
    pods = run(objects, workload)["pods"]
    assert "unbound immediate PersistentVolumeClaim default/unbound" in pods["default/p1"]["reason"]
    assert 'persistentvolumeclaim "default/nowhere" not found' in pods["default/p2"]["reason"]
    assert 'storageclass "gold" of claim default/no-class not found' in pods["default/p3"]["reason"]
    assert "claim default/bad-size spec.resources.requests.storage: 'lots'" in pods["default/p4"]["reason"]
    assert all(p["state"] == "Pending" for p in pods.values())


def test_a_volume_applied_later_lets_the_waiting_pod_run() -> None:
    objects = [storage_class("local", provisioner="kubernetes.io/no-provisioner"), claim("data", "local")]
    later = {"at": 30, "action": "apply", "object": volume("late-disk", "local", on="a-1")}
    report = run(objects, [using("db", "data")], events=[later], until=60)
    assert (report["pods"]["default/db"]["node"], report["pods"]["default/db"]["bound"]) == ("a-1", 30)


def test_a_read_write_once_pod_claim_admits_one_pod_at_a_time() -> None:
    objects = [storage_class("std"), claim("solo", "std", modes=("ReadWriteOncePod",))]
    report = run(objects, [using("writer", "solo", count=2, duration=50)], until=200)
    pods = report["pods"]
    assert sorted(p["bound"] for p in pods.values()) == [0, 50]
    assert pods["default/writer-1"]["node"] == pods["default/writer-0"]["node"]  # the volume's node


def test_kinds_the_simulator_does_not_use_are_noted_not_refused() -> None:
    budget = {"apiVersion": "policy/v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {}}
    report = run([budget], [pod("plain")])
    assert report["pods"]["default/plain"]["state"] == "Running"
    assert any(e["reason"] == "ObjectIgnored" and "ConfigMap" in e["message"] for e in report["events"])


def test_deleting_a_claim_keeps_the_next_pod_that_names_it_waiting() -> None:
    objects = [storage_class("std"), claim("data", "std")]
    events = [{"at": 5, "action": "delete", "kind": "PersistentVolumeClaim", "namespace": "default", "name": "data"}]
    report = run(objects, [using("late", "data", at=10)], events=events, until=20)
    assert 'persistentvolumeclaim "default/data" not found' in report["pods"]["default/late"]["reason"]


def test_the_volumes_example_runs_as_its_comments_say() -> None:
    report = simulate_example("volumes.yaml")
    pods = report["pods"]
    assert pods["default/db-0"]["node"] == "zone-b-0"
    assert pods["default/report"]["node"].startswith("zone-a-")
    assert pods["default/web-1"]["node"][:6] == pods["default/web-0"]["node"][:6]
    assert [pods[f"default/single-writer-{i}"]["bound"] for i in range(2)] == [0, 60]
    assert (pods["default/orphan"]["state"], pods["default/orphan"]["bound"]) == ("Running", 100)
    assert pods["default/scratch"]["state"] == "Running"
