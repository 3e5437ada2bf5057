"""Start-up recovery and node changes: pods already on nodes are counted exactly once, in the
right places, and leave with their node."""

from __future__ import annotations

from core.objects.ask import Allocation
from tests.core.scheduling.world import World

CONFIG = """
partitions:
  - name: default
    placementrules:
      - {name: provided, create: false}
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: a
            resources: {max: {vcore: 4}}
            limits:
              - {limit: analysts, groups: [analysts], maxresources: {vcore: 3}}
          - name: b
"""


def _populate(world: World) -> None:
    world.node("n1", cpu=4, memory="8Gi")
    world.node("n2", cpu=4, memory="8Gi")
    world.quota("team", namespace="team", min={"cpu": 2}, max={"cpu": 6})
    world.pod("a0", queue="root.a", app="a", user="ann", groups=["analysts"], namespace="team")
    world.pod("a1", queue="root.a", app="a", user="ann", groups=["analysts"], namespace="team", cpu=2)
    world.pod("b0", queue="root.b", app="b", user="bob", namespace="team", priority=5)
    world.pod("b1", queue="root.b", app="b2", user="bob", cpu=0.5)


def test_recovered_pods_rebuild_every_tracker_exactly() -> None:
    live = World(CONFIG)
    _populate(live)
    live.foreign("dns", "n2", cpu=0.25)
    live.schedule()
    assert len(live.out.binds) == 4

    restarted = World(CONFIG)
    restarted.node("n1", cpu=4, memory="8Gi")
    restarted.node("n2", cpu=4, memory="8Gi")
    restarted.quota("team", namespace="team", min={"cpu": 2}, max={"cpu": 6})
    restarted.foreign("dns", "n2", cpu=0.25)
    for allocation in live.out.binds:
        restarted.sched.add_allocation(allocation)
    assert restarted.usage_snapshot() == live.usage_snapshot()
    assert restarted.schedule() == {}  # nothing is bound twice
    assert restarted.out.binds == []
    assert {a["applicationID"]: a["applicationState"] for a in restarted.sched.applications_document()} == {
        "a": "Running",
        "b": "Running",
        "b2": "Running",
    }


def test_a_recovered_pod_also_seen_as_pending_is_not_placed_again() -> None:
    world = World(CONFIG)
    world.node("n1")
    world.pod("p1", queue="root.b")
    world.sched.add_allocation(Allocation.for_ask(world.asks["p1"], "n1", 0.0))  # it was bound after all
    world.sched.add_ask(world.asks["p1"])
    assert world.schedule() == {}
    assert world.allocated("root.b")["pods"] == 1
    assert world.queue("root.b")["pendingResource"] == {}


def test_recovery_counts_usage_even_above_a_limit_lowered_since() -> None:
    world = World(CONFIG)
    world.node("n1", cpu=8)
    world.running("a0", "n1", queue="root.a", app="a", user="ann", groups=["analysts"], cpu=3.5)
    assert world.group_usage("analysts", "root.a")["vcore"] == 3500
    world.pod("a1", queue="root.a", app="a", user="ann", groups=["analysts"], cpu=0.5)
    world.schedule()
    assert world.node_of("a1") is None
    assert (
        world.reason("a1")
        == "group analysts would exceed maxresources at root.a: vcore 3500m used + 500m asked > 3000m"
    )


def test_a_recovered_pod_no_rule_places_counts_in_the_recovery_queue() -> None:
    world = World(CONFIG)
    world.node("n1")
    world.running("x0", "n1", queue="root.gone", app="x")
    assert world.allocated("root.@recovery@")["pods"] == 1
    assert world.allocated("root")["pods"] == 1
    world.finish("x0")
    assert world.allocated("root") == {}


def test_foreign_pods_count_on_their_node_only() -> None:
    world = World(CONFIG)
    world.node("n1", cpu=4)
    world.quota("team", namespace="team", min={"cpu": 1}, max={"cpu": 4})
    world.foreign("etcd", "n1", cpu=1, static=True)
    world.foreign("other", "n1", cpu=1)
    assert world.node_doc("n1")["occupied"] == {"vcore": 2000, "memory": 2 * 2**30, "pods": 2}
    assert world.allocated("root") == {}
    assert world.sched.users_document() == []
    assert world.quota_used("team") == {}
    assert world.sched.applications_document() == []


def test_allocations_that_arrive_before_their_node_wait_for_it() -> None:
    world = World(CONFIG)
    world.foreign("early-foreign", "late-node", cpu=1)
    world.running("early-own", "late-node", queue="root.b", app="b")
    assert world.allocated("root") == {}
    world.node("late-node", cpu=4)
    node = world.node_doc("late-node")
    assert [a["allocationKey"] for a in node["allocations"]] == ["early-own"]
    assert [a["allocationKey"] for a in node["foreignAllocations"]] == ["early-foreign"]
    assert world.allocated("root.b")["pods"] == 1


