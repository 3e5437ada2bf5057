"""Random plans of steps played against a World, for properties that compare two ways of
walking the queue tree on the same plan: pods (or gangs) arrive, nodes join, pods finish,
cycles run.

A step is `(kind, first, second, priority, size)`; `arrive(index, step)` adds what a test's
own kinds bring and says whether the step was one of them. `node` adds a node of `size` cores,
`finish` ends the bound pod `first` names (when any is bound), every other step runs a cycle.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.core.scheduling.world import World

Step = tuple[str, int, int, int, int]
Cycles = list[list[tuple[str, str]]]


def play(world: World, plan: list[Step], arrive: Callable[[int, Step], bool]) -> Cycles:
    """Every cycle's bindings (pod, node), in the order they were made, a last cycle included."""
    cycles: Cycles = []
    bound: list[str] = []
    for index, step in enumerate(plan):
        kind, first, _, _, size = step
        if arrive(index, step):
            continue
        if kind == "node":
            world.node(f"n{index}", cpu=size)
        elif kind == "finish" and bound:
            world.finish(bound.pop(first % len(bound)))
        else:
            before = len(world.out.binds)
            world.schedule(advance=1.0)
            made = [(a.key, a.node_id) for a in world.out.binds[before:]]
            bound.extend(key for key, _ in made)
            cycles.append(made)
    world.schedule(advance=1.0)
    cycles.append([(a.key, a.node_id) for a in world.out.binds[sum(map(len, cycles)) :]])
    return cycles
