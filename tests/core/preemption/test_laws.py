"""Cross-queue preemption obeys YuniKorn's laws: each test is one law a user relies on."""

from __future__ import annotations

import pytest

from core.config import ConfigError, parse_config
from tests.core.scheduling.world import World, queues_config

DELAY = "{preemption.delay: 10s}"
QUEUES = """
- name: prod
  resources: {guaranteed: {vcore: 4}}
- name: batch
- name: steady
  resources: {guaranteed: {vcore: 2}}
"""
TREE = queues_config(QUEUES, root_properties=DELAY)


def full(world: World, count: int = 4, queue: str = "root.batch", prefix: str = "b", **kw: object) -> list[str]:
    """Fill the node with `count` one-core pods of `queue`, one a second (so newest is last)."""
    names = []
    for i in range(count):
        name = f"{prefix}{i}"
        world.pod(name, queue=queue, app=f"{prefix}-app", **kw)  # type: ignore[arg-type]
        world.schedule(advance=1)
        names.append(name)
    return names


def cluster(config: str = TREE, cpu: int = 4) -> World:
    world = World(config)
    world.node("n1", cpu=cpu, memory="64Gi")
    return world


def preempting() -> World:
    """A full node of batch pods, and a prod pod that waits out its delay: then batch's newest
    pod goes (batch is over its guarantee of nothing, prod under its 4 cores)."""
    world = cluster()
    full(world)
    world.pod("p0", queue="root.prod", app="prod-app")
    world.schedule(advance=5)
    assert world.out.evictions == []
    assert world.sched.preemption_due() == 14  # queued at 4, preemption.delay 10s
    world.schedule(advance=5)
    assert world.out.evicted() == ["b3"]
    return world


def test_an_ask_under_its_guarantee_preempts_after_the_delay_and_gets_the_room() -> None:
    world = preempting()
    _, reason = world.out.evictions[0]
    assert "preempted by default/p0" in reason and "root.prod" in reason and "root.batch" in reason
    assert "waiting for 1 preempted pod(s) on node n1" in (world.reason("p0") or "")
    said = [e for e in world.out.reasons("Unschedulable", "Preempting") if e.object_id == "p0"]
    assert [e.reason for e in said[-2:]] == ["Unschedulable", "Preempting"]  # the pod's condition, then whom
    assert "waiting for 1 preempted pod(s)" in said[-2].message and "default/b3" in said[-1].message
    world.finish("b3")
    assert world.schedule() == {"p0": "n1"}


def test_the_held_room_goes_to_the_preemptor_not_to_another_queue() -> None:
    world = preempting()
    world.pod("late", queue="root.batch", app="late-app", priority=1000)
    world.finish("b3")
    bound = world.schedule()
    assert bound == {"p0": "n1"}
    assert world.node_of("late") is None


def test_no_preemption_before_the_delay_nor_for_queues_without_a_guarantee() -> None:
    world = cluster()
    full(world, queue="root.prod", prefix="p")
    world.pod("b0", queue="root.batch", app="batch-app")
    world.schedule(advance=100)
    assert world.out.evictions == []  # batch has no guarantee: it never triggers
    assert world.sched.preemption_due() is None


def test_an_ask_beyond_its_guarantee_does_not_trigger() -> None:
    world = cluster(cpu=8)
    full(world, count=8)
    for i in range(5):
        world.pod(f"p{i}", queue="root.prod", app="prod-app")
    world.schedule(advance=10)
    assert len(world.out.evictions) == 4  # 4 cores guaranteed: the fifth ask waits
    assert world.reason("p4") is not None and "preempted" not in (world.reason("p4") or "")


def test_a_victim_queue_never_falls_below_its_guarantee() -> None:
    world = cluster()
    full(world, count=3, queue="root.steady", prefix="s")  # guaranteed 2, uses 3
    full(world, count=1, queue="root.batch", prefix="b")
    world.pod("p0", queue="root.prod", app="prod-app", cpu=2)
    world.schedule(advance=10)
    # One core from batch and one from steady (its only core above its guarantee), never two from steady.
    assert sorted(world.out.evicted()) == ["b0", "s2"]


def test_only_queues_over_their_guarantee_lose_pods() -> None:
    world = cluster()
    full(world, count=2, queue="root.steady", prefix="s")  # exactly at its guarantee
    full(world, count=2, queue="root.batch", prefix="b")
    world.pod("p0", queue="root.prod", app="prod-app", cpu=3)
    world.schedule(advance=10)
    assert world.out.evictions == []  # batch's two cores are not enough and steady is untouchable


