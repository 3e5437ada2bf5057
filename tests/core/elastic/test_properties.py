"""Elastic quota invariants under random worlds, through the Scheduler on a virtual clock.

Random quota trees (first-level parents with leaves, first-level leaves), pods of random size,
priority and preemptible flag arriving and finishing, nodes joining and leaving, time passing. After
every step (inputs, a scheduling cycle, a recycler tick whose evictions the "shim" confirms at once,
another cycle):
- siblings' runtimes never sum above their parent's pool (the root's: the cluster);
- every quota asking at least its (scaled) min gets at least that min;
- the recycler evicts only from quotas that stayed above their runtime for the whole delay, and
  such a quota is back within its runtime once those evictions are confirmed (or keeps only
  non-preemptible pods, which no one may evict);
- no quota is above its runtime except while its delay runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.config.settings import Settings
from core.elastic.manager import QuotaStatus
from tests.core.scheduling.world import World

DELAY = 30.0
CPU = "vcore"


@dataclass
class Model:
    world: World
    leaves: list[str]
    children: dict[str, list[str]]  # parent ("root" for the first level) -> quotas
    pods: dict[str, str] = field(default_factory=dict)  # live pod -> its quota
    over_since: dict[str, float] = field(default_factory=dict)  # the recycler's timer, mirrored
    nodes: list[str] = field(default_factory=list)
    serial: int = 0


@st.composite
def quota_trees(draw: st.DrawFn) -> list[tuple[str, str, bool, int, int]]:
    """(name, parent, is_parent, min cores, max cores), children's mins within their parent's min."""
    quotas: list[tuple[str, str, bool, int, int]] = []
    parents = draw(st.integers(0, 2))
    for p in range(parents):
        kids = [draw(st.integers(0, 4)) for _ in range(draw(st.integers(1, 3)))]
        p_min = max(sum(kids), draw(st.integers(0, 8)))
        quotas.append((f"org{p}", "", True, p_min, draw(st.integers(max(p_min, 1), 24))))
        for k, k_min in enumerate(kids):
            quotas.append((f"org{p}-team{k}", f"org{p}", False, k_min, draw(st.integers(max(k_min, 1), 24))))
    for q in range(draw(st.integers(1 if parents else 2, 3))):
        q_min = draw(st.integers(0, 6))
        quotas.append((f"solo{q}", "", False, q_min, draw(st.integers(max(q_min, 1), 24))))
    return quotas


STEPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("pod"),
            st.integers(0, 20),  # leaf
            st.integers(1, 3),  # cores
            st.integers(0, 3),  # priority
            st.booleans() | st.just(True),  # preemptible (mostly)
            st.integers(1, 6),  # how many
        ),
        st.tuples(st.just("finish"), st.integers(0, 100)),
        st.tuples(st.just("wait"), st.just(DELAY)),
        st.tuples(st.just("add-node"), st.integers(2, 8)),
        st.tuples(st.just("remove-node"), st.integers(0, 10)),
        st.tuples(st.just("wait"), st.sampled_from([1.0, 10.0, DELAY])),
    ),
    min_size=10,
    max_size=40,
)


def build(tree: list[tuple[str, str, bool, int, int]], node_cores: list[int]) -> Model:
    world = World(settings=Settings(recycle_delay=DELAY))
    children: dict[str, list[str]] = {}
    for name, parent, is_parent, low, high in tree:
        world.quota(name, parent=parent, is_parent=is_parent, min={"cpu": low}, max={"cpu": high})
        children.setdefault(parent or "root", []).append(name)
    model = Model(world, [t[0] for t in tree if not t[2]], children)
    for cores in node_cores:
        add_node(model, cores)
    return model


def add_node(model: Model, cores: int) -> None:
    name = f"n{model.serial}"
    model.serial += 1
    model.world.node(name, cpu=cores, memory="1Ti")
    model.nodes.append(name)


def apply(model: Model, step: tuple[Any, ...]) -> None:
    world = model.world
    kind = step[0]
    if kind == "pod":
        _, leaf, cores, priority, preemptible, count = step
        quota = model.leaves[int(leaf) % len(model.leaves)]
        for _ in range(int(count)):
            key = f"pod{model.serial}"
            model.serial += 1
            world.pod(key, namespace=quota, cpu=cores, memory="1Mi", priority=priority, preemptible=preemptible)
            model.pods[key] = quota
    elif kind == "finish" and model.pods:
        key = sorted(model.pods)[int(step[1]) % len(model.pods)]
        if world.sched.allocation(key) is not None:
            world.sched.release_allocation(key)
        else:
            world.sched.remove_ask(key)
    elif kind == "add-node":
        add_node(model, int(step[1]))
    elif kind == "remove-node" and len(model.nodes) > 1:
        world.sched.remove_node(model.nodes.pop(int(step[1]) % len(model.nodes)))
    elif kind == "wait":
        world.now += float(step[1])
    for key in [k for k in model.pods if world.sched.quota_of(k) is None]:
        del model.pods[key]  # finished, or gone with its node


def confirm_evictions(model: Model, seen: int) -> list[str]:
    """Release every pod the core asked to evict since `seen` (the shim confirming at once)."""
    world = model.world
    asked = [allocation.key for allocation, _ in world.out.evictions[seen:]]
    for key in asked:
        world.sched.release_allocation(key)
    return asked


def cycle(model: Model) -> None:
    """A scheduling cycle; preempted pods are confirmed gone and the room taken in another cycle."""
    for _ in range(5):
        seen = len(model.world.out.evictions)
        model.world.schedule()
        if not confirm_evictions(model, seen):
            return


def is_over(status: QuotaStatus) -> bool:
    return status.used.get_value(CPU) > status.runtime.get_value(CPU)


def only_non_preemptible_left(model: Model, quota: str) -> bool:
    world = model.world
    running = [k for k, q in model.pods.items() if q == quota and world.sched.allocation(k) is not None]
    return all(not world.asks[k].preemptible for k in running)


def check_shares(model: Model) -> None:
    status = model.world.sched.quota_status()
    cluster = sum(model.world.node_doc(n)["capacity"].get(CPU, 0) for n in model.nodes)
    for parent, kids in model.children.items():
        pool = cluster if parent == "root" else status[parent].runtime.get_value(CPU)
        runtimes = {k: status[k].runtime.get_value(CPU) for k in kids}
        assert sum(runtimes.values()) <= pool, f"children of {parent} get {runtimes} of {pool}"
        mins = {k: status[k].min.get_value(CPU) for k in kids}
        total = sum(mins.values())
        for kid in kids:
            floor = pool * mins[kid] // total if total > pool else mins[kid]
            asked = min(status[kid].request.get_value(CPU), status[kid].max.get_value(CPU))
            if asked >= floor:
                assert runtimes[kid] >= floor, f"{kid} asks {asked} but gets {runtimes[kid]} < its min {floor}"


def step_and_check(model: Model, step: tuple[Any, ...]) -> None:
    world = model.world
    apply(model, step)
    cycle(model)
    check_shares(model)
    # The recycler's tick: mirror its timer, then every eviction must come from a quota whose
    # delay has run out, and those quotas are back within runtime once the evictions are confirmed.
    status = world.sched.quota_status()
    due = set()
    for leaf in model.leaves:
        if is_over(status[leaf]):
            since = model.over_since.setdefault(leaf, world.now)
            if world.now - since >= DELAY:
                due.add(leaf)
        else:
            model.over_since.pop(leaf, None)
    seen = len(world.out.evictions)
    world.sched.recycle()
    for allocation, reason in world.out.evictions[seen:]:
        assert model.pods[allocation.key] in due, f"{allocation.key} evicted early: {reason}"
    confirm_evictions(model, seen)
    for key in [k for k in model.pods if world.sched.quota_of(k) is None]:
        del model.pods[key]
    cycle(model)
    check_shares(model)
    status = world.sched.quota_status()
    for leaf in due:
        assert not is_over(status[leaf]) or only_non_preemptible_left(model, leaf), (
            f"{leaf} still above its runtime after the recycler: {status[leaf]}"
        )


@settings(max_examples=120, deadline=None)
@given(quota_trees(), st.lists(st.integers(4, 16), min_size=1, max_size=3), STEPS)
def test_quota_invariants_hold_after_every_cycle_and_recycler_tick(
    tree: list[tuple[str, str, bool, int, int]], node_cores: list[int], steps: list[tuple[Any, ...]]
) -> None:
    model = build(tree, node_cores)
    for step in steps:
        step_and_check(model, step)
    # Long after the last change every quota is within its runtime (or holds only pods no one may evict).
    for _ in range(2):
        step_and_check(model, ("wait", DELAY))
    status = model.world.sched.quota_status()
    for leaf in model.leaves:
        assert not is_over(status[leaf]) or only_non_preemptible_left(model, leaf), f"{leaf}: {status[leaf]}"
