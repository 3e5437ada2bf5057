"""Properties of tracking under any sequence of allocations and releases."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.objects.ask import UserGroup
from core.resources import Resource
from core.ugm import UserGroupManager
from tests.core.ugm.worlds import limit, manager, partition, queue, who

USERS = (who("ann", "dev"), who("bob", "dev", "qa"), who("cid"), who("dan", "qa", "ops"))
LEAVES = ("root.a.x", "root.a.y", "root.b")
APPS = tuple((f"app-{i}", USERS[i % len(USERS)], LEAVES[i % len(LEAVES)]) for i in range(7))


def limited_tree(scale: int = 2) -> Any:
    """Limits of users, named and `*` groups at every level; `scale` 2 is the usual one."""
    return queue(
        "root",
        queue(
            "a",
            queue("x", limits=(limit(users=("ann",), vcore=2 * scale), limit(users=("*",), apps=scale))),
            queue("y"),
            limits=(limit(groups=("dev",), vcore=4 * scale), limit(groups=("*",), apps=scale)),
        ),
        queue("b", limits=(limit(groups=("qa",), apps=1, memory=scale + 1),)),
        limits=(limit(users=("*",), vcore=5 * scale, apps=scale + 1),),
    )


def world() -> UserGroupManager:
    return manager(limited_tree())


allocate = st.tuples(
    st.just("allocate"),
    st.integers(0, len(APPS) - 1),
    st.builds(lambda v, m: Resource({"vcore": v * 500, "memory": m}), st.integers(0, 6), st.integers(0, 2)),
)
release = st.tuples(st.just("release"), st.integers(0, 1000), st.just(Resource()))
operations = st.lists(st.one_of(allocate, release), max_size=60)


def levels_of(leaf: str) -> list[str]:
    parts = leaf.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def flatten(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    nodes: dict[str, dict[str, Any]] = {}
    stack = [document["queues"]]
    while stack:
        node = stack.pop()
        nodes[node["queuePath"]] = node
        stack.extend(node["children"])
    return nodes


def expected_by_owner(
    live: list[tuple[str, Resource]], owner_of: dict[str, str | None]
) -> dict[str, dict[str, tuple[dict[str, int], set[str]]]]:
    """owner -> queue path -> (usage without zeros, running applications)."""
    expected: dict[str, dict[str, tuple[dict[str, int], set[str]]]] = defaultdict(dict)
    leaf_of = {app: leaf for app, _user, leaf in APPS}
    for app, resource in live:
        owner = owner_of[app]
        if owner is None:
            continue
        for path in levels_of(leaf_of[app]):
            usage, running = expected[owner].setdefault(path, ({}, set()))
            for key, value in resource.items():
                usage[key] = usage.get(key, 0) + value
            running.add(app)
    for per_path in expected.values():
        for usage, _running in per_path.values():
            for key in [k for k, v in usage.items() if v == 0]:
                del usage[key]
    return expected


def assert_matches(documents: list[dict[str, Any]], name_key: str, expected: dict[str, Any]) -> None:
    seen = {doc[name_key]: flatten(doc) for doc in documents}
    assert set(seen) == set(expected)
    for owner, nodes in seen.items():
        assert set(nodes) == set(expected[owner]), f"{owner}: tracked levels"
        for path, node in nodes.items():
            usage, running = expected[owner][path]
            assert node["resourceUsage"] == usage, f"{owner} at {path}"
            assert set(node["runningApplications"]) == running, f"{owner} at {path}"


def assert_user_limits_hold(documents: list[dict[str, Any]]) -> None:
    for document in documents:
        for path, node in flatten(document).items():
            assert Resource(node["resourceUsage"]).within_max(node["maxResources"]), path
            if node["maxApplications"]:
                assert len(node["runningApplications"]) <= node["maxApplications"], path


@settings(max_examples=150, deadline=None)
@given(operations)
def test_usage_everywhere_equals_the_sum_of_tracked_allocations_and_ends_at_nothing(
    steps: list[tuple[str, int, Resource]],
) -> None:
    ugm = world()
    users: dict[str, UserGroup] = {app: user for app, user, _leaf in APPS}
    leaves = {app: leaf for app, _user, leaf in APPS}
    live: list[tuple[str, Resource]] = []

    def check() -> None:
        user_docs, group_docs = ugm.users_documents(), ugm.groups_documents()
        group_of: dict[str, str | None] = {app: None for app, _r in live}
        for doc in user_docs:
            group_of.update(doc["groups"])
        assert_matches(user_docs, "userName", expected_by_owner(live, {a: users[a].user for a, _r in live}))
        assert_matches(group_docs, "groupName", expected_by_owner(live, group_of))
        assert_user_limits_hold(user_docs)

    for kind, number, resource in steps:
        if kind == "allocate":
            app = APPS[number][0]
            if ugm.increase_tracked_resource(leaves[app], app, resource, users[app]):
                live.append((app, resource))
        elif live:
            app, resource = live.pop(number % len(live))
            last = all(other != app for other, _r in live)
            ugm.decrease_tracked_resource(leaves[app], app, resource, users[app], remove_app=last)
        check()

    while live:
        app, resource = live.pop()
        ugm.decrease_tracked_resource(
            leaves[app], app, resource, users[app], remove_app=not any(a == app for a, _ in live)
        )
    assert ugm.users_documents() == []
    assert ugm.groups_documents() == []
    assert ugm.usage_samples() == []


def mixed_world() -> UserGroupManager:
    """Limits on some paths only: root.a.y and root.c.d have none, so a scheduler defers them."""
    return manager(
        queue(
            "root",
            queue("a", queue("x", limits=(limit(users=("ann",), vcore=4),)), queue("y")),
            queue("b", limits=(limit(groups=("qa",), apps=1),)),
            queue("c", queue("d")),
        )
    )


MIXED_APPS = tuple(
    (f"app-{i}", USERS[i % len(USERS)], ("root.a.x", "root.a.y", "root.b", "root.c.d")[i % 4]) for i in range(9)
)
shared_sizes = (Resource({"vcore": 500, "memory": 1}), Resource({"vcore": 1000}))
mixed_steps = st.lists(
    st.one_of(
        st.tuples(st.just("allocate"), st.integers(0, len(MIXED_APPS) - 1), st.sampled_from(shared_sizes)),
        st.tuples(st.just("allocate"), st.integers(0, len(MIXED_APPS) - 1), allocate.map(lambda step: step[2])),
        st.tuples(st.just("release"), st.integers(0, 1000), st.just(Resource())),
        st.tuples(st.just("read"), st.just(0), st.just(Resource())),
    ),
    max_size=80,
)


@settings(max_examples=150, deadline=None)
@given(mixed_steps)
def test_deferring_where_no_limit_applies_tracks_what_tracking_each_pod_at_once_tracks(
    steps: list[tuple[str, int, Resource]],
) -> None:
    """The scheduler defers usage on paths without limits and applies it in one batch (at a
    read, a limit check, or the end of a cycle): every document then equals the one of a
    manager that tracked each pod at once, and both end empty."""
    deferring, direct = mixed_world(), mixed_world()
    apps = {app: (user, leaf) for app, user, leaf in MIXED_APPS}
    live: list[tuple[str, Resource]] = []
    for kind, number, resource in [*steps, *[("release", 0, Resource())] * 200]:
        if kind == "allocate":
            app = MIXED_APPS[number][0]
            user, leaf = apps[app]
            if deferring.limits_apply(leaf):
                placed = deferring.increase_tracked_resource(leaf, app, resource, user)
                assert direct.increase_tracked_resource(leaf, app, resource, user) == placed
            else:
                deferring.defer_increase(leaf, app, resource, user)
                placed = direct.increase_tracked_resource(leaf, app, resource, user)
                assert placed  # nothing can refuse it
            if placed:
                live.append((app, resource))
        elif kind == "release" and live:
            app, resource = live.pop(number % len(live))
            user, leaf = apps[app]
            last = all(other != app for other, _r in live)
            if deferring.limits_apply(leaf):
                deferring.decrease_tracked_resource(leaf, app, resource, user, last)
            else:
                deferring.defer_decrease(leaf, app, resource, user, last)
            direct.decrease_tracked_resource(leaf, app, resource, user, last)
        elif kind == "read":
            assert deferring.users_documents() == direct.users_documents()
            assert deferring.groups_documents() == direct.groups_documents()
    # after every pod was released (the 200 trailing releases), both hold nothing
    assert deferring.users_documents() == direct.users_documents() == []
    assert deferring.groups_documents() == direct.groups_documents() == []
    assert deferring.usage_samples() == []


# Four applications (two users of dev, one of qa and ops, one in no group) so that each runs
# several pods, sized so that a few of them reach a cap.
judged_allocate = st.tuples(
    st.just("allocate"),
    st.integers(0, 3),
    st.builds(lambda v, m: Resource({"vcore": v * 500, "memory": m}), st.integers(1, 6), st.integers(0, 2)),
)
reconfigure = st.tuples(st.just("limits"), st.integers(1, 3), st.just(Resource()))
judged_steps = st.lists(st.one_of(judged_allocate, judged_allocate, release, reconfigure), max_size=60)


@settings(max_examples=150, deadline=None)
@given(judged_steps)
def test_every_pod_of_a_running_application_is_judged_by_every_limit_in_force(
    steps: list[tuple[str, int, Resource]],
) -> None:
    """An application's later pods take a kept way through its trackers: each increase must
    still say exactly what a full check of every level says (`denial_reason`), under limits
    that change between pods."""
    ugm = world()
    users: dict[str, UserGroup] = {app: user for app, user, _leaf in APPS}
    leaves = {app: leaf for app, _user, leaf in APPS}
    live: list[tuple[str, Resource]] = []
    for kind, number, resource in steps:
        if kind == "allocate":
            app = APPS[number][0]
            verdict = ugm.denial_reason(leaves[app], app, resource, users[app])
            allowed = verdict.startswith("no limit of user")
            assert ugm.increase_tracked_resource(leaves[app], app, resource, users[app]) == allowed, verdict
            if allowed:
                live.append((app, resource))
        elif kind == "release" and live:
            app, resource = live.pop(number % len(live))
            last = all(other != app for other, _r in live)
            ugm.decrease_tracked_resource(leaves[app], app, resource, users[app], remove_app=last)
        elif kind == "limits":
            ugm.update_config(partition(limited_tree(number)))
