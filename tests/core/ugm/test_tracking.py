"""Usage tracking: along the whole path, running applications per level, pruning, documents."""

from __future__ import annotations

from core.config.schema import PartitionConfig, QueueConfig
from core.resources import Resource
from tests.core.ugm.worlds import cores, limit, manager, partition, queue, running_at, usage_at, who

GIB = 2**30


def tree() -> QueueConfig:
    return queue("root", queue("org", queue("a"), queue("b")), queue("default"))


def test_usage_is_tracked_at_every_level_of_the_path_without_any_limit() -> None:
    ugm = manager(tree())
    ann = who("ann")
    assert ugm.increase_tracked_resource("root.org.a", "app-1", cores(2, GIB), ann)
    assert ugm.increase_tracked_resource("root.org.b", "app-2", cores(1), ann)
    doc = ugm.user_document("ann")
    assert usage_at(doc, "root") == {"vcore": 3000, "memory": GIB}
    assert usage_at(doc, "root.org") == {"vcore": 3000, "memory": GIB}
    assert usage_at(doc, "root.org.a") == {"vcore": 2000, "memory": GIB}
    assert usage_at(doc, "root.org.b") == {"vcore": 1000}
    assert running_at(doc, "root") == ["app-1", "app-2"]
    assert running_at(doc, "root.org.b") == ["app-2"]
    assert usage_at(doc, "root.default") is None  # sparse: untouched queues are not tracked


def test_user_document_has_the_design_field_names() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), vcore=8, apps=3),))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), who("joe", "dev"))
    assert ugm.user_document("joe") == {
        "userName": "joe",
        "groups": {"app-1": "dev"},
        "queues": {
            "queuePath": "root",
            "resourceUsage": {"vcore": 1000},
            "runningApplications": ["app-1"],
            "maxResources": {},
            "maxApplications": 0,
            "children": [
                {
                    "queuePath": "root.team",
                    "resourceUsage": {"vcore": 1000},
                    "runningApplications": ["app-1"],
                    "maxResources": {},
                    "maxApplications": 0,
                    "children": [],
                }
            ],
        },
    }
    group = ugm.group_document("dev")
    assert group is not None
    assert group["groupName"] == "dev"
    assert group["applications"] == ["app-1"]
    assert group["queues"]["children"][0]["maxResources"] == {"vcore": 8000}
    assert group["queues"]["children"][0]["maxApplications"] == 3


def test_lists_of_documents_are_sorted_by_name_and_unknown_names_give_none() -> None:
    ugm = manager(tree())
    for name in ("zed", "ann", "mia"):
        assert ugm.increase_tracked_resource("root.default", f"{name}-1", cores(1), who(name))
    assert [doc["userName"] for doc in ugm.users_documents()] == ["ann", "mia", "zed"]
    assert ugm.user_document("bob") is None
    assert ugm.group_document("dev") is None


def test_decrease_prunes_emptied_queue_levels() -> None:
    ugm = manager(tree())
    ann = who("ann")
    assert ugm.increase_tracked_resource("root.org.a", "app-1", cores(2), ann)
    assert ugm.increase_tracked_resource("root.default", "app-2", cores(1), ann)
    ugm.decrease_tracked_resource("root.org.a", "app-1", cores(2), ann, remove_app=True)
    doc = ugm.user_document("ann")
    assert usage_at(doc, "root.org") is None
    assert usage_at(doc, "root") == {"vcore": 1000}
    assert running_at(doc, "root") == ["app-2"]


def test_trackers_disappear_when_the_last_application_leaves() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), apps=3),))))
    joe = who("joe", "dev")
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), joe)
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), joe)
    ugm.decrease_tracked_resource("root.team", "app-1", cores(1), joe, remove_app=False)
    assert ugm.user_document("joe") is not None
    ugm.decrease_tracked_resource("root.team", "app-1", cores(1), joe, remove_app=True)
    assert ugm.users_documents() == []
    assert ugm.groups_documents() == []
    assert ugm.usage_samples() == []


