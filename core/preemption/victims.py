"""Choosing the victims: the fewest pods, in YuniKorn's order, that make room on one node and
under the maxes of the preemptor's queues.

Victims are taken in this order: pods that allow preemption before those that ask not to be
preempted (`yunikorn.apache.org/allow-preemption: "false"`: chosen last, never out of reach),
lower priority first (priorities adjusted by the queues' `priority.offset`, see
`objects/queue_priority.py`), newest first. Each victim must keep every queue it leaves at or above
its guarantee (see `queues.Surplus`). Once the room is enough, victims the cut does not need
are given back, most important first, so the set is minimal. When a queue's max keeps the
preemptor waiting, more victims from anywhere in the searched queues free room under it
(`cover`). Among nodes the one whose victims include the fewest opted-out pods wins, then
kube-scheduler's order (`core/preemption_rank.py`: fewest PodDisruptionBudgets broken, lowest
top priority, smallest sum of priorities, fewest victims, latest start), then the node name.

For a pod with rules between pods, "makes room" also means its rules allow the node once the
victims are gone (`rules_ok`), as kube-scheduler's preemption runs its filters with the victims
removed: evicting the pods an anti-affinity or a spread counts may be what lets it in, and a
victim its required affinity needs is given back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from core.objects.ask import Allocation
from core.objects.disruption_budget import DisruptionBudget, violations
from core.objects.pod_rules import PodRules
from core.objects.queue import Queue
from core.preemption.queues import Surplus
from core.preemption_rank import Rank, victims_rank
from core.resources import Resource


@dataclass(frozen=True, slots=True)
class Candidate:
    allocation: Allocation
    queue: Queue
    priority: int  # the pod's priority as the queue it shares with the preemptor sees it

    @property
    def opted_out(self) -> bool:
        ask = self.allocation.ask
        return ask is not None and not ask.allow_preemption

    @property
    def pod(self) -> PodRules | None:
        ask = self.allocation.ask
        return ask.pod if ask is not None else None


@dataclass(frozen=True, slots=True)
class NodePlan:
    """The node the preemptor will run on and every pod that goes for it: those on the node
    that make it fit there, and those anywhere in the searched queues that make room under a
    queue's max."""

    node_id: str
    victims: tuple[Candidate, ...]
    room_in: str = ""  # the queue whose max the victims make room under ("": only the node's room)

    def rank(self, budgets: Sequence[DisruptionBudget] = ()) -> tuple[int, Rank, str]:
        opted_out = sum(1 for v in self.victims if v.opted_out)
        broken = violations([v.pod for v in self.victims], budgets) if budgets else 0
        return (
            opted_out,
            victims_rank(((v.priority, v.allocation.allocation_time) for v in self.victims), broken),
            self.node_id,
        )


def victim_order(candidate: Candidate) -> tuple[bool, int, float, str]:
    alloc = candidate.allocation
    return (candidate.opted_out, candidate.priority, -alloc.allocation_time, alloc.key)


def plan_node(
    node_id: str,
    free: Resource,
    request: Resource,
    candidates: Iterable[Candidate],
    surplus: Surplus,
    rules_ok: Callable[[Sequence[Candidate]], bool] | None = None,
) -> NodePlan | None:
    """The fewest `candidates` (in victim order) whose going makes `request` fit in `free`
    (and, with `rules_ok`, lets the pod's rules between pods allow the node), or None
    (`surplus` is fresh for this node: what each queue may still lose)."""

    def enough(room: Resource, victims: Sequence[Candidate]) -> bool:
        return request.fits_in(room) and (rules_ok is None or rules_ok(victims))

    chosen: list[Candidate] = []
    room = free
    for candidate in candidates:
        if enough(room, chosen):
            break
        resource = candidate.allocation.resource
        if not surplus.allows(candidate.queue, resource):
            continue
        surplus.take(candidate.queue, resource)
        chosen.append(candidate)
        room = room + resource
    if not chosen or not enough(room, chosen):
        return None
    for candidate in reversed(list(chosen)):
        resource = candidate.allocation.resource
        smaller = room - resource
        if enough(smaller, [c for c in chosen if c is not candidate]):
            chosen.remove(candidate)
            room = smaller
            surplus.take(candidate.queue, resource, -1)
    return NodePlan(node_id, tuple(chosen))


def cover(
    need: Mapping[str, int],
    freed: Resource,
    pool: Iterable[Candidate],
    taken: Sequence[Candidate],
    surplus: Surplus,
) -> tuple[Candidate, ...] | None:
    """The fewest more pods of `pool` (in victim order, on any node) whose going, with `freed`
    (what `taken` frees), brings what must leave a queue's path up to `need`; None when the
    pool cannot. `surplus` already counts `taken`; what this picks is added to it."""
    short = {key: amount - freed.get(key, 0) for key, amount in need.items() if amount > freed.get(key, 0)}
    if not short:
        return ()
    chosen: list[Candidate] = []
    skip = {id(c.allocation) for c in taken}
    for candidate in pool:
        if not short:
            break
        resource = candidate.allocation.resource
        if id(candidate.allocation) in skip or not any(resource.get(key, 0) > 0 for key in short):
            continue
        if not surplus.allows(candidate.queue, resource):
            continue
        surplus.take(candidate.queue, resource)
        chosen.append(candidate)
        for key in list(short):
            short[key] -= resource.get(key, 0)
            if short[key] <= 0:
                del short[key]
    if short:
        return None
    spare = {key: -amount for key, amount in _left_over(need, freed, chosen).items()}
    for candidate in reversed(list(chosen)):
        resource = candidate.allocation.resource
        if all(resource.get(key, 0) <= spare.get(key, 0) for key in need):
            chosen.remove(candidate)
            surplus.take(candidate.queue, resource, -1)
            for key in need:
                spare[key] = spare.get(key, 0) - resource.get(key, 0)
    return tuple(chosen)


def _left_over(need: Mapping[str, int], freed: Resource, chosen: Sequence[Candidate]) -> dict[str, int]:
    """Per resource of `need`: need minus what `freed` and `chosen` free (negative: to spare)."""
    left = {key: amount - freed.get(key, 0) for key, amount in need.items()}
    for candidate in chosen:
        for key in left:
            left[key] -= candidate.allocation.resource.get(key, 0)
    return left


def best_plan(plans: Iterable[NodePlan | None], budgets: Sequence[DisruptionBudget] = ()) -> NodePlan | None:
    best: tuple[tuple[int, Rank, str], NodePlan] | None = None
    for plan in plans:
        if plan is None:
            continue
        rank = plan.rank(budgets)
        if best is None or rank < best[0]:
            best = (rank, plan)
    return best[1] if best is not None else None
