"""A property over random clusters, gangs and arrivals, with nodes that come, go and change:

- a reserved node never receives another application's pod, except one that fits beside the
  reserved pods (the room kept for them is still free after it), a backfill that ends before
  they can start, a pod of a strictly higher priority than theirs, or a gang's pod taking the
  room its own placeholder held there;
- no reservation outlives its pod, and no node is reserved by two applications at once;
- no two pods wait on each other forever: once arrivals stop and running pods end, every
  pending pod runs (given a node that can hold it).

Pods with `activeDeadlineSeconds` end at their deadline, as the kubelet ends them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.config.settings import Settings
from core.gang.spec import SOFT, GangSpec, TaskGroup
from core.objects.ask import Allocation
from core.objects.node_info import NodeInfo
from tests.core.scheduling.world import World, queues_config, res

QUEUES = queues_config("- name: a\n- name: b\n")
LEAVES = ("root.a", "root.b")

pods = st.tuples(
    st.just("pod"),
    st.sampled_from([1, 2, 4]),  # cores
    st.sampled_from(LEAVES),
    st.sampled_from([None, 5, 20, 60]),  # activeDeadlineSeconds
    st.sampled_from([0, 0, 10]),  # priority
)
gangs = st.tuples(st.just("gang"), st.integers(1, 3), st.sampled_from([1, 2, 4]), st.sampled_from(LEAVES))
changes = st.tuples(
    st.just("node"), st.sampled_from(["add", "remove", "cordon", "uncordon", "relabel"]), st.integers(0, 4)
)
steps = st.lists(
    st.one_of(
        pods,
        pods,
        gangs,
        changes,
        st.tuples(st.just("wait"), st.sampled_from([0, 1, 2, 3, 10])),
        st.tuples(st.just("finish"), st.integers(0, 99)),
        st.tuples(st.just("delete"), st.integers(0, 99)),
    ),
    min_size=5,
    max_size=30,
)


class Cluster:
    def __init__(self, nodes: list[int], delay: float, fill: list[float | None]) -> None:
        self.world = World(QUEUES, settings=Settings(reservation_delay=delay))
        self.world.out.on_bind = self.check_bind
        self.world.out.on_evict = lambda allocation, _: self.world.sched.release_allocation(allocation.key)
        self.sizes: dict[str, int] = {}
        self.real: list[str] = []
        self.count = 0
        self.starts: dict[str, float | None] = {}  # each reserved node's start, before the next bind
        for cpu in nodes:
            self.add_node(cpu)
        for i in range(sum(nodes)):  # every node full of 1-core pods, some with a deadline
            self.pod(1, LEAVES[i % 2], fill[i % len(fill)], 0)
        self.world.schedule()

    # -- the cluster's side --------------------------------------------------------------
    def add_node(self, cpu: int, labels: dict[str, str] | None = None, schedulable: bool = True) -> None:
        name = f"n{len(self.sizes)}"
        self.sizes[name] = cpu
        self.world.sched.update_node(NodeInfo(name, res(cpu, "64Gi", 110), labels or {}, schedulable=schedulable))

    def change_node(self, kind: str, pick: int) -> None:
        live = sorted(n["nodeID"] for n in self.world.sched.nodes_document())
        if kind == "add" or not live:
            self.add_node(4)
            return
        name = live[pick % len(live)]
        capacity = res(self.sizes[name], "64Gi", 110)
        if kind == "remove":
            self.world.sched.remove_node(name)
        elif kind in ("cordon", "uncordon"):
            self.world.sched.update_node(NodeInfo(name, capacity, {}, schedulable=kind == "uncordon"))
        else:
            self.world.sched.update_node(NodeInfo(name, capacity, {"pool": f"p{pick}"}))

    def pod(self, cpu: int, queue: str, deadline: float | None, priority: int) -> None:
        self.count += 1
        name = f"p{self.count}"
        ask = self.world.ask(name, app=name, queue=queue, cpu=cpu, priority=priority)
        self.world.asks[name] = ask._replace(active_deadline=deadline)
        self.world.sched.add_ask(self.world.asks[name])
        self.real.append(name)

    def gang(self, members: int, cpu: int, queue: str) -> None:
        self.count += 1
        app = f"g{self.count}"
        spec = GangSpec((TaskGroup("w", members, res(cpu, "1Gi", 1)),), timeout=60.0, style=SOFT)
        for j in range(members):
            name = f"{app}-{j}"
            ask = self.world.ask(name, app=app, queue=queue, cpu=cpu)
            ask = ask._replace(task_group="w", gang=replace(spec, originator=name) if j == 0 else None)
            self.world.asks[name] = ask
            self.world.sched.add_ask(ask)
            self.real.append(name)

    def finish(self, pick: int) -> None:
        running = [k for k in self.real if self.world.sched.allocation(k) is not None]
        if running:
            self.world.finish(running[pick % len(running)])

    def delete(self, pick: int) -> None:
        """A pending pod is deleted: a reservation it had must go with it, at once."""
        waiting = self.pending()
        if waiting:
            self.world.sched.remove_ask(waiting[pick % len(waiting)])
            self.check_state()

    def wait(self, seconds: float) -> None:
        """Time passes: the kubelet ends pods at their deadline, then the scheduler runs."""
        self.world.now += seconds
        for key in list(self.real):
            allocation = self.world.sched.allocation(key)
            deadline = allocation.active_deadline if allocation is not None else None
            if (
                allocation is not None
                and deadline is not None
                and allocation.allocation_time + deadline <= self.world.now
            ):
                self.world.finish(key)
        self.read_starts()
        self.world.schedule()
        self.check_state()

    def read_starts(self) -> None:
        """Each reserved node's earliest start for its pods (seconds from now; None: not promised)."""
        self.starts = {r["nodeID"]: r["freesInSeconds"] for r in self.world.sched.reservations_document()}

    # -- what must hold --------------------------------------------------------------------
    def check_bind(self, allocation: Allocation) -> None:
        sched = self.world.sched
        node = next((n for n in sched.nodes_document() if n["nodeID"] == allocation.node_id), None)
        if node is None or not allocation.ask or allocation.replaces:
            return  # a gang's pod takes the room its placeholder held
        others = [r for r in sched.reservations_document() if r["nodeID"] == allocation.node_id]
        others = [r for r in others if r["applicationID"] != allocation.application_id]
        if not others:
            return
        kept: dict[str, int] = {}
        for reservation in others:
            for key, amount in reservation["resource"].items():
                kept[key] = kept.get(key, 0) + amount
        beside = all(node["available"].get(key, 0) >= amount for key, amount in kept.items())
        deadline = allocation.ask.active_deadline
        start = self.starts.get(allocation.node_id)  # as it was before this pod came
        backfill = deadline is not None and start is not None and deadline <= start
        passes = allocation.ask.priority > max(r["priority"] for r in others)
        assert beside or backfill or passes, (allocation.key, node["nodeID"], others, start)
        self.read_starts()

    def check_state(self) -> None:
        sched = self.world.sched
        pending = {r["allocationKey"] for app in sched.applications_document() for r in app["requests"]}
        reservations = sched.reservations_document()
        assert {r["allocationKey"] for r in reservations} <= pending, "a reservation outlived its pod"
        for node in sched.nodes_document():
            owners = {r.split("|")[0] for r in node["reservations"]}
            assert len(owners) <= 1, (node["nodeID"], owners)

    def drain(self) -> None:
        """Arrivals stop and a node that holds any pod joins: every pending pod must run."""
        self.add_node(8)
        for _ in range(40):
            for key in list(self.real):
                if self.world.sched.allocation(key) is not None:
                    self.world.finish(key)
            self.wait(30)
            if not self.pending():
                return
        assert not self.pending(), f"pods wait forever: {self.pending()}"

    def pending(self) -> list[str]:
        return sorted(r["allocationKey"] for app in self.world.sched.applications_document() for r in app["requests"])


