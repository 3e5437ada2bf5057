"""Gangs of the PodGroup APIs in the core: no task-group template, a minimum of pods.

Every pod of such a gang carries the same `GangSpec` (`from_pods`, `min_members`): the gang
holds nothing until that many of its pods exist, then cuts one placeholder from each of them,
and each pod takes the placeholder cut from it once all are allocated. On timeout its
placeholders are released and it reserves again later; its pods never run one by one.
"""

from __future__ import annotations

from typing import Any

from core.gang.gang import stand_in_ask
from core.gang.spec import RETRY, GangSpec, GangTopology, TaskGroup
from core.objects.ask import Allocation
from core.resources import Resource
from core.scale_up import LIMITS
from tests.core.scheduling.test_gangs import placeholders, play_shim, real_running
from tests.core.scheduling.world import World, res

QUEUES = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
          - name: small
            resources:
              max: {vcore: 3}
"""


def pod_group(
    members: int,
    *tasks: tuple[str, int],
    timeout: float = 60.0,
    minimum: Resource | None = None,
    topology: GangTopology | None = None,
) -> GangSpec:
    return GangSpec(
        groups=tuple(TaskGroup(name, count, res(pods=1)) for name, count in tasks),
        timeout=timeout,
        style=RETRY,
        min_members=members,
        min_resources=minimum,
        from_pods=True,
        source="PodGroup ml/train",
        topology=topology,
    )


def group_pods(
    world: World, app: str, definition: GangSpec, count: int, cpu: float = 1, task: str = "train", **kw: Any
) -> list[str]:
    """`count` pods of the group, each carrying the group's definition, as the shim reads them."""
    names = []
    start = len([name for name in world.asks if name.startswith(f"{app}-")])
    for index in range(start, start + count):
        name = f"{app}-{index}"
        ask = world.ask(name, app=app, cpu=cpu, queue=kw.get("queue", "root.a"))
        ask = ask._replace(task_group=task, gang=definition)
        world.asks[name] = ask
        world.sched.add_ask(ask)
        names.append(name)
    return names


def test_a_gang_one_pod_short_of_its_minimum_places_nothing_and_holds_no_room() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=4)
    names = group_pods(world, "train", pod_group(4), 3)
    world.pod("plain", app="other", queue="root.a", cpu=4)
    assert world.schedule() == {"plain": "n1"}  # the whole node: the gang holds none of it
    assert placeholders(world) == {} and real_running(world, "train") == []
    assert world.reason(names[0]) == "its gang (PodGroup ml/train) needs 4 pods before any is placed: 3 exist"


def test_the_last_pod_arriving_starts_the_whole_gang_each_pod_on_its_own_placeholders_node() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=2)
    world.node("n2", cpu=2)
    names = group_pods(world, "train", pod_group(4), 3)
    world.schedule()
    names += group_pods(world, "train", pod_group(4), 1)
    world.schedule()
    placed = {a.key: a for a in world.out.binds if a.placeholder}
    real = [a for a in world.out.binds if not a.placeholder]
    assert sorted(a.key for a in real) == sorted(names)
    for allocation in real:
        stand_in = placed[allocation.replaces]
        assert stand_in.node_id == allocation.node_id
        assert stand_in.ask is not None and stand_in.ask.gang is not None
        assert stand_in.ask.gang.originator == allocation.key, "each pod takes the placeholder cut from it"
    assert placeholders(world) == {}


def test_placeholders_are_cut_from_the_pods_themselves_so_a_larger_member_fits_its_own() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=3)
    world.node("n2", cpu=1)
    definition = pod_group(2)
    big = group_pods(world, "train", definition, 1, cpu=3, task="master")
    small = group_pods(world, "train", definition, 1, cpu=1, task="worker")
    world.schedule()
    assert world.node_of(big[0]) == "n1" and world.node_of(small[0]) == "n2"
    assert not world.out.reasons("PlaceholderTooSmall")


