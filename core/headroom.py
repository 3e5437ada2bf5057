"""Headroom shared out among waiting pods, in line order: the room new nodes could be used for.

A pod that lacks only a node passes its queue's max, maxapplications, its user's and group's
limits and its elastic quota on its own. Ten such pods of one queue may each pass alone while
the queue has room for two: nodes bought for all ten would leave eight idle. The ledger admits
waiting pods one by one, each counted with the pods admitted before it, against

- every queue's max on its path (root excluded: its max is the cluster's size, which is what
  new nodes change) as `allocated + admitted + asked <= max`;
- maxapplications on every level, counting each application not running yet once;
- the user's and group's limits: counted in the user group manager itself, one trial increase
  per admitted pod (its wildcard rules, group resolution and application counts are its own),
  all undone by `close`;
- the pod's elastic quota: `used + admitted + asked <= max` (and each parent's max, and the
  min for non-preemptible pods). Not its runtime: that is the quota's share of the cluster,
  and grows with the cluster as the root queue's max does.

`checkpoint` / `rollback` let a gang be admitted whole or not at all. The ledger runs under the
scheduler's lock and leaves every tracker as it found it.
"""

from __future__ import annotations

from typing import NamedTuple

from core.elastic.manager import ElasticQuotaManager
from core.objects.application import Application
from core.objects.ask import Ask
from core.objects.queue import Queue
from core.resources import Resource, add_into, format_amounts
from core.ugm.manager import UserGroupManager


class Refusal(NamedTuple):
    """Why the headroom left cannot hold a pod; `quota_alone`: its quota's ceiling refuses the
    pod alone (the cycle's own quota reason says as much)."""

    message: str
    quota_alone: bool = False


class _UgmTrial(NamedTuple):
    path: str
    app: Application
    resource: Resource


class _Entry(NamedTuple):
    queues: tuple[str, ...]  # the queue paths the ask was counted at
    new_app: tuple[str, ...]  # the queue paths it counted its application at (new there)
    app_id: str
    quota: str
    preemptible: bool
    resource: Resource
    trial: _UgmTrial | None