def test_application_with_no_usage_left_still_runs_until_removed() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("*",), apps=1),))))
    ann = who("ann")
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), ann)
    ugm.decrease_tracked_resource("root.team", "app-1", cores(1), ann, remove_app=False)
    assert running_at(ugm.user_document("ann"), "root.team") == ["app-1"]
    assert not ugm.increase_tracked_resource("root.team", "app-2", cores(1), ann)


def test_completing_application_that_runs_again_is_counted_again() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(users=("*",), apps=1),))))
    ann = who("ann")
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), ann)
    # The last pod left: the application is Completing and no longer running.
    ugm.decrease_tracked_resource("root.team", "app-1", cores(1), ann, remove_app=True)
    assert ugm.increase_tracked_resource("root.team", "app-2", cores(1), ann)
    # app-1 gets a new pod (Completing -> Running): it needs a running slot again.
    assert not ugm.increase_tracked_resource("root.team", "app-1", cores(1), ann)
    ugm.decrease_tracked_resource("root.team", "app-2", cores(1), ann, remove_app=True)
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), ann)
    assert running_at(ugm.user_document("ann"), "root") == ["app-1"]


def test_usage_samples_give_every_tracked_level_with_its_limit() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), vcore=8, apps=3),))))
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(2), who("joe", "dev"))
    samples = {(s.kind, s.name, s.queue_path): s for s in ugm.usage_samples()}
    assert set(samples) == {
        ("user", "joe", "root"),
        ("user", "joe", "root.team"),
        ("group", "dev", "root"),
        ("group", "dev", "root.team"),
    }
    team = samples[("group", "dev", "root.team")]
    assert team.resource == Resource({"vcore": 2000})
    assert team.running_applications == 1
    assert team.max_resources == Resource({"vcore": 8000})
    assert team.max_applications == 3
    assert samples[("user", "joe", "root")].max_resources is None


def test_unusable_input_is_refused_without_changing_anything() -> None:
    ugm = manager(tree())
    ann = who("ann")
    assert not ugm.increase_tracked_resource("default.a", "app-1", cores(1), ann)
    assert not ugm.increase_tracked_resource("root..a", "app-1", cores(1), ann)
    assert not ugm.increase_tracked_resource("root.org.a", "", cores(1), ann)
    assert ugm.users_documents() == []
    assert "starting with 'root'" in ugm.denial_reason("default.a", "app-1", cores(1), ann)
    assert ugm.denial_reason("root.org.a", "", cores(1), ann) == "the pod has no application id"


def test_decrease_of_something_never_tracked_is_harmless() -> None:
    ugm = manager(tree())
    ann = who("ann")
    ugm.decrease_tracked_resource("root.org.a", "app-1", cores(1), ann, remove_app=True)
    assert ugm.increase_tracked_resource("root.org.a", "app-1", cores(1), ann)
    ugm.decrease_tracked_resource("root.org.a", "app-9", cores(1), ann, remove_app=True)
    ugm.decrease_tracked_resource("root.org.a", "app-1", cores(1), who("bob"), remove_app=True)
    assert usage_at(ugm.user_document("ann"), "root.org.a") == {"vcore": 1000}


def test_usage_never_goes_below_zero() -> None:
    ugm = manager(tree())
    ann = who("ann")
    assert ugm.increase_tracked_resource("root.org.a", "app-1", cores(1, GIB), ann)
    ugm.decrease_tracked_resource("root.org.a", "app-1", cores(3), ann, remove_app=False)
    assert usage_at(ugm.user_document("ann"), "root.org.a") == {"memory": GIB}


def test_denial_reason_when_nothing_blocks_says_so() -> None:
    ugm = manager(tree())
    assert ugm.denial_reason("root.org.a", "app-1", cores(1), who("ann")) == (
        "no limit of user ann or their group blocks app-1 at root.org.a"
    )


