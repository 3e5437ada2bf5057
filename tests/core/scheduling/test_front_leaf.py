"""The leaf that placed the last pod is tried again without a walk from root while the walk
would come to it first (`cycle._still_first`). Whatever happens between two decisions (pods
of other queues come, pods end, a queue's max or guarantee holds it back, nodes come), every
cycle must place the same pods, in the same order, on the same nodes as walking from root
at every decision does, and park the others with the same reasons.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import cycle
from core.state import CoreState
from tests.core.scheduling.plan_steps import Cycles, Step, play
from tests.core.scheduling.world import World

LEAVES = ["root.p0.a", "root.p0.b", "root.p1.c", "root.p1.d", "root.p1.e", "root.f"]

CONFIG = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: p0
            queues:
              - {name: a, resources: {guaranteed: {vcore: 2000}}}
              - {name: b, resources: {max: {vcore: 3000}}}
          - name: p1
            resources: {max: {vcore: 6000}}
            queues:
              - name: c
              - {name: d, resources: {guaranteed: {vcore: 1000}}}
              - name: e
          - name: f
"""

# a pod: its leaf, its application there, its priority, its cores (some fit nowhere and park)
pods = st.tuples(
    st.just("pod"), st.integers(0, len(LEAVES) - 1), st.integers(0, 2), st.integers(0, 2), st.integers(1, 5)
)
steps = st.lists(
    st.one_of(
        pods,
        pods,
        pods,
        st.tuples(st.just("schedule"), st.just(0), st.just(0), st.just(0), st.just(0)),
        st.tuples(st.just("finish"), st.integers(0, 50), st.just(0), st.just(0), st.just(0)),
        st.tuples(st.just("node"), st.just(0), st.just(0), st.just(0), st.integers(1, 6)),
    ),
    max_size=50,
)


def _run(plan: list[Step]) -> tuple[Cycles, dict[str, str | None]]:
    """Every cycle's bindings in the order they were made, and each pod's reason to wait."""
    world = World(CONFIG)
    world.node("n0", cpu=4)
    names: list[str] = []

    def arrive(index: int, step: Step) -> bool:
        kind, first, second, priority, size = step
        if kind != "pod":
            return False
        leaf = LEAVES[first]
        world.pod(f"p{index}", queue=leaf, app=f"{leaf}-{second}", priority=priority, cpu=size, created=index)
        names.append(f"p{index}")
        return True

    cycles = play(world, plan, arrive)
    return cycles, {name: world.sched.pending_reason(name) for name in names}


def _never_first(state: CoreState, leaf: object) -> bool:
    return False


@settings(max_examples=300, deadline=None)
@given(steps)
def test_serving_the_front_leaf_again_places_what_walking_from_root_places(
    plan: list[tuple[str, int, int, int, int]],
) -> None:
    served = _run(plan)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cycle, "_still_first", _never_first)
        walked = _run(plan)
    assert served == walked


def test_a_leaf_is_served_again_only_while_its_share_stays_below_its_siblings() -> None:
    """Shares here go by memory (a guarantee and a max of thousands of cores): b holds 1 GiB
    of 64, a none. a0 brings a level with b, and a tie goes to the name, so a is served again
    (a1); then a is above b, and b1 goes before a2."""
    world = World(CONFIG)
    world.node("n0", cpu=8, memory="64Gi")
    world.pod("b0", queue="root.p0.b", app="b-1", cpu=2, memory="1Gi")
    assert list(world.schedule()) == ["b0"]
    world.pods(3, prefix="a", queue="root.p0.a", app="a-1", cpu="500m", memory="1Gi")
    world.pod("b1", queue="root.p0.b", app="b-1", cpu="500m", memory="1Gi")
    world.schedule()
    assert [a.key for a in world.out.binds[1:]] == ["a0", "a1", "b1", "a2"]
