"""Whole-config validation: each rule names the partition, queue path, rule index or limit at fault."""

from __future__ import annotations

import pytest
import yaml

from core.config import ConfigError, load_config


def _config(root: dict[str, object], **partition: object) -> str:
    return yaml.safe_dump({"partitions": [{"name": "default", "queues": [root], **partition}]})


def _problems(source: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(source)
    return info.value.problems


def _one(source: str, *fragments: str) -> None:
    problems = _problems(source)
    assert any(all(f in p for f in fragments) for p in problems), problems


def _root(*children: dict[str, object], **fields: object) -> dict[str, object]:
    return {"name": "root", "queues": list(children), **fields}


def test_partition_names_must_be_unique() -> None:
    source = yaml.safe_dump({"partitions": [{"name": "p", "queues": [{"name": "root"}]}] * 2})
    _one(source, "partitions[p]", "twice")


def test_root_may_not_set_resources() -> None:
    _one(_config(_root(resources={"max": {"memory": 1}})), "queues.root", "resources")


def test_queue_name_must_match_the_allowed_characters() -> None:
    _one(_config(_root({"name": "bad name"})), "root.bad name", "invalid queue name")


def test_queue_names_are_unique_per_level_ignoring_case() -> None:
    _one(_config(_root({"name": "a"}, {"name": "A"})), "root.A", "twice")


def test_guaranteed_never_exceeds_max() -> None:
    q = {"name": "a", "resources": {"guaranteed": {"memory": 5}, "max": {"memory": 4}}}
    _one(_config(_root(q)), "root.a", "guaranteed memory 5", "max 4")


def test_child_never_exceeds_parent_max() -> None:
    child = {"name": "b", "resources": {"max": {"vcore": 3}}}
    parent = {"name": "a", "resources": {"max": {"vcore": 2}}, "queues": [child]}
    _one(_config(_root(parent)), "root.a.b", "max vcore 3 exceeds parent max 2")


def test_children_guaranteed_sum_fits_parent_guaranteed_and_max() -> None:
    kids = [{"name": n, "resources": {"guaranteed": {"memory": 6}}} for n in ("b", "c")]
    parent = {"name": "a", "resources": {"guaranteed": {"memory": 10}, "max": {"memory": 11}}, "queues": kids}
    problems = _problems(_config(_root(parent)))
    assert any("root.a: children's guaranteed memory 12 exceeds guaranteed 10" in p for p in problems)
    assert any("root.a: children's guaranteed memory 12 exceeds max 11" in p for p in problems)


def test_child_maxapplications_fits_parent() -> None:
    parent = {"name": "a", "maxapplications": 2, "queues": [{"name": "b", "maxapplications": 3}]}
    _one(_config(_root(parent)), "root.a.b", "maxapplications 3")


def test_sort_policy_and_priority_values_are_known() -> None:
    q = {
        "name": "a",
        "properties": {"application.sort.policy": "random", "application.sort.priority": "maybe"},
    }
    problems = _problems(_config(_root(q)))
    assert any("root.a.properties.application.sort.policy" in p for p in problems)
    assert any("root.a.properties.application.sort.priority" in p for p in problems)


def test_acl_has_at_most_two_fields() -> None:
    _one(_config(_root({"name": "a", "submitacl": "u g extra"})), "root.a.submitacl")


@pytest.mark.parametrize(
    ("rule", "fragment"),
    [
        ({"name": "recovery"}, "recovery"),
        ({"name": "9bad"}, "invalid rule name"),
        ({"name": "nosuch"}, "unknown rule"),
        ({"name": "tag"}, "needs a value"),
        ({"name": "fixed"}, "needs a value"),
        ({"name": "user", "filter": {"type": "maybe"}}, "filter.type"),
        ({"name": "user", "filter": {"users": ["(unclosed"]}}, "neither a valid user name nor a regular expression"),
        ({"name": "user", "parent": {"name": "tag"}}, "placementrules[0].parent"),
        ({"name": "fixed", "value": "nowhere"}, "does not exist"),
    ],
)
def test_placement_rules_are_checked(rule: dict[str, object], fragment: str) -> None:
    _one(_config(_root(), placementrules=[rule]), "placementrules[0]", fragment)


def test_fixed_rule_to_existing_queue_or_with_create_is_accepted() -> None:
    rules = [{"name": "fixed", "value": "a"}, {"name": "fixed", "value": "new", "create": True}]
    load_config(_config(_root({"name": "a"}), placementrules=rules))


def test_node_sort_policy_type_and_weights() -> None:
    problems = _problems(_config(_root(), nodesortpolicy={"type": "random", "resourceweights": {"vcore": -1}}))
    assert any("nodesortpolicy.type" in p for p in problems)
    assert any("nodesortpolicy.resourceweights.vcore" in p for p in problems)


def _limited(*limits: dict[str, object], **queue: object) -> str:
    return _config(_root({"name": "a", "limits": list(limits), **queue}))


def test_limit_names_users_or_groups() -> None:
    _one(_limited({"limit": "nobody", "maxapplications": 1}), "root.a.limits[0] (nobody)", "no users")


def test_limit_user_and_group_names_are_valid() -> None:
    problems = _problems(_limited({"users": ["1bad"], "groups": ["g@x"], "maxapplications": 1}))
    assert any("invalid user name '1bad'" in p for p in problems)
    assert any("invalid group name 'g@x'" in p for p in problems)


def test_limit_names_are_not_repeated_in_a_queue() -> None:
    _one(_limited({"users": ["sue"], "maxapplications": 1}, {"users": ["sue"], "maxapplications": 2}), "'sue'")


def test_named_limit_may_not_follow_the_wildcard() -> None:
    _one(_limited({"users": ["*"], "maxapplications": 1}, {"users": ["bob"], "maxapplications": 1}), "after")


def test_group_wildcard_may_not_be_the_only_group_limit() -> None:
    _one(_limited({"groups": ["*"], "maxapplications": 1}), "root.a.limits", "only group limit")


def test_limit_maxresources_needs_a_positive_value() -> None:
    _one(_limited({"users": ["sue"], "maxresources": {"memory": 0}}), "no value above zero")


def test_limit_sets_maxresources_or_maxapplications() -> None:
    _one(_limited({"users": ["sue"]}), "root.a.limits[0]", "neither")


def test_limit_maxapplications_fits_the_queue() -> None:
    _one(_limited({"users": ["sue"], "maxapplications": 5}, maxapplications=4), "root.a.limits[0]", "exceeds")


def test_limit_maxresources_fits_the_queue_max() -> None:
    limit = {"users": ["sue"], "maxresources": {"memory": 9}}
    _one(_limited(limit, resources={"max": {"memory": 8}}), "root.a.limits[0]", "maxresources memory 9")


def test_partition_limits_must_equal_root_limits_when_both_set() -> None:
    root = _root(limits=[{"users": ["a"], "maxapplications": 1}])
    _one(_config(root, limits=[{"users": ["b"], "maxapplications": 1}]), "partitions[default].limits", "differ")


def _nested(parent_limit: dict[str, object], child_limit: dict[str, object]) -> str:
    child = {"name": "b", "limits": [child_limit]}
    return _config(_root({"name": "a", "limits": [parent_limit], "queues": [child]}))


def test_child_user_limit_fits_ancestor_named_limit() -> None:
    source = _nested(
        {"users": ["sue"], "maxresources": {"memory": 5}}, {"users": ["sue"], "maxresources": {"memory": 6}}
    )
    _one(source, "root.a.b.limits[0]", "user 'sue'", "memory")


def test_child_group_limit_fits_ancestor_wildcard_limit() -> None:
    parent = {"groups": ["*"], "maxapplications": 2}
    child = {"groups": ["dev"], "maxapplications": 3}
    child_q = {"name": "b", "limits": [child]}
    source = _config(
        _root({"name": "a", "limits": [{"groups": ["ops"], "maxapplications": 1}, parent], "queues": [child_q]})
    )
    _one(source, "root.a.b.limits[0]", "group 'dev'", "maxapplications")


def test_child_unlimited_apps_under_limited_ancestor_is_refused() -> None:
    source = _nested({"users": ["sue"], "maxapplications": 2}, {"users": ["sue"], "maxresources": {"memory": 1}})
    _one(source, "root.a.b.limits[0]", "unlimited")


def test_fitting_hierarchy_is_accepted() -> None:
    load_config(_nested({"users": ["sue"], "maxapplications": 2}, {"users": ["sue"], "maxapplications": 1}))


def test_preemption_policy_and_delay_are_checked_with_their_path() -> None:
    q = {"name": "a", "properties": {"preemption.policy": "sometimes", "preemption.delay": "soon"}}
    b = {"name": "b", "properties": {"preemption.delay": "0s"}}
    problems = _problems(_config(_root(q, b)))
    assert any("root.a.properties.preemption.policy: unknown policy 'sometimes'" in p for p in problems)
    assert any("root.a.properties.preemption.delay: not a duration: 'soon'" in p for p in problems)
    assert any("root.b.properties.preemption.delay: must be above zero" in p for p in problems)
    good = {"name": "c", "properties": {"preemption.policy": "Fence", "preemption.delay": "1m30s"}}
    assert load_config(_config(_root(good))).partition().root.queues[0].properties["preemption.delay"] == "1m30s"


def test_priority_offset_and_policy_are_checked_with_their_path() -> None:
    q = {"name": "a", "properties": {"priority.offset": "high", "priority.policy": "wall"}}
    b = {"name": "b", "properties": {"priority.offset": str(2**31)}}
    problems = _problems(_config(_root(q, b)))
    assert any("root.a.properties.priority.offset: not an integer: 'high'" in p for p in problems)
    assert any("root.a.properties.priority.policy: unknown policy 'wall'" in p for p in problems)
    assert any("root.b.properties.priority.offset: 2147483648 is outside the int32 range" in p for p in problems)
