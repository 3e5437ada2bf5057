"""Preemption searches keep what they read per node (core/preemption/kept_search.py): a search
that reads the kept entries must find the plan a search reading every node afresh finds, after
anything that can happen between two searches.

The property drives random clusters through placements, pods ending or deleted while they wait,
evictions carried out or refused (a PodDisruptionBudget said no, then its cool-down runs out),
nodes cordoned, resized, removed and added, budgets changing, guarantees on the victims' queues
(their usage is read) and a parent's max (victims on any node inside it); at every search it
runs the same search again with nothing kept and compares the two plans."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from core.cycle import preemption_scope
from core.objects.disruption_budget import DisruptionBudget
from core.objects.node_info import NodeInfo
from core.objects.pod_rules import LabelRequirement, LabelSelector
from core.preemption import preemptor, queues
from core.preemption.holds import held_by_queue
from core.preemption.kept_search import KeptSearches
from core.preemption.victims import NodePlan
from core.state import CoreState
from tests.core.scheduling.world import World, queues_config, res

LEAVES = ("root.p.a", "root.b", "root.p.c", "root.d")


def _config(b_guarantee: int, c_guarantee: int, offset: int, parent_max: int) -> str:
    b = f"resources: {{guaranteed: {{vcore: {b_guarantee}}}}}" if b_guarantee else "properties: {}"
    c = f"resources: {{guaranteed: {{vcore: {c_guarantee}}}}}" if c_guarantee else ""
    limit = f"resources: {{max: {{vcore: {parent_max}}}}}" if parent_max else "properties: {}"
    return queues_config(
        f"""
        - name: p
          {limit}
          queues:
            - name: a
              resources: {{guaranteed: {{vcore: 12}}}}
            - name: c
              properties: {{priority.offset: "{offset}"}}
              {c}
        - name: b
          {b}
        - name: d
        """,
        root_properties="{preemption.delay: 5s}",
    )


def _summary(plan: NodePlan | None) -> tuple[str, tuple[str, ...], str] | None:
    if plan is None:
        return None
    return plan.node_id, tuple(v.allocation.key for v in plan.victims), plan.room_in


def probe(state: CoreState, search: Checked, now: float) -> None:
    """Search for every pod that waits in a guaranteed queue, as a pass would when its delay
    has run out, without starting any plan: more searches between the changes."""
    held = held_by_queue(state)
    for key, app in sorted(state.ask_app.items()):
        leaf = state.partition.find_queue(app.queue_path)
        ask = app.asks.get(key)
        if leaf is None or ask is None or key in app.held or not queues.is_guarded(leaf):
            continue
        blocking = preemption_scope(state, leaf, app, ask)
        if blocking is not None:
            search(state, leaf, app, ask, blocking, held, now)


class Checked:
    """`preemptor._search`, run again with nothing kept after every search, both answers compared."""

    def __init__(self) -> None:
        self.real = preemptor._search
        self.searches = 0

    def __call__(self, state: CoreState, *args: object) -> NodePlan | None:
        kept = self.real(state, *args)  # type: ignore[arg-type]
        saved = state.kept_searches
        state.kept_searches = KeptSearches()
        try:
            fresh = self.real(state, *args)  # type: ignore[arg-type]
        finally:
            state.kept_searches = saved
        assert _summary(kept) == _summary(fresh), f"kept {_summary(kept)}, afresh {_summary(fresh)}"
        self.searches += 1
        return kept


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    b_guarantee=st.sampled_from((0, 3, 10)),
    c_guarantee=st.sampled_from((0, 4, 8)),
    offset=st.sampled_from((0, 50, -50)),
    parent_max=st.sampled_from((0, 0, 20, 24)),
    steps=st.integers(8, 25),
)
def test_a_kept_search_finds_what_a_fresh_one_finds(
    seed: int, b_guarantee: int, c_guarantee: int, offset: int, parent_max: int, steps: int
) -> None:
    rng = random.Random(seed)
    world = World(_config(b_guarantee, c_guarantee, offset, parent_max))
    state = world.sched._state
    nodes = {f"n{i}": rng.choice((4, 6, 8)) for i in range(4)}
    for name, cpu in nodes.items():
        world.node(name, cpu=cpu, memory="64Gi")
    checked = Checked()
    born = iter(range(100_000))

    def submit(leaf: str) -> None:
        name = f"p{next(born)}"
        world.pod(
            name,
            queue=leaf,
            app=f"{leaf}-{rng.randrange(3)}",
            cpu=rng.choice((1, 1, 2, 3)),
            priority=rng.choice((0, 0, 10, 100)),
            allow_preemption=rng.random() > 0.15,
            labels={"team": leaf[-1]},
        )

    for _ in range(sum(nodes.values())):  # the unguaranteed queues fill the cluster first
        submit(rng.choice(("root.p.c", "root.d")))
    world.schedule(advance=1)
    for _ in range(6):  # a guaranteed queue asks, and waits out its delay in the first steps
        submit("root.p.a")
    original = preemptor._search
    preemptor._search = checked  # type: ignore[assignment]
    try:
        for _ in range(steps):
            submit(rng.choice(LEAVES[:2]))
            for _ in range(rng.randrange(4)):
                submit(rng.choice(LEAVES))
            for key in sorted(state.evicting):  # each eviction is carried out, refused, or left under way
                roll = rng.random()
                if roll < 0.4:
                    world.finish(key)
                elif roll < 0.7:
                    world.sched.eviction_failed(key, "a PodDisruptionBudget said no", world.now)
            running = sorted(state.allocations)
            if running and rng.random() < 0.3:
                world.finish(rng.choice(running))
            waiting = sorted(state.holds) if state.holds and rng.random() < 0.5 else sorted(state.ask_app)
            if waiting and rng.random() < 0.3:  # a preemptor among them lets its held room go
                world.sched.remove_ask(rng.choice(waiting))
            roll = rng.random()
            name = rng.choice(sorted(nodes))
            if roll < 0.08:
                world.node(name, cpu=nodes[name], memory="64Gi", schedulable=False)
            elif roll < 0.16:
                nodes[name] = rng.choice((4, 6, 8, 10))
                world.node(name, cpu=nodes[name], memory="64Gi")
            elif roll < 0.22 and len(nodes) > 2:
                world.sched.remove_node(name)
                del nodes[name]
            elif roll < 0.3:
                new = f"n{next(born)}"
                nodes[new] = rng.choice((4, 8))
                world.sched.update_node(NodeInfo(new, res(nodes[new], "64Gi", 110)))
            if rng.random() < 0.4:
                team = rng.choice("abcd")
                selector = LabelSelector((LabelRequirement("team", "In", frozenset((team,))),))
                world.sched.update_disruption_budget(DisruptionBudget("default", "pdb", selector, rng.randrange(2)))
            world.schedule(advance=rng.choice((1, 3, 6, 31)))
            with world.sched._lock:
                probe(state, checked, world.now)
    finally:
        preemptor._search = original  # type: ignore[assignment]
    assert checked.searches > 0
