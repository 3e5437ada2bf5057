"""Which waiting pods new nodes would let run: what Herder tells cluster autoscalers.

Cluster autoscalers add nodes for the pods a scheduler says it could not place for lack of
one. Each waiting pod falls in one of two categories (plain strings; the shim words them as a
pod condition):

- `NODES`: only room on the nodes, or the nodes' own rules (selectors, affinity, taints,
  rules between pods, volumes), keep it waiting. It passes every queue's max on its path,
  maxapplications, its user's and group's limits and its elastic quota, *counted together
  with the pods ahead of it in this category* (core/headroom.py): a queue never has more
  pods in it than its headroom could hold, so an autoscaler buys no node that a queue's max
  would leave idle. A pod over its quota's runtime but within its max counts here too: the
  runtime is the quota's share of the cluster, and grows with it.
- `LIMITS`: a queue max, maxapplications, a user or group limit or a quota holds it back (or
  the headroom left once the pods ahead of it are counted), or something no node can change:
  rules Herder cannot honour, its gang waiting for an earlier gang, a pod Herder cannot queue,
  a preemption under way making room for it.

Pods are counted in line order, the order the cycle tries them (queues as the cycle walks
them, applications by their queue's sort policy, pods by priority then age): the pods marked
`NODES` are those that will take the new nodes first, so the nodes bought are the nodes used.
Largest-first would pack the headroom tighter, but could buy nodes for pods that the cycle
would pass over for the smaller pods ahead of them.

A gang is counted whole: its pending placeholders (the room it must reserve) are admitted
together or not at all. Its real pods, held while it reserves, take the gang's category (as
many per task group as the group still has placeholders waiting) and `gang_needs` lists each
gang that lacks only nodes, for an atomic scale-up (a ProvisioningRequest).

Pods not tried yet have no category. The view is computed when asked for, at most once per
change of the scheduler's state, and never by the scheduling cycle itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from core.cycle import GANG, NO_NODE_FITS, QUOTA
from core.elastic.spec import DEFAULT_QUOTA
from core.gang.gang import Gang
from core.gang.spec import TaskGroup
from core.headroom import HeadroomLedger
from core.objects.application import Application
from core.objects.ask import Ask
from core.objects.queue import Queue
from core.pending import leaves_in_line, line_key
from core.state import CoreState

NODES = "nodes"
LIMITS = "limits"


class PendingCondition(NamedTuple):
    """What a waiting pod tells autoscalers: its category and why it waits, in words."""

    category: str
    message: str


@dataclass(frozen=True, slots=True)
class GangNeed:
    """A gang still reserving, and whether only nodes keep it waiting."""

    application_id: str
    namespace: str
    queue: str
    originator: str  # the key of the pod that defines the gang
    groups: tuple[tuple[TaskGroup, int], ...]  # each task group with the placeholders it still waits for
    pods: tuple[str, ...]  # its real pods that wait
    waits_for_nodes: bool
    reason: str  # why it waits (the first placeholder's reason, or what holds it back)


@dataclass(frozen=True, slots=True)
class ScaleUpView:
    generation: int
    conditions: Mapping[str, PendingCondition]
    gangs: tuple[GangNeed, ...]


EMPTY = ScaleUpView(0, {}, ())


def scale_up_view(state: CoreState, generation: int) -> ScaleUpView:
    """Every waiting pod's category and every reserving gang's need, now."""
    walk = _Walk(state)
    cluster = dict(state.partition.cluster_capacity)
    try:
        for leaf in leaves_in_line(state, state.partition.root):
            apps = sorted(leaf.pending_apps.values(), key=line_key(leaf, cluster))
            for app in apps:
                gang = state.gangs.gangs.get(app.app_id)
                if gang is not None and gang.reserving:
                    walk.gang(leaf, app, gang)
                    continue
                for ask in _in_line(app.asks.values()):
                    condition = walk.classify(leaf, app, ask)
                    if condition is not None:
                        walk.conditions[ask.key] = condition
    finally:
        walk.ledger.close()
    conditions = walk.conditions
    for key, unplaced in state.unplaced.items():
        conditions[key] = walk.said(LIMITS, unplaced.reason)
    if not state.settings.scheduling_skipped:  # the old way: every waiting pod asks for a node
        conditions = {key: walk.said(NODES, state.reasons.get(key, c.message)) for key, c in conditions.items()}
    return ScaleUpView(generation, conditions, tuple(walk.gangs))


def _in_line(asks: Iterable[Ask]) -> list[Ask]:
    return sorted(asks, key=lambda ask: (-ask.priority, ask.created, ask.key))


class _Walk:
    """One pass over the waiting pods: the ledger, what was found, and the words already said
    (thousands of pods held for one reason share one condition)."""

    def __init__(self, state: CoreState) -> None:
        self.state = state
        self.ledger = HeadroomLedger(state.quotas, state.ugm)
        self.conditions: dict[str, PendingCondition] = {}
        self.gangs: list[GangNeed] = []
        self._said: dict[tuple[str, str, str], PendingCondition] = {}

    def said(self, category: str, reason: str, more: str = "") -> PendingCondition:
        key = (category, reason, more)
        condition = self._said.get(key)
        if condition is None:
            condition = self._said[key] = PendingCondition(category, f"{reason}; {more}" if more else reason)
        return condition

    def classify(self, leaf: Queue, app: Application, ask: Ask) -> PendingCondition | None:
        state = self.state
        reason = state.reasons.get(ask.key)
        rule = state.rules.get(ask.key)
        if reason is None or rule is None:
            return None  # not tried yet
        if rule not in (NO_NODE_FITS, QUOTA):  # a quota's runtime grows with the cluster: its max decides
            return self.said(LIMITS, reason)
        quota = state.ask_quota.get(ask.key, DEFAULT_QUOTA)
        if ask.key in state.holds or ask.key in state.preempting:
            self.ledger.count(leaf, app, ask, quota)  # it takes its queue's headroom once its victims are gone
            return self.said(LIMITS, reason)
        held = self.ledger.admit(leaf, app, ask, quota)
        if held is not None:
            if rule == QUOTA and held.quota_alone:
                return self.said(LIMITS, reason)  # its quota's max: the cycle's reason says so
            return self.said(LIMITS, reason, f"not counted for new nodes: {held.message}")
        return self.said(NODES, reason)

    def gang(self, leaf: Queue, app: Application, gang: Gang) -> None:
        """Admit the gang's pending placeholders together; its real pods follow the verdict."""
        state, ledger = self.state, self.ledger
        asks = _in_line(app.asks.values())
        mark = ledger.checkpoint()
        held: str | None = None
        first_reason = ""
        tried = True
        for ask in asks:
            if not ask.placeholder:
                continue
            condition = self.classify(leaf, app, ask)
            if condition is None:
                tried = False
                break
            first_reason = first_reason or condition.message
            if condition.category != NODES:
                held = condition.message
                break
        if held is not None or not tried:
            ledger.rollback(mark)
        waiting = {name: len(progress.asked) for name, progress in gang.groups.items()}
        for ask in asks:
            if ask.placeholder:
                continue
            reason = state.reasons.get(ask.key)
            if state.rules.get(ask.key) != GANG or reason is None or not tried:
                found = self.classify(leaf, app, ask) if tried else None
                if found is not None:
                    self.conditions[ask.key] = found
                continue
            if held is not None:
                self.conditions[ask.key] = self.said(LIMITS, reason, f"its gang is held back: {held}")
            elif gang.short:  # a PodGroup's gang short of its pods: no node would help yet
                self.conditions[ask.key] = self.said(LIMITS, reason)
            elif waiting.get(ask.task_group, 0) > 0:
                waiting[ask.task_group] -= 1
                self.conditions[ask.key] = self.said(NODES, reason)
            else:
                more = "its task group's placeholders already ask for the nodes it needs"
                self.conditions[ask.key] = self.said(LIMITS, reason, more)
        groups = tuple(
            (group, len(gang.groups[group.name].asked)) for group in gang.spec.groups if gang.groups[group.name].asked
        )
        self.gangs.append(
            GangNeed(
                application_id=app.app_id,
                namespace=app.namespace,
                queue=leaf.path,
                originator=gang.spec.originator,
                groups=groups,
                pods=tuple(ask.key for ask in asks if not ask.placeholder),
                waits_for_nodes=tried and held is None and bool(groups),
                reason=held or first_reason,
            )
        )