def test_a_pod_deleted_while_its_gang_reserves_releases_every_placeholder() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.node("n1", cpu=4)
    world.pod("busy", app="other", queue="root.a", cpu=1)
    assert world.schedule() == {"busy": "n1"}  # the cluster could hold the gang, not now
    names = group_pods(world, "train", pod_group(4), 4)
    world.schedule()
    assert len(placeholders(world)) == 3  # one does not fit now: the gang reserves and waits
    world.sched.remove_ask(names[0])
    world.schedule()
    assert placeholders(world) == {}, "three pods of a gang of four hold no room"
    world.pod("plain", app="other", queue="root.a", cpu=3)
    assert world.schedule() == {"plain": "n1"}


def test_a_gang_waiting_for_its_pods_does_not_keep_later_gangs_of_its_queue_back() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=4)
    group_pods(world, "early", pod_group(4), 2)
    world.now = 1.0
    later = group_pods(world, "later", pod_group(2), 2)
    world.schedule()
    assert sorted(real_running(world, "later")) == sorted(later)


def test_volcano_task_minimums_are_met_before_any_placeholder_is_made() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=8)
    definition = pod_group(3, ("ps", 1))
    workers = group_pods(world, "tf", definition, 3, task="worker")
    world.schedule()
    assert placeholders(world) == {} and real_running(world, "tf") == []
    assert "needs 1 pods of task ps before any is placed: 0 exist" in (world.reason(workers[0]) or "")
    ps = group_pods(world, "tf", definition, 1, task="ps")
    world.schedule()
    stand_ins = {a.ask.gang.originator for a in world.out.binds if a.placeholder and a.ask and a.ask.gang}
    assert stand_ins == {ps[0], workers[0], workers[1]}, "the ps and the two oldest workers"
    assert sorted(real_running(world, "tf")) == sorted(ps + workers), "the pod past the minimum runs as any pod"


def test_timeout_releases_the_placeholders_and_the_gang_reserves_again_never_one_by_one() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.node("n1", cpu=3)
    group_pods(world, "train", pod_group(4, timeout=30), 4)
    world.schedule()
    world.schedule(advance=31)
    assert real_running(world, "train") == [], "a PodGroup's pods never run one by one"
    timeouts = [e for e in world.out.events if e.object_id == "train" and e.reason == "ResourceReservationTimeout"]
    assert len(timeouts) == 1 and "reserves again" in timeouts[0].message
    world.node("n2", cpu=1)
    world.schedule()
    assert len(real_running(world, "train")) == 4


def test_a_gang_whose_pods_together_exceed_the_queue_max_waits_with_the_rule_and_holds_nothing() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=8)
    names = group_pods(world, "train", pod_group(2), 2, cpu=2, queue="root.small")
    world.schedule()
    assert placeholders(world) == {}
    reason = world.reason(names[0]) or ""
    assert reason.startswith("its gang can never run: the gang's placeholders need vcore 4000m in all")
    assert "above the max of queue root.small" in reason
    assert "root.small" in reason


def test_min_resources_above_the_queue_max_reject_the_gang_at_once() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=8)
    names = group_pods(world, "train", pod_group(1, minimum=res(cpu=5)), 1, queue="root.small")
    world.schedule()
    assert world.app_state("train") == "Rejected"
    assert "above the max of queue root.small" in (world.reason(names[0]) or "")


def test_the_application_document_shows_the_gangs_source_and_minimum() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=8)
    group_pods(world, "train", pod_group(2), 2)
    world.schedule()
    doc = world.sched.application_document("train")
    assert doc is not None
    assert doc["gangSource"] == "PodGroup ml/train" and doc["minMembers"] == 2
    assert doc["gangSchedulingStyle"] == "Retry"
    assert doc["placeholderData"] == [{"taskGroupName": "train", "count": 2, "replaced": 2, "timedout": 0}]


