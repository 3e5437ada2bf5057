"""Choosing pods to take back: the recycler's cut of a quota above its runtime, and in-quota preemption.

Both take the least important pods first (lowest priority, then the newest) and give back the
ones the cut turns out not to need, most important first, as kube-scheduler's preemption
reprieves the most important pods it can. In-quota preemption, like kube-scheduler, takes the
pods a PodDisruptionBudget protects last and picks among nodes in kube-scheduler's order
(`core/preemption_rank.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from core.objects.disruption_budget import DisruptionBudget, breaking, violations
from core.objects.pod_rules import PodRules
from core.preemption_rank import Rank, victims_rank
from core.resources import Resource


@dataclass(frozen=True, slots=True)
class RunningPod:
    key: str
    resource: Resource
    priority: int
    start_time: float
    preemptible: bool = True
    pod: PodRules | None = None  # its namespace and labels, for the disruption budgets covering it


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


def _budgets_last(pods: Sequence[RunningPod], budgets: Sequence[DisruptionBudget]) -> list[RunningPod]:
    """Least important first, but the pods whose going would break a PodDisruptionBudget (the
    most important ones covered are counted as staying) after all the others: kube-scheduler
    reprieves those first."""
    if not budgets:
        return _least_important_first(pods)
    important_first = _least_important_first(pods)[::-1]
    broken = breaking([p.pod for p in important_first], budgets)
    last = {p.key for p, breaks in zip(important_first, broken) if breaks}
    return sorted(pods, key=lambda p: (p.key in last, p.priority, -p.start_time, p.key))


def _total(pods: Sequence[RunningPod]) -> Resource:
    total = Resource()
    for pod in pods:
        total = total + pod.resource
    return total


def minimal_cut(
    pods: Sequence[RunningPod],
    enough: Callable[[Resource], bool],
    order: Callable[[Sequence[RunningPod]], list[RunningPod]] = _least_important_first,
) -> list[RunningPod] | None:
    """Least important pods first (in `order`) until `enough(freed)` holds, then re-admit the more
    important ones the cut does not need. None when even all of them are not enough."""
    check = enough
    chosen: list[RunningPod] = []
    for pod in order(pods):
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
    budgets: Sequence[DisruptionBudget] = (),
) -> PreemptionPlan | None:
    """A node and the fewest lower-priority preemptible pods of the quota on it to make room for
    `request`, those a PodDisruptionBudget protects last; among nodes, kube-scheduler's choice
    (`core/preemption_rank.py`), then the name."""
    best: tuple[tuple[Rank, str], list[RunningPod]] | None = None
    for node_name in sorted(nodes):
        slot = nodes[node_name]
        candidates = [p for p in slot.candidates if p.preemptible and p.priority < priority]

        def enough(freed: Resource, slot: NodeSlot = slot) -> bool:
            in_quota = all(used.get_value(k) - freed.get_value(k) + request.get_value(k) <= runtime[k] for k in runtime)
            return in_quota and request.fits_in(slot.free + freed)

        cut = minimal_cut(candidates, enough, lambda pods: _budgets_last(pods, budgets))
        if not cut:
            continue
        broken = violations([p.pod for p in cut], budgets) if budgets else 0
        rank = (victims_rank(((p.priority, p.start_time) for p in cut), broken), node_name)
        if best is None or rank < best[0]:
            best = (rank, cut)
    if best is None:
        return None
    return PreemptionPlan(node=best[0][1], victims=tuple(sorted(p.key for p in best[1])))
