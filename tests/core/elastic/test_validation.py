"""Every ElasticQuota rule of DESIGN.md refuses with a message naming the rule and the object, and the
Scheduler keeps the previous tree (with a QuotaRefused event) when a change is refused."""

from __future__ import annotations

import pytest

from core.config.settings import Settings
from core.elastic.spec import ElasticQuotaSpec
from core.elastic.validation import validate_pod_labels, validate_quota_change, validate_quota_deletion
from core.resources import Resource
from tests.core.scheduling.world import World

CPU = "vcore"


def spec(
    name: str, min_: int = 0, max_: int = 10_000, *, parent: str = "", is_parent: bool = False
) -> ElasticQuotaSpec:
    return ElasticQuotaSpec(name, name, Resource({CPU: min_}), Resource({CPU: max_}), parent, is_parent)


ORG = spec("org", 10_000, 20_000, is_parent=True)
TEAM = spec("team", 6_000, 10_000, parent="org")
TREE = {"org": ORG, "team": TEAM}


def test_negative_values_are_refused_naming_the_quota_and_the_field() -> None:
    bad = ElasticQuotaSpec("neg", "neg", Resource({CPU: -1}), Resource({CPU: -5}), shared_weight=Resource({CPU: -2}))
    problems = validate_quota_change({}, bad)
    assert "quota neg: min vcore is negative (-1m)" in problems
    assert "quota neg: max vcore is negative (-5m)" in problems
    assert "quota neg: shared-weight vcore is negative (-2m)" in problems


def test_min_keys_must_be_within_max_keys() -> None:
    bad = ElasticQuotaSpec("keys", "keys", Resource({"memory": 1}), Resource({CPU: 1000}))
    assert validate_quota_change({}, bad) == ["quota keys: min names memory which max does not"]


def test_min_must_not_exceed_max() -> None:
    assert validate_quota_change({}, spec("over", 2000, 1000)) == ["quota over: min vcore 2000m > max 1000m"]


def test_the_parent_must_exist() -> None:
    assert validate_quota_change(TREE, spec("lost", parent="nowhere")) == ["quota lost: parent nowhere does not exist"]


def test_the_parent_must_be_a_parent_quota() -> None:
    assert validate_quota_change(TREE, spec("under", parent="team")) == [
        "quota under: parent team is not a parent quota (is-parent is false)"
    ]


def test_a_child_limits_only_resources_its_parent_limits() -> None:
    # The parent's runtime is the child's pool: a GPU limit under a parent that limits only
    # vcore would have no pool to be bounded by.
    gpu_team = ElasticQuotaSpec(
        "gpu-team", "gpu-team", Resource({CPU: 1000}), Resource({CPU: 2000, "nvidia.com/gpu": 4}), "org"
    )
    assert validate_quota_change(TREE, gpu_team) == [
        "quota gpu-team: max names nvidia.com/gpu which its parent org's max does not"
    ]


def test_a_parent_cannot_stop_limiting_a_resource_its_children_limit() -> None:
    memory_only = ElasticQuotaSpec("org", "org", Resource({"memory": 1}), Resource({"memory": 2}), is_parent=True)
    assert "quota team: max names vcore which its parent org's max does not" in validate_quota_change(TREE, memory_only)


def test_a_parent_with_children_stays_a_parent() -> None:
    problems = validate_quota_change(TREE, spec("org", 10_000, 20_000))
    assert problems == [
        "quota org: is-parent cannot change from true to false: a quota stays a parent or a child for its whole "
        "life (delete it and create it again to change it)"
    ]


def test_a_leaf_in_use_stays_a_leaf() -> None:
    problems = validate_quota_change(TREE, spec("team", 6_000, 10_000, parent="org", is_parent=True))
    assert problems == [
        "quota team: is-parent cannot change from false to true: a quota stays a parent or a child for its whole "
        "life (delete it and create it again to change it)"
    ]


@pytest.mark.parametrize("was_parent", [True, False])
def test_seed_002_an_empty_quota_is_never_converted_between_parent_and_child(was_parent: bool) -> None:
    # Seed 002, configuration limit 5: "A quota group can't be converted on the attribute of parent
    # group\child group" -- even with no children and no pods to lose.
    empty = spec("empty", 1_000, 2_000, is_parent=was_parent)
    problems = validate_quota_change({"empty": empty}, spec("empty", 1_000, 2_000, is_parent=not was_parent))
    assert len(problems) == 1 and "is-parent cannot change" in problems[0]
    assert validate_quota_change({"empty": empty}, spec("empty", 1_000, 3_000, is_parent=was_parent)) == []


