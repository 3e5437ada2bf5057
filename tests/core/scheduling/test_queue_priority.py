"""Queue priorities order sibling queues (YuniKorn's `priority.offset`, `priority.policy`)."""

from __future__ import annotations

from tests.core.scheduling.world import World, queues_config

TREE = queues_config(
    """
- name: a
- name: b
  properties: {priority.offset: "%s"}
""",
    root_properties="{preemption.delay: 1h}",
)


def test_the_queue_with_the_higher_priority_is_served_first() -> None:
    world = World(TREE % "10")
    world.node("n1", cpu=1)
    world.pod("a0", queue="root.a", app="a-app", priority=5)
    world.pod("b0", queue="root.b", app="b-app", priority=0)
    assert world.schedule() == {"b0": "n1"}  # 0 + 10 beats 5


def test_a_negative_offset_lets_the_other_queue_go_first() -> None:
    world = World(TREE % "-10")
    world.node("n1", cpu=1)
    world.pod("b0", queue="root.b", app="b-app", priority=5)
    world.pod("a0", queue="root.a", app="a-app", priority=0)
    assert world.schedule() == {"a0": "n1"}


def test_with_priority_sorting_disabled_on_the_parent_queues_are_served_fairly() -> None:
    world = World(
        (TREE % "10").replace("preemption.delay: 1h}", "preemption.delay: 1h, application.sort.priority: disabled}")
    )
    world.node("n1", cpu=2)
    world.pod("a0", queue="root.a", app="a-app", created=0)
    world.pod("b0", queue="root.b", app="b-app", created=0)
    world.pod("b1", queue="root.b", app="b-app", created=0)
    assert sorted(world.schedule()) == ["a0", "b0"]  # one each: the usage share decides