def test_a_pod_released_before_its_node_arrives_is_forgotten() -> None:
    world = World(CONFIG)
    world.running("early", "late-node", queue="root.b", app="b")
    world.finish("early")
    world.node("late-node")
    assert world.node_doc("late-node")["allocations"] == []
    assert world.allocated("root") == {}


def test_removing_a_node_releases_what_ran_on_it() -> None:
    world = World(CONFIG)
    _populate(world)
    world.foreign("dns", "n1", cpu=0.25)
    world.schedule()
    on_n1 = [a["allocationKey"] for a in world.node_doc("n1")["allocations"]]
    assert on_n1
    world.sched.remove_node("n1")
    for key in on_n1:
        assert world.node_of(key) is None
    world.finish(*[k for k in ("a0", "a1", "b0", "b1") if k not in on_n1])
    snapshot = world.usage_snapshot()
    assert all(alloc == ({}, 0) for alloc in snapshot["queues"].values()), snapshot["queues"]
    assert snapshot["users"] == [] and snapshot["groups"] == []
    assert all(used == {} for used in snapshot["quotas"].values())


def test_pods_left_pending_by_a_removed_node_run_elsewhere_later() -> None:
    world = World(CONFIG)
    world.node("n1", cpu=1, memory="1Gi", pods=1)
    world.pod("p1", queue="root.b")
    world.pod("p2", queue="root.b")
    world.schedule()
    world.sched.remove_node("n1")
    world.node("n2", cpu=4)
    placed = world.schedule()
    assert set(placed) == {"p2"}  # p1 went with its node; its controller makes a new pod


def test_a_running_pod_with_another_users_application_id_counts_in_its_own_application() -> None:
    world = World(CONFIG)
    world.node("n1", cpu=4, memory="8Gi")
    world.running("ann-0", "n1", queue="root.a", app="shared", user="ann", namespace="team")
    world.running("bob-0", "n1", queue="root.b", app="shared", user="bob", namespace="team", cpu=2)
    apps = {a["applicationID"]: a for a in world.sched.applications_document()}
    assert apps["shared"]["user"] == "ann" and apps["shared"]["queueName"] == "root.a"
    assert apps["shared"]["usedResource"]["vcore"] == 1000
    own = apps["shared@team/bob"]
    assert own["user"] == "bob" and own["queueName"] == "root.b"
    assert own["usedResource"]["vcore"] == 2000
    users = {u["userName"]: u for u in world.sched.state_dump()["usage"]["users"]}
    assert users["ann"]["queues"]["resourceUsage"]["vcore"] == 1000
    assert users["bob"]["queues"]["resourceUsage"]["vcore"] == 2000


def test_a_recovered_allocation_keeps_every_field_but_the_three_recovery_sets() -> None:
    from core.objects.ask import Allocation, Ask
    from core.objects.pod_rules import PodRules
    from core.objects.volumes import VolumePlan
    from core.resources import Resource

    ask = Ask(key="k", application_id="app", resource=Resource({"vcore": 1000}))
    values = {
        "key": "k",
        "node_id": "n1",
        "resource": Resource({"vcore": 1000}),
        "priority": 7,
        "allocation_time": 5.0,
        "request_time": 3.0,
        "application_id": "before",
        "name": "ns/p",
        "foreign": None,
        "ask": None,
        "queue_path": "",
        "pod": PodRules(),
        "replaces": "placeholder",
        "volume_plan": VolumePlan(),
        "foreign_claims": ("ns/claim",),
        "foreign_deadline": 600.0,
    }
    assert set(values) == set(Allocation._fields)  # a new field is covered here
    allocation = Allocation(**values)  # type: ignore[arg-type]
    expected = allocation._replace(application_id="after", ask=ask, queue_path="root.a")
    assert allocation.recovered("after", ask, "root.a") == expected


def test_an_ask_copied_for_a_replica_differs_only_in_key_name_and_creation_time() -> None:
    from core.objects.ask import Ask, UserGroup
    from core.objects.constraints import NodeConstraints
    from core.resources import Resource

    ask = Ask(
        key="k1",
        application_id="app",
        resource=Resource({"vcore": 500}),
        name="ns/p1",
        namespace="ns",
        queue="root.a",
        tags={"namespace": "ns"},
        user=UserGroup("ann", ("dev",)),
        priority=5,
        constraints=NodeConstraints(node_selector=(("zone", "a"),)),
        quota="q",
        preemptible=False,
        allow_preemption=False,
        created=1.0,
        problems=("p",),
        task_group="workers",
        placeholder=True,
        claims=("ns/c",),
        notices=("n",),
        active_deadline=300.0,
    )
    assert len(Ask._fields) == 22  # a new field must be copied by copy_as too
    assert ask.copy_as("k2", "ns/p2", 2.0) == ask._replace(key="k2", name="ns/p2", created=2.0)
