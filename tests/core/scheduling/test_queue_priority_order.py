"""With queue priorities, a parent keeps its children in order across decisions (highest
priority first, then fairly), repairing the children a placement, a parked or held ask moved.
Whatever happens, the kept order must be the full sort of the pending children
(`policies.order_queues` by priority at the change counter) at every decision, and every cycle must place
the same pods, in the same order, on the same nodes as sorting at every decision did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import cycle
from core.objects.ask import Allocation
from core.objects.queue import Queue
from core.objects.queue_priority import children_by_priority
from core.policies import order_queues
from core.state import CoreState
from tests.core.scheduling.plan_steps import Cycles, Step, play
from tests.core.scheduling.test_gangs import gang_pods, spec
from tests.core.scheduling.world import World

LEAVES = ["root.p0.a", "root.p0.b", "root.p1.c", "root.p1.d", "root.p1.e", "root.f"]


def _config(offsets: list[int], fence: bool, p0_fair: bool = False) -> str:
    """p0_fair: p0 orders its own children fairly (`application.sort.priority: disabled`)."""
    a, b, c, d, e, f, p0, p1 = offsets
    fenced = ", priority.policy: fence" if fence else ""
    fair = ", application.sort.priority: disabled" if p0_fair else ""
    return f"""
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        properties: {{preemption.delay: 1h}}
        queues:
          - name: p0
            properties: {{priority.offset: "{p0}"{fair}}}
            queues:
              - {{name: a, properties: {{priority.offset: "{a}"}}}}
              - {{name: b, properties: {{priority.offset: "{b}"}}, resources: {{max: {{vcore: 3000}}}}}}
          - name: p1
            properties: {{priority.offset: "{p1}"{fenced}}}
            queues:
              - {{name: c, properties: {{priority.offset: "{c}"}}}}
              - {{name: d, properties: {{priority.offset: "{d}"}}}}
              - {{name: e, properties: {{priority.offset: "{e}"}}}}
          - {{name: f, properties: {{priority.offset: "{f}"}}}}
"""


# a pod: its leaf, its application there, its priority, its cores (some fit nowhere and park)
pods = st.tuples(
    st.just("pod"), st.integers(0, len(LEAVES) - 1), st.integers(0, 2), st.integers(-3, 3), st.integers(1, 5)
)
steps = st.lists(
    st.one_of(
        pods,
        pods,
        pods,  # several pods a cycle, so one cycle both parks and places
        # a gang of one task group: its leaf, its pods, its priority, their cores
        st.tuples(
            st.just("gang"), st.integers(0, len(LEAVES) - 1), st.integers(1, 3), st.integers(-3, 3), st.integers(1, 2)
        ),
        st.tuples(st.just("schedule"), st.just(0), st.just(0), st.just(0), st.just(0)),
        st.tuples(st.just("finish"), st.integers(0, 50), st.just(0), st.just(0), st.just(0)),
        st.tuples(st.just("node"), st.just(0), st.just(0), st.just(0), st.integers(1, 6)),
    ),
    max_size=50,
)


def _full_sort_walk(state: CoreState, queue: Queue, now: float) -> Allocation | None:
    """The walk as it was: every pending child ranked and sorted again at every decision."""
    if queue.is_leaf:
        return cycle._walk_leaf(state, queue, now)
    cluster = state.partition.cluster_capacity
    if state.partition.queue_priorities and queue.app_sort_priority:
        children = order_queues([c for c in queue.children.values() if c.pending], cluster, True, state.version)
    else:
        children = list(queue.ordered_children(cluster))
    for child in children:
        if child.pending:
            allocation = _full_sort_walk(state, child, now)
            if allocation is not None:
                return allocation
    return None


_kept_walk = cycle._walk


def _checked_walk(state: CoreState, queue: Queue, now: float) -> Allocation | None:
    """The walk as it is, after checking at each parent that the kept order is the full sort."""
    if not queue.is_leaf and state.partition.queue_priorities and queue.app_sort_priority:
        cluster, version = state.partition.cluster_capacity, state.version
        kept = list(children_by_priority(queue, cluster, version))
        full = order_queues([c for c in queue.children.values() if c.pending], cluster, True, version)
        assert [c.path for c in kept] == [c.path for c in full]
    return _kept_walk(state, queue, now)


@contextmanager
def _walking(walk: Callable[[CoreState, Queue, float], Allocation | None]) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cycle, "_walk", walk)
        yield


def _run(config: str, plan: list[Step]) -> Cycles:
    """Every cycle's bindings, in the order they were made."""
    world = World(config)
    world.node("n0", cpu=4)

    def arrive(index: int, step: Step) -> bool:
        kind, first, second, priority, size = step
        if kind == "pod":
            leaf = LEAVES[first]
            world.pod(f"p{index}", queue=leaf, app=f"{leaf}-{second}", priority=priority, cpu=size, created=index)
        elif kind == "gang":
            definition = spec(("workers", second, size))
            gang_pods(
                world,
                f"gang-{index}",
                definition,
                {"workers": second},
                cpu=size,
                queue=LEAVES[first],
                priority=priority,
                created=index,
            )
        else:
            return False
        return True

    return play(world, plan, arrive)


