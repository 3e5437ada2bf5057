"""Queue quotas as seed 004 describes them: enforced on what runs, at scheduling time, along the
whole path; root's max is the cluster and follows the nodes; maxapplications counts running
applications."""

from __future__ import annotations

from tests.core.scheduling.world import World

TREE = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: parent
            resources: {max: {vcore: 9}}
            queues:
              - name: child1
              - name: child2
                resources: {max: {vcore: 7}}
              - name: child3
                resources: {max: {vcore: 7}}
"""

APPS = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: parent
            maxapplications: 2
            queues:
              - name: a
                maxapplications: 1
              - name: b
                maxapplications: 2
"""


def test_child_never_exceeds_parent_max() -> None:
    world = World(TREE)
    world.node("n1", cpu=32)
    world.pods(12, prefix="c1-", queue="root.parent.child1", app="a1")
    world.schedule()
    assert world.allocated("root.parent.child1")["vcore"] == 9000
    reason = world.reason("c1-9")
    assert reason == "queue root.parent would exceed max vcore: 9000m allocated + 1000m asked > 9000m"


def test_children_together_stay_within_the_parent_max() -> None:
    world = World(TREE)
    world.node("n1", cpu=32)
    for child in ("child1", "child2", "child3"):
        world.pods(6, prefix=f"{child}-", queue=f"root.parent.{child}", app=child)
    world.schedule()
    used = {c: world.allocated(f"root.parent.{c}").get("vcore", 0) for c in ("child1", "child2", "child3")}
    assert sum(used.values()) == 9000
    assert world.allocated("root.parent")["vcore"] == 9000
    assert all(v <= 7000 for v in used.values())


def test_a_child_stops_at_its_own_max_below_the_parents() -> None:
    world = World(TREE)
    world.node("n1", cpu=32)
    world.pods(8, queue="root.parent.child2")
    world.schedule()
    assert world.allocated("root.parent.child2")["vcore"] == 7000
    assert (
        world.reason("p7") == "queue root.parent.child2 would exceed max vcore: 7000m allocated + 1000m asked > 7000m"
    )


def test_a_queue_max_limits_only_the_resources_it_names() -> None:
    world = World(TREE)
    world.node("n1", cpu=32, memory="512Gi")
    world.pod("big-memory", queue="root.parent.child2", cpu=1, memory="300Gi")
    assert world.schedule() == {"big-memory": "n1"}


def test_root_max_is_the_cluster_and_follows_nodes() -> None:
    world = World(TREE)
    world.node("n1", cpu=4, memory="8Gi", pods=10)
    assert world.queue("root")["maxResource"] == {"vcore": 4000, "memory": 8 * 2**30, "pods": 10}
    world.node("n2", cpu=2, memory="4Gi", pods=10)
    assert world.queue("root")["maxResource"] == {"vcore": 6000, "memory": 12 * 2**30, "pods": 20}
    world.node("n2", cpu=3, memory="4Gi", pods=10)  # capacity changed
    assert world.queue("root")["maxResource"]["vcore"] == 7000
    world.sched.remove_node("n1")
    assert world.queue("root")["maxResource"] == {"vcore": 3000, "memory": 4 * 2**30, "pods": 10}


def test_a_new_node_lets_pods_waiting_on_the_cluster_size_run() -> None:
    world = World(TREE)
    world.node("n1", cpu=2)
    world.pods(3, queue="root.parent.child1")
    assert len(world.schedule()) == 2
    assert world.reason("p2") == "queue root would exceed the cluster size vcore: 2000m allocated + 1000m asked > 2000m"
    world.node("n2", cpu=2)
    assert world.schedule() == {"p2": "n2"}


def test_pods_finishing_free_queue_room() -> None:
    world = World(TREE)
    world.node("n1", cpu=32)
    world.pods(8, queue="root.parent.child2")
    world.schedule()
    world.finish("p0", "p1")
    assert set(world.schedule()) == {"p7"}
    assert world.allocated("root.parent.child2")["vcore"] == 6000


def test_an_application_beyond_maxapplications_waits_with_the_queue_named() -> None:
    world = World(APPS)
    world.node("n1", cpu=32)
    world.pod("a1-0", queue="root.parent.a", app="a1")
    world.pod("a2-0", queue="root.parent.a", app="a2")
    world.schedule()
    assert world.node_of("a1-0") == "n1" and world.node_of("a2-0") is None
    assert world.reason("a2-0") == "queue root.parent.a has reached maxapplications 1 (1 running)"
    # More pods of a running application are not new applications.
    world.pod("a1-1", queue="root.parent.a", app="a1")
    assert world.schedule() == {"a1-1": "n1"}


def test_maxapplications_counts_along_the_path() -> None:
    world = World(APPS)
    world.node("n1", cpu=32)
    world.pod("a1", queue="root.parent.a", app="a1")
    world.pod("b1", queue="root.parent.b", app="b1")
    world.pod("b2", queue="root.parent.b", app="b2")
    world.schedule()
    assert world.node_of("b2") is None
    assert world.reason("b2") == "queue root.parent has reached maxapplications 2 (2 running)"
    assert world.queue("root.parent")["runningApps"] == 2


def test_a_waiting_application_starts_when_a_running_one_ends() -> None:
    world = World(APPS)
    world.node("n1", cpu=32)
    world.pod("a1-0", queue="root.parent.a", app="a1")
    world.pod("a2-0", queue="root.parent.a", app="a2")
    world.schedule()
    world.finish("a1-0")
    assert world.schedule() == {"a2-0": "n1"}
    assert world.queue("root.parent.a")["runningApps"] == 1


def test_a_memory_reason_prints_its_quantities_in_one_readable_unit() -> None:
    # The report: "45000000000 used + 9000000000 asked > 48828125Ki".
    world = World(TREE.replace("resources: {max: {vcore: 9}}", "resources: {max: {memory: 48828125Ki}}"))
    world.node("n1", cpu=32, memory="1Ti")
    world.pods(6, prefix="m-", queue="root.parent.child1", app="a1", cpu=0.1, memory="9G")
    world.schedule()
    reason = world.reason("m-5")
    assert reason == "queue root.parent would exceed max memory: 41.91Gi allocated + 8.38Gi asked > 46.57Gi"
