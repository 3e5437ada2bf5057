"""User and group limits: who they bind, where, and what a denial leaves behind."""

from __future__ import annotations

from core.resources import Resource
from tests.core.ugm.worlds import cores, limit, limits_at, manager, partition, queue, running_at, usage_at, who

GIB = 2**30


def test_named_user_limit_beats_the_wildcard_user_limit() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("sue",), vcore=5), limit(users=("*",), vcore=1)))))
    assert ugm.increase_tracked_resource("root.team", "sue-1", cores(4), who("sue"))
    assert not ugm.increase_tracked_resource("root.team", "bob-1", cores(2), who("bob"))
    assert ugm.increase_tracked_resource("root.team", "bob-1", cores(1), who("bob"))
    assert limits_at(ugm.user_document("sue"), "root.team") == ({"vcore": 5000}, 0)
    assert limits_at(ugm.user_document("bob"), "root.team") == ({"vcore": 1000}, 0)


def test_wildcard_user_limit_is_per_user_not_shared() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("*",), vcore=2),))))
    for name in ("ann", "bob", "cid"):
        assert ugm.increase_tracked_resource("root.team", f"{name}-1", cores(2), who(name))
    assert not ugm.increase_tracked_resource("root.team", "ann-2", cores(1), who("ann"))


def test_limit_listing_several_users_applies_to_each_of_them_separately() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("sue", "bob"), apps=1),))))
    assert ugm.increase_tracked_resource("root.team", "sue-1", cores(1), who("sue"))
    assert ugm.increase_tracked_resource("root.team", "bob-1", cores(1), who("bob"))
    assert not ugm.increase_tracked_resource("root.team", "sue-2", cores(1), who("sue"))


def test_users_without_a_matching_limit_are_tracked_but_not_limited() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("sue",), vcore=1),))))
    assert ugm.increase_tracked_resource("root.team", "bob-1", cores(100), who("bob"))
    assert usage_at(ugm.user_document("bob"), "root.team") == {"vcore": 100000}
    assert limits_at(ugm.user_document("bob"), "root.team") == ({}, 0)


def test_wildcard_group_limit_is_cumulative_for_everyone_resolved_to_it() -> None:
    ugm = manager(
        queue("root", queue("team", limits=(limit(groups=("dev",), vcore=50), limit(groups=("*",), vcore=3))))
    )
    assert ugm.increase_tracked_resource("root.team", "a-1", cores(2), who("ann", "sales"))
    assert not ugm.increase_tracked_resource("root.team", "b-1", cores(2), who("bob", "hr"))
    assert ugm.increase_tracked_resource("root.team", "b-1", cores(1), who("bob", "hr"))
    # Members of a named group are not counted in the wildcard's total.
    assert ugm.increase_tracked_resource("root.team", "j-1", cores(10), who("joe", "dev"))
    wildcard = ugm.group_document("*")
    assert wildcard is not None
    assert wildcard["applications"] == ["a-1", "b-1"]
    assert usage_at(wildcard, "root.team") == {"vcore": 3000}


def test_a_named_group_limit_is_shared_by_all_its_members() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), vcore=4),))))
    assert ugm.increase_tracked_resource("root.team", "joe-1", cores(3), who("joe", "dev"))
    assert not ugm.increase_tracked_resource("root.team", "amy-1", cores(2), who("amy", "dev"))
    assert ugm.increase_tracked_resource("root.team", "amy-1", cores(1), who("amy", "dev"))


def test_user_and_group_limits_must_both_allow_an_increase() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("*",), vcore=10), limit(groups=("dev",), vcore=4)))))
    assert not ugm.increase_tracked_resource("root.team", "joe-1", cores(5), who("joe", "dev"))
    assert ugm.denial_reason("root.team", "joe-1", cores(5), who("joe", "dev")) == (
        "group dev would exceed maxresources at root.team: vcore 0m used + 5000m asked > 4000m"
    )
    assert ugm.increase_tracked_resource("root.team", "joe-1", cores(4), who("joe", "dev"))


def test_named_user_limit_takes_precedence_over_the_group_limit_at_that_queue() -> None:
    # Seed 000: a user with a limit of their own works by it, whatever their group's says.
    ugm = manager(
        queue("root", queue("team", limits=(limit(users=("joe",), vcore=10), limit(groups=("dev",), vcore=4))))
    )
    assert ugm.increase_tracked_resource("root.team", "joe-1", cores(8), who("joe", "dev"))
    assert not ugm.increase_tracked_resource("root.team", "joe-1", cores(3), who("joe", "dev"))
    # The group still counts joe's usage, so the rest of dev is held back by it.
    dev = ugm.group_document("dev")
    assert usage_at(dev, "root.team") == {"vcore": 8000}
    assert not ugm.increase_tracked_resource("root.team", "amy-1", cores(1), who("amy", "dev"))