def test_a_gang_short_of_its_pods_tells_autoscalers_no_node_would_help() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=1)
    names = group_pods(world, "train", pod_group(4), 3)
    world.schedule()
    condition = world.sched.scale_up_view().conditions[names[0]]
    assert condition.category == LIMITS  # SchedulingSkipped: more nodes would not start it
    assert condition.message == "its gang (PodGroup ml/train) needs 4 pods before any is placed: 3 exist"


def test_after_a_restart_the_placeholders_found_on_nodes_stand_in_again_whatever_comes_first() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=3)
    definition = pod_group(4)
    names = group_pods(world, "train", definition, 4)  # a restart: the pods are read first ...
    for index, name in enumerate(names[:3]):  # ... then the placeholders already on the node
        member = world.asks[name]
        stand_in = stand_in_ask(member, definition, set(), 10 + index)  # named unlike those it would make
        world.sched.add_allocation(Allocation.for_ask(stand_in, "n1", 0.0))
    world.schedule()
    kept = placeholders(world)
    assert len(kept) == 3 and all(key.startswith("default/tg-train-train-") for key in kept)
    assert not [a for a in world.out.binds if a.placeholder], "no placeholder made again for a member that has one"
    assert not world.out.evictions, "none of the placeholders found was deleted"
    assert real_running(world, "train") == []


RACK = "topology.example.com/rack"


def test_a_required_topology_packs_the_pods_own_sizes_and_lands_in_the_one_rack_that_holds_them() -> None:
    world = World(QUEUES)
    world.node("a1", cpu=2, labels={RACK: "a"})
    world.node("a2", cpu=2, labels={RACK: "a"})
    world.node("b1", cpu=3, labels={RACK: "b"})
    world.node("b2", cpu=1, labels={RACK: "b"})
    definition = pod_group(2, topology=GangTopology(RACK))
    master = group_pods(world, "train", definition, 1, cpu=3, task="master")
    worker = group_pods(world, "train", definition, 1, cpu=1, task="worker")
    world.schedule()
    # Rack a has the same 4 cores, but on nodes too small for the 3-core master.
    assert (world.node_of(master[0]), world.node_of(worker[0])) == ("b1", "b2")
    doc = world.sched.application_document("train")
    assert doc is not None and doc["gangTopology"]["domains"] == ["b"]


def test_a_gang_no_rack_can_hold_places_nothing_and_waits_naming_the_closest_rack() -> None:
    world = World(QUEUES)
    world.node("a1", cpu=2, labels={RACK: "a"})
    world.node("b1", cpu=2, labels={RACK: "b"})
    names = group_pods(world, "train", pod_group(3, topology=GangTopology(RACK)), 3)
    world.pod("plain", app="other", queue="root.a", cpu=1)
    assert world.schedule() == {"plain": "a1"}
    assert placeholders(world) == {} and real_running(world, "train") == []
    assert world.reason(names[0]) == (
        "waiting for all 3 placeholders of its gang to be allocated: no rack (label topology.example.com/rack)"
        " could ever hold the gang's 3 x 1 core"
    )


def test_a_pod_group_above_gang_max_members_is_rejected_at_once() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=4)
    names = group_pods(world, "huge", pod_group(1_000_000_000), 1)
    world.pod("plain", app="other", queue="root.a", cpu=1)
    assert world.schedule() == {"plain": "n1"}
    assert world.app_state("huge") == "Rejected"
    assert "the gang has 1000000000 members in all, above the setting gang.maxMembers (10000)" in (
        world.reason(names[0]) or ""
    )


def test_a_pod_group_larger_than_the_cluster_places_no_placeholder_until_a_node_joins() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=4)
    names = group_pods(world, "train", pod_group(2), 2, cpu=3)
    world.schedule()
    assert placeholders(world) == {} and not [a for a in world.out.binds if a.placeholder]
    assert world.reason(names[0]) == (
        "the gang's placeholders need vcore 6000m in all, above what the whole cluster has (4000m):"
        " no placeholder is placed until nodes are added"
    )
    world.node("n2", cpu=4)
    world.schedule()
    assert sorted(real_running(world, "train")) == sorted(names)