def test_only_equal_or_lower_priority_pods_are_victims() -> None:
    world = cluster()
    full(world, count=2, prefix="hi", priority=100)
    full(world, count=2, prefix="eq", priority=10)
    world.pod("p0", queue="root.prod", app="prod-app", priority=10, cpu=2)
    world.schedule(advance=10)
    assert sorted(world.out.evicted()) == ["eq0", "eq1"]
    world.finish("eq0", "eq1")
    world.pod("p1", queue="root.prod", app="prod-app", priority=10)
    world.schedule(advance=20)
    assert world.node_of("p0") == "n1"
    assert "hi0" not in world.out.evicted() and "hi1" not in world.out.evicted()


def test_lowest_priority_then_newest_first() -> None:
    world = cluster()
    full(world, count=2, prefix="low", priority=0)
    full(world, count=2, prefix="mid", priority=5)
    world.pod("p0", queue="root.prod", app="prod-app", priority=10)
    world.schedule(advance=10)
    assert world.out.evicted() == ["low1"]


def test_pods_that_ask_not_to_be_preempted_go_last_but_do_go() -> None:
    world = cluster()
    full(world, count=2, prefix="keep", allow_preemption=False)
    full(world, count=2, prefix="free", priority=5)
    world.pod("p0", queue="root.prod", app="prod-app", priority=10, cpu=3)
    world.schedule(advance=10)
    evicted = world.out.evicted()
    assert sorted(evicted) == ["free0", "free1", "keep1"]  # the opted-out one only when needed


def test_the_fewest_victims_on_one_node() -> None:
    world = World(TREE)
    world.node("small", cpu=2, memory="64Gi")
    world.node("big", cpu=2, memory="64Gi")
    for i in range(2):
        world.pod(f"s{i}", queue="root.batch", app="small-app", cpu=1, selector=None)
    world.schedule(advance=1)
    world.pod("b0", queue="root.batch", app="big-app", cpu=2)
    world.schedule(advance=1)
    placed = {name: world.node_of(name) for name in ("s0", "s1", "b0")}
    big_node = placed["b0"]
    world.pod("p0", queue="root.prod", app="prod-app", cpu=2)
    world.schedule(advance=10)
    assert world.out.evicted() == ["b0"]
    world.finish("b0")
    assert world.schedule() == {"p0": big_node}


FENCED = queues_config(
    """
- name: tenant
  properties: {preemption.policy: fence}
  resources: {guaranteed: {vcore: 4}}
  queues:
    - name: a
      resources: {guaranteed: {vcore: 2}}
    - name: b
- name: batch
- name: prod
  resources: {guaranteed: {vcore: 4}}
""",
    root_properties=DELAY,
)


def test_a_fence_keeps_the_search_inside() -> None:
    world = cluster(FENCED)
    full(world, count=3, queue="root.tenant.b", prefix="t")
    full(world, count=1, queue="root.batch", prefix="b")  # the newest pod, but outside the fence
    world.pod("a0", queue="root.tenant.a", app="a-app")
    world.schedule(advance=10)
    assert world.out.evicted() == ["t2"]


def test_a_fenced_ask_never_reaches_outside() -> None:
    world = cluster(FENCED)
    full(world, count=4)  # root.batch, outside the fence
    world.pod("a0", queue="root.tenant.a", app="a-app")
    world.schedule(advance=30)
    assert world.out.evictions == []


def test_a_fence_is_one_way_asks_from_outside_may_preempt_inside() -> None:
    world = cluster(FENCED, cpu=6)
    full(world, count=6, queue="root.tenant.b", prefix="t")  # tenant over its guarantee of 4
    world.pod("p0", queue="root.prod", app="prod-app")
    world.schedule(advance=10)
    assert world.out.evicted() == ["t5"]


@pytest.mark.parametrize(
    "config",
    [
        queues_config(
            QUEUES.replace("- name: batch\n", "- name: batch\n  properties: {preemption.policy: disabled}\n"),
            root_properties=DELAY,
        ),
        queues_config(QUEUES, root_properties=DELAY, partition="preemption: {enabled: false}"),
    ],
    ids=["a disabled queue never loses pods", "the partition switch turns preemption off"],
)
def test_nothing_is_preempted_where_preemption_is_off(config: str) -> None:
    world = cluster(config)
    full(world)
    world.pod("p0", queue="root.prod", app="prod-app")
    world.schedule(advance=30)
    assert world.out.evictions == []


def test_a_refused_eviction_lets_the_room_go_and_the_search_try_again() -> None:
    world = preempting()
    world.sched.eviction_failed("b3", "PodDisruptionBudget says no")
    world.schedule()
    assert world.out.evicted() == ["b3", "b2"]  # the next victim; b3 stays


