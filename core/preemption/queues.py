"""The laws of preemption that speak about queues (YuniKorn's preemption design).

- Only an ask in a queue under its guarantee may trigger preemption: `allocated + held + ask
  <= guaranteed` for each resource the ask needs that its leaf guarantees, or, when the leaf
  guarantees nothing, on every queue above it that does; at least one such guarantee exists (a
  path without any guarantee never triggers).
- Only queues over their guarantee lose pods, and never so far that they fall below it: on
  the victim's path below the queue it shares with the preemptor, every guaranteed resource
  the victims use stays at or above the guarantee after they go. Above the shared queue the
  usage does not change (the preemptor takes what the victims free).
- `preemption.policy: fence` on a queue keeps asks in or below it from reaching pods outside
  it (one-way: asks from outside may still preempt inside); `disabled` makes the pods in or
  below the queue no victims at all.
- An ask its queue's parent's max (or a max further up) keeps waiting looks for victims inside
  that queue only: they free room in it and above it; a fence further down still comes first.
- `preemption.delay` (inherited, default 30 s): how long an ask waits before it may preempt.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from core.config.schema import PREEMPTION_DELAY, PREEMPTION_POLICY
from core.config.settings import parse_duration
from core.objects.queue import Queue
from core.resources import add_into

DEFAULT_DELAY = 30.0
DEFAULT = "default"
FENCE = "fence"
DISABLED = "disabled"

Held = Mapping[str, Mapping[str, int]]  # queue path -> resources held for its preemptors


def policy(queue: Queue) -> str:
    """The queue's own `preemption.policy` (fences and opt-outs are set where they apply)."""
    return queue.properties.get(PREEMPTION_POLICY, DEFAULT).lower()


def delay(queue: Queue) -> float:
    raw = queue.inherited_property(PREEMPTION_DELAY)
    if raw is None:
        return DEFAULT_DELAY
    try:
        return parse_duration(raw)
    except ValueError:  # validation refuses such a config; a dynamic queue's template may slip by
        return DEFAULT_DELAY


def search_top(leaf: Queue, blocking: Queue) -> Queue:
    """The queue whose subtree the leaf's asks look for victims in: the nearest fenced queue at
    or above `leaf` (its asks preempt only inside it) or `blocking`, the queue whose max (the
    cluster's size at root) keeps the ask waiting, whichever comes first. Victims from inside
    the blocking queue free room in it and in every queue above it."""
    for queue in leaf.ancestry():
        if queue is blocking or policy(queue) == FENCE:
            return queue
    return blocking


def room_needed(leaf: Queue, request: Mapping[str, int], held: Held, leaving: Held) -> dict[str, int]:
    """What must leave the leaf's path for `request` to fit every max below root: per resource,
    the most any queue's `allocated + held - leaving + request` passes its max by."""
    need: dict[str, int] = {}
    for queue in leaf.ancestry():
        limit = queue.max
        if limit is None or queue.parent is None:
            continue
        extra = held.get(queue.path, {})
        gone = leaving.get(queue.path, {})
        for key, cap in limit.items():
            amount = request.get(key, 0)
            if amount <= 0:
                continue
            over = queue.allocated.get(key, 0) + extra.get(key, 0) - gone.get(key, 0) + amount - cap
            if over > need.get(key, 0):
                need[key] = over
    return need


def may_lose_pods(leaf: Queue) -> bool:
    """False when `preemption.policy: disabled` is set on the leaf or any queue above it."""
    return all(policy(queue) != DISABLED for queue in leaf.ancestry())


def is_guarded(leaf: Queue) -> bool:
    """Whether any queue on the path has a guarantee (without one, nothing triggers)."""
    return any(queue.guaranteed for queue in leaf.ancestry())


def under_guarantee(leaf: Queue, request: Mapping[str, int], held: Held) -> bool:
    """Whether `request` still fits the guarantees that speak for the leaf (law: only a queue
    under its guarantee triggers), counting the room already held for the path's preemptors.

    A leaf with a guarantee of its own is judged by it alone: its parent may be over the
    parent's guarantee because of a sibling's pods, and that sibling is then a victim, not a
    reason to wait (YuniKorn's `TestTryPreemption`). A leaf without one is judged by every
    guarantee above it."""
    guarded = False
    judges: Iterable[Queue] = (leaf,) if leaf.guaranteed else leaf.ancestry()
    for queue in judges:
        guaranteed = queue.guaranteed
        if not guaranteed:
            continue
        extra = held.get(queue.path, {})
        for key, amount in request.items():
            cap = guaranteed.get(key)
            if amount <= 0 or cap is None:
                continue
            guarded = True
            if queue.allocated.get(key, 0) + extra.get(key, 0) + amount > cap:
                return False
    return guarded


def shared_queue(a: Queue, b: Queue) -> Queue:
    """The lowest queue both `a` and `b` are in."""
    above = {id(queue) for queue in a.ancestry()}
    for queue in b.ancestry():
        if id(queue) in above:
            return queue
    raise ValueError(f"queues {a.path} and {b.path} are in different trees")


def within(queue: Queue, top: Queue) -> bool:
    return any(q is top for q in queue.ancestry())


class Surplus:
    """How much each queue on victims' paths may still lose before it falls below its guarantee."""

    def __init__(self, preemptor: Queue, leaving: Held, paths: dict[int, list[Queue]] | None = None) -> None:
        self._preemptor = preemptor
        # per victim leaf, the queues below the one it shares with the preemptor (`paths`: kept
        # by the caller for this preemptor's leaf, across surpluses)
        self._paths: dict[int, list[Queue]] = {} if paths is None else paths
        self._leaving = leaving  # what pods already on their way out take from each queue
        self._taken: dict[str, dict[str, int]] = {}  # what this plan's victims take
        # (queue path, resource) -> the queue and the bounds its usage less what is leaving kept
        # to, for every answer to be what it was: at least the highest threshold allowed, below
        # the lowest refused (a plan whose victims' queues guarantee nothing reads none)
        self.reads: dict[tuple[str, str], tuple[Queue, float, float]] = {}

    def _path(self, leaf: Queue) -> list[Queue]:
        path = self._paths.get(id(leaf))
        if path is None:
            top = shared_queue(leaf, self._preemptor)
            path = []
            for queue in leaf.ancestry():
                if queue is top:
                    break
                path.append(queue)
            self._paths[id(leaf)] = path
        return path

    def allows(self, leaf: Queue, resource: Mapping[str, int]) -> bool:
        """Whether `leaf` (and its parents below the shared queue) may also lose `resource`."""
        for queue in self._path(leaf):
            guaranteed = queue.guaranteed
            if not guaranteed:
                continue
            leaving = self._leaving.get(queue.path, _NONE)
            taken = self._taken.get(queue.path, _NONE)
            for key, amount in resource.items():
                cap = guaranteed.get(key)
                if amount <= 0 or cap is None:
                    continue
                left = queue.allocated.get(key, 0) - leaving.get(key, 0)
                threshold = cap + taken.get(key, 0) + amount  # it may lose `amount` from here up
                _, low, high = self.reads.get((queue.path, key), _UNREAD)
                if left < threshold:
                    self.reads[(queue.path, key)] = (queue, low, min(high, threshold))
                    return False
                self.reads[(queue.path, key)] = (queue, max(low, threshold), high)
        return True

    def take(self, leaf: Queue, resource: Mapping[str, int], sign: int = 1) -> None:
        for queue in self._path(leaf):
            add_into(self._taken.setdefault(queue.path, {}), resource, sign)


_NONE: Mapping[str, int] = {}
_UNREAD = (None, -math.inf, math.inf)
