"""The ElasticQuota webhook refuses every change the core would refuse, naming quota and rule."""

from __future__ import annotations

from typing import Any

import pytest

from shim.convert.quotas import ANNOTATION_RUNTIME, LABEL_IS_PARENT, LABEL_PARENT, quota_to_spec
from shim.kube.admission.decisions import QuotaTree
from shim.kube.admission.quota import review_quota

ADMIN = {"username": "admin", "groups": ["system:masters"]}


def quota(
    name: str,
    min_: dict[str, str] | None = None,
    max_: dict[str, str] | None = None,
    parent: str = "",
    is_parent: bool = False,
    namespace: str | None = None,
) -> dict[str, Any]:
    labels = {}
    if parent:
        labels[LABEL_PARENT] = parent
    if is_parent:
        labels[LABEL_IS_PARENT] = "true"
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": name, "namespace": namespace or name, "labels": labels},
        "spec": {"min": min_ or {}, "max": max_ or {"cpu": "10"}},
    }


def tree(*objects: dict[str, Any], pods: dict[str, int] | None = None) -> QuotaTree:
    specs = [quota_to_spec(o) for o in objects]
    return QuotaTree({s.name: s for s in specs}, pods or {})


def create(obj: dict[str, Any]) -> dict[str, Any]:
    return {"operation": "CREATE", "userInfo": ADMIN, "object": obj, "oldObject": None}