def test_preemption_stops_once_the_guarantee_is_met() -> None:
    world = cluster()
    full(world)
    for i in range(2):
        world.pod(f"p{i}", queue="root.prod", app="prod-app")
    world.schedule(advance=10)
    world.finish(*world.out.evicted())
    world.schedule()
    for i in range(4):
        world.pod(f"again{i}", queue="root.batch", app="b-app")
    for _ in range(5):
        world.schedule(advance=60)
    assert sorted(world.out.evicted()) == ["b2", "b3"]  # batch never takes it back: no loop
    assert world.allocated("root.prod")["vcore"] == 2000


def test_the_queue_documents_show_how_preemption_applies() -> None:
    config = FENCED.replace("properties: {preemption.delay: 10s}", "properties: {preemption.delay: 90s}").replace(
        "          - name: batch\n", "          - name: batch\n            properties: {preemption.policy: disabled}\n"
    )
    world = cluster(config)
    tenant, a, batch = world.queue("root.tenant"), world.queue("root.tenant.a"), world.queue("root.batch")
    assert (tenant["isPreemptionFence"], tenant["preemptionEnabled"], tenant["preemptionDelay"]) == (
        True,
        True,
        "1m30s",
    )
    assert (a["isPreemptionFence"], a["preemptionEnabled"]) == (False, True)
    assert batch["preemptionEnabled"] is False


PRIORITY_QUEUES = queues_config(
    """
- name: high
  properties: {priority.offset: "1000"}
  resources: {guaranteed: {vcore: 4}}
- name: plain
  resources: {guaranteed: {vcore: 4}}
- name: batch
- name: tenant
  properties: {priority.policy: fence, priority.offset: "-10"}
""",
    root_properties=DELAY,
)


def test_a_queue_priority_offset_lifts_its_pods_above_higher_priority_victims() -> None:
    world = cluster(PRIORITY_QUEUES)
    full(world, count=4, priority=100)
    world.pod("plain0", queue="root.plain", app="plain-app", priority=0)
    world.schedule(advance=30)
    assert world.out.evictions == []  # priority 0 may not preempt priority 100
    world.pod("high0", queue="root.high", app="high-app", priority=0)
    world.schedule(advance=30)
    assert world.out.evicted() == ["b3"]  # 0 + offset 1000 >= 100


def test_a_priority_fence_hides_the_priorities_below_it() -> None:
    world = cluster(PRIORITY_QUEUES)
    full(world, count=4, queue="root.tenant", prefix="t", priority=1000)
    world.pod("plain0", queue="root.plain", app="plain-app", priority=0)
    world.schedule(advance=30)
    assert world.out.evicted() == ["t3"]  # seen from root, tenant's pods are at its offset, -10


def test_the_queue_documents_show_current_priorities_and_offsets() -> None:
    world = cluster(PRIORITY_QUEUES)
    world.pod("h", queue="root.high", app="h-app", priority=5, cpu=16)
    world.pod("t", queue="root.tenant", app="t-app", priority=7, cpu=16)
    world.schedule()
    high, tenant, plain, root = (world.queue(q) for q in ("root.high", "root.tenant", "root.plain", "root"))
    assert (high["currentPriority"], high["priorityOffset"]) == (1005, 1000)
    assert (tenant["currentPriority"], tenant["priorityOffset"]) == (-10, -10)
    assert plain["currentPriority"] == -(2**31)  # nothing pending
    assert root["currentPriority"] == 1005


def test_a_reload_with_a_bad_preemption_key_is_refused_and_the_old_config_stays() -> None:
    world = cluster()
    with pytest.raises(ConfigError) as refused:
        world.sched.update_config(parse_config(TREE.replace("preemption.delay: 10s", "preemption.delay: soon")))
    assert "root.properties.preemption.delay: not a duration: 'soon'" in str(refused.value)
    assert world.queue("root.prod")["preemptionDelay"] == "10s"
    assert world.out.reasons("ConfigRefused")


def test_a_pod_its_elastic_quota_refuses_never_preempts_so_the_two_never_fight() -> None:
    # Preempting for it would free room its quota then refuses it (or the recycler takes back).
    world = cluster(cpu=5)
    world.quota("team", min={"cpu": 1}, max={"cpu": 1})
    world.pod("t0", queue="root.prod", app="team-app", namespace="team")
    world.schedule(advance=1)
    full(world)
    world.pod("t1", queue="root.prod", app="team-app", namespace="team")  # prod is under its guarantee
    world.schedule(advance=30)
    assert world.node_of("t0") == "n1" and world.out.evictions == []


@pytest.mark.timeout(20)
def test_a_preemptor_whose_held_node_no_longer_takes_it_waits_and_the_cycle_ends() -> None:
    """Its victims are gone but the node was cordoned meanwhile: the held room is let go (which
    moves the change counter in the middle of the cycle) and the pod waits. The cycle used to
    try the pod again and again, forever."""
    world = preempting()
    world.node("n1", cpu=4, memory="64Gi", schedulable=False)
    world.finish("b3")
    assert world.schedule() == {}
    assert "node unschedulable" in (world.reason("p0") or "")
    world.node("n1", cpu=4, memory="64Gi")
    assert world.schedule() == {"p0": "n1"}


