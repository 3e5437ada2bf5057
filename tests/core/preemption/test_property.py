"""A property over random queue trees and workloads: no eviction ever breaks a law of
preemption, no queue is pushed below its guarantee, a parent's max that is the limit is made
room under from inside it only, and preemption stops (no loops), even when every evicted pod
comes back as a new one, as a Job's controller would make it."""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from core.objects.ask import Allocation
from tests.core.scheduling.world import World

POLICIES = ("default", "default", "default", "default", "fence", "disabled")


@dataclass
class Tree:
    leaves: list[str]
    guaranteed: dict[str, int]  # path -> cores (0: none)
    policy: dict[str, str]
    parent_of: dict[str, str] = field(default_factory=dict)
    maximum: dict[str, int] = field(default_factory=dict)  # parent path -> cores (absent: none)

    def config(self) -> str:
        parents: dict[str, list[str]] = {}
        for leaf in self.leaves:
            parents.setdefault(self.parent_of[leaf], []).append(leaf)

        def queue(path: str, children: list[dict[str, object]] | None = None) -> dict[str, object]:
            doc: dict[str, object] = {"name": path.rsplit(".", 1)[-1]}
            resources: dict[str, object] = {}
            if self.guaranteed.get(path):
                resources["guaranteed"] = {"vcore": self.guaranteed[path]}
            if path in self.maximum:
                resources["max"] = {"vcore": self.maximum[path]}
            if resources:
                doc["resources"] = resources
            if self.policy.get(path, "default") != "default":
                doc["properties"] = {"preemption.policy": self.policy[path]}
            if children is not None:
                doc["queues"] = children
            return doc

        children = [queue(p, [queue(leaf) for leaf in leaves]) for p, leaves in sorted(parents.items())]
        root = {"name": "root", "submitacl": "*", "properties": {"preemption.delay": "10s"}, "queues": children}
        return yaml.safe_dump(
            {"partitions": [{"name": "default", "placementrules": [{"name": "provided"}], "queues": [root]}]}
        )

    def path_of(self, leaf: str) -> list[str]:
        return [leaf, self.parent_of[leaf]]


@st.composite
def trees(draw: st.DrawFn) -> Tree:
    parents = [f"root.p{i}" for i in range(draw(st.integers(1, 2)))]
    leaves, parent_of, guaranteed, policy, maximum = [], {}, {}, {}, {}
    for p in parents:
        guaranteed[p] = draw(st.sampled_from((0, 0, 0, 6)))
        policy[p] = draw(st.sampled_from(POLICIES))
        limit = draw(st.sampled_from((0, 0, 3, 4, 6, 8)))  # a parent's max, often below the cluster's size
        for j in range(draw(st.integers(1, 2))):
            leaf = f"{p}.q{j}"
            leaves.append(leaf)
            parent_of[leaf] = p
            cap = guaranteed[p] or 6
            guaranteed[leaf] = draw(st.integers(1, cap // 2)) if draw(st.booleans()) or j == 0 else 0
            policy[leaf] = draw(st.sampled_from(POLICIES))
        if limit:  # never below what the queue or its children are guaranteed (validation says so)
            children = sum(guaranteed[leaf] for leaf in leaves if parent_of[leaf] == p)
            maximum[p] = max(limit, guaranteed[p], children)
    return Tree(leaves, guaranteed, policy, parent_of, maximum)


Pod = tuple[int, int, int, bool]  # leaf index, priority, cores, allows preemption


def pods() -> st.SearchStrategy[list[list[Pod]]]:
    one = st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(1, 2), st.booleans())
    return st.lists(st.lists(one, min_size=1, max_size=6), min_size=2, max_size=5)


@settings(max_examples=150, deadline=None)
@given(tree=trees(), filler=st.integers(0, 3), waves=pods(), cores=st.integers(2, 6))
def test_no_eviction_breaks_a_law_and_preemption_stops(
    tree: Tree, filler: int, waves: list[list[Pod]], cores: int
) -> None:
    world = World(tree.config())
    world.node("n1", cpu=cores, memory="64Gi")
    world.node("n2", cpu=cores, memory="64Gi")
    born: dict[str, tuple[str, int, int, bool]] = {}  # pod -> leaf, priority, cores, allows
    counter = iter(range(10_000))

    def submit(leaf: str, priority: int, size: int, allows: bool) -> None:
        name = f"pod{next(counter)}"
        born[name] = (leaf, priority, size, allows)
        world.pod(name, queue=leaf, app=f"app-{leaf}", cpu=size, priority=priority, allow_preemption=allows)

    def cycle(advance: float) -> int:
        seen = len(world.out.evictions)
        world.schedule(advance=advance)
        batch = world.out.evictions[seen:]
        # the usage the victims were chosen against: after the cycle's placements (a preemptor
        # placed in this cycle counts), with the victims still running until they end below
        queues = [*tree.leaves, *set(tree.parent_of.values())]
        check(batch, {q: world.allocated(q).get("vcore", 0) for q in queues})
        for allocation, _ in batch:  # the pods end, and their controllers make new ones
            world.finish(allocation.key)
            leaf, priority, size, allows = born[allocation.key]
            submit(leaf, priority, size, allows)
        return len(batch)

    def check(batch: list[tuple[Allocation, str]], used: dict[str, int]) -> None:
        taken: dict[str, int] = {}
        preemptor_paths: set[str] = set()
        for victim, reason in batch:
            assert "preempted by default/" in reason, reason
            preemptor = reason.split("preempted by default/")[1].split(" ")[0]
            p_leaf, p_priority, _, _ = born[preemptor]
            v_leaf, v_priority, v_size, _ = born[victim.key]
            assert v_priority <= p_priority  # only equal or lower priority
            assert v_leaf != p_leaf  # never the preemptor's own queue or application
            assert "disabled" not in (tree.policy[q] for q in tree.path_of(v_leaf))
            fences = [q for q in tree.path_of(p_leaf) if tree.policy[q] == "fence"]
            if fences:
                assert v_leaf.startswith(fences[0] + ".") or v_leaf == fences[0]  # the fence holds
            if "for room under queue " in reason:  # a max was the limit: victims from inside it
                blocking = reason.split("for room under queue ")[1].split("'s max")[0]
                assert blocking in tree.maximum and v_leaf.startswith(blocking + ".")
            g = [tree.guaranteed[q] for q in tree.path_of(p_leaf) if tree.guaranteed[q]]
            assert g, "a queue without any guarantee on its path triggered preemption"
            preemptor_paths.update(tree.path_of(p_leaf))
            for q in tree.path_of(v_leaf):
                taken[q] = taken.get(q, 0) + v_size * 1000
        for q, amount in taken.items():
            if q in preemptor_paths or not tree.guaranteed[q]:
                continue  # a shared parent gets the room back through the preemptor
            assert used[q] - amount >= tree.guaranteed[q] * 1000, f"{q} pushed below its guarantee"

    for _ in range(2 * cores):  # one queue fills the cluster first
        submit(tree.leaves[filler % len(tree.leaves)], 0, 1, True)
    cycle(advance=1)
    for wave in waves:
        for leaf_index, priority, size, allows in wave:
            submit(tree.leaves[leaf_index % len(tree.leaves)], priority, size, allows)
        cycle(advance=5)
    total = 0
    for _ in range(12):
        total += cycle(advance=15)
    quiet = sum(cycle(advance=15) for _ in range(6))
    assert quiet == 0, f"preemption still going after {total} evictions: a loop"