def test_named_user_limit_at_one_queue_does_not_lift_group_limits_elsewhere_on_the_path() -> None:
    ugm = manager(
        queue(
            "root",
            queue("team", limits=(limit(users=("joe",), vcore=10),)),
            limits=(limit(groups=("dev",), vcore=4),),
        )
    )
    assert not ugm.increase_tracked_resource("root.team", "joe-1", cores(5), who("joe", "dev"))
    assert ugm.denial_reason("root.team", "joe-1", cores(5), who("joe", "dev")).startswith(
        "group dev would exceed maxresources at root:"
    )


def test_limits_at_every_level_of_the_path_apply() -> None:
    ugm = manager(
        queue(
            "root",
            queue(
                "org",
                queue("team", limits=(limit(users=("*",), vcore=8),)),
                limits=(limit(users=("*",), vcore=6),),
            ),
            limits=(limit(users=("*",), vcore=4),),
        )
    )
    assert ugm.increase_tracked_resource("root.org.team", "app-1", cores(4), who("ann"))
    assert not ugm.increase_tracked_resource("root.org.team", "app-1", cores(1), who("ann"))
    reason = ugm.denial_reason("root.org.team", "app-1", cores(1), who("ann"))
    assert reason == "user ann would exceed maxresources at root: vcore 4000m used + 1000m asked > 4000m"


def test_the_deepest_broken_limit_is_reported_first() -> None:
    ugm = manager(
        queue(
            "root",
            queue("team", limits=(limit(users=("*",), vcore=2),)),
            limits=(limit(users=("*",), vcore=2),),
        )
    )
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(2), who("ann"))
    reason = ugm.denial_reason("root.team", "app-2", cores(1), who("ann"))
    assert reason.startswith("user ann would exceed maxresources at root.team:")


def test_partition_limits_act_as_root_limits() -> None:
    ugm = manager(queue("root", queue("team")), limits=(limit(users=("*",), apps=1),))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("ann"))
    assert not ugm.increase_tracked_resource("root.team", "app-2", cores(1), who("ann"))
    assert ugm.denial_reason("root.team", "app-2", cores(1), who("ann")) == (
        "user ann would exceed maxapplications 1 at root"
    )


def test_maxapplications_denies_a_new_application_but_not_more_pods_of_a_running_one() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), apps=2),))))
    joe = who("joe", "dev")
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), joe)
    assert ugm.increase_tracked_resource("root.team", "app-2", cores(1), who("amy", "dev"))
    assert not ugm.increase_tracked_resource("root.team", "app-3", cores(1), joe)
    assert ugm.denial_reason("root.team", "app-3", cores(1), joe) == (
        "group dev would exceed maxapplications 2 at root.team"
    )
    for _ in range(5):
        assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), joe)
    assert usage_at(ugm.user_document("joe"), "root.team") == {"vcore": 6000}


def test_only_the_resources_a_limit_names_are_limited() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("*",), memory=4 * GIB),))))
    assert ugm.increase_tracked_resource(
        "root.team", "app-1", Resource({"vcore": 500_000, "nvidia.com/gpu": 8}), who("ann")
    )
    assert not ugm.increase_tracked_resource("root.team", "app-1", Resource({"memory": 5 * GIB}), who("ann"))
    assert ugm.denial_reason("root.team", "app-1", Resource({"memory": 5 * GIB}), who("ann")) == (
        "user ann would exceed maxresources at root.team: memory 0 used + 5Gi asked > 4Gi"
    )


def test_a_usage_exactly_at_the_limit_is_allowed() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("*",), vcore=2, apps=1),))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1.5), who("ann"))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(0.5), who("ann"))
    assert not ugm.increase_tracked_resource("root.team", "app-1", Resource({"vcore": 1}), who("ann"))


def test_denied_increase_changes_nothing_for_user_or_group() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("*",), vcore=10), limit(groups=("dev",), vcore=3)))))
    joe = who("joe", "dev")
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(2), joe)
    users, groups = ugm.users_documents(), ugm.groups_documents()
    # The user's limit allows it, the group's does not: neither may move.
    assert not ugm.increase_tracked_resource("root.team", "app-2", cores(2), joe)
    assert not ugm.increase_tracked_resource("root.team", "app-1", cores(2), joe)
    assert ugm.users_documents() == users
    assert ugm.groups_documents() == groups


