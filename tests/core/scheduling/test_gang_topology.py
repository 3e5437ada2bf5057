"""Topology-aware gangs in the core: every member in one rack (required), or as few racks as
can hold it (preferred); the tightest rack that holds the whole gang; a readable reason when
none can; the rack fixed once a member landed; nodes without the label never used.

Racks are nodes labelled `topology.example.com/rack`; a gang is built as in test_gangs.py.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.gang.gang import placeholder_ask
from core.gang.spec import HARD, SOFT, GangSpec, GangTopology, TaskGroup
from core.objects.ask import Allocation
from tests.core.scheduling.test_gangs import QUEUES, placeholders, play_shim, real_running
from tests.core.scheduling.world import World, res

RACK = "topology.example.com/rack"
REQUIRED = GangTopology(RACK, required=True)
PREFERRED = GangTopology(RACK, required=False)


def racks(world: World, **sizes: tuple[int, float]) -> None:
    """`racks(world, r1=(2, 8))`: rack r1 of 2 nodes of 8 cores, named r1-0, r1-1."""
    for rack, (count, cpu) in sizes.items():
        for i in range(count):
            world.node(f"{rack}-{i}", cpu=cpu, memory="64Gi", labels={RACK: rack})


def gang(
    world: World,
    app: str,
    members: int,
    cpu: float,
    topology: GangTopology | None = REQUIRED,
    *,
    pods: int | None = None,
    pod_cpu: float | None = None,
    timeout: float = 60.0,
    style: str = SOFT,
    groups: tuple[TaskGroup, ...] = (),
) -> list[str]:
    """A gang of `members` x `cpu` (or of `groups`) and its real pods (`pods`, default `members`)."""
    spec = GangSpec(
        groups or (TaskGroup("w", members, res(cpu, "1Gi", 1)),), timeout=timeout, style=style, topology=topology
    )
    names = []
    for i in range(members if pods is None else pods):
        name = f"{app}-{i}"
        ask = world.ask(name, app=app, queue="root.a", cpu=pod_cpu or cpu)
        group = spec.groups[0].name
        world.asks[name] = ask = ask._replace(task_group=group, gang=replace(spec, originator=name) if i == 0 else None)
        world.sched.add_ask(ask)
        names.append(name)
    return names


def racks_used(world: World, app: str) -> set[str]:
    """The racks of every pod of the application on a node now, placeholders included."""
    doc = world.sched.application_document(app)
    assert doc is not None
    return {allocation["nodeId"].rpartition("-")[0] for allocation in doc["allocations"]}


def _recover_placeholder(world: World, app: str, spec: GangSpec, node: str, **kw: Any) -> None:
    """One placeholder a previous Herder made for the gang, found on `node` after a restart."""
    template = world.ask(f"{app}-0", app=app, queue="root.a", **kw)
    template = template._replace(task_group="w", gang=replace(spec, originator=f"{app}-0"))
    placeholder = placeholder_ask(template, spec, spec.groups[0], set(), 100)
    world.sched.add_allocation(Allocation.for_ask(placeholder, node, 0.0))


def test_a_required_gang_lands_in_the_tightest_rack_that_holds_it_whole() -> None:
    world = World(QUEUES)
    play_shim(world)
    racks(world, r1=(2, 8), r2=(4, 8), r3=(3, 8))  # 16, 32 and 24 cores
    small = gang(world, "small", 4, 4)  # 16 cores: every rack holds it, r1 the tightest
    world.schedule()
    assert racks_used(world, "small") == {"r1"} and sorted(real_running(world, "small")) == sorted(small)
    doc = world.sched.application_document("small")
    assert doc is not None
    assert doc["gangTopology"] == {"key": RACK, "mode": "Required", "domains": ["r1"], "fixed": True}
    middle = gang(world, "middle", 5, 4)  # 20 cores: r2 and r3 hold it, r3 the tighter
    world.schedule()
    assert racks_used(world, "middle") == {"r3"} and sorted(real_running(world, "middle")) == sorted(middle)
    big = gang(world, "big", 8, 4)  # 32 cores: only r2
    world.schedule()
    assert racks_used(world, "big") == {"r2"} and sorted(real_running(world, "big")) == sorted(big)


def test_a_required_gang_stays_in_one_rack_where_binpacking_alone_would_spread_it() -> None:
    world = World(QUEUES)
    play_shim(world)
    racks(world, r1=(2, 4), r2=(2, 4))
    world.foreign("busy-r1", "r1-0", cpu=3)  # binpacking fills r1-0's last core first
    world.foreign("busy-r2", "r2-0", cpu=2)
    gang(world, "job", 4, 1)  # r1 has 5 cores free, r2 6: both hold 4, r1 the tighter
    world.schedule()
    assert racks_used(world, "job") == {"r1"}
    plain = gang(world, "plain", 3, 1, topology=None)  # the same without a topology spreads over both racks
    world.schedule()
    assert racks_used(world, "plain") == {"r1", "r2"} and len(real_running(world, "plain")) == len(plain)


def test_a_required_gang_no_rack_can_hold_waits_with_the_reason_and_others_run() -> None:
    world = World(QUEUES)
    play_shim(world)
    racks(world, r1=(2, 8), r2=(4, 8), r3=(3, 8))
    world.foreign("busy", "r2-0", cpu=8)  # r2 has 24 cores free, r3 24 in all: neither holds 32 now
    names = gang(world, "big", 8, 4)
    world.pod("plain", app="plain", queue="root.a", cpu=2)
    bound = world.schedule()
    assert "plain" in bound and placeholders(world) == {}
    doc = world.sched.application_document("big")
    assert doc is not None
    waiting = {r["pendingReason"] for r in doc["requests"] if r.get("placeholder")}
    assert waiting == {f"no rack (label {RACK}) can hold the gang's 8 x 4 cores: largest free 24 cores in rack r2"}
    for name in names:
        assert world.reason(name) == (
            f"waiting for all 8 placeholders of its gang to be allocated: no rack (label {RACK}) can hold"
            " the gang's 8 x 4 cores"
        )
    world.finish("busy")  # r2's 32 cores come free
    world.schedule()
    assert racks_used(world, "big") == {"r2"} and sorted(real_running(world, "big")) == sorted(names)


def test_a_gang_no_rack_could_ever_hold_says_so_and_runs_when_a_rack_grows() -> None:
    world = World(QUEUES)
    play_shim(world)
    racks(world, r1=(2, 8), r2=(3, 8))
    names = gang(world, "big", 8, 4)
    world.schedule()
    doc = world.sched.application_document("big")
    assert doc is not None
    waiting = {r["pendingReason"] for r in doc["requests"] if r.get("placeholder")}
    assert waiting == {
        f"no rack (label {RACK}) could ever hold the gang's 8 x 4 cores: the largest, rack r2, has 24 cores in all"
    }
    world.node("r2-3", cpu=8, memory="64Gi", labels={RACK: "r2"})  # r2 grows to 32 cores
    world.schedule()
    assert racks_used(world, "big") == {"r2"} and sorted(real_running(world, "big")) == sorted(names)


def test_nodes_without_the_label_are_never_used_for_a_required_gang() -> None:
    world = World(QUEUES)
    play_shim(world)
    racks(world, r1=(1, 4))
    world.node("loose", cpu=64)
    names = gang(world, "job", 3, 2)  # 6 cores: the unlabelled node has room, no rack has
    world.schedule()
    assert placeholders(world) == {} and real_running(world, "job") == []
    assert world.node_doc("loose")["allocations"] == []
    assert "no rack (label topology.example.com/rack) could ever hold" in (world.reason(names[0]) or "")


def test_a_gang_whose_label_no_node_has_waits_saying_so() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=8)
    gang(world, "job", 2, 1, topology=GangTopology("cloud.provider.com/topology-block"))
    world.schedule()
    doc = world.sched.application_document("job")
    assert doc is not None
    reasons = {r["pendingReason"] for r in doc["requests"] if r.get("placeholder")}
    assert reasons == {"no node has the label cloud.provider.com/topology-block the gang's required topology names"}


def test_room_split_across_small_nodes_is_said_as_such() -> None:
    world = World(QUEUES)
    racks(world, r1=(4, 4))
    for i in range(4):
        world.foreign(f"busy-{i}", f"r1-{i}", cpu=1)  # 12 cores free, but no node holds a member of 4
    gang(world, "job", 3, 4)
    world.schedule()
    doc = world.sched.application_document("job")
    assert doc is not None
    reasons = {r["pendingReason"] for r in doc["requests"] if r.get("placeholder")}
    assert reasons == {
        f"no rack (label {RACK}) can hold the gang's 3 x 4 cores: at most 0 of its 3 members fit in rack r1,"
        " whose free room is split across nodes"
    }


def test_task_groups_of_different_sizes_are_packed_into_one_rack_together() -> None:
    world = World(QUEUES)
    play_shim(world)
    racks(world, r1=(2, 8), r2=(1, 12))
    world.foreign("busy", "r2-0", cpu=2)  # binpacking alone would start on r2-0, which has 10 free
    groups = (TaskGroup("driver", 1, res(8, "1Gi", 1)), TaskGroup("w", 4, res(2, "1Gi", 1)))
    # 16 cores: r1's two nodes hold the driver on one and the workers on the other; r2 cannot.
    gang(world, "job", 1, 8, groups=groups, pods=1)
    world.schedule()
    assert racks_used(world, "job") == {"r1"}
    assert len(placeholders(world)) == 4  # the driver replaced its own; the workers' wait for their pods


def test_the_rack_is_fixed_once_the_first_placeholder_lands() -> None:
    world = World(QUEUES)
    play_shim(world)
    racks(world, r1=(1, 4), r2=(1, 16))
    world.foreign("busy", "r2-0", cpu=12)  # binpacking prefers r2-0 (75% used) to the empty r1-0
    # Both racks hold 2 x 1 core with room for 4: r1 by name. The pods ask 2 cores, more than
    # their placeholders: each releases its placeholder and is placed normally, in r1 still.
    names = gang(world, "job", 2, 1, pod_cpu=2)
    world.schedule()
    world.schedule()
    assert sorted(real_running(world, "job")) == sorted(names)
    assert {world.node_of(name) for name in names} == {"r1-0"}
    assert world.out.reasons("PlaceholderTooSmall")
    # A pod the job adds later lands there too, and waits when the rack is full.
    world.pod("job-late", app="job", queue="root.a", cpu=1)
    world.schedule()
    assert world.node_of("job-late") is None
    assert "outside the gang's rack r1 (label topology.example.com/rack)" in (world.reason("job-late") or "")


def test_recovered_placeholders_fix_the_rack_after_a_restart() -> None:
    world = World(QUEUES)
    play_shim(world)
    racks(world, r1=(1, 4), r2=(1, 8))
    world.foreign("busy", "r1-0", cpu=1)  # r1 is the tighter rack, and binpacking alone would choose r1-0
    spec = GangSpec((TaskGroup("w", 3, res(1, "1Gi", 1)),), topology=REQUIRED)
    _recover_placeholder(world, "job", spec, "r2-0")  # a previous Herder chose r2
    names = gang(world, "job", 3, 1)
    world.schedule()
    assert sorted(real_running(world, "job")) == sorted(names)
    assert {world.node_of(name) for name in names} == {"r2-0"}


def test_a_preferred_gang_takes_one_rack_when_one_holds_it_else_the_fewest() -> None:
    world = World(QUEUES)
    play_shim(world)
    racks(world, r1=(2, 8), r2=(2, 8), r3=(1, 8))
    gang(world, "one", 3, 4, PREFERRED)  # 12 cores: r3 is too small, r1 the tighter of r1, r2
    world.schedule()
    assert racks_used(world, "one") == {"r1"}
    # 28 cores left: r1 4, r2 16, r3 8. A gang of 6 x 4 cores fits no rack: r2 (4 members),
    # then the tightest that holds the other 2, r3.
    gang(world, "two", 6, 4, PREFERRED)
    world.schedule()
    assert racks_used(world, "two") == {"r2", "r3"} and len(real_running(world, "two")) == 6


def test_a_preferred_gang_no_rack_set_can_hold_goes_anywhere() -> None:
    world = World(QUEUES)
    play_shim(world)
    racks(world, r1=(1, 4))
    world.node("loose", cpu=8)
    names = gang(world, "job", 3, 4, PREFERRED)
    world.schedule()
    assert sorted(real_running(world, "job")) == sorted(names)
    assert {world.node_of(name) for name in names} == {"r1-0", "loose"}


def test_a_hard_gang_whose_rack_cannot_be_completed_fails_at_its_timeout() -> None:
    world = World(QUEUES)
    play_shim(world)
    racks(world, r1=(1, 2), r2=(1, 8))
    spec = GangSpec((TaskGroup("w", 3, res(1, "1Gi", 1)),), timeout=30, style=HARD, topology=REQUIRED)
    _recover_placeholder(world, "job", spec, "r1-0")  # its rack is r1, which has room for one more
    names = gang(world, "job", 3, 1, timeout=30, style=HARD)
    world.schedule()
    assert racks_used(world, "job") == {"r1"} and len(placeholders(world)) == 2  # never r2's free 8
    world.schedule(advance=31)
    assert world.app_state("job") == "Failed" and placeholders(world) == {}
    assert all("ResourceReservationTimeout" in (world.reason(name) or "") for name in names)


def test_a_soft_gang_past_its_timeout_places_its_pods_in_its_rack_only() -> None:
    world = World(QUEUES)
    play_shim(world)
    racks(world, r1=(1, 2), r2=(1, 8))
    spec = GangSpec((TaskGroup("w", 3, res(1, "1Gi", 1)),), timeout=30, topology=REQUIRED)
    _recover_placeholder(world, "job", spec, "r1-0")
    names = gang(world, "job", 3, 1, timeout=30)
    world.schedule()
    world.schedule(advance=31)  # placeholders released, pods scheduled normally: in r1, as room allows
    running = real_running(world, "job")
    assert len(running) == 2 and {world.node_of(name) for name in running} == {"r1-0"}
    waiting = next(name for name in names if name not in running)
    assert "outside the gang's rack r1" in (world.reason(waiting) or "")


def test_a_gang_in_its_rack_preempts_only_there() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.quota("team", max={"cpu": 16})
    racks(world, r1=(1, 5), r2=(1, 5))
    for node in ("r1-0", "r2-0"):
        for i in range(4):
            world.running(f"low-{node}-{i}", node, app=f"low-{node}", queue="root.a", namespace="team")
    spec = GangSpec((TaskGroup("w", 2, res(1, "1Gi", 1)),), topology=REQUIRED)
    _recover_placeholder(world, "job", spec, "r1-0", namespace="team", priority=100)  # r1 is now full
    for i in range(2):
        name = f"job-{i}"
        ask = world.ask(name, app="job", queue="root.a", namespace="team", priority=100)
        world.asks[name] = ask = ask._replace(task_group="w", gang=replace(spec, originator=name) if i == 0 else None)
        world.sched.add_ask(ask)
    world.schedule()
    # The missing placeholder would fit r2-0's free core, but its gang's rack is r1: it preempts there.
    assert world.node_doc("r2-0")["allocations"] and all(
        not a.get("placeholder") for a in world.node_doc("r2-0")["allocations"]
    )
    evicted = world.out.evicted()
    assert evicted and all(key.startswith("low-r1-0") for key in evicted), evicted


def test_a_gang_no_rack_can_hold_preempts_no_pod_of_its_own_quota() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.quota("team", max={"cpu": 16})
    racks(world, r1=(1, 4), r2=(1, 4))
    for node in ("r1-0", "r2-0"):
        for i in range(4):
            world.running(f"low-{node}-{i}", node, app=f"low-{node}", queue="root.a", namespace="team")
    spec = GangSpec((TaskGroup("w", 2, res(1, "1Gi", 1)),), topology=REQUIRED)
    for i in range(2):
        name = f"job-{i}"
        ask = world.ask(name, app="job", queue="root.a", namespace="team", priority=100)
        world.sched.add_ask(ask._replace(task_group="w", gang=replace(spec, originator=name) if i == 0 else None))
    world.schedule()
    # In-quota preemption evicts for one pod at a time, which cannot promise a whole rack: nothing
    # is evicted, the gang says why it waits.
    assert world.out.evicted() == []
    assert "no rack (label topology.example.com/rack) can hold" in (world.reason("job-0") or "")


TWO_QUEUES = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
          - name: b
"""


def test_a_gangs_placeholders_go_one_after_the_other_so_others_cannot_take_its_rack() -> None:
    world = World(TWO_QUEUES)
    play_shim(world)
    racks(world, r1=(2, 4), r2=(2, 4))
    # Queue b's pods wait beside the gang; the queues take turns, and binpacking would put each
    # of b's pods on the rack the gang started to fill.
    for i in range(8):
        world.pod(f"b-{i}", app="b", queue="root.b", cpu=1)
    names = gang(world, "job", 8, 1)  # exactly one rack: r1 (by name)
    world.schedule()
    assert sorted(real_running(world, "job")) == sorted(names) and racks_used(world, "job") == {"r1"}
    assert {world.node_of(f"b-{i}") for i in range(8)} <= {"r2-0", "r2-1"}