class HeadroomLedger:
    def __init__(self, quotas: ElasticQuotaManager, ugm: UserGroupManager) -> None:
        self._quota_manager = quotas
        self._ugm = ugm
        self._queues: dict[str, dict[str, int]] = {}
        self._new_apps: dict[str, set[str]] = {}
        self._quotas: dict[str, dict[str, int]] = {}
        self._fixed: dict[str, dict[str, int]] = {}  # non-preemptible pods only
        self._trials: dict[tuple[str, str], int] = {}  # (path, application) -> trial increases standing
        self._log: list[_Entry] = []
        # A queue's answer per leaf and request shape, valid while nothing was counted or taken
        # back since (`_counted`): once a queue is full, each of its thousands of waiting pods
        # would otherwise be measured against it, words and all.
        self._counted = 0
        self._queue_answers: dict[tuple[str, Resource], tuple[int, str | None]] = {}

    # -- admitting -----------------------------------------------------------------------
    def admit(self, leaf: Queue, app: Application, ask: Ask, quota: str) -> Refusal | None:
        """Count the ask, or say why the headroom left after the pods admitted so far cannot
        hold it (and count nothing)."""
        resource = ask.resource
        why = self._queue_refusal(leaf, resource) or self._applications_refusal(leaf, app)
        if why is not None:
            return Refusal(why)
        trial = None
        ugm = self._ugm
        if ugm.limits_apply(leaf.path) or not app.app_id:
            if not ugm.increase_tracked_resource(leaf.path, app.app_id, resource, app.user):
                return Refusal(f"{ugm.denial_reason(leaf.path, app.app_id, resource, app.user)}{_AHEAD}")
            trial = _UgmTrial(leaf.path, app, resource)
            self._trials[(leaf.path, app.app_id)] = self._trials.get((leaf.path, app.app_id), 0) + 1
        refusal = self._quota_refusal(quota, resource, ask.preemptible)
        if refusal is not None:
            if trial is not None:
                self._undo_trial(trial)
            return refusal
        self._count(leaf, app, quota, ask.preemptible, resource, trial)
        return None

    def count(self, leaf: Queue, app: Application, ask: Ask, quota: str) -> None:
        """Count an ask whatever the headroom says (a preemptor: its room is being made)."""
        self._count(leaf, app, quota, ask.preemptible, ask.resource, None)

    def _count(
        self, leaf: Queue, app: Application, quota: str, preemptible: bool, resource: Resource, trial: _UgmTrial | None
    ) -> None:
        paths = tuple(q.path for q in leaf.ancestry() if q.parent is not None and q.max is not None)
        for path in paths:
            add_into(self._queues.setdefault(path, {}), resource)
        new_app: tuple[str, ...] = ()
        if not app.is_running:
            new_app = tuple(
                q.path
                for q in leaf.ancestry()
                if q.max_applications and app.app_id not in self._new_apps.setdefault(q.path, set())
            )
            for path in new_app:
                self._new_apps[path].add(app.app_id)
        add_into(self._quotas.setdefault(quota, {}), resource)
        if not preemptible:
            add_into(self._fixed.setdefault(quota, {}), resource)
        self._log.append(_Entry(paths, new_app, app.app_id, quota, preemptible, resource, trial))
        self._counted += 1

    # -- the checks ----------------------------------------------------------------------
    def _queue_refusal(self, leaf: Queue, resource: Resource) -> str | None:
        key = (leaf.path, resource)
        known = self._queue_answers.get(key)
        if known is not None and known[0] == self._counted:
            return known[1]
        answer = self._queue_answer(leaf, resource)
        self._queue_answers[key] = (self._counted, answer)
        return answer

    def _queue_answer(self, leaf: Queue, resource: Resource) -> str | None:
        for queue in leaf.ancestry():
            limit = queue.max
            if queue.parent is None or limit is None:
                continue
            ahead = self._queues.get(queue.path, {})
            for key, cap in limit.items():
                asked = resource.get_value(key)
                held, waiting = queue.allocated.get(key, 0), ahead.get(key, 0)
                if asked > 0 and held + waiting + asked > cap:
                    if not waiting:
                        return queue.max_message(key, asked)
                    shown = format_amounts(key, held, waiting, asked, cap)
                    return (
                        f"queue {queue.path} has no headroom left for it: {key} {shown[0]} allocated + {shown[1]}"
                        f" for the pods ahead of it that wait for nodes + {shown[2]} asked > {shown[3]} max"
                    )
        return None

    def _applications_refusal(self, leaf: Queue, app: Application) -> str | None:
        if app.is_running:
            return None
        for queue in leaf.ancestry():
            if not queue.max_applications:
                continue
            new = self._new_apps.get(queue.path, set())
            if app.app_id not in new and queue.running_apps + len(new) + 1 > queue.max_applications:
                return (
                    f"queue {queue.path} has reached maxapplications {queue.max_applications}: {queue.running_apps}"
                    f" running and {len(new)} more ahead of it that wait for nodes"
                )
        return None

    def _quota_refusal(self, quota: str, resource: Resource, preemptible: bool) -> Refusal | None:
        manager = self._quota_manager
        ahead = self._quotas.get(quota)
        why = manager.ceiling_refusal(quota, _plus(ahead, resource), True)
        if why is None and not preemptible:
            fixed = self._fixed.get(quota)
            why = manager.ceiling_refusal(quota, _plus(fixed, resource), False)
        if why is None:
            return None
        if ahead and any(ahead.values()):
            return Refusal(f"{why}{_AHEAD}")
        return Refusal(why, quota_alone=True)

    # -- transactions --------------------------------------------------------------------
    def checkpoint(self) -> int:
        return len(self._log)

    def rollback(self, mark: int) -> None:
        """Forget every ask counted since `checkpoint` returned `mark`."""
        while len(self._log) > mark:
            self._counted += 1
            entry = self._log.pop()
            for path in entry.queues:
                add_into(self._queues[path], entry.resource, -1)
            for path in entry.new_app:
                self._new_apps[path].discard(entry.app_id)
            add_into(self._quotas[entry.quota], entry.resource, -1)
            if not entry.preemptible:
                add_into(self._fixed[entry.quota], entry.resource, -1)
            if entry.trial is not None:
                self._undo_trial(entry.trial)

    def close(self) -> None:
        """Undo every trial increase in the user group manager."""
        self.rollback(0)

    def _undo_trial(self, trial: _UgmTrial) -> None:
        key = (trial.path, trial.app.app_id)
        left = self._trials[key] - 1
        if left:
            self._trials[key] = left
        else:
            del self._trials[key]
        app = trial.app
        last = not left and not app.is_running
        self._ugm.decrease_tracked_resource(trial.path, app.app_id, trial.resource, app.user, last)


_AHEAD = " (counting the pods ahead of it that wait for nodes)"


def _plus(ahead: dict[str, int] | None, resource: Resource) -> Resource:
    return resource + ahead if ahead else resource
