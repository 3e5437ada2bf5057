"""A property over random gangs and plain pods: while a gang waits on its placeholders, none
of its real pods runs; and once every pod is gone, every tracker is back to zero."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from core.gang.spec import HARD, SOFT, GangSpec, TaskGroup
from tests.core.scheduling.test_gangs import QUEUES
from tests.core.scheduling.world import World, res

gangs = st.tuples(
    st.lists(st.tuples(st.integers(1, 3), st.sampled_from([0.5, 1, 2])), min_size=1, max_size=2),
    st.integers(-1, 1),  # real pods per group: minMember plus this
    st.sampled_from([SOFT, HARD]),
    st.sampled_from(["root.a", "root.small"]),
)
actions = st.lists(
    st.one_of(
        st.tuples(st.just("gang"), gangs),
        st.tuples(st.just("pod"), st.sampled_from([0.5, 1, 3]), st.sampled_from(["root.a", "root.small"])),
        st.tuples(st.just("cycle"), st.sampled_from([0, 10, 40])),
        st.tuples(st.just("finish"), st.integers(0, 50)),
        st.tuples(st.just("node"), st.sampled_from([2, 4])),
    ),
    max_size=25,
)


class Cluster:
    def __init__(self) -> None:
        self.world = World(QUEUES)
        self.world.out.on_evict = lambda allocation, reason: self.world.sched.release_allocation(allocation.key)
        self.nodes = 0
        self.apps = 0
        self.real: list[str] = []

    def node(self, cpu: int) -> None:
        self.world.node(f"n{self.nodes}", cpu=cpu)
        self.nodes += 1

    def gang(self, groups: list[tuple[int, float]], extra: int, style: str, queue: str) -> None:
        self.apps += 1
        app = f"g{self.apps}"
        spec = GangSpec(
            tuple(TaskGroup(f"t{i}", count, res(cpu, "1Gi", 1)) for i, (count, cpu) in enumerate(groups)),
            timeout=30.0,
            style=style,
        )
        first = True
        for i, (count, cpu) in enumerate(groups):
            for j in range(max(count + extra, 1)):
                name = f"{app}-t{i}-{j}"
                ask = self.world.ask(name, app=app, queue=queue, cpu=cpu)
                ask = ask._replace(task_group=f"t{i}", gang=replace(spec, originator=name) if first else None)
                first = False
                self.world.sched.add_ask(ask)
                self.real.append(name)

    def pod(self, cpu: float, queue: str) -> None:
        self.apps += 1
        name = f"p{self.apps}"
        self.world.pod(name, app=name, queue=queue, cpu=cpu)
        self.real.append(name)

    def finish(self, pick: int) -> None:
        running = [k for k in self.real if self.world.sched.allocation(k) is not None]
        if running:
            self.world.finish(running[pick % len(running)])

    def check_gangs_hold_their_pods(self) -> None:
        for doc in self.world.sched.applications_document():
            if doc.get("gangPhase") != "Reserving":
                continue
            real = [a for a in doc["allocations"] if not a.get("placeholder")]
            assert real == [], f"{doc['applicationID']} runs {len(real)} real pods while it reserves"


@settings(max_examples=60, deadline=None)
@given(actions)
def test_gangs_never_run_partly_while_reserving_and_trackers_return_to_zero(steps: list[tuple]) -> None:
    cluster = Cluster()
    cluster.node(4)
    world = cluster.world
    for step in steps:
        kind = step[0]
        if kind == "gang":
            cluster.gang(*step[1])
        elif kind == "pod":
            cluster.pod(step[1], step[2])
        elif kind == "cycle":
            world.schedule(advance=step[1])
        elif kind == "finish":
            cluster.finish(step[1])
        else:
            cluster.node(step[1])
        cluster.check_gangs_hold_their_pods()
    # Everything ends: running pods finish, pending ones are deleted.
    for _ in range(6):
        world.schedule(advance=40)
        cluster.check_gangs_hold_their_pods()
        for key in cluster.real:
            world.sched.release_allocation(key)
    for key in cluster.real:
        world.sched.remove_ask(key)
    world.schedule(advance=40)
    snapshot = world.usage_snapshot()
    assert all(allocated == {} and running == 0 for allocated, running in snapshot["queues"].values())
    assert all(allocated == {} for allocated, _ in snapshot["nodes"].values())
    assert world.user_usage("alice") == {}
    assert all(node["allocations"] == [] for node in world.sched.nodes_document())
    assert all(doc["requests"] == [] for doc in world.sched.applications_document())
