"""YuniKorn's validator tables, replayed: what `configvalidator_test.go` refuses, Herder refuses,
naming the path and the reason; what it accepts, Herder accepts.

Each test names the upstream test and row it replays (yunikorn-core `pkg/common/configs/
configvalidator_test.go` and `pkg/scheduler/placement/*_test.go`). The rows are rewritten as
queues.yaml, the way a user meets them. Plain numbers are kept as the rows have them: every
resource in these rows is a bare count, so a row is about structure, never units.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from core.config import ConfigError, check_config, load_config


def config(*queues: dict[str, Any], rules: list[dict[str, Any]] | None = None, **partition: Any) -> str:
    part: dict[str, Any] = {"name": "default", "queues": [{"name": "root", "queues": list(queues)}], **partition}
    if rules is not None:
        part["placementrules"] = rules
    return yaml.safe_dump({"partitions": [part]}, sort_keys=False)


def problems(source: str) -> list[str]:
    with pytest.raises(ConfigError) as refused:
        load_config(source)
    return refused.value.problems


def refused_for(source: str, *fragments: str) -> str:
    """The one problem naming every fragment (the path and the reason)."""
    found = problems(source)
    matching = [p for p in found if all(f in p for f in fragments)]
    assert matching, found
    return matching[0]


def queue(name: str, *children: dict[str, Any], **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, **fields}
    if children:
        out["queues"] = list(children)
    return out


def res(**amounts: Any) -> dict[str, str]:
    return {key: str(value) for key, value in amounts.items()}


# -- TestCheckResourceConfigurationsForQueue ------------------------------------------------------


def test_one_level_skipped_while_setting_max_resource() -> None:
    # Row "One level skipped while setting max resource": parent max 100, parent1 none, child1 150.
    source = config(queue("parent", queue("parent1", queue("child1", resources={"max": res(memory=150)})),
                          resources={"max": res(memory=100)}))  # fmt: skip
    problem = refused_for(source, "root.parent.parent1.child1", "max memory 150 exceeds 100")
    assert "the max of root.parent" in problem


def test_one_level_skipped_while_setting_guaranteed_resource() -> None:
    # Row "One level skipped while setting guaranteed resource": parent guaranteed 100, child1 150.
    source = config(queue("parent", queue("parent1", queue("child1", resources={"guaranteed": res(memory=150)})),
                          resources={"guaranteed": res(memory=100)}))  # fmt: skip
    refused_for(
        source, "partitions[default].queues.root.parent:", "children's guaranteed memory 150 exceeds guaranteed 100"
    )


def test_sum_of_child_guaranteed_higher_than_parent_max() -> None:
    # Row "Sum of child guaranteed higher than parent max": parent1 max 80, children 50 + 40.
    kids = [
        queue("child1", resources={"guaranteed": res(memory=50)}),
        queue("child2", resources={"guaranteed": res(memory=40)}),
    ]
    source = config(queue("parent", queue("parent1", *kids, resources={"max": res(memory=80)}),
                          resources={"max": res(memory=100)}))  # fmt: skip
    refused_for(source, "root.parent.parent1:", "children's guaranteed memory 90 exceeds max 80")


def test_guarantees_under_a_queue_without_max_fit_the_max_set_above_it() -> None:
    # The same rule one level removed (YuniKorn carries the max down): parent max 100, parent1
    # sets none, its children are guaranteed 60 + 50.
    kids = [queue("a", resources={"guaranteed": res(memory=60)}), queue("b", resources={"guaranteed": res(memory=50)})]
    source = config(queue("parent", queue("parent1", *kids), resources={"max": res(memory=100)}))
    problem = refused_for(source, "root.parent.parent1:", "children's guaranteed memory 110 exceeds max 100")
    assert "of root.parent" in problem


@pytest.mark.parametrize(
    ("row", "parent", "children", "accepted"),
    [
        ("Higher guaranteed resource in child queues", {"guaranteed": res(memory=10, vcores=30)},
         [{"guaranteed": res(memory=50, vcores=33)}], False),
        ("Higher sum of guaranteed resource in child queues than the parent's guaranteed",
         {"max": res(memory=50, vcores=33), "guaranteed": res(memory=10, vcores=30)},
         [{"max": res(memory=10, vcores=30), "guaranteed": res(memory=10, vcores=30)}] * 2, False),
        ("Higher sum of guaranteed resource in child queues than the parent's Max when guaranteed is undefined",
         {"max": res(memory=50, vcores=33), "guaranteed": res(memory=20)},
         [{"max": res(memory=10, vcores=30), "guaranteed": res(memory=10, vcores=30)}] * 2, False),
        ("Higher max resource in child queues", {"max": res(memory=10, vcores=30)},
         [{"max": res(memory=50, vcores=33)}], False),
        ("Higher guaranteed than max resource",
         {"max": res(memory=10, vcores=30), "guaranteed": res(memory=50, vcores=33)}, [], False),
        ("Valid configuration", {"max": res(memory=50, vcores=33), "guaranteed": res(memory=10, vcores=30)}, [], True),
        ("Parent with undefined guaranteed resources",
         {"guaranteed": res(memory=100), "max": res(memory=100, vcores=100)},
         [{"guaranteed": res(memory=50, vcores=50), "max": res(memory=80, vcores=80)}] * 2, True),
        ("Nil guaranteed resources for both parent and child", {"max": res(memory=50, vcores=33)},
         [{"max": res(memory=10, vcores=30)}], True),
        ("Empty guaranteed resources for both parent and child", {"guaranteed": {}, "max": res(memory=50, vcores=33)},
         [{"guaranteed": {}, "max": res(memory=10, vcores=30)}], True),
    ],
)  # fmt: skip
def test_resource_rows(row: str, parent: dict[str, Any], children: list[dict[str, Any]], accepted: bool) -> None:
    kids = [queue(f"child{i}", resources=child) for i, child in enumerate(children)]
    source = config(queue("parent", *kids, resources=parent))
    assert check_config(source).valid is accepted, (row, check_config(source).problems)


def test_negative_and_malformed_amounts_are_refused_naming_the_resource() -> None:
    # Rows "Negative guaranteed resource", "Syntax error in max resource".
    assert "negative" in refused_for(config(queue("a", resources={"guaranteed": res(memory=-50)})), "root.a")
    refused_for(config(queue("a", resources={"max": {"memory": "ten"}})), "root.a.resources.max", "'memory'")


# -- TestCheckQueueMaxApplicationsForQueue --------------------------------------------------------


@pytest.mark.parametrize(
    ("apps", "accepted"),
    [((1, 2, 3, 4), False), ((4, 3, 2, 1), True), ((0, 3, 2, 1), True), ((4, 3, 2, 0), False)],
)
def test_max_applications_rows(apps: tuple[int, int, int, int], accepted: bool) -> None:
    # createQueueWithMaxApplication: root, parent, parent1, child1; 0 means not set.
    def fields(n: int) -> dict[str, int]:
        return {"maxapplications": n} if n else {}

    tree = queue("parent", queue("parent1", queue("child1", **fields(apps[3])), **fields(apps[2])), **fields(apps[1]))
    root = {"name": "root", "queues": [tree], **fields(apps[0])}
    source = yaml.safe_dump({"partitions": [{"name": "default", "queues": [root]}]})
    assert check_config(source).valid is accepted, check_config(source).problems


def test_a_child_of_a_queue_with_maxapplications_must_set_its_own() -> None:
    # Row "InValid maxApplication settings: child maxRunningApps cannot be 0".
    source = config(queue("parent", queue("child"), maxapplications=4))
    refused_for(source, "root.parent.child", "maxapplications is not set, but its parent sets 4")


# -- TestUserName / TestGroupName / TestServiceAccount*: filters with one entry ---------------------

ALLOWED_USERS = [
    "username-allowed_99", "username", "username*regexp", "user_name", "user@name@", "username$$",
    "system:serviceaccounts:username:username-77", "system:serviceaccounts:username:regexp*",
    "system:serviceaccounts:username.12:username-77-11", "system:serviceaccounts:username:username",
]  # fmt: skip
REJECTED_USERS = [
    "username rejected", "rejected!name", "!rejected", " rejected ",
    "system:serviceaccounts:username!:username", "system:serviceaccounts:username xyz:username",
    "system:serviceaccounts: :username", "system:serviceaccounts: username:username",
    "system:\\:username", " system:serviceaccounts:username:username",
]  # fmt: skip
ALLOWED_GROUPS = [
    "groupname-allowed_99", "groupname", "groupname*regexp", "group_name", "group-name", "system:authenticated",
    "system:unauthenticated", "system:serviceaccounts:groupname", "system:serviceaccounts:groupname.12",
    "system:serviceaccounts:groupname-1-test.test",
]  # fmt: skip
REJECTED_GROUPS = [
    "groupname ", "group@name", "group name", " groupname ", "!groupname", "system:\\:groupname",
    "system:serviceaccounts: groupname", "system:!:groupname", "system:&:groupname", " system:authenticated",
]  # fmt: skip


def _filtered(users: list[str], groups: list[str]) -> str:
    return config(queue("a"), rules=[{"name": "user", "create": True, "filter": {"users": users, "groups": groups}}])


@pytest.mark.parametrize("user", ALLOWED_USERS)
def test_filter_user_names_yunikorn_allows_are_allowed(user: str) -> None:
    assert check_config(_filtered([user], ["ok"])).valid


@pytest.mark.parametrize("user", REJECTED_USERS)
def test_filter_user_names_yunikorn_rejects_are_refused(user: str) -> None:
    refused_for(_filtered([user], ["ok"]), "placementrules[0].filter.users", repr(user))


@pytest.mark.parametrize("group", ALLOWED_GROUPS)
def test_filter_group_names_yunikorn_allows_are_allowed(group: str) -> None:
    assert check_config(_filtered(["ok"], [group])).valid


@pytest.mark.parametrize("group", REJECTED_GROUPS)
def test_filter_group_names_yunikorn_rejects_are_refused(group: str) -> None:
    refused_for(_filtered(["ok"], [group]), "placementrules[0].filter.groups", repr(group))


def test_an_empty_single_filter_entry_is_refused() -> None:
    # TestCheckPlacementRule "invalid rule filter user list": Users [""].
    refused_for(_filtered([""], ["ok"]), "filter.users")


def test_an_invalid_name_in_a_longer_filter_list_is_kept_with_a_warning() -> None:
    # YuniKorn's validator checks a single entry only; in a list it ignores what is no name.
    report = check_config(_filtered(["sue", "bad name"], ["ok"]))
    assert report.valid
    assert any("filter.users[1]: 'bad name' is not a valid user name" in w for w in report.warnings)


# -- TestCheckPlacementRule: rule names ----------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "accepted"),
    [
        ({"name": "fixed", "value": "a"}, True),
        ({"name": "Fixed", "value": "a"}, True),  # rule names are normalised (TestNewRule "TeSt")
        ({"name": "#fixed", "value": "a"}, False),
        ({"name": "1234", "value": "a"}, False),
        ({"name": "recovery"}, False),  # TestNewRule: the recovery rule cannot be configured
        ({"name": "bogus"}, False),
        ({"name": "fixed", "value": "b", "parent": {"name": "@fixed", "value": "a"}}, False),
        ({"name": "fixed", "value": "testqueue!>invalid<"}, False),  # TestFixedRulePlace "invalid queue name"
        ({"name": "fixed"}, False),  # TestFixedRule: no queue name
        ({"name": "tag"}, False),  # TestTagRule: no tag name
    ],
)
def test_rule_rows(rule: dict[str, Any], accepted: bool) -> None:
    source = config(queue("a"), rules=[rule])
    assert check_config(source).valid is accepted, check_config(source).problems


# -- TestCheckPlacementRules: rules against the queue tree -----------------------------------------

TREE = [
    queue("users", parent=True),
    queue("devs", queue("yunikorn", parent=True), parent=True),
    queue("default", parent=False),
    queue("admins", parent=True),
]
UPSTREAM_RULES = [  # createPlacementRules: fixed -> tag -> user, and fixed -> fixed
    {
        "name": "user",
        "parent": {"name": "tag", "value": "namespace", "parent": {"name": "fixed", "value": "root.users"}},
    },
    {"name": "fixed", "value": "dev", "create": True, "parent": {"name": "fixed", "value": "admins"}},
]


def test_the_upstream_rules_fit_the_upstream_tree() -> None:
    assert check_config(config(*TREE, rules=UPSTREAM_RULES)).valid


def test_a_fixed_rule_naming_a_parent_queue_is_refused() -> None:
    problem = refused_for(config(*TREE, rules=[{"name": "fixed", "value": "root.users"}]), "placementrules[0]")
    assert "root.users is a parent queue" in problem


def test_a_rule_naming_a_missing_queue_without_create_is_refused() -> None:
    rules = [UPSTREAM_RULES[0], {**UPSTREAM_RULES[1], "create": False}]
    refused_for(config(*TREE, rules=rules), "placementrules[1]", "root.admins.dev does not exist and create is false")


def test_a_queue_under_the_leaf_default_is_refused() -> None:
    rules = [{"name": "fixed", "value": "root.default.leaf"}]
    refused_for(config(*TREE, rules=rules), "placementrules[0]", "root.default is a leaf queue and cannot hold queues")


def test_two_fully_qualified_fixed_rules_chained_are_refused() -> None:
    rules = [{"name": "fixed", "value": "root.default.leaf", "parent": {"name": "fixed", "value": "root.default"}}]
    refused_for(config(*TREE, rules=rules), "placementrules[0]", "fully qualified", "cannot have a parent rule")


def test_a_qualified_fixed_rule_with_any_parent_rule_is_refused() -> None:
    # TestFixedRule: "fixed rule create did not fail with parent rule and qualified child queue name".
    rules = [{"name": "fixed", "value": "root.testchild", "parent": {"name": "fixed", "value": "testparent"}}]
    refused_for(config(queue("testparent", parent=True), rules=rules), "placementrules[0]", "fully qualified")


@pytest.mark.parametrize(
    ("path", "create", "dynamic", "verdict"),
    [
        ("root.users", False, False, "is a parent queue"),  # case 1
        ("root.default", True, False, None),  # case 2
        ("root.users.alice", True, False, None),  # case 3
        ("root.users.alice", False, False, "does not exist and create is false"),  # case 4
        ("root.devs.test", True, False, None),  # case 7
        ("root.devs.test", False, False, "does not exist and create is false"),  # case 8
        ("root.users", False, True, None),  # case 10
        ("root.default", False, True, "is a leaf queue, but the rules after the fixed one"),  # case 9, leaf
    ],
)
def test_check_queue_hierarchy_for_placement_cases(path: str, create: bool, dynamic: bool, verdict: str | None) -> None:
    # TestCheckQueueHierarchyForPlacement, as whole rules: a fixed rule names the path; "dynamic"
    # puts a user rule after it.
    fixed = {"name": "fixed", "value": path, "create": create}
    rule = {"name": "user", "create": create, "parent": {"name": "fixed", "value": path}} if dynamic else fixed
    report = check_config(config(*TREE, rules=[rule]))
    if verdict is None:
        assert report.valid, report.problems
    else:
        assert any(verdict in p for p in report.problems), report.problems


def test_a_path_through_a_leaf_is_refused_whatever_create_says() -> None:
    # Cases 5 and 6: users made a leaf, root.users.alice cannot be created under it.
    tree = [queue("users", parent=False), *TREE[1:]]
    for create in (True, False):
        rule = {"name": "fixed", "value": "root.users.alice", "create": create}
        refused_for(config(*tree, rules=[rule]), "root.users is a leaf queue and cannot hold queues")


# -- TestCheckLimitResource / TestCheckLimitMaxApplications -----------------------------------------


def limits(
    users: dict[str, Any] | None = None, groups: dict[str, Any] | None = None, key: str = "maxresources"
) -> list[dict[str, Any]]:
    """createLimitMaxResources / createLimitMaxApplications: one limit per name, users first."""
    out = [{"limit": "user-limit", "users": [name], key: value} for name, value in (users or {}).items()]
    out += [{"limit": "group-limit", "groups": [name], key: value} for name, value in (groups or {}).items()]
    return out


def mem(n: int) -> dict[str, str]:
    return {"memory": str(n)}


def _ordered(entries: dict[str, Any]) -> dict[str, Any]:
    """The wildcard last, as a user would write it (YuniKorn's rows use Go maps, in no order)."""
    return {k: entries[k] for k in sorted(entries, key=lambda n: n == "*")}


@pytest.mark.parametrize("key", ["maxresources", "maxapplications"])
def test_limits_within_parent_and_ancestor_limits_are_accepted(key: str) -> None:
    def amount(n: int) -> Any:
        return mem(n) if key == "maxresources" else n

    top = limits(
        _ordered({"test-user": amount(100), "*": amount(100)}), {"test-group": amount(100), "g2": amount(100)}, key
    )
    mid = limits(
        {"test-user": amount(50), "test-user2": amount(50)}, {"test-group": amount(50), "test-group2": amount(50)}, key
    )
    low = limits(
        {"test-user": amount(10), "test-user2": amount(10)}, {"test-group": amount(10), "test-group2": amount(10)}, key
    )
    tree = queue("parent", queue("child1", queue("child2", limits=low), limits=mid), limits=top)
    assert check_config(config(tree)).valid, check_config(config(tree)).problems


@pytest.mark.parametrize(
    ("row", "parent", "child", "grandchild", "fragment"),
    [
        ("leaf queue user maxresources exceed parent queue user maxresources",
         limits({"test-user": mem(100)}), limits({"test-user": mem(200)}), None, "user 'test-user'"),
        ("leaf queue group maxresources exceed parent queue group maxresources",
         limits(None, {"test-group": mem(100)}), limits(None, {"test-group": mem(200)}), None, "group 'test-group'"),
        ("leaf queue user maxresources exceed grandparent queue user maxresources",
         limits({"test-user1": mem(100), "test-user2": mem(100)}), limits({"test-user1": mem(50)}),
         limits({"test-user1": mem(10), "test-user2": mem(150)}), "user 'test-user2'"),
        ("leaf queue user maxresources exceed parent queue wildcard maxresources",
         limits({"test-user1": mem(100), "*": mem(100)}), limits({"test-user1": mem(50), "test-user2": mem(150)}),
         None, "user 'test-user2'"),
        ("leaf queue group maxresources exceed grandparent queue wildcard maxresources",
         limits(None, {"test-group1": mem(100), "*": mem(100)}), limits(None, {"test-group1": mem(50)}),
         limits(None, {"test-group1": mem(10), "test-group2": mem(150)}), "group 'test-group2'"),
        ("leaf queue user wildcard maxresources exceed immediate parent queue wildcard maxresources",
         limits({"*": mem(100)}), limits({"*": mem(150)}), None, "user '*'"),
        ("leaf queue user wildcard maxresources exceed grandparent queue wildcard maxresources",
         limits({"*": mem(100)}), [], limits({"*": mem(150)}), "user '*'"),
        ("leaf queue user maxapplications exceed immediate parent queue user maxapplications",
         limits({"test-user": 100}, key="maxapplications"), limits({"test-user": 200}, key="maxapplications"),
         None, "limits maxapplications to 100"),
        ("leaf queue group maxapplications are exceed grandparent queue group maxapplications",
         limits(None, {"test-group": 100}, key="maxapplications"), [],
         limits(None, {"test-group": 150}, key="maxapplications"), "group 'test-group'"),
        ("leaf queue wildcard maxapplications exceed immediate parent queue wildcard maxapplications",
         limits({"*": 100}, key="maxapplications"), limits({"*": 150}, key="maxapplications"), None,
         "limits maxapplications to 100"),
    ],
)  # fmt: skip
def test_limit_hierarchy_rows_are_refused(
    row: str, parent: list[Any], child: list[Any], grandchild: list[Any] | None, fragment: str
) -> None:
    low = [queue("child2", limits=grandchild)] if grandchild is not None else []
    tree = queue("parent", queue("child1", *low, limits=child), limits=parent)
    where = "root.parent.child1.child2" if grandchild is not None else "root.parent.child1"
    refused_for(config(tree), f"{where}.limits[", fragment)


@pytest.mark.parametrize(
    ("row", "amount", "fragment"),
    [("overflow vcore", {"vcore": "1000P"}, "too large"), ("invalid vcore", {"vcore": "-1"}, "negative"),
     ("overflow quantity", {"memory": "1000E"}, "too large"), ("invalid quantity", {"memory": "500m"}, "whole number")],
)  # fmt: skip
def test_limit_amounts_yunikorn_cannot_read_are_refused(row: str, amount: dict[str, str], fragment: str) -> None:
    tree = queue("parent", limits=[{"users": ["*"], "maxresources": amount}])
    refused_for(config(tree), "root.parent.limits[0].maxresources", fragment)


# -- TestCheckLimits ----------------------------------------------------------------------------


def _limited(*entries: dict[str, Any], **fields: Any) -> str:
    return config(queue("parent", limits=list(entries), **fields))


def lim(users: list[str] | None = None, groups: list[str] | None = None, apps: int = 0, **amounts: str) -> Any:
    entry: dict[str, Any] = {}
    if users is not None:
        entry["users"] = users
    if groups is not None:
        entry["groups"] = groups
    if apps:
        entry["maxapplications"] = apps
    if amounts:
        entry["maxresources"] = amounts
    return entry


@pytest.mark.parametrize(
    ("row", "entries", "fields", "fragment"),
    [
        ("all fields in maxresources are 0", [lim(["u"], apps=1, memory="0", vcore="0")], {},
         "maxresources has no value above zero"),
        ("both maxresources and maxresources are 0", [lim(["u"])], {}, "sets neither"),
        ("user maxresources exceed queue limits", [lim(["u"], apps=1, memory="200")], {"resources": {"max": mem(100)}},
         "maxresources memory 200 exceeds the queue max 100"),
        ("group maxapplications exceed queue limits", [lim(groups=["g"], apps=200)], {"maxapplications": 100},
         "maxapplications 200 exceeds the queue's 100"),
        ("user wildcard is not last entry", [lim(["*"], apps=1), lim(["test-user"], apps=1)], {},
         "'test-user' comes after the '*' user limit"),
        ("group wildcard is not last entry", [lim(groups=["*"], apps=1), lim(groups=["test-group"], apps=1)], {},
         "'test-group' comes after the '*' group limit"),
        ("group wildcard is only entry", [lim(groups=["*"], apps=1)], {}, "only group limit"),
        ("both user list and group list in limits are empty", [lim([], [], apps=1)], {},
         "names no users and no groups"),
        ("Check Limits Error With Duplicated User Name", [lim(["user1", "user2", "user1"], apps=1)], {},
         "'user1' has more than one limit"),
    ],
)  # fmt: skip
def test_limit_entry_rows_are_refused(row: str, entries: list[Any], fields: dict[str, Any], fragment: str) -> None:
    refused_for(_limited(*entries, **fields), "root.parent.limits", fragment)


@pytest.mark.parametrize(
    ("row", "entries"),
    [
        ("default queue maxapplications", [lim(["test-user"], apps=100), lim(groups=["test-group"], apps=100)]),
        ("partial fields in maxresources are 0",
         [lim(["test-user"], apps=1, **{"memory": "100", "vcore": "0", "nvidia.com/gpu": "0"})]),
        ("user maxapplications is 0",
         [lim(["test-user"], memory="100"), lim(groups=["test-group"], apps=100, memory="100")]),
    ],
)  # fmt: skip
def test_limit_entry_rows_are_accepted(row: str, entries: list[Any]) -> None:
    source = _limited(*entries, resources={"max": mem(100)}, maxapplications=100)
    assert check_config(source).valid, check_config(source).problems


def test_the_wildcard_must_be_the_only_entry_of_its_list() -> None:
    # Seed 001 and YuniKorn's documentation ("specifying a star beside other list elements is not
    # allowed"); YuniKorn's validator itself takes [test-user, "*"] (row "user group maxresources
    # and maxapplications are within queue limits"): a difference Herder keeps on purpose.
    source = _limited({"users": ["sue", "*"], "maxapplications": 2})
    refused_for(source, "root.parent.limits[0]", "'*' must be the only entry of users")
    refused_for(_limited({"groups": ["dev", "*"], "maxapplications": 2}), "'*' must be the only entry of groups")


# -- TestCheckLimitsStructure / TestCheckQueuesStructure / TestCheckQueues --------------------------


def test_partition_limits_differing_from_root_limits_are_refused() -> None:
    root = {"name": "root", "limits": [{"users": ["test-user"], "maxapplications": 100}]}
    part = {"name": "default", "queues": [root], "limits": [{"groups": ["test-group"], "maxresources": mem(100)}]}
    refused_for(yaml.safe_dump({"partitions": [part]}), "partitions[default].limits", "differ from root limits")


def test_partition_limits_alone_become_the_roots() -> None:
    part = {"name": "default", "queues": [{"name": "root"}], "limits": [{"groups": ["g"], "maxapplications": 3}]}
    cfg = load_config(yaml.safe_dump({"partitions": [part]}))
    assert cfg.partition().root.limits[0].groups == ("g",)


@pytest.mark.parametrize("field", ["guaranteed", "max"])
def test_root_with_resources_is_refused(field: str) -> None:
    root = {"name": "root", "resources": {field: res(memory=50)}}
    refused_for(yaml.safe_dump({"partitions": [{"name": "default", "queues": [root]}]}), "root may not set resources")


@pytest.mark.parametrize("field", ["adminacl", "submitacl"])
def test_an_acl_with_three_fields_is_refused(field: str) -> None:
    refused_for(
        config(queue("validQueue", **{field: "admin group extra"})), f"root.validQueue.{field}", "more than one space"
    )


def test_duplicate_child_names_are_refused_at_any_level() -> None:
    refused_for(config(queue("dup"), queue("dup")), "root.dup", "used twice")
    refused_for(config(queue("sub", queue("dup"), queue("dup"))), "root.sub.dup", "used twice")


@pytest.mark.parametrize(
    ("name", "accepted"),
    [
        ("parent_Child_test-a_b_#_c_#_d_/_e@dom:ain", True),  # TestIsQueueNameValid
        ("queue_One", True),
        ("queue-Two", True),
        ("invalid!queue", False),
        ("queue_Name$", False),
        ("thisQueueNameIsTooLongthisQueueNameIsTooLongthisQueueNameIsTooLong", False),
        ("root", False),  # Herder: a child named root is refused (see names.py)
    ],
)
def test_queue_name_rows(name: str, accepted: bool) -> None:
    assert check_config(config(queue(name))).valid is accepted


def test_a_dotted_queue_name_is_refused() -> None:
    # TestIsQueueNameValid "root.parent": a dot separates queues, it is never part of a name.
    refused_for(config(queue("a.b")), "invalid queue name 'a.b'")


# -- TestCheckNodeSortingPolicy -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "fragment"),
    [
        ({"type": "fair", "resourceweights": {"memory": -1.0}}, "negative weight"),
        ({"type": "undefinedPolicy"}, "unknown policy"),
    ],
)
def test_node_sorting_rows_are_refused(policy: dict[str, Any], fragment: str) -> None:
    refused_for(config(queue("a"), nodesortpolicy=policy), "nodesortpolicy", fragment)


def test_node_sorting_with_weights_for_several_resources_is_accepted() -> None:
    policy = {"type": "binpacking", "resourceweights": {"memory": 2.0, "vcore": 3.0}}
    assert check_config(config(queue("a"), nodesortpolicy=policy)).valid