def test_deferred_increases_are_summed_per_application_and_seen_by_every_reader() -> None:
    ugm = manager(tree())
    ann = who("ann", "dev")
    assert not ugm.limits_apply("root.org.a")
    for _ in range(3):
        ugm.defer_increase("root.org.a", "app-1", cores(1, GIB), ann)
    ugm.defer_increase("root.org.b", "app-2", cores(2), ann)
    doc = ugm.user_document("ann")
    assert usage_at(doc, "root") == {"vcore": 5000, "memory": 3 * GIB}
    assert usage_at(doc, "root.org.a") == {"vcore": 3000, "memory": 3 * GIB}
    assert running_at(doc, "root.org") == ["app-1", "app-2"]
    # a decrease comes after the deferred increases it undoes, never before them
    ugm.defer_increase("root.org.b", "app-3", cores(1), ann)
    ugm.decrease_tracked_resource("root.org.b", "app-3", cores(1), ann, remove_app=True)
    assert running_at(ugm.user_document("ann"), "root.org.b") == ["app-2"]


def test_deferred_pods_sharing_one_request_object_count_each_and_a_callers_dict_is_copied() -> None:
    ugm = manager(tree())
    ann = who("ann")
    shared = cores(1, GIB)  # pods of one size share their request object
    for _ in range(3):
        ugm.defer_increase("root.org.a", "app-1", shared, ann)
    mutable = {"vcore": 500}
    ugm.defer_increase("root.org.a", "app-1", mutable, ann)
    mutable["vcore"] = 250  # the caller's dict changes: what was deferred does not
    ugm.defer_increase("root.org.a", "app-1", mutable, ann)
    for _ in range(2):
        ugm.defer_decrease("root.org.a", "app-1", shared, ann, remove_app=False)
    doc = ugm.user_document("ann")
    assert usage_at(doc, "root.org.a") == {"vcore": 3000 + 500 + 250 - 2000, "memory": GIB}
    assert running_at(doc, "root.org.a") == ["app-1"]


def test_a_path_with_a_limit_at_any_level_is_never_deferred() -> None:
    ugm = manager(queue("root", queue("org", queue("a"), limits=(limit(users=("ann",), vcore=4),)), queue("b")))
    assert ugm.limits_apply("root.org.a")
    assert not ugm.limits_apply("root.b")
    assert ugm.limits_apply("not a path")  # the full increase reports it


def test_usage_deferred_before_a_limit_is_added_counts_against_that_limit() -> None:
    ugm = manager(tree())
    ann = who("ann")
    ugm.defer_increase("root.org.a", "app-1", cores(3), ann)
    ugm.update_config(partition_with_limit())
    assert ugm.limits_apply("root.org.a")
    assert not ugm.increase_tracked_resource("root.org.a", "app-1", cores(2), ann)
    assert ugm.increase_tracked_resource("root.org.a", "app-1", cores(1), ann)


def partition_with_limit() -> PartitionConfig:
    return partition(queue("root", queue("org", queue("a"), queue("b"), limits=(limit(users=("ann",), vcore=4),))))


def test_deferred_decreases_keep_their_order_with_the_increases_of_each_application() -> None:
    ugm = manager(tree())
    ann = who("ann")
    for _ in range(3):
        ugm.defer_increase("root.org.a", "app-1", cores(1), ann)
    ugm.defer_decrease("root.org.a", "app-1", cores(1), ann, remove_app=False)
    ugm.defer_decrease("root.org.a", "app-1", cores(2), ann, remove_app=True)  # its last pod went
    ugm.defer_increase("root.org.a", "app-1", cores(4), ann)  # and it came back
    ugm.defer_increase("root.org.b", "app-2", cores(1), ann)
    ugm.defer_decrease("root.org.b", "app-2", cores(1), ann, remove_app=True)
    doc = ugm.user_document("ann")
    assert usage_at(doc, "root") == {"vcore": 4000}
    assert running_at(doc, "root") == ["app-1"]
    assert usage_at(doc, "root.org.b") is None


def test_a_limit_check_sees_the_usage_deferred_decreases_gave_back() -> None:
    ugm = manager(tree())
    ann = who("ann")
    ugm.defer_increase("root.org.a", "app-1", cores(4), ann)
    ugm.update_config(partition_with_limit())
    assert not ugm.increase_tracked_resource("root.org.a", "app-1", cores(1), ann)  # 4 of 4 used
    ugm.defer_decrease("root.org.a", "app-1", cores(3), ann, remove_app=False)
    assert ugm.increase_tracked_resource("root.org.a", "app-1", cores(3), ann)
