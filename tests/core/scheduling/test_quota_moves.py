"""Pods follow their namespace's quota when it is created after they already run."""

from __future__ import annotations

from tests.core.scheduling.world import World, res


def test_running_pods_move_into_a_quota_created_for_their_namespace() -> None:
    world = World()
    world.node("n1", cpu=16)
    world.pods(3, namespace="team", cpu=2)
    world.schedule()
    world.quota("team", max={"cpu": 4})
    assert world.sched.quota_of("p0") == "team"
    status = world.sched.quota_status()
    assert status["team"].used == res(cpu=6).masked(["vcore"])
    assert status["default"].used.get_value("vcore") == 0


def test_a_quota_created_over_its_running_pods_admits_nothing_more() -> None:
    world = World()
    world.node("n1", cpu=16)
    world.pods(2, namespace="team", cpu=2)
    world.schedule()
    world.quota("team", max={"cpu": 4})
    world.pod("late", namespace="team", cpu=2)
    assert world.schedule() == {}
    assert "quota team would exceed its runtime" in (world.reason("late") or "")


def test_running_pods_in_a_quota_are_recycled_when_above_the_runtime_of_a_new_quota() -> None:
    world = World()
    world.node("n1", cpu=16)
    world.pods(3, namespace="team", cpu=2)
    world.schedule()
    world.quota("team", max={"cpu": 4})
    assert world.sched.recycle(now=0.0) == 0  # the recycler notes the quota is above its runtime
    assert world.sched.recycle(now=1000.0) == 1  # after the delay: one 2-core pod brings 6 down to 4
    assert len(world.out.evictions) == 1
