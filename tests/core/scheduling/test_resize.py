"""In-place pod resize (seed 003, "pod updated (resource usage)" for Herder's and foreign pods):
the node, the application, every queue, the user and group trackers and the elastic quota follow
a running pod's new size."""

from __future__ import annotations

from core.resources import Resource
from tests.core.scheduling.world import World, queues_config, res

LIMITS = queues_config(
    """
    - name: team
      resources: {max: {vcore: 8}}
      limits:
        - {limit: alice, users: [alice], maxresources: {vcore: 6}}
    """
)


def test_a_resized_own_pod_moves_every_count_and_the_room_it_frees_places_a_waiting_pod() -> None:
    world = World(LIMITS)
    world.node("n1", cpu=8, memory="64Gi")
    world.quota("team", namespace="team", max={"cpu": 8})
    world.pod("big", queue="root.team", namespace="team", app="a", cpu=6)
    world.pod("small", queue="root.team", namespace="team", app="b", cpu=3, user="bob")
    assert world.schedule() == {"big": "n1"}
    assert world.sched.resize_allocation("big", res(cpu=4, memory="1Gi", pods=1))
    assert world.schedule() == {"small": "n1"}
    assert world.allocated("root.team")["vcore"] == 7000
    assert world.allocated("root")["vcore"] == 7000
    assert world.node_doc("n1")["allocated"]["vcore"] == 7000
    assert world.user_usage("alice", "root.team")["vcore"] == 4000
    assert world.quota_used("team")["vcore"] == 7000
    assert world.app("a")["usedResource"]["vcore"] == 4000
    assert not world.sched.resize_allocation("big", res(cpu=4, memory="1Gi", pods=1))  # unchanged


def test_a_resized_foreign_pod_changes_its_node_and_the_quota_pool() -> None:
    world = World()
    world.node("n1", cpu=8)
    world.foreign("other", "n1", cpu=6)
    world.pod("mine", cpu=4)
    assert world.schedule() == {}
    assert world.sched.resize_allocation("other", Resource({"vcore": 2000, "memory": 2**30, "pods": 1}))
    assert world.schedule() == {"mine": "n1"}
    assert world.node_doc("n1")["occupied"]["vcore"] == 2000


def test_every_tracker_is_back_to_zero_when_a_resized_pod_goes() -> None:
    world = World(LIMITS)
    world.node("n1", cpu=8)
    world.pod("p", queue="root.team", app="a", cpu=2)
    world.schedule()
    world.sched.resize_allocation("p", res(cpu=5, memory="3Gi", pods=1))
    world.finish("p")
    assert world.allocated("root") == {}
    assert world.user_usage("alice", "root.team") == {}
