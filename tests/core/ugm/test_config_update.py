"""A configuration change re-applies limits to the users and groups already tracked."""

from __future__ import annotations

from tests.core.ugm.worlds import cores, limit, limits_at, manager, partition, queue, who


def test_lowered_limit_applies_at_once_to_a_live_tracker() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("*",), vcore=10),))))
    ann = who("ann")
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(4), ann)
    ugm.update_config(partition(queue("root", queue("team", limits=(limit(users=("*",), vcore=4),)))))
    assert limits_at(ugm.user_document("ann"), "root.team") == ({"vcore": 4000}, 0)
    assert not ugm.increase_tracked_resource("root.team", "app-1", cores(1), ann)


def test_removed_limit_is_cleared_from_live_trackers() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("ann",), vcore=1, apps=1),))))
    ann = who("ann")
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), ann)
    assert not ugm.increase_tracked_resource("root.team", "app-2", cores(1), ann)
    ugm.update_config(partition(queue("root", queue("team"))))
    assert limits_at(ugm.user_document("ann"), "root.team") == ({}, 0)
    assert ugm.increase_tracked_resource("root.team", "app-2", cores(5), ann)


def test_new_wildcard_limit_reaches_every_existing_user_without_a_named_limit() -> None:
    ugm = manager(queue("root", queue("team")))
    for name in ("ann", "bob"):
        assert ugm.increase_tracked_resource("root.team", f"{name}-1", cores(1), who(name))
    assert ugm.increase_tracked_resource("root.team", "sue-1", cores(1), who("sue"))
    ugm.update_config(
        partition(queue("root", queue("team", limits=(limit(users=("sue",), apps=5), limit(users=("*",), apps=1)))))
    )
    assert limits_at(ugm.user_document("ann"), "root.team") == ({}, 1)
    assert limits_at(ugm.user_document("bob"), "root.team") == ({}, 1)
    assert limits_at(ugm.user_document("sue"), "root.team") == ({}, 5)
    assert not ugm.increase_tracked_resource("root.team", "ann-2", cores(1), who("ann"))
    assert ugm.increase_tracked_resource("root.team", "sue-2", cores(1), who("sue"))


def test_group_limits_are_reapplied_to_live_group_trackers() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), apps=5),))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("joe", "dev"))
    ugm.update_config(partition(queue("root", queue("team", limits=(limit(groups=("dev",), apps=1),)))))
    assert limits_at(ugm.group_document("dev"), "root.team") == ({}, 1)
    assert not ugm.increase_tracked_resource("root.team", "app-2", cores(1), who("amy", "dev"))


def test_config_change_creates_no_tracker_and_no_queue_level() -> None:
    ugm = manager(queue("root", queue("a"), queue("b")))
    assert ugm.increase_tracked_resource("root.a", "app-1", cores(1), who("ann"))
    ugm.update_config(partition(queue("root", queue("a"), queue("b", limits=(limit(users=("ann", "bob"), vcore=1),)))))
    assert [doc["userName"] for doc in ugm.users_documents()] == ["ann"]
    assert limits_at(ugm.user_document("ann"), "root.b") is None
    # The level created later gets the limit of the configuration in force.
    assert not ugm.increase_tracked_resource("root.b", "app-2", cores(2), who("ann"))
    assert ugm.increase_tracked_resource("root.b", "app-2", cores(1), who("ann"))
    assert limits_at(ugm.user_document("ann"), "root.b") == ({"vcore": 1000}, 0)


def test_partition_limit_change_reaches_the_root_level() -> None:
    ugm = manager(queue("root", queue("team")))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("ann"))
    ugm.update_config(partition(queue("root", queue("team")), limits=(limit(users=("*",), apps=1),)))
    assert limits_at(ugm.user_document("ann"), "root") == ({}, 1)
    assert not ugm.increase_tracked_resource("root.team", "app-2", cores(1), who("ann"))


def test_usage_survives_a_config_change() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("*",), vcore=10),))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(4), who("ann"))
    before = ugm.user_document("ann")
    ugm.update_config(partition(queue("root", queue("team", limits=(limit(users=("*",), vcore=3),)))))
    after = ugm.user_document("ann")
    assert before is not None and after is not None
    assert after["queues"]["resourceUsage"] == before["queues"]["resourceUsage"]
    assert after["queues"]["runningApplications"] == before["queues"]["runningApplications"]
