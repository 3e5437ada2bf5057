"""Choosing pods to take back: the recycler's cut of a quota above its runtime, and in-quota preemption.

Both take the least important pods first (lowest priority, then the newest) and give back the
ones the cut turns out not to need, most important first, as kube-scheduler's preemption
reprieves the most important pods it can; in-quota preemption then picks among nodes in
kube-scheduler's order (`core/preemption_rank.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from core.preemption_rank import Rank, victims_rank
from core.resources import Resource


@dataclass(frozen=True, slots=True)
class RunningPod:
    key: str
    resource: Resource
    priority: int
    start_time: float
    preemptible: bool = True


@dataclass(frozen=True, slots=True)
class NodeSlot:
    free: Resource
    candidates: Sequence[RunningPod]


@dataclass(frozen=True, slots=True)
class PreemptionPlan:
    node: str
    victims: tuple[str, ...]


def _least_important_first(pods: Sequence[RunningPod]) -> list[RunningPod]:
    return sorted(pods, key=lambda p: (p.priority, -p.start_time, p.key))


def _total(pods: Sequence[RunningPod]) -> Resource:
    total = Resource()
    for pod in pods:
        total = total + pod.resource
    return total


def minimal_cut(pods: Sequence[RunningPod], enough: Callable[[Resource], bool]) -> list[RunningPod] | None:
    """Least important pods first until `enough(freed)` holds, then re-admit the more important ones
    the cut does not need. None when even all of them are not enough."""
    check = enough
    chosen: list[RunningPod] = []
    for pod in _least_important_first(pods):
        if check(_total(chosen)):
            break
        chosen.append(pod)
    if not check(_total(chosen)):
        return None
    for pod in reversed(list(chosen)):
        rest = [p for p in chosen if p is not pod]
        if check(_total(rest)):
            chosen = rest
    return chosen


def recycle_cut(used: Resource, runtime: Mapping[str, int], pods: Sequence[RunningPod]) -> list[RunningPod]:
    """The minimal set of preemptible pods whose eviction brings `used` back within `runtime`."""
    over = [k for k in runtime if used.get_value(k) > runtime[k]]
    candidates = [p for p in pods if p.preemptible and any(p.resource.get_value(k) > 0 for k in over)]

    def enough(freed: Resource) -> bool:
        return all(used.get_value(k) - freed.get_value(k) <= runtime[k] for k in over)

    cut = minimal_cut(candidates, enough)
    return cut if cut is not None else list(candidates)


def plan_preemption(
    used: Resource,
    runtime: Mapping[str, int],
    request: Resource,
    priority: int,
    nodes: Mapping[str, NodeSlot],
) -> PreemptionPlan | None:
    """A node and the fewest lower-priority preemptible pods of the quota on it to make room for
    `request`; among nodes, kube-scheduler's choice (`core/preemption_rank.py`), then the name."""
    best: tuple[tuple[Rank, str], list[RunningPod]] | None = None
    for node_name in sorted(nodes):
        slot = nodes[node_name]
        candidates = [p for p in slot.candidates if p.preemptible and p.priority < priority]

        def enough(freed: Resource, slot: NodeSlot = slot) -> bool:
            in_quota = all(used.get_value(k) - freed.get_value(k) + request.get_value(k) <= runtime[k] for k in runtime)
            return in_quota and request.fits_in(slot.free + freed)

        cut = minimal_cut(candidates, enough)
        if not cut:
            continue
        rank = (victims_rank((p.priority, p.start_time) for p in cut), node_name)
        if best is None or rank < best[0]:
            best = (rank, cut)
    if best is None:
        return None
    return PreemptionPlan(node=best[0][1], victims=tuple(sorted(p.key for p in best[1])))