def update(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    return {"operation": "UPDATE", "userInfo": ADMIN, "object": new, "oldObject": old}


def delete(old: dict[str, Any]) -> dict[str, Any]:
    return {"operation": "DELETE", "userInfo": ADMIN, "object": None, "oldObject": old, "name": old["metadata"]["name"]}


ORG = quota("org", {"cpu": "10"}, {"cpu": "20"}, is_parent=True)
TEAM = quota("team", {"cpu": "6"}, {"cpu": "10"}, parent="org")
WORLD = tree(ORG, TEAM)


def refusal(request: dict[str, Any], current: QuotaTree = WORLD) -> str:
    decision = review_quota(request, current)
    assert not decision.allowed, "expected a refusal"
    assert decision.code == 400
    return decision.message


@pytest.mark.parametrize(
    ("obj", "rule"),
    [
        (quota("neg", max_={"cpu": "-1"}), "spec.max: resource 'cpu': negative quantity '-1'"),
        (quota("neg", min_={"cpu": "-1"}), "spec.min: resource 'cpu': negative quantity '-1'"),
        (quota("over", {"cpu": "20"}, {"cpu": "10"}), "min vcore 20000m > max 10000m"),
        (quota("keys", {"memory": "1Gi"}, {"cpu": "10"}), "min names memory which max does not"),
        (quota("orphan", parent="nowhere"), "parent nowhere does not exist"),
        (quota("under-leaf", parent="team"), "parent team is not a parent quota"),
        (quota("root"), "the name 'root' is reserved"),
        (quota("system", max_={"cpu": "10"}), "the system quota's min and max are unlimited and cannot be set"),
        (quota("default", {"cpu": "8"}, {"cpu": "4"}), "min vcore 8000m > max 4000m"),
        (quota("default", parent="org"), "the default quota group sits outside the tree"),
    ],
)
def test_invalid_quota_is_refused_naming_quota_and_rule(obj: dict[str, Any], rule: str) -> None:
    message = refusal(create(obj))
    assert f"ElasticQuota {obj['metadata']['namespace']}/{obj['metadata']['name']}" in message
    assert rule in message


def test_valid_quota_under_a_parent_is_admitted() -> None:
    assert review_quota(create(quota("team-b", {"cpu": "4"}, {"cpu": "10"}, parent="org")), WORLD).allowed


def test_childrens_mins_must_fit_the_parents_min_below_the_first_level() -> None:
    sub = quota("sub", {"cpu": "4"}, {"cpu": "10"}, parent="org", is_parent=True)
    current = tree(ORG, sub, quota("leaf-1", {"cpu": "3"}, parent="sub"))
    message = refusal(create(quota("leaf-2", {"cpu": "2"}, parent="sub")), current)
    assert "quota sub: children's min vcore sum 5000m > its min 4000m" in message


def test_first_level_mins_are_not_bounded_by_each_other() -> None:
    big = quota("big", {"cpu": "100"}, {"cpu": "100"})
    assert review_quota(create(big), tree(ORG, TEAM, quota("other", {"cpu": "100"}, {"cpu": "100"}))).allowed


def test_parent_chain_may_not_form_a_cycle() -> None:
    a = quota("a", parent="b", is_parent=True)
    b = quota("b", parent="", is_parent=True)
    current = tree(b, a)
    message = refusal(update(b, quota("b", parent="a", is_parent=True)), current)
    assert "cycle" in message


def test_a_parent_quota_stays_a_parent() -> None:
    message = refusal(update(ORG, quota("org", {"cpu": "10"}, {"cpu": "20"})))
    assert "is-parent cannot change from true to false" in message


def test_a_leaf_quota_stays_a_leaf_even_when_empty() -> None:
    # Seed 002: no conversion between parent and child, with or without pods.
    message = refusal(update(TEAM, quota("team", {"cpu": "6"}, {"cpu": "10"}, parent="org", is_parent=True)))
    assert "is-parent cannot change from false to true" in message


def test_the_old_object_of_the_request_counts_when_herder_has_not_seen_the_quota_yet() -> None:
    unseen = quota("fresh", {"cpu": "1"}, {"cpu": "2"}, is_parent=True)
    message = refusal(update(unseen, quota("fresh", {"cpu": "1"}, {"cpu": "2"})), tree(ORG, TEAM))
    assert "is-parent cannot change from true to false" in message


def test_quota_with_children_or_pods_cannot_be_deleted() -> None:
    assert "cannot be deleted while it has children (team)" in refusal(delete(ORG))
    busy = tree(ORG, TEAM, pods={"team": 3})
    assert "cannot be deleted while 3 pod(s) use it" in refusal(delete(TEAM), busy)


def test_idle_leaf_quota_can_be_deleted() -> None:
    assert review_quota(delete(TEAM), WORLD).allowed


def test_quota_names_are_unique_across_namespaces() -> None:
    message = refusal(create(quota("team", namespace="elsewhere", parent="org")))
    assert "already used in namespace team" in message


def test_malformed_quantity_is_refused_with_its_field() -> None:
    message = refusal(create(quota("bad", max_={"cpu": "lots"})))
    assert "spec.max" in message and "cpu" in message


def test_herders_own_annotation_writes_are_never_refused() -> None:
    # The tree changed under an existing quota (its parent's min shrank); writing runtime/request
    # annotations must still pass, as only what the core reads is validated.
    sub = quota("sub", {"cpu": "1"}, {"cpu": "10"}, parent="org", is_parent=True)
    leaf = quota("leaf", {"cpu": "3"}, parent="sub")
    annotated = quota("leaf", {"cpu": "3"}, parent="sub")
    annotated["metadata"]["annotations"] = {ANNOTATION_RUNTIME: '{"cpu":"3"}'}
    assert review_quota(update(leaf, annotated), tree(ORG, sub, leaf)).allowed


def test_quota_changes_wait_until_the_tree_is_loaded() -> None:
    decision = review_quota(create(quota("new")), None)
    assert not decision.allowed and decision.code == 503
    assert "retry" in decision.message


def test_seed_002_the_default_group_is_settable_by_an_object_named_default() -> None:
    # Seed 002: the default-group's "min" and "max" have default values; "users can modify them on demand".
    assert review_quota(create(quota("default", {"cpu": "2"}, {"cpu": "8"})), WORLD).allowed
    system = {**quota("system"), "spec": {}}  # the object Herder creates to show the group
    assert review_quota(create(system), WORLD).allowed
