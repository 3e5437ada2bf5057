"""What the core tells autoscalers: only pods that lack nothing but a node ask for one, and never
more of a queue's (user's, quota's) pods than its headroom could hold, counted in line order."""

from __future__ import annotations

import time
from typing import Any

from pytest import MonkeyPatch

from core import scheduler as scheduler_module
from core.config.settings import Settings
from core.scale_up import LIMITS, NODES
from tests.core.scheduling.test_gangs import gang_pods, spec
from tests.core.scheduling.world import World

QUEUES = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: capped
            resources:
              max: {vcore: 2}
          - name: open
          - name: teams
            resources:
              max: {vcore: 3}
            queues:
              - name: x
              - name: y
          - name: few
            maxapplications: 1
          - name: limited
            limits:
              - {limit: ann, users: [ann], maxresources: {vcore: 2}}
"""


def full_world(settings: Settings | None = None) -> World:
    """A cluster with no room left: one node, taken by another scheduler's pod."""
    world = World(QUEUES, settings=settings)
    world.node("n1", cpu=1, memory="8Gi")
    world.foreign("other", "n1", cpu=1)
    return world


def categories(world: World) -> dict[str, str]:
    return {key: condition.category for key, condition in world.sched.scale_up_view().conditions.items()}


def test_pods_over_their_queues_headroom_are_held_and_only_those_within_it_ask_for_nodes() -> None:
    world = full_world()
    capped = world.pods(4, prefix="capped-", queue="root.capped", app="capped")
    opened = world.pods(3, prefix="open-", queue="root.open", app="open")
    world.schedule()
    seen = categories(world)
    assert [seen[name] for name in capped] == [NODES, NODES, LIMITS, LIMITS]
    assert all(seen[name] == NODES for name in opened)
    message = world.sched.scale_up_view().conditions["capped-2"].message
    assert message.startswith(world.reason("capped-2") or "-")
    assert "queue root.capped has no headroom left for it" in message
    assert "2000m for the pods ahead of it that wait for nodes" in message


def test_a_parents_max_is_shared_by_its_children_in_line_order() -> None:
    world = full_world()
    world.pods(2, prefix="x-", queue="root.teams.x", app="x")
    world.now = 1.0
    world.pods(2, prefix="y-", queue="root.teams.y", app="y")
    world.schedule()
    seen = categories(world)
    assert sorted(seen[name] for name in ("x-0", "x-1", "y-0", "y-1")).count(NODES) == 3


def test_pods_held_by_a_queue_max_a_user_limit_or_a_quota_in_the_cycle_are_held() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=16)
    world.quota("team", min={"cpu": 1}, max={"cpu": 1})
    world.pods(3, prefix="capped-", queue="root.capped", app="capped")
    world.pods(3, prefix="ann-", queue="root.limited", user="ann", app="ann")
    world.pods(2, prefix="team-", queue="root.open", namespace="team", app="team")
    world.schedule()
    seen = categories(world)
    assert seen == {"capped-2": LIMITS, "ann-2": LIMITS, "team-1": LIMITS}
    assert "max" in world.sched.scale_up_view().conditions["capped-2"].message


def test_user_limits_and_quotas_count_the_pods_ahead_and_leave_every_tracker_as_it_was() -> None:
    world = full_world()
    world.quota("team", min={"cpu": 2}, max={"cpu": 2})
    world.pods(4, prefix="ann-", queue="root.limited", user="ann", app="ann")
    world.pods(3, prefix="team-", queue="root.open", namespace="team", app="team")
    world.schedule()
    before = world.usage_snapshot()
    seen = categories(world)
    assert [seen[f"ann-{i}"] for i in range(4)] == [NODES, NODES, LIMITS, LIMITS]
    assert [seen[f"team-{i}"] for i in range(3)] == [NODES, NODES, LIMITS]
    view = world.sched.scale_up_view()
    assert "user ann would exceed maxresources" in view.conditions["ann-2"].message
    assert "quota team would exceed its runtime" in view.conditions["team-2"].message
    assert world.usage_snapshot() == before
    assert world.sched.user_document("ann") is None  # no tracker left behind by the trial


def test_maxapplications_counts_each_waiting_application_once() -> None:
    world = full_world()
    world.pod("a-0", queue="root.few", app="a")
    world.pod("a-1", queue="root.few", app="a")
    world.now = 1.0
    world.pod("b-0", queue="root.few", app="b")
    world.schedule()
    assert categories(world) == {"a-0": NODES, "a-1": NODES, "b-0": LIMITS}
    assert "maxapplications 1" in world.sched.scale_up_view().conditions["b-0"].message


def test_higher_priority_pods_take_the_headroom_first() -> None:
    world = full_world()
    world.pods(2, prefix="low-", queue="root.capped", app="capped")
    world.pod("high", queue="root.capped", app="capped", priority=10)
    world.schedule()
    seen = categories(world)
    assert seen["high"] == NODES and [seen["low-0"], seen["low-1"]] == [NODES, LIMITS]


