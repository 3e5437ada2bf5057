"""Pods the cluster's size alone keeps waiting are not asked again for nothing.

When the cluster is full, each pod that ends lets one waiting pod run; the others would be
refused again in the same words. A leaf whose every waiting pod was last refused by the
cluster's size, in words that still hold, is passed by (core/objects/leaf_waits.py). These
tests check that this changes nothing a user sees (the same placements, evictions and
reasons as trying every waiting pod again, on random worlds) and that it does happen.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import cycle
from tests.core.scheduling.world import World

CONFIG = """
partitions:
  - name: default
    placementrules: [{name: provided}]
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: capped
            resources: {max: {vcore: 3}}
          - name: few
            maxapplications: 2
          - name: open
"""
QUEUES = ("root.capped", "root.few", "root.open")
NAMESPACES = ("team", "free")  # team has an elastic quota (in-quota preemption), free does not

operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("pod"),
            st.sampled_from(QUEUES),
            st.sampled_from(NAMESPACES),
            st.sampled_from([1, 2]),
            st.sampled_from([0, 0, 100]),
            st.integers(0, 3),  # application
        ),
        st.tuples(st.just("finish"), st.integers(0, 50)),
        st.tuples(st.just("withdraw"), st.integers(0, 50)),
        st.tuples(st.just("node"), st.sampled_from([1, 2, 4])),
        st.tuples(st.just("reload"), st.sampled_from([2, 3, 5])),  # root.capped's max and root.few's apps
        st.tuples(st.just("schedule")),
    ),
    max_size=40,
)


def play(script: list[tuple[Any, ...]]) -> list[Any]:
    """Run the script on a new world; what a user could see after every cycle."""
    world = World(CONFIG)
    world.node("n0", cpu=4)
    world.quota("team", min={"cpu": 2}, max={"cpu": 4})
    names: list[str] = []
    nodes = 1
    seen: list[Any] = []
    for op in script:
        if op[0] == "pod":
            _, queue, namespace, cpu, priority, app = op
            name = f"p{len(names)}"
            names.append(name)
            world.pod(name, queue=queue, namespace=namespace, cpu=cpu, priority=priority, app=f"{namespace}-{app}")
        elif op[0] == "finish":
            running = [name for name in names if world.node_of(name) is not None]
            if running:
                world.finish(running[op[1] % len(running)])
        elif op[0] == "withdraw":
            waiting = [name for name in names if world.node_of(name) is None and world.reason(name) is not None]
            if waiting:
                world.sched.remove_ask(waiting[op[1] % len(waiting)])
        elif op[0] == "node":
            world.node(f"n{nodes}", cpu=op[1])
            nodes += 1
        elif op[0] == "reload":  # every queue object is built again
            world.configure(
                CONFIG.replace("vcore: 3", f"vcore: {op[1]}").replace("maxapplications: 2", f"maxapplications: {op[1]}")
            )
        else:
            seen.append(sorted(world.schedule(advance=1.0).items()))
            seen.append([victim.key for victim, _ in world.out.evictions])
            seen.append([(name, world.reason(name)) for name in names])
    seen.append(sorted(world.schedule(advance=1.0).items()))
    seen.append([(name, world.reason(name)) for name in names])
    return seen


@settings(max_examples=150, deadline=None)
@given(operations)
def test_passing_a_refused_leaf_by_changes_nothing_a_user_sees(script: list[tuple[Any, ...]]) -> None:
    with_skip = play(script)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cycle, "_refused_as_before", lambda state, leaf: False)
        every_time = play(script)
    assert with_skip == every_time


def test_a_full_cluster_asks_one_waiting_pod_per_pod_that_ends() -> None:
    world = World()
    world.node("n0", cpu=4)
    for i in range(200):
        world.pod(f"p{i:03}", app=f"app-{i:03}", cpu=1)
    assert len(world.schedule()) == 4
    tries = world.sched.metrics.attempts_failed
    for ended in range(4):
        world.finish(f"p{ended:03}")
        assert world.schedule(advance=1.0) == {f"p{4 + ended:03}": "n0"}
    # 196 pods wait for each of the four: asking each again would have been 4 x 195 tries
    assert world.sched.metrics.attempts_failed - tries <= 4
    full = "queue root would exceed the cluster size vcore: 4000m allocated + 1000m asked > 4000m"
    assert world.reason("p199") == full


def full_of_open_pods(cores: int) -> World:
    """A node of `cores` cores full of one-core pods of root.open (open0, open1, ...)."""
    world = World(CONFIG)
    world.node("n0", cpu=cores)
    world.pods(cores, prefix="open", queue="root.open", app="open", cpu=1)
    world.schedule()
    return world


def test_a_queue_max_below_root_is_named_once_it_is_in_the_way() -> None:
    world = full_of_open_pods(4)
    world.pod("capped0", queue="root.capped", app="capped", cpu=1)
    assert world.schedule(advance=1.0) == {}
    assert "queue root would exceed the cluster size" in (world.reason("capped0") or "")
    world.pod("filler", queue="root.capped", app="filler", cpu=3, priority=100)
    world.finish("open0", "open1", "open2")
    assert world.schedule(advance=1.0) == {"filler": "n0"}
    # the cluster is as full as before, but root.capped (3 of 3) is what now stands in the way
    assert "queue root.capped would exceed max vcore" in (world.reason("capped0") or "")


def test_maxapplications_is_named_once_it_is_reached_in_a_full_cluster() -> None:
    world = full_of_open_pods(2)
    world.pod("few0", queue="root.few", app="few-a", cpu=1)
    world.pod("few1", queue="root.few", app="few-b", cpu=1)
    world.pod("few2", queue="root.few", app="few-c", cpu=1)
    assert world.schedule(advance=1.0) == {}
    world.finish("open0")
    assert world.schedule(advance=1.0) == {"few0": "n0"}
    world.finish("open1")
    assert world.schedule(advance=1.0) == {"few1": "n0"}
    # the cluster is as full as before, but root.few now runs its 2 applications
    assert "maxapplications 2" in (world.reason("few2") or "")


def test_a_pod_that_may_preempt_in_its_quota_is_asked_again_in_a_full_cluster() -> None:
    world = World(CONFIG)
    world.node("n0", cpu=2)
    world.quota("team", min={"cpu": 2}, max={"cpu": 4})
    world.pods(2, prefix="free", queue="root.few", namespace="free", app="free", cpu=1)
    world.schedule()
    world.pod("urgent", queue="root.open", namespace="team", app="urgent", cpu=1, priority=100)
    assert world.schedule(advance=1.0) == {}
    assert "cluster size" in (world.reason("urgent") or "")
    # root.capped is served first (it uses nothing), so the room goes to low
    world.pod("low", queue="root.capped", namespace="team", app="low", cpu=1, priority=0)
    world.finish("free0")
    assert world.schedule(advance=1.0) == {"low": "n0"}
    # a lower-priority pod of its own quota runs now: in-quota preemption can make room
    assert [victim.key for victim, _ in world.out.evictions] == ["low"]


def test_pods_that_arrive_while_others_wait_on_a_full_cluster_are_tried_in_queue_order() -> None:
    world = World()
    world.node("n0", cpu=4)
    world.pods(7, prefix="half", app="half", cpu=0.5)
    assert len(world.schedule()) == 7
    for i in range(20):
        world.pod(f"big{i:02}", app=f"big-{i:02}", cpu=1)
    assert world.schedule(advance=1.0) == {}
    world.pod("later", app="b-later", cpu=0.5)
    world.pod("sooner", app="a-sooner", cpu=0.5)  # same time: the application id decides
    assert world.schedule(advance=1.0) == {"sooner": "n0"}
    assert "cluster size" in (world.reason("later") or "")
    assert "3500m allocated + 1000m asked" in (world.reason("big19") or "")


def test_waiting_pods_are_counted_afresh_after_a_configuration_reload() -> None:
    world = full_of_open_pods(2)
    world.pods(3, prefix="wait", queue="root.open", app="waiting", cpu=1)
    assert world.schedule(advance=1.0) == {}
    world.configure(CONFIG.replace("maxapplications: 2", "maxapplications: 3"))  # every queue is rebuilt
    assert world.schedule(advance=1.0) == {}
    world.finish("open0")
    assert world.schedule(advance=1.0) == {"wait0": "n0"}
    world.finish("open1")
    assert world.schedule(advance=1.0) == {"wait1": "n0"}
    assert "cluster size" in (world.reason("wait2") or "")
