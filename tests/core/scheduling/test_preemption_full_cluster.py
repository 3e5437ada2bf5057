"""In-quota preemption when the whole cluster is full (the usual case for preemption)."""

from __future__ import annotations

from tests.core.scheduling.world import World


def full_cluster() -> World:
    world = World()
    world.node("n1", cpu=4)
    world.quota("team", min={"cpu": 4}, max={"cpu": 4})
    world.pods(4, prefix="low", namespace="team", cpu=1, priority=0)
    world.schedule()
    return world


def test_higher_priority_pod_preempts_its_own_quota_when_the_cluster_is_full() -> None:
    world = full_cluster()
    world.pod("urgent", namespace="team", cpu=1, priority=100)
    assert world.schedule() == {}
    assert len(world.out.evictions) == 1
    victim, reason = world.out.evictions[0]
    assert victim.key.startswith("low") and "preempted by team/urgent" in reason
    assert "waiting for preempted pods of quota team" in (world.reason("urgent") or "")
    world.finish(victim.key)
    assert world.schedule() == {"urgent": "n1"}


def test_a_full_cluster_never_preempts_across_quotas() -> None:
    world = full_cluster()
    world.pod("other", namespace="elsewhere", cpu=1, priority=100)
    assert world.schedule() == {}
    assert world.out.evictions == []
    assert "queue root would exceed the cluster size" in (world.reason("other") or "")


def test_equal_priority_waits_for_room_when_the_cluster_is_full() -> None:
    world = full_cluster()
    world.pod("peer", namespace="team", cpu=1, priority=0)
    assert world.schedule() == {}
    assert world.out.evictions == []
