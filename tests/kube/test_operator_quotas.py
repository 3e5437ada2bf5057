"""ElasticQuota objects drive the quota tree; invalid ones are refused with an Event and the tree kept."""

from __future__ import annotations

from typing import Any

import pytest

from tests.kube.conftest import QUOTAS, Cluster, eventually, quota_body
from tests.kube.emulator import HerderReplica
from tests.kube.emulator_api import QUOTAS as QUOTA_OBJECTS

pytestmark = pytest.mark.timeout(60)

PARENT = {"quota.scheduling.koordinator.sh/is-parent": "true"}


def create(cluster: Cluster, body: dict[str, Any]) -> None:
    namespace = body["metadata"]["namespace"]
    cluster.custom.create_namespaced_custom_object(QUOTAS[0], QUOTAS[1], namespace, QUOTAS[2], body)


def quota_names(herder: HerderReplica) -> set[str]:
    names: set[str] = set()
    stack = list(herder.scheduler.quotas_document())
    while stack:
        entry = stack.pop()
        names.add(entry["name"])
        stack.extend(entry.get("children") or [])
    return names


def quota(herder: HerderReplica, name: str) -> dict[str, Any] | None:
    stack = list(herder.scheduler.quotas_document())
    while stack:
        entry = stack.pop()
        if entry["name"] == name:
            return entry
        stack.extend(entry.get("children") or [])
    return None


def refusals(cluster: Cluster, name: str) -> list[str]:
    return [e["message"] for e in cluster.events_about("ElasticQuota", name) if e["reason"] == "QuotaRefused"]


def test_pods_of_a_quota_namespace_stay_within_its_max(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.create_namespace("team")
    create(cluster, quota_body("team", "team", {"cpu": "1"}, {"cpu": "2"}))
    eventually(lambda: "team" in quota_names(herder), "quota team in the tree")
    names = cluster.create_pods("team", 3, cpu="1")
    eventually(lambda: sum(1 for n in names if cluster.node_of("team", n)) == 2, "two pods within max 2")
    entry = eventually(lambda: quota(herder, "team"), "quota team")
    assert entry["used"]["vcore"] == 2000


def test_min_above_max_is_refused_with_an_event_and_the_tree_unchanged(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.create_namespace("team")
    create(cluster, quota_body("broken", "team", {"cpu": "4"}, {"cpu": "2"}))
    create(cluster, quota_body("fine", "team", {"cpu": "1"}, {"cpu": "2"}))
    eventually(lambda: "fine" in quota_names(herder), "the valid quota applied")
    [message] = eventually(lambda: refusals(cluster, "broken"), "a QuotaRefused Event on quota broken")
    assert "min" in message and "max" in message
    assert "broken" not in quota_names(herder)


def test_invalid_update_keeps_the_previous_quota(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.create_namespace("team")
    create(cluster, quota_body("team", "team", {"cpu": "1"}, {"cpu": "2"}))
    eventually(lambda: quota(herder, "team"), "quota team applied")
    cluster.custom.patch_namespaced_custom_object(
        QUOTAS[0], QUOTAS[1], "team", QUOTAS[2], "team", {"spec": {"min": {"cpu": "3"}}}
    )
    eventually(lambda: refusals(cluster, "team"), "a QuotaRefused Event on quota team")
    entry = quota(herder, "team")
    assert entry is not None and entry["min"]["vcore"] == 1000


def test_child_created_before_its_parent_is_applied_once_the_parent_arrives(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.create_namespace("team")
    create(
        cluster,
        quota_body("child", "team", {"cpu": "1"}, {"cpu": "2"}, **{"quota.scheduling.koordinator.sh/parent": "org"}),
    )
    create(cluster, quota_body("org", "team", {"cpu": "2"}, {"cpu": "4"}, **PARENT))
    eventually(lambda: {"org", "child"} <= quota_names(herder), "parent and child both in the tree")
    org = quota(herder, "org")
    assert org is not None and [c["name"] for c in org["children"]] == ["child"]


def test_deleted_quota_in_use_is_removed_once_its_pods_are_gone(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.create_namespace("team")
    create(cluster, quota_body("team", "team", {"cpu": "1"}, {"cpu": "2"}))
    eventually(lambda: quota(herder, "team"), "quota team applied")
    cluster.create_pods("team", 1, cpu="1")
    cluster.bound("team", "job-0")
    cluster.custom.delete_namespaced_custom_object(QUOTAS[0], QUOTAS[1], "team", QUOTAS[2], "team")
    assert herder.operator is not None
    eventually(lambda: "team" in herder.operator.quotas.removing(), "the deletion seen and deferred")
    assert quota(herder, "team") is not None, "kept while job-0 uses it"
    cluster.core.delete_namespaced_pod("job-0", "team")
    eventually(lambda: quota(herder, "team") is None, "quota team removed after its last pod")


def group_objects(cluster: Cluster) -> dict[str, dict[str, Any]]:
    stored = cluster.server.objects(QUOTA_OBJECTS)
    return {q["metadata"]["name"]: q for q in stored if q["metadata"]["namespace"] == "herder-system"}


def test_seed_002_the_leader_creates_the_system_and_default_quota_objects(cluster: Cluster) -> None:
    # Seed 002: the sys-group and default-group are created "not only in scheduler memory, but also
    # try create the quota group crd".
    herder = cluster.start_herder(settings={"quota.defaultMax": '{"cpu": "2"}'})
    found = eventually(lambda: group_objects(cluster) if len(group_objects(cluster)) == 2 else None, "two objects")
    assert found["system"]["spec"] == {}
    assert found["default"]["spec"] == {"min": {}, "max": {"cpu": "2"}}
    assert found["default"]["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "herder"}
    eventually(lambda: (quota(herder, "default") or {}).get("namespace") == "herder-system", "the object read back")


def test_a_users_default_quota_object_is_never_overwritten_and_sets_the_default_group(cluster: Cluster) -> None:
    mine = quota_body("default", "herder-system", {"cpu": "1"}, {"cpu": "3"})
    create(cluster, mine)
    herder = cluster.start_herder(settings={"quota.defaultMax": '{"cpu": "2"}'})
    eventually(lambda: "system" in group_objects(cluster), "the system object created beside it")
    assert group_objects(cluster)["default"]["spec"] == mine["spec"]
    assert eventually(lambda: (quota(herder, "default") or {}).get("max") == {"vcore": 3000}, "max from the object")
    cluster.create_namespace("loose")
    names = cluster.create_pods("loose", 4, cpu="1")
    eventually(lambda: sum(1 for n in names if cluster.node_of("loose", n)) == 3, "three pods within the default max")


def test_no_group_objects_when_the_setting_is_off(cluster: Cluster) -> None:
    herder = cluster.start_herder(settings={"quota.groupObjects": "false"})
    eventually(lambda: herder.leading, "leadership")
    cluster.create_namespace("loose")
    cluster.create_pods("loose", 1)
    cluster.bound("loose", "job-0")
    assert group_objects(cluster) == {}