SHARED_PARENT = queues_config(
    """
- name: parent
  resources: {guaranteed: {vcore: 10}, max: {vcore: 20}}
  queues:
    - name: child1
      resources: {guaranteed: {vcore: 5}, max: {vcore: 10}}
    - name: child2
      resources: {guaranteed: {vcore: 5}, max: {vcore: 10}}
""",
    root_properties=DELAY,
)


@pytest.mark.parametrize("parent_guarantee", [True, False], ids=["parent guaranteed", "parent without one"])
def test_a_queue_under_its_own_guarantee_preempts_a_sibling_that_fills_their_parent(parent_guarantee: bool) -> None:
    # YuniKorn's TestTryPreemption: child1 uses 10 of a 10-core node, which puts the shared parent
    # at its guarantee of 10; child2 (guaranteed 5, using nothing) asks for 5: child1 gives a pod back.
    config = SHARED_PARENT if parent_guarantee else SHARED_PARENT.replace("guaranteed: {vcore: 10}, ", "")
    world = cluster(config, cpu=10)
    full(world, count=2, queue="root.parent.child1", prefix="c", cpu=5)
    world.pod("ask3", queue="root.parent.child2", app="app2", cpu=5)
    world.schedule(advance=10)
    assert world.out.evicted() == ["c1"]  # the newest of child1's pods
    world.finish("c1")
    assert world.schedule() == {"ask3": "n1"}
    assert world.allocated("root.parent.child1")["vcore"] == 5000  # its own guarantee, never less


UNDER_A_MAX = queues_config(
    """
- name: parent
  resources: {max: {vcore: 4}}
  queues:
    - name: a
      resources: {guaranteed: {vcore: 2}}
      limits:
        - {limit: capped, users: [carol], maxresources: {vcore: 1}}
    - name: b
    - name: urgent
      properties: {priority.offset: "1000"}
- name: outside
""",
    root_properties=DELAY,
)


def under_a_max() -> World:
    """A roomy node; b fills its parent's max of 4 cores, `outside` runs 4 newer pods."""
    world = cluster(UNDER_A_MAX, cpu=16)
    full(world, count=4, queue="root.parent.b", prefix="b")
    full(world, count=4, queue="root.outside", prefix="o")
    return world


def test_a_parent_max_triggers_preemption_inside_that_parent_only() -> None:
    world = under_a_max()
    world.pod("a0", queue="root.parent.a", app="a-app")
    world.schedule(advance=1)
    assert "queue root.parent would exceed max vcore" in (world.reason("a0") or "")
    world.schedule(advance=10)
    assert world.out.evicted() == ["b3"]  # outside's pods are newer, but their going frees nothing under the max
    _, reason = world.out.evictions[0]
    assert "for room under queue root.parent's max" in reason
    world.finish("b3")
    assert world.schedule() == {"a0": "n1"}


def test_the_room_under_the_max_is_held_for_the_preemptor() -> None:
    world = under_a_max()
    world.pod("a0", queue="root.parent.a", app="a-app")
    world.schedule(advance=11)
    assert world.out.evicted() == ["b3"]
    world.pod("late", queue="root.parent.urgent", app="late-app")  # its queue is served first
    world.finish("b3")
    world.schedule()
    assert world.node_of("a0") == "n1" and world.node_of("late") is None
    assert "would exceed max vcore" in (world.reason("late") or "")


def test_a_user_limit_never_triggers_preemption() -> None:
    world = under_a_max()
    world.pod("c0", queue="root.parent.a", app="c-app", user="carol")
    world.pod("c1", queue="root.parent.a", app="c-app", user="carol")
    world.finish("b3")
    world.schedule()  # carol's first pod takes the freed core
    world.schedule(advance=30)
    assert world.out.evictions == []  # carol's limit of one core, not the max, keeps c1 waiting
    assert world.node_of("c1") is None


def test_room_another_scheduler_takes_sends_the_preemptor_searching_again() -> None:
    # The held room only binds Herder: a pod of another scheduler may land there once the victim
    # is gone. The preemptor lets the hold go (the cycle goes on: it used to spin here for ever)
    # and, still under its guarantee, preempts again.
    world = preempting()
    world.finish("b3")
    world.foreign("other", "n1", cpu=1)
    assert world.schedule() == {}
    assert world.out.evicted() == ["b3", "b2"]
    world.finish("b2")
    assert world.schedule() == {"p0": "n1"}
