"""Which elastic quota a pod counts against, as the shim reads it for its reports."""

from __future__ import annotations

from tests.core.scheduling.world import World


def test_pod_counts_against_its_namespace_quota_then_default_and_is_forgotten_when_released() -> None:
    world = World()
    world.node("n1", cpu=8)
    world.quota("team-a", max={"cpu": 4})
    world.pod("a1", namespace="team-a", cpu=1)
    world.pod("b1", namespace="team-b", cpu=1)
    assert world.sched.quota_of("a1") == "team-a"
    assert world.sched.quota_of("b1") == "default"
    world.schedule()
    assert world.sched.quota_of("a1") == "team-a"
    world.finish("a1")
    assert world.sched.quota_of("a1") is None


def test_pod_in_a_system_namespace_counts_against_the_system_quota() -> None:
    world = World()
    world.node("n1", cpu=8)
    world.pod("dns", namespace="kube-system", cpu=1)
    assert world.sched.quota_of("dns") == "system"