def test_the_writers_old_object_counts_when_the_tree_has_not_seen_it() -> None:
    # The webhook compares with the object the API server holds, even before the watch delivered it.
    before = spec("new-parent", is_parent=True)
    problems = validate_quota_change({}, spec("new-parent"), previous=before)
    assert problems and "is-parent cannot change from true to false" in problems[0]


def test_children_of_a_first_level_parent_must_fit_its_min() -> None:
    # Seed 002, configuration limit 1: every group except the first level keeps its children's
    # mins within its min; org is a first-level parent, so team (6) + extra (5) > org's 10 is refused.
    problems = validate_quota_change(TREE, spec("extra", 5_000, parent="org"))
    assert problems == ["quota org: children's min vcore sum 11000m > its min 10000m"]


def test_a_parent_lowering_its_min_below_its_childrens_mins_is_refused() -> None:
    problems = validate_quota_change(TREE, spec("org", 5_000, 20_000, is_parent=True))
    assert problems == ["quota org: children's min vcore sum 6000m > its min 5000m"]


def test_first_level_mins_are_not_bounded_by_each_other() -> None:
    # The first level may sum above the cluster: min scaling handles a shrinking cluster.
    current = {"a": spec("a", 1_000_000, 1_000_000)}
    assert validate_quota_change(current, spec("b", 1_000_000, 1_000_000)) == []


def test_children_deeper_down_must_fit_their_parents_min() -> None:
    sub = spec("sub", 4_000, 10_000, parent="org", is_parent=True)
    current = {**TREE, "team": spec("team", 6_000, 10_000, parent="org"), "sub": sub}
    current["leaf-1"] = spec("leaf-1", 3_000, parent="sub")
    problems = validate_quota_change(current, spec("leaf-2", 2_000, parent="sub"))
    assert problems == ["quota sub: children's min vcore sum 5000m > its min 4000m"]


def test_the_parent_chain_may_not_form_a_cycle() -> None:
    current = {"a": spec("a", parent="b", is_parent=True), "b": spec("b", is_parent=True)}
    problems = validate_quota_change(current, spec("b", parent="a", is_parent=True))
    assert problems == ["quota b: parent chain forms a cycle through b"]


def test_no_pod_may_name_a_parent_quota() -> None:
    assert validate_pod_labels(TREE, "org", None, True) == [
        "pod names quota org, which is a parent quota; pods belong to leaves"
    ]
    assert validate_pod_labels(TREE, "team", None, True) == []


def test_a_quota_with_children_cannot_be_deleted() -> None:
    assert validate_quota_deletion(TREE, "org", {}) == ["quota org: cannot be deleted while it has children (team)"]


def test_a_quota_with_pods_cannot_be_deleted() -> None:
    assert validate_quota_deletion(TREE, "team", {"team": 3}) == ["quota team: cannot be deleted while 3 pod(s) use it"]
    assert validate_quota_deletion(TREE, "team", {}) == []


@pytest.mark.parametrize("name", ["system", "default"])
def test_the_special_quotas_cannot_be_deleted(name: str) -> None:
    assert validate_quota_deletion(TREE, name, {}) == [f"quota {name}: the {name} quota cannot be deleted"]


def test_a_pods_preemptible_label_cannot_change() -> None:
    assert validate_pod_labels(TREE, "team", True, False) == ["pod's preemptible label cannot change"]
    assert validate_pod_labels(TREE, "team", False, True) == ["pod's preemptible label cannot change"]
    assert validate_pod_labels(TREE, "team", False, False) == []


def test_an_invalid_update_is_refused_with_an_event_and_the_previous_tree_stays() -> None:
    world = World(settings=Settings())
    world.node("n1", cpu=8)
    world.quota("org", is_parent=True, min={"cpu": 4}, max={"cpu": 8})
    world.quota("team", parent="org", min={"cpu": 2}, max={"cpu": 4})
    world.pod("p0", namespace="team")
    world.schedule()
    before = world.sched.quota_tree()
    bad = ElasticQuotaSpec("team", "team", Resource({CPU: 3000}), Resource({CPU: 2000}), parent="org")
    with pytest.raises(ValueError, match="quota team: min vcore 3000m > max 2000m"):
        world.sched.update_quota(bad)
    refused = world.out.reasons("QuotaRefused")
    assert [(e.object_id, e.message) for e in refused] == [("team", "quota team: min vcore 3000m > max 2000m")]
    assert world.sched.quota_tree() == before
    assert world.sched.quota_status()["team"].max == Resource({CPU: 4000})
    with pytest.raises(ValueError, match="cannot be deleted while it has children"):
        world.sched.remove_quota("org")
    assert world.sched.quota_tree() == before
