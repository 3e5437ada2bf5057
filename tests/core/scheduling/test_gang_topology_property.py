"""A property over random racks and gangs: a gang with a required topology never has pods in
two racks (nor on a node without the rack label), whatever arrives, finishes, times out, or
joins and leaves the cluster; and it waits for a rack only while no rack has room for it."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.gang.spec import HARD, SOFT, GangSpec, GangTopology, TaskGroup
from tests.core.scheduling.test_gangs import QUEUES
from tests.core.scheduling.world import World, res

RACK = "topology.example.com/rack"
NO_RACK = f"no rack (label {RACK})"

racks = st.lists(st.lists(st.sampled_from([2, 4, 8]), min_size=1, max_size=3), min_size=1, max_size=4)
gangs = st.tuples(
    st.integers(1, 5),  # members
    st.sampled_from([1, 2, 3]),  # cores each
    st.sampled_from([True, False]),  # required, else preferred
    st.sampled_from([SOFT, HARD]),
)
actions = st.lists(
    st.one_of(
        st.tuples(st.just("gang"), gangs),
        st.tuples(st.just("pod"), st.sampled_from([1, 2, 4])),
        st.tuples(st.just("cycle"), st.sampled_from([0, 10, 40])),
        st.tuples(st.just("finish"), st.integers(0, 50)),
        st.tuples(st.just("add"), st.integers(0, 3), st.sampled_from([2, 8])),
        st.tuples(st.just("remove"), st.integers(0, 20)),
    ),
    max_size=20,
)


class Cluster:
    def __init__(self, sizes: list[list[int]]) -> None:
        self.world = World(QUEUES)
        self.world.out.on_evict = lambda allocation, reason: self.world.sched.release_allocation(allocation.key)
        self.rack_of: dict[str, str | None] = {}
        self.required: dict[str, int] = {}  # app -> cores a member
        self.members: dict[str, int] = {}
        self.real: list[str] = []
        self.apps = 0
        self.nodes_made = 0  # names never reused: a node joining is a new node, not a relabelled one
        for rack, nodes in enumerate(sizes):
            for cpu in nodes:
                self.add(rack, cpu)
        self.add(None, 8)  # a node of no rack

    def add(self, rack: int | None, cpu: int) -> None:
        name = f"n{self.nodes_made}"
        self.nodes_made += 1
        labels = {RACK: f"r{rack}"} if rack is not None else {}
        self.rack_of[name] = labels.get(RACK)
        self.world.node(name, cpu=cpu, labels=labels)

    def remove(self, pick: int) -> None:
        names = sorted(self.rack_of)
        name = names[pick % len(names)]
        self.world.sched.remove_node(name)
        del self.rack_of[name]

    def gang(self, members: int, cpu: int, required: bool, style: str) -> None:
        self.apps += 1
        app = f"g{self.apps}"
        spec = GangSpec(
            (TaskGroup("w", members, res(cpu, "1Gi", 1)),),
            timeout=30.0,
            style=style,
            topology=GangTopology(RACK, required),
        )
        if required:
            self.required[app] = cpu
            self.members[app] = members
        for i in range(members):
            name = f"{app}-{i}"
            ask = self.world.ask(name, app=app, queue="root.a", cpu=cpu)
            self.world.sched.add_ask(
                ask._replace(task_group="w", gang=replace(spec, originator=name) if i == 0 else None)
            )
            self.real.append(name)

    def pod(self, cpu: int) -> None:
        self.apps += 1
        name = f"p{self.apps}"
        self.world.pod(name, app=name, queue="root.a", cpu=cpu)
        self.real.append(name)

    def finish(self, pick: int) -> None:
        running = [k for k in self.real if self.world.sched.allocation(k) is not None]
        if running:
            self.world.finish(running[pick % len(running)])

    def check(self) -> None:
        free: dict[str, int] = {}
        for node in self.world.sched.nodes_document():
            free[node["nodeID"]] = node["available"].get("vcore", 0)
        for app, cpu in self.required.items():
            doc = self.world.sched.application_document(app)
            if doc is None:
                continue
            where = {self.rack_of.get(a["nodeId"], "gone") for a in doc["allocations"]}
            assert None not in where, f"{app} has a pod on a node without the rack label"
            assert len(where) <= 1, f"{app} spans racks {where}"
            waiting = [r for r in doc["requests"] if r.get("placeholder") and NO_RACK in (r["pendingReason"] or "")]
            if waiting and not doc["allocations"]:
                holds: dict[str, int] = {}
                for node, rack in self.rack_of.items():
                    if rack is not None:
                        holds[rack] = holds.get(rack, 0) + free.get(node, 0) // (cpu * 1000)
                assert all(count < self.members[app] for count in holds.values()), (app, holds)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(racks, actions)
def test_a_required_gang_never_spans_two_racks(sizes: list[list[int]], steps: list[tuple]) -> None:
    cluster = Cluster(sizes)
    world = cluster.world
    for step in steps:
        kind = step[0]
        if kind == "gang":
            cluster.gang(*step[1])
        elif kind == "pod":
            cluster.pod(step[1])
        elif kind == "cycle":
            world.schedule(advance=step[1])
        elif kind == "finish":
            cluster.finish(step[1])
        elif kind == "add":
            cluster.add(step[1], step[2])
        elif cluster.rack_of:
            cluster.remove(step[1])
        world.schedule()
        cluster.check()