def test_a_gang_asks_for_nodes_whole_or_not_at_all() -> None:
    world = full_world()
    fits = gang_pods(world, "fits", spec(("w", 2, 1)), {"w": 3}, queue="root.capped")
    world.now = 1.0
    too_big = gang_pods(world, "big", spec(("w", 3, 1)), {"w": 3}, queue="root.open")
    world.schedule()
    view = world.sched.scale_up_view()
    seen = {key: c.category for key, c in view.conditions.items()}
    # two of three real pods stand for the two placeholders still waiting; the third waits its turn
    assert [seen[name] for name in fits] == [NODES, NODES, LIMITS]
    assert all(seen[name] == NODES for name in too_big)
    needs = {need.application_id: need for need in view.gangs}
    assert needs["fits"].waits_for_nodes and needs["fits"].groups[0][1] == 2
    assert set(needs["fits"].pods) == set(fits)


def test_a_gang_over_its_queues_headroom_asks_for_no_node_and_frees_the_headroom_for_others() -> None:
    world = full_world()
    world.pod("first", queue="root.teams.x", app="first")
    world.now = 1.0
    held = gang_pods(world, "gang", spec(("w", 3, 1)), {"w": 3}, queue="root.teams.x")
    world.now = 2.0
    world.pod("later", queue="root.teams.y", app="later")
    world.schedule()
    view = world.sched.scale_up_view()
    assert view.conditions["first"].category == NODES
    assert all(view.conditions[name].category == LIMITS for name in held)
    assert "its gang is held back: " in view.conditions[held[0]].message
    assert "queue root.teams has no headroom left" in view.conditions[held[0]].message
    assert view.conditions["later"].category == NODES  # the gang's partial claim was taken back
    assert not view.gangs[0].waits_for_nodes


def test_a_quota_that_grows_turns_held_pods_into_pods_that_ask_for_nodes() -> None:
    world = full_world()
    world.quota("team", min={"cpu": 1}, max={"cpu": 1})
    world.pods(2, prefix="team-", queue="root.open", namespace="team", app="team")
    world.schedule()
    assert categories(world) == {"team-0": NODES, "team-1": LIMITS}
    world.quota("team", min={"cpu": 2}, max={"cpu": 2})
    world.schedule()
    assert categories(world) == {"team-0": NODES, "team-1": NODES}


def test_the_old_way_marks_every_waiting_pod_as_asking_for_a_node() -> None:
    world = full_world(Settings(scheduling_skipped=False))
    world.pods(4, prefix="capped-", queue="root.capped", app="capped")
    world.schedule()
    view = world.sched.scale_up_view()
    assert {c.category for c in view.conditions.values()} == {NODES}
    assert view.conditions["capped-3"].message == world.reason("capped-3")


def test_the_view_is_worked_out_again_only_after_a_change() -> None:
    world = full_world()
    world.pods(2, queue="root.open", app="open")
    world.schedule()
    first = world.sched.scale_up_view()
    assert world.sched.scale_up_view() is first
    world.pod("late", queue="root.open", app="open")
    world.schedule()
    assert world.sched.scale_up_view().generation == first.generation + 1


def test_with_a_busy_share_a_costly_view_is_kept_a_while_and_without_one_never(monkeypatch: MonkeyPatch) -> None:
    now = [100.0]
    real = scheduler_module.scale_up_view

    def costly(state: Any, generation: int) -> Any:
        now[0] += 0.5  # working the view out takes half a second
        return real(state, generation)

    monkeypatch.setattr(time, "perf_counter", lambda: now[0])
    monkeypatch.setattr(scheduler_module, "scale_up_view", costly)
    world = full_world()
    world.pod("first", queue="root.open", app="open")
    world.schedule()
    first = world.sched.scale_up_view(busy_share=0.1)
    world.pod("second", queue="root.open", app="open")
    world.schedule()
    assert world.sched.scale_up_view(busy_share=0.1) is first  # 0.5 s of work: not again within 5 s
    now[0] += 5.0
    later = world.sched.scale_up_view(busy_share=0.1)
    assert later.generation == first.generation + 1 and "second" in later.conditions
    world.pod("third", queue="root.open", app="open")
    world.schedule()
    assert "third" in world.sched.scale_up_view().conditions  # the simulator's: always as of now


def test_a_gang_larger_than_the_cluster_asks_for_nodes_whole_and_holds_no_room() -> None:
    world = full_world()
    names = gang_pods(world, "big", spec(("w", 3, 1)), {"w": 3}, queue="root.open")
    world.schedule()
    view = world.sched.scale_up_view()
    assert all(view.conditions[name].category == NODES for name in names)
    [need] = view.gangs
    assert need.waits_for_nodes and need.groups[0][1] == 3  # all three members, in one request
    assert "above what the whole cluster has" in need.reason
    assert world.out.evictions == [] and world.out.binds == []
