"""PodDisruptionBudgets as preemption weighs them: which pods a budget covers, how many more
of them may be disrupted now, and which victims of a set would break a budget.

Herder evicts through the Eviction API, so a budget that allows no more disruptions refuses an
eviction whatever Herder chose (and the preemptor then looks again). Preemption reads the
budgets beforehand, as kube-scheduler's DefaultPreemption does: among nodes it prefers the one
whose victims break the fewest budgets (core/preemption_rank.py), and in-quota preemption keeps
the pods that would break one the longest. A budget covers the pods of its namespace that its
selector matches; an empty selector covers none here, as in kube-scheduler's preemption. The
number allowed is the budget's `status.disruptionsAllowed` (the disruption controller's count;
the simulator counts it the same way).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.objects.pod_rules import LabelSelector, PodRules


@dataclass(frozen=True, slots=True)
class DisruptionBudget:
    namespace: str
    name: str
    selector: LabelSelector
    allowed: int  # how many more of its pods may be disrupted now

    def covers(self, pod: PodRules) -> bool:
        selector = self.selector
        return pod.namespace == self.namespace and bool(selector.requirements) and selector.matches(pod.labels)


def breaking(pods: Sequence[PodRules | None], budgets: Iterable[DisruptionBudget]) -> list[bool]:
    """For each pod, in order, whether evicting it after the ones before it passes what a
    budget covering it allows (None: a pod no budget can cover)."""
    listed = [budget for budget in budgets if budget.selector.requirements]
    left = [budget.allowed for budget in listed]
    result = []
    for pod in pods:
        broken = False
        if pod is not None:
            for i, budget in enumerate(listed):
                if budget.covers(pod):
                    left[i] -= 1
                    broken = broken or left[i] < 0
        result.append(broken)
    return result


def violations(pods: Sequence[PodRules | None], budgets: Iterable[DisruptionBudget]) -> int:
    """How many of the pods would be evicted against a budget if they all went."""
    return sum(breaking(pods, budgets))