def test_denied_first_increase_leaves_no_tracker_behind() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("*",), vcore=1), limit(groups=("*",), vcore=9)))))
    assert not ugm.increase_tracked_resource("root.team", "app-1", cores(2), who("ann", "sales"))
    assert ugm.users_documents() == []
    assert ugm.groups_documents() == []


def test_denial_of_the_wildcard_group_says_it_is_the_wildcard() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), apps=9), limit(groups=("*",), apps=1)))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("ann", "sales"))
    assert not ugm.increase_tracked_resource("root.team", "app-2", cores(1), who("bob", "hr"))
    reason = ugm.denial_reason("root.team", "app-2", cores(1), who("bob", "hr"))
    assert reason.startswith("group * ")
    assert "maxapplications 1 at root.team" in reason


def test_forced_increase_tracks_recovered_pods_beyond_the_limits() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("*",), vcore=1, apps=1),))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("ann"))
    assert ugm.increase_tracked_resource("root.team", "app-2", cores(3), who("ann"), force=True)
    assert running_at(ugm.user_document("ann"), "root.team") == ["app-1", "app-2"]
    assert usage_at(ugm.user_document("ann"), "root.team") == {"vcore": 4000}
    assert not ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("ann"))


def test_usage_left_above_a_limit_blocks_only_that_resource() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("*",), vcore=1),))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(3), who("ann"), force=True)
    assert ugm.increase_tracked_resource("root.team", "app-1", Resource({"memory": GIB}), who("ann"))
    assert not ugm.increase_tracked_resource("root.team", "app-1", Resource({"vcore": 1}), who("ann"))


def test_queue_created_at_run_time_has_no_limits_of_its_own_but_its_parents_apply() -> None:
    ugm = manager(queue("root", queue("tenants"), limits=(limit(users=("*",), vcore=2),)))
    assert ugm.increase_tracked_resource("root.tenants.finance", "app-1", cores(2), who("ann"))
    assert limits_at(ugm.user_document("ann"), "root.tenants.finance") == ({}, 0)
    assert not ugm.increase_tracked_resource("root.tenants.finance", "app-1", cores(1), who("ann"))


def test_root_limits_win_over_partition_limits_when_both_are_given() -> None:
    ugm = manager(
        queue("root", queue("team"), limits=(limit(users=("*",), apps=2),)),
        limits=(limit(users=("*",), apps=1),),
    )
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("ann"))
    assert ugm.increase_tracked_resource("root.team", "app-2", cores(1), who("ann"))
    assert not ugm.increase_tracked_resource("root.team", "app-3", cores(1), who("ann"))


def test_a_running_applications_next_pods_meet_limits_changed_since_its_last() -> None:
    """An application's later pods are checked along the way its earlier ones took: a limit
    lowered or raised between them binds the next pod as it now reads."""
    ugm = manager(queue("root", queue("team", limits=(limit(users=("*",), vcore=8),))))
    ann = who("ann")
    for _ in range(3):
        assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), ann)
    ugm.update_config(partition(queue("root", queue("team", limits=(limit(users=("*",), vcore=3),)))))
    assert not ugm.increase_tracked_resource("root.team", "app-1", cores(1), ann)
    ugm.update_config(partition(queue("root", queue("team", limits=(limit(users=("*",), vcore=5),)))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(2), ann)
    assert not ugm.increase_tracked_resource("root.team", "app-1", cores(1), ann)
    assert usage_at(ugm.user_document("ann"), "root.team") == {"vcore": 5000}


def test_an_application_that_stopped_and_starts_again_counts_as_a_new_running_application() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("*",), apps=1),))))
    ann = who("ann")
    for _ in range(2):
        assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), ann)
    ugm.decrease_tracked_resource("root.team", "app-1", cores(1), ann, remove_app=False)
    ugm.decrease_tracked_resource("root.team", "app-1", cores(1), ann, remove_app=True)
    assert ugm.increase_tracked_resource("root.team", "app-2", cores(1), ann)
    assert not ugm.increase_tracked_resource("root.team", "app-1", cores(1), ann)  # a second running app
    ugm.decrease_tracked_resource("root.team", "app-2", cores(1), ann, remove_app=True)
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), ann)
    assert running_at(ugm.user_document("ann"), "root.team") == ["app-1"]
