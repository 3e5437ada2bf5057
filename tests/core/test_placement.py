"""Placement rules: which leaf queue an application lands in, what gets created, and why not."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.config.schema import FilterConfig, PlacementRuleConfig
from core.objects.ask import TAG_NAMESPACE, TAG_PARENT_QUEUE, UserGroup
from core.placement import Acl, PlacementManager, PlacementRequest, PlacementResult


class Tree:
    """A queue tree given as {path: is_leaf} with optional submitacls."""

    def __init__(self, queues: Mapping[str, bool], acls: Mapping[str, str] | None = None) -> None:
        self.queues = {"root": False, **queues}
        self.acls = dict(acls or {})

    def exists(self, path: str) -> bool:
        return path in self.queues

    def is_leaf(self, path: str) -> bool:
        return self.queues[path]

    def submit_acl(self, path: str) -> str | None:
        return self.acls.get(path)

    def any_acl_configured(self) -> bool:
        return bool(self.acls)


ALICE = UserGroup("alice", ("dev",))
PRODUCTION_TREE = Tree(
    {"root.production": False, "root.development": False, "root.default": True},
)


def request(
    queue: str | None = None, user: UserGroup = ALICE, tags: Mapping[str, str] | None = None
) -> PlacementRequest:
    return PlacementRequest("app-1", queue, user, dict(tags or {}))


def rule(name: str, value: str = "", **kwargs: object) -> PlacementRuleConfig:
    return PlacementRuleConfig(name=name, value=value, **kwargs)  # type: ignore[arg-type]


def place(rules: list[PlacementRuleConfig], req: PlacementRequest, tree: Tree) -> PlacementResult:
    return PlacementManager(rules).place(req, tree)


NAMESPACE_UNDER_PARENT = rule("tag", TAG_NAMESPACE, create=True, parent=rule("tag", TAG_PARENT_QUEUE, create=False))


# -- seed 004: namespace mapping with parent queues --------------------------------------------


def test_namespace_annotated_with_full_parent_lands_under_it() -> None:
    req = request(tags={TAG_NAMESPACE: "finance", TAG_PARENT_QUEUE: "root.production"})
    result = place([NAMESPACE_UNDER_PARENT], req, PRODUCTION_TREE)
    assert result.queue_path == "root.production.finance"
    assert result.to_create == ("root.production.finance",)
    assert result.rule == "tag"


def test_parent_annotation_without_root_prefix_is_qualified() -> None:
    req = request(tags={TAG_NAMESPACE: "dev", TAG_PARENT_QUEUE: "development"})
    result = place([NAMESPACE_UNDER_PARENT], req, PRODUCTION_TREE)
    assert result.queue_path == "root.development.dev"


def test_unknown_parent_without_create_is_rejected_naming_it() -> None:
    tree = Tree({"root.production": False})
    req = request(tags={TAG_NAMESPACE: "finance", TAG_PARENT_QUEUE: "root.nope"})
    result = place([NAMESPACE_UNDER_PARENT], req, tree)
    assert result.queue_path is None
    assert result.reason == (
        "no placement rule matched: rule 1 (tag namespace): parent rule (tag namespace.parentqueue): "
        "namespace annotation parentqueue names root.nope, which does not exist and create is false; "
        "root.default does not exist"
    )


def test_unknown_parent_is_created_when_parent_rule_has_create() -> None:
    rules = [rule("tag", TAG_NAMESPACE, create=True, parent=rule("tag", TAG_PARENT_QUEUE, create=True))]
    req = request(tags={TAG_NAMESPACE: "finance", TAG_PARENT_QUEUE: "research"})
    result = place(rules, req, Tree({}))
    assert result.queue_path == "root.research.finance"
    assert result.to_create == ("root.research", "root.research.finance")


def test_existing_leaf_as_parent_is_no_match() -> None:
    tree = Tree({"root.production": True, "root.default": True})
    req = request(tags={TAG_NAMESPACE: "finance", TAG_PARENT_QUEUE: "production"})
    result = place([NAMESPACE_UNDER_PARENT], req, tree)
    assert result.queue_path == "root.default"
    assert result.rule == "default"


def test_missing_parent_tag_means_no_match() -> None:
    result = place([NAMESPACE_UNDER_PARENT], request(tags={TAG_NAMESPACE: "finance"}), Tree({}))
    assert result.queue_path is None
    assert "the application has no namespace.parentqueue tag" in result.reason


def test_nested_parent_rules_chain() -> None:
    rules = [rule("user", create=True, parent=rule("fixed", "teams", parent=rule("fixed", "root.org"), create=True))]
    result = place(rules, request(), Tree({"root.org": False}))
    assert result.queue_path == "root.org.teams.alice"
    assert result.to_create == ("root.org.teams", "root.org.teams.alice")


# -- each rule ---------------------------------------------------------------------------------


def test_tag_namespace_with_create_makes_root_child() -> None:
    result = place([rule("tag", TAG_NAMESPACE, create=True)], request(tags={TAG_NAMESPACE: "ml"}), Tree({}))
    assert (result.queue_path, result.to_create) == ("root.ml", ("root.ml",))


def test_tag_without_create_needs_existing_queue() -> None:
    rules = [rule("tag", TAG_NAMESPACE)]
    assert place(rules, request(tags={TAG_NAMESPACE: "ml"}), Tree({"root.ml": True})).to_create == ()
    missing = place(rules, request(tags={TAG_NAMESPACE: "ml"}), Tree({}))
    assert missing.queue_path is None
    assert "tag namespace names root.ml, which does not exist and create is false" in missing.reason


def test_empty_tag_means_no_match() -> None:
    result = place([rule("tag", TAG_NAMESPACE, create=True)], request(tags={TAG_NAMESPACE: ""}), Tree({}))
    assert result.queue_path is None
    assert "has no namespace tag" in result.reason


def test_provided_short_name_is_relative_to_root() -> None:
    result = place([rule("provided")], request(queue="batch"), Tree({"root.batch": True}))
    assert result.queue_path == "root.batch"


def test_provided_fully_qualified_ignores_parent_rule() -> None:
    rules = [rule("provided", parent=rule("fixed", "root.elsewhere"))]
    result = place(rules, request(queue="root.a.b"), Tree({"root.a": False, "root.a.b": True}))
    assert result.queue_path == "root.a.b"


def test_provided_short_name_under_parent_rule() -> None:
    rules = [rule("provided", create=True, parent=rule("user", create=True))]
    result = place(rules, request(queue="etl"), Tree({}))
    assert result.queue_path == "root.alice.etl"
    assert result.to_create == ("root.alice", "root.alice.etl")


def test_provided_without_queue_is_no_match() -> None:
    result = place([rule("provided", create=True)], request(), Tree({}))
    assert "the application names no queue" in result.reason


def test_user_rule_uses_user_name() -> None:
    result = place([rule("user", create=True)], request(user=UserGroup("Bob")), Tree({}))
    assert result.queue_path == "root.bob"


def test_fixed_short_value_is_under_root_and_full_value_kept() -> None:
    tree = Tree({"root.batch": True, "root.x": False, "root.x.y": True})
    assert place([rule("fixed", "batch")], request(), tree).queue_path == "root.batch"
    assert place([rule("fixed", "root.x.y")], request(), tree).queue_path == "root.x.y"


def test_fixed_with_create_creates_missing_ancestors_parents_first() -> None:
    result = place([rule("fixed", "root.a.b.c", create=True)], request(), Tree({}))
    assert result.to_create == ("root.a", "root.a.b", "root.a.b.c")


def test_placed_queue_must_be_leaf() -> None:
    result = place([rule("fixed", "root.production")], request(), PRODUCTION_TREE)
    assert result.queue_path == "root.default"
    rejected = place([rule("fixed", "root.production")], request(), Tree({"root.production": False}))
    assert "root.production, which is a parent queue, not a leaf" in rejected.reason


def test_creation_under_existing_leaf_is_refused() -> None:
    result = place([rule("fixed", "root.leaf.child", create=True)], request(), Tree({"root.leaf": True}))
    assert result.queue_path is None
    assert "root.leaf is a leaf queue and cannot hold it" in result.reason


# -- generated names ---------------------------------------------------------------------------


def test_dots_in_user_name_become_dot_marker() -> None:
    result = place([rule("user", create=True)], request(user=UserGroup("john.smith")), Tree({}))
    assert result.queue_path == "root.john_dot_smith"


def test_dots_in_short_tag_and_provided_names_become_dot_marker() -> None:
    tag = place([rule("tag", "team", create=True)], request(tags={"team": "a.b"}), Tree({}))
    provided = place([rule("provided", create=True)], request(queue="x.y"), Tree({}))
    assert tag.queue_path == "root.a_dot_b"
    assert provided.queue_path == "root.x_dot_y"


def test_invalid_generated_name_is_no_match_with_reason() -> None:
    rules = [rule("tag", "team", create=True)]
    spaced = place(rules, request(tags={"team": "two words"}), Tree({}))
    long = place(rules, request(tags={"team": "x" * 70}), Tree({}))
    assert spaced.queue_path is None and "'two words' is not a valid queue name" in spaced.reason
    assert long.queue_path is None and "is not a valid queue name" in long.reason


@given(st.from_regex(r"[a-z0-9_-]{1,20}(\.[a-z0-9_-]{1,20}){0,2}", fullmatch=True))
def test_user_queue_is_one_leaf_without_dots_or_refused_when_too_long(name: str) -> None:
    result = place([rule("user", create=True)], request(user=UserGroup(name)), Tree({}))
    generated = name.replace(".", "_dot_")
    if len(generated) <= 64:
        assert result.queue_path == "root." + generated
        assert result.to_create == (result.queue_path,)
    else:
        assert result.queue_path is None
        assert f"{generated!r} is not a valid queue name" in result.reason


# -- filters -----------------------------------------------------------------------------------


def test_allow_filter_admits_only_listed_users_and_groups() -> None:
    flt = FilterConfig(type="allow", users=("alice",), groups=("ops",))
    rules = [rule("user", create=True, filter=flt)]
    assert place(rules, request(), Tree({})).queue_path == "root.alice"
    assert place(rules, request(user=UserGroup("carol", ("ops",))), Tree({})).queue_path == "root.carol"
    denied = place(rules, request(user=UserGroup("bob", ("dev",))), Tree({}))
    assert denied.queue_path is None and "the filter does not admit user bob" in denied.reason


def test_deny_filter_allows_everyone_else() -> None:
    rules = [rule("user", create=True, filter=FilterConfig(type="deny", users=("bob",)))]
    assert place(rules, request(user=UserGroup("bob")), Tree({})).queue_path is None
    assert place(rules, request(), Tree({})).queue_path == "root.alice"


# YuniKorn's rule tables (provided_rule_test, tag_rule_test, user_rule_test, fixed_rule_test):
# "deny filter type should got empty queue": a deny filter naming nobody matches no application,
# so the rule gives no queue and placement moves on to the next rule.
UPSTREAM_TREE = Tree({"root.testchild": True, "root.testparent": False, "root.testparent.testchild": True})
DENY_NOBODY = FilterConfig(type="deny")


@pytest.mark.parametrize(
    "denying",
    [
        rule("provided", filter=DENY_NOBODY),
        rule("tag", "label1", filter=DENY_NOBODY),
        rule("user", filter=DENY_NOBODY),
        rule("fixed", "testchild", filter=DENY_NOBODY),
    ],
    ids=["provided", "tag", "user", "fixed"],
)
def test_a_deny_filter_listing_nobody_denies_everyone(denying: PlacementRuleConfig) -> None:
    req = request("testchild", user=UserGroup("testchild"), tags={"label1": "testchild"})
    alone = place([denying], req, UPSTREAM_TREE)
    assert alone.queue_path is None
    assert "rule 1" in alone.reason and "deny filter lists no users or groups" in alone.reason
    then_fixed = place([denying, rule("fixed", "root.testparent.testchild")], req, UPSTREAM_TREE)
    assert (then_fixed.queue_path, then_fixed.rule) == ("root.testparent.testchild", "fixed")


def test_an_allow_filter_listing_nobody_allows_everyone() -> None:
    rules = [rule("user", create=True, filter=FilterConfig(type="allow"))]
    assert place(rules, request(user=UserGroup("bob")), Tree({})).queue_path == "root.bob"


def test_filter_entries_with_regexp_characters_match_as_regexps() -> None:
    rules = [rule("user", create=True, filter=FilterConfig(type="allow", users=("svc-.*",)))]
    assert place(rules, request(user=UserGroup("svc-etl")), Tree({})).queue_path == "root.svc-etl"
    assert place(rules, request(user=UserGroup("xsvc-etl")), Tree({})).queue_path is None


def test_group_regexp_in_deny_filter() -> None:
    rules = [rule("user", create=True, filter=FilterConfig(type="deny", groups=("^intern[0-9]+$",)))]
    assert place(rules, request(user=UserGroup("dan", ("intern7",))), Tree({})).queue_path is None
    assert place(rules, request(user=UserGroup("dan", ("interns",))), Tree({})).queue_path == "root.dan"


# -- ACLs --------------------------------------------------------------------------------------


def test_acl_parsing_users_space_groups() -> None:
    acl = Acl.parse("alice,bob ops")
    assert acl.allows(UserGroup("bob")) and acl.allows(UserGroup("x", ("ops",)))
    assert not acl.allows(UserGroup("x", ("dev",)))
    assert Acl.parse("*").allows(UserGroup("anyone"))
    assert not Acl.parse("").allows(UserGroup("alice"))
    assert Acl.parse(" ops").allows(UserGroup("x", ("ops",)))
    assert not Acl.parse(" ops").allows(UserGroup("ops"))


def test_acl_with_two_spaces_is_an_error_naming_it() -> None:
    try:
        Acl.parse("a b c")
    except ValueError as err:
        assert "'a b c'" in str(err)
    else:
        raise AssertionError("an ACL with two spaces must be refused")


def test_ancestor_acl_allows_submission_to_new_queue() -> None:
    tree = Tree({"root.team": False}, acls={"root": "", "root.team": "alice"})
    result = place([rule("user", create=True, parent=rule("fixed", "root.team"))], request(), tree)
    assert result.queue_path == "root.team.alice"


def test_acl_denial_makes_rule_miss_and_next_rule_is_tried() -> None:
    tree = Tree({"root.secure": True, "root.open": True}, acls={"root.secure": "bob", "root.open": "*"})
    rules = [rule("fixed", "root.secure"), rule("fixed", "root.open")]
    result = place(rules, request(), tree)
    assert result.queue_path == "root.open"
    denied = place(rules[:1], request(), tree)
    assert denied.queue_path is None
    assert "user alice may not submit to root.secure" in denied.reason


def test_acl_on_other_branch_still_denies_unlisted_user() -> None:
    tree = Tree({"root.a": True, "root.b": True}, acls={"root.b": "alice"})
    result = place([rule("fixed", "root.a")], request(user=UserGroup("bob")), tree)
    assert result.queue_path is None


def test_no_acl_anywhere_allows_everyone() -> None:
    result = place([rule("fixed", "root.a")], request(user=UserGroup("bob")), Tree({"root.a": True}))
    assert result.queue_path == "root.a"


def test_fallback_default_respects_acl() -> None:
    tree = Tree({"root.default": True}, acls={"root": "alice"})
    assert place([rule("provided")], request(), tree).queue_path == "root.default"
    rejected = place([rule("provided")], request(user=UserGroup("bob")), tree)
    assert rejected.queue_path is None
    assert "user bob may not submit to root.default" in rejected.reason


# -- order, fallback, no rules -----------------------------------------------------------------


def test_first_matching_rule_wins() -> None:
    rules = [rule("provided"), rule("user", create=True), rule("fixed", "root.default")]
    tree = Tree({"root.default": True, "root.batch": True})
    assert place(rules, request(queue="batch"), tree).queue_path == "root.batch"
    assert place(rules, request(queue="nope"), tree).queue_path == "root.alice"


def test_rejection_reason_lists_every_rule_in_order() -> None:
    rules = [rule("provided"), rule("tag", TAG_NAMESPACE)]
    result = place(rules, request(), Tree({}))
    assert result.reason == (
        "no placement rule matched: rule 1 (provided): the application names no queue; "
        "rule 2 (tag namespace): the application has no namespace tag; root.default does not exist"
    )


def test_no_rules_uses_provided_queue_else_default() -> None:
    tree = Tree({"root.default": True, "root.batch": True})
    assert place([], request(queue="batch"), tree).queue_path == "root.batch"
    assert place([], request(queue="root.batch"), tree).queue_path == "root.batch"
    assert place([], request(), tree).queue_path == "root.default"


def test_no_rules_and_unknown_provided_queue_is_rejected() -> None:
    result = place([], request(queue="ghost"), Tree({"root.default": True}))
    assert result.queue_path is None
    assert result.reason == "no placement rules are configured and root.ghost does not exist"


def test_view_without_acl_summary_judges_acls_on_the_path() -> None:
    class PathOnly:
        def exists(self, path: str) -> bool:
            return path in ("root", "root.a")

        def is_leaf(self, path: str) -> bool:
            return path == "root.a"

        def submit_acl(self, path: str) -> str | None:
            return "bob" if path == "root.a" else None

    manager = PlacementManager([rule("fixed", "root.a")])
    assert manager.place(request(user=UserGroup("bob")), PathOnly()).queue_path == "root.a"
    assert manager.place(request(), PathOnly()).queue_path is None