@settings(max_examples=1000, deadline=None)
@given(steps, st.lists(st.integers(-3, 3), min_size=8, max_size=8), st.booleans(), st.booleans())
def test_kept_priority_order_places_what_sorting_at_every_decision_places(
    plan: list[tuple[str, int, int, int, int]], offsets: list[int], fence: bool, p0_fair: bool
) -> None:
    config = _config(offsets, fence, p0_fair)
    with _walking(_checked_walk):
        kept = _run(config, plan)
    with _walking(_full_sort_walk):
        sorted_each_time = _run(config, plan)
    assert kept == sorted_each_time


NO_OFFSETS = _config([0] * 8, fence=False)


def _between_two_decisions(world: World, after: str, change: Callable[[], object]) -> None:
    """Make `change` once `after` is bound, before the cycle's next decision: pods come and go
    while a cycle runs (the shim's watch does not wait for it)."""
    bind = world.out.bind

    def bind_then_change(allocation: Allocation) -> None:
        bind(allocation)
        if allocation.key == after:
            change()

    world.out.bind = bind_then_change  # type: ignore[method-assign]


def test_an_ask_parked_without_a_placement_lowers_its_queues_rank_within_the_cycle() -> None:
    """b's only pod (priority 5) does not fit and parks, so b and its parent p0 rank as if
    nothing in b were pending (0): after a's first pod, c (3) goes before a's second, as a full
    sort at every decision has it (a kept order that missed the park would still rank p0 at 5)."""
    world = World(NO_OFFSETS)
    world.node("n0", cpu=2)
    world.pod("big", queue="root.p0.b", app="b-1", priority=5, cpu=3, created=0)
    world.pod("a1", queue="root.p0.a", app="a-1", priority=0, cpu=1, created=1)
    world.pod("a2", queue="root.p0.a", app="a-1", priority=0, cpu=1, created=2)
    world.pod("c", queue="root.p1.c", app="c-1", priority=3, cpu=1, created=3)
    assert list(world.schedule()) == ["a1", "c"]


def test_a_pod_arriving_between_two_decisions_ranks_its_queue_at_the_next() -> None:
    """a's new pod of priority 5 puts p0 ahead of p1 (1) at the very next decision, not at the
    next cycle."""
    world = World(NO_OFFSETS)
    world.node("n0", cpu=3)
    world.pod("c1", queue="root.p1.c", app="c-1", priority=1, cpu=1, created=0)
    world.pod("c2", queue="root.p1.c", app="c-1", priority=1, cpu=1, created=1)
    world.pod("a1", queue="root.p0.a", app="a-1", priority=0, cpu=1, created=2)
    _between_two_decisions(
        world, "c1", lambda: world.pod("urgent", queue="root.p0.a", app="a-2", priority=5, cpu=1, created=3)
    )
    assert list(world.schedule()) == ["c1", "urgent", "c2"]


def test_a_pod_moved_to_another_queue_between_two_decisions_no_longer_ranks_its_old_one() -> None:
    """x (priority 5) keeps p0 just below p1 (6) until p1's first pod is placed; then x moves to
    root.f with priority 0 (its pod changed while it waited), and p1's next pod (3) outranks
    what is left in p0 (0)."""
    world = World(NO_OFFSETS)
    world.node("n0", cpu=3)
    world.pod("c1", queue="root.p1.c", app="c-1", priority=6, cpu=1, created=0)
    world.pod("c2", queue="root.p1.c", app="c-1", priority=3, cpu=1, created=1)
    world.pod("a1", queue="root.p0.a", app="a-1", priority=0, cpu=1, created=2)
    world.pod("x", queue="root.p0.a", app="a-x", priority=5, cpu=1, created=3)
    _between_two_decisions(world, "c1", lambda: world.pod("x", queue="root.f", app="f-x", priority=0, cpu=1, created=3))
    assert list(world.schedule()) == ["c1", "c2", "x"]