# A backfill whose deadline ends after the reserved pod's start must not run there.
LATE_BACKFILL = [("pod", 4, "root.a", None, 0), ("wait", 1), ("finish", 0), ("pod", 1, "root.b", 20, 0), ("wait", 0)]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(nodes=[4], delay=0.0, fill=[10], actions=LATE_BACKFILL)
@given(
    nodes=st.lists(st.sampled_from([2, 4, 8]), min_size=1, max_size=4),
    delay=st.sampled_from([0.0, 1.0, 2.0]),
    fill=st.lists(st.sampled_from([None, 10, 30, 100]), min_size=1, max_size=4),
    actions=steps,
)
def test_reserved_nodes_serve_their_pods_and_nobody_waits_forever(
    nodes: list[int], delay: float, fill: list[float | None], actions: list[tuple[Any, ...]]
) -> None:
    cluster = Cluster(nodes, delay, fill)
    for action in actions:
        kind = action[0]
        if kind == "pod":
            cluster.pod(*action[1:])
        elif kind == "gang":
            cluster.gang(*action[1:])
        elif kind == "node":
            cluster.change_node(*action[1:])
        elif kind == "finish":
            cluster.finish(action[1])
        elif kind == "delete":
            cluster.delete(action[1])
        cluster.wait(action[1] if kind == "wait" else 0)
    cluster.drain()
