"""Which group an application is tracked against: bottom-up from its leaf queue, once."""

from __future__ import annotations

from core.ugm import UserGroupManager
from tests.core.ugm.worlds import cores, limit, manager, partition, queue, who


def group_of(ugm: UserGroupManager, user: str, app: str) -> str | None:
    doc = ugm.user_document(user)
    assert doc is not None
    return doc["groups"].get(app)


def test_first_configured_group_the_user_belongs_to_wins_in_config_order() -> None:
    ugm = manager(
        queue(
            "root",
            queue("team", limits=(limit(groups=("test",), apps=5), limit(groups=("ops", "dev"), apps=5))),
        )
    )
    # The user lists dev before test; the configuration order decides, not the user's.
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("joe", "dev", "test"))
    assert group_of(ugm, "joe", "app-1") == "test"


def test_wildcard_group_is_used_when_no_named_group_matches_at_that_level() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), apps=5), limit(groups=("*",), apps=9)))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("ann", "sales"))
    assert group_of(ugm, "ann", "app-1") == "*"
    assert ugm.group_document("*") is not None
    assert ugm.group_document("sales") is None


def test_named_group_beats_wildcard_group_at_the_same_level() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), apps=5), limit(groups=("*",), apps=9)))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("joe", "dev"))
    assert group_of(ugm, "joe", "app-1") == "dev"


def test_resolution_moves_up_to_the_parent_when_the_leaf_has_no_group_limit() -> None:
    ugm = manager(queue("root", queue("org", queue("team")), limits=(limit(groups=("dev",), apps=5),)))
    assert ugm.increase_tracked_resource("root.org.team", "app-1", cores(1), who("joe", "dev"))
    assert group_of(ugm, "joe", "app-1") == "dev"
    doc = ugm.group_document("dev")
    assert doc is not None and doc["applications"] == ["app-1"]


def test_wildcard_at_a_lower_level_hides_a_named_group_limit_above() -> None:
    # Seed 001's side effect: resolution stops at the first level with a match, and a `*`
    # group limit matches everyone, so dev's root limit never applies to apps in root.team.
    ugm = manager(
        queue(
            "root",
            queue("team", limits=(limit(groups=("qa",), apps=5), limit(groups=("*",), apps=10))),
            limits=(limit(groups=("dev",), apps=1),),
        )
    )
    joe = who("joe", "dev")
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), joe)
    assert ugm.increase_tracked_resource("root.team", "app-2", cores(1), joe)
    assert group_of(ugm, "joe", "app-1") == "*"
    assert ugm.group_document("dev") is None
    # The same user in another queue does meet dev's root limit.
    other = manager(queue("root", queue("lab"), limits=(limit(groups=("dev",), apps=1),)))
    assert other.increase_tracked_resource("root.lab", "app-1", cores(1), joe)
    assert not other.increase_tracked_resource("root.lab", "app-2", cores(1), joe)


def test_no_group_is_tracked_when_no_group_limit_matches_anywhere() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), apps=1),))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("ann", "sales"))
    assert group_of(ugm, "ann", "app-1") is None
    assert ugm.groups_documents() == []


def test_user_without_groups_is_not_tracked_against_the_wildcard_group() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), apps=1), limit(groups=("*",), apps=1)))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("nobody"))
    assert ugm.increase_tracked_resource("root.team", "app-2", cores(1), who("nobody"))
    assert ugm.groups_documents() == []


def test_group_is_fixed_for_the_application_life_even_when_config_changes() -> None:
    before = queue("root", queue("team", limits=(limit(groups=("dev",), apps=5),)))
    after = queue("root", queue("team", limits=(limit(groups=("test",), apps=5),)))
    ugm = manager(before)
    joe = who("joe", "dev", "test")
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), joe)
    ugm.update_config(partition(after))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), joe)
    assert group_of(ugm, "joe", "app-1") == "dev"
    dev = ugm.group_document("dev")
    assert dev is not None and dev["queues"]["resourceUsage"] == {"vcore": 2000}
    # A new application resolves against the configuration of its own first allocation.
    assert ugm.increase_tracked_resource("root.team", "app-2", cores(1), joe)
    assert group_of(ugm, "joe", "app-2") == "test"


def test_group_is_fixed_even_when_the_users_groups_change() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), apps=5), limit(groups=("qa",), apps=5)))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("joe", "dev"))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("joe", "qa"))
    assert group_of(ugm, "joe", "app-1") == "dev"
    assert ugm.group_document("qa") is None


def test_application_resolves_again_after_it_stopped_running() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), apps=5), limit(groups=("qa",), apps=5)))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("joe", "dev"))
    ugm.decrease_tracked_resource("root.team", "app-1", cores(1), who("joe", "dev"), remove_app=True)
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("joe", "qa"))
    assert group_of(ugm, "joe", "app-1") == "qa"
    assert ugm.group_document("dev") is None
