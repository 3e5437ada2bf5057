"""The user group manager: per-user and per-group usage, checked against their limits.

One manager per partition. The scheduler calls `increase_tracked_resource` when it places a
pod (True: user and group usage grew along the whole queue path; False: a limit would be
broken and nothing changed anywhere), and `decrease_tracked_resource` when the shim confirms a
pod is gone (never denied). Trackers are created by the first increase and dropped by the
decrease that empties them.

Locks, always taken in this order and never the other way round:

    manager lock  ->  user tracker lock  ->  group tracker lock

The manager lock guards the user and group maps, the limit table and every tracker's `pins`.
An update runs in three steps:

1. under the manager lock: find or create the user tracker and the application's group
   tracker, and pin both (`pins += 1`);
2. under the user lock, then the group lock (no manager lock): check the limits and change
   both trees, or neither;
3. under the manager lock: unpin, and drop a tracker that is unused and no longer pinned.

A tracker is only dropped in step 3, under the manager lock, when nobody has it pinned, and
every use of a tracker's tree happens while it is pinned. So the lost update of seed 000 (an
increase holding a tracker that a concurrent decrease has just removed from the map) cannot
happen: the tracker the increase holds is pinned, hence still in the map. Emptiness is read in
step 3 without the tracker's lock: with no pins and the manager lock held, nothing else can be
touching that tree.

Where no queue of a pod's path has a limit of any user or group (`limits_apply` False), an
increase cannot be refused, and a decrease never is: the scheduler then hands them to
`defer_increase` / `defer_decrease`, which keep them in order per queue path and application,
summing consecutive ones that move usage the same way, and they are applied in one pass
(`flush`) before anything else reads, checks or changes usage, and at the end of each
scheduling cycle. Tracking one pod then costs a dict update instead of walking two trees under
three locks; every reader still sees every pod.

A configuration change builds the new limit table without any lock, then under the manager
lock swaps it in and re-applies it to every tracker (each under its own lock), bumping the
table generation. Step 2 retries from step 1 when its trackers' generation differs from the
one it pinned with, so no increase is ever checked against a mix of old and new limits.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from itertools import chain
from typing import Any, NamedTuple, TypeVar

from core.config.schema import PartitionConfig
from core.objects.ask import UserGroup
from core.resources import Resource
from core.ugm.deferred import DECREASE, INCREASE, REMOVE_APP, DeferredOps, plain_usage
from core.ugm.documents import UsageSample, group_document, usage_samples, user_document
from core.ugm.limits import LimitTable, TrackingKind
from core.ugm.queue_tracker import Levels, QueuePathError, path_levels
from core.ugm.trackers import GroupTracker, Tracker, UserTracker

log = logging.getLogger(__name__)

_T = TypeVar("_T", bound=Tracker)
_R = TypeVar("_R")
_UNKNOWN = "\0unknown"  # an application id the user tracker does not know (never a group name)


class _Pinned(NamedTuple):
    """The trackers one update works on, pinned in step 1 (a named tuple: one per limited
    placement)."""

    user: UserTracker
    group: GroupTracker | None
    group_name: str | None
    known: bool  # the user tracker already knew the application (its group was fixed)
    table: LimitTable
    generation: int


class UserGroupManager:
    """Tracks usage per user and per group along the queue hierarchy and enforces limits."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: dict[str, UserTracker] = {}
        self._groups: dict[str, GroupTracker] = {}
        self._table = LimitTable()
        self._generation = 0
        self._deferred: dict[tuple[str, str], DeferredOps] = {}  # per (queue path, application)

    # configuration

    def update_config(self, partition: PartitionConfig) -> None:
        """Take the limits of every queue of a validated partition config and re-apply them to
        the live trackers in one step (a removed limit is cleared)."""
        table = LimitTable.from_partition(partition)
        with self._lock:
            if table == self._table:
                return
            self._generation += 1
            self._table = table
            for tracker in chain(self._users.values(), self._groups.values()):
                with tracker.lock:
                    tracker.apply_limits(table, self._generation)

    # tracking

    def limits_apply(self, queue_path: str) -> bool:
        """Whether any queue on the path, root included, has a limit of any user or group (an
        invalid path counts as limited: the full increase reports it)."""
        table = self._table
        if not table.queues:
            return False  # no limit anywhere (a malformed path is reported when usage is applied)
        try:
            levels = path_levels(queue_path)
        except QueuePathError:
            return True
        return table.limits_on(levels)  # kept per path by the table

    def defer_increase(self, queue_path: str, application_id: str, usage: Mapping[str, int], user: UserGroup) -> None:
        """Track a placed pod's usage on a path where `limits_apply` is False (so no limit can
        refuse it), at the next `flush`."""
        self._defer(queue_path, application_id, user, usage, INCREASE)

    def defer_decrease(
        self, queue_path: str, application_id: str, usage: Mapping[str, int], user: UserGroup, remove_app: bool
    ) -> None:
        """`decrease_tracked_resource` at the next `flush` (a decrease is never refused, and
        every check of a limit flushes first)."""
        self._defer(queue_path, application_id, user, usage, REMOVE_APP if remove_app else DECREASE)

    def _defer(
        self, queue_path: str, application_id: str, user: UserGroup, usage: Mapping[str, int], kind: int
    ) -> None:
        key = (queue_path, application_id)
        with self._lock:
            ops = self._deferred.get(key)
            if ops is None:
                self._deferred[key] = DeferredOps(kind, user, usage)
            else:
                ops.add(kind, user, usage)

    def flush(self) -> None:
        """Apply the deferred operations (increases forced: no limit applied when they were made).

        The whole batch is applied under the manager lock: no configuration change or tracker
        removal can come between its operations, so they need no pins and never retry, and a
        cycle's thousands of applications cost one pass instead of three lock rounds each."""
        if not self._deferred:
            return
        with self._lock:
            batch, self._deferred = self._deferred, {}
            table = self._table
            touched: dict[int, Tracker] = {}
            for (queue_path, application_id), ops in batch.items():
                for kind, user, usage in ops.operations():
                    levels = self._levels(queue_path, application_id, user)
                    if levels is None:
                        continue
                    if kind == INCREASE:
                        self._forced_increase(levels, queue_path, application_id, usage, user, table, touched)
                    else:
                        self._deferred_decrease(levels, application_id, usage, user, kind == REMOVE_APP, touched)
            for tracker in touched.values():
                self._release_unused(tracker)

    def _forced_increase(
        self,
        levels: Levels,
        queue_path: str,
        application_id: str,
        usage: Mapping[str, int],
        user: UserGroup,
        table: LimitTable,
        touched: dict[int, Tracker],
    ) -> None:
        """`increase_tracked_resource(force=True)` with the manager lock held."""
        user_tracker = self._user_tracker(user.user)
        touched[id(user_tracker)] = user_tracker
        with user_tracker.lock:
            group_name = user_tracker.app_groups.get(application_id, _UNKNOWN)
            if group_name == _UNKNOWN:
                group_name = table.resolve_group(queue_path, user.groups)
            group_tracker = None
            if group_name is not None:
                group_tracker = self._group_tracker(group_name)
                touched[id(group_tracker)] = group_tracker
            with group_tracker.lock if group_tracker is not None else nullcontext():
                _record_increase(user_tracker, group_tracker, group_name, levels, application_id, usage, table)

    def _deferred_decrease(
        self,
        levels: Levels,
        application_id: str,
        usage: Mapping[str, int],
        user: UserGroup,
        remove_app: bool,
        touched: dict[int, Tracker],
    ) -> None:
        """`decrease_tracked_resource` with the manager lock held."""
        user_tracker = self._users.get(user.user)
        if user_tracker is None:
            log.warning("decrease for %s of user %s: not tracked", application_id, user.user)
            return
        with user_tracker.lock:
            group_name = user_tracker.app_groups.get(application_id, _UNKNOWN)
            if group_name == _UNKNOWN:
                log.warning("decrease for %s of user %s: not running", application_id, user.user)
                return
            group_tracker = self._groups.get(group_name) if group_name is not None else None
            touched[id(user_tracker)] = user_tracker
            if group_tracker is not None:
                touched[id(group_tracker)] = group_tracker
            with group_tracker.lock if group_tracker is not None else nullcontext():
                _record_decrease(user_tracker, group_tracker, levels, application_id, usage, remove_app)

    def _release_unused(self, tracker: Tracker) -> None:
        """Drop a tracker nothing uses or pins any more (the manager lock is held)."""
        if tracker.pins or not tracker.is_unused():
            return
        if isinstance(tracker, UserTracker):
            if self._users.get(tracker.name) is tracker:
                del self._users[tracker.name]
        elif isinstance(tracker, GroupTracker) and self._groups.get(tracker.name) is tracker:
            del self._groups[tracker.name]

    def increase_tracked_resource(
        self,
        queue_path: str,
        application_id: str,
        usage: Mapping[str, int],
        user: UserGroup,
        *,
        force: bool = False,
    ) -> bool:
        """Add a placed pod's usage for its user and group along the whole queue path.

        True: both grew (and the application now counts as running at every level); False: a
        limit would be exceeded, or the input is unusable, and nothing changed. `force` skips
        the limit check: recovery of pods that are already running must be tracked even when
        a limit (perhaps lowered since) says no.
        """
        self.flush()
        levels = self._levels(queue_path, application_id, user)
        if levels is None:
            return False
        usage = plain_usage(usage)
        while True:
            pinned = self._pin(user, application_id, queue_path, create=True)
            assert pinned is not None
            try:
                outcome = self._increase_pinned(pinned, levels, application_id, usage, force)
            finally:
                self._unpin(pinned)
            if outcome is not None:
                return outcome

    def decrease_tracked_resource(
        self,
        queue_path: str,
        application_id: str,
        usage: Mapping[str, int],
        user: UserGroup,
        remove_app: bool,
    ) -> None:
        """Remove a gone pod's usage; `remove_app` when it was the application's last one."""
        self.flush()
        levels = self._levels(queue_path, application_id, user)
        if levels is None:
            return
        usage = plain_usage(usage)
        while True:
            pinned = self._pin(user, application_id, queue_path, create=False)
            if pinned is None:
                log.warning("decrease for %s of user %s: not tracked", application_id, user.user)
                return
            try:
                done = self._decrease_pinned(pinned, levels, application_id, usage, remove_app)
            finally:
                self._unpin(pinned)
            if done:
                return

    def denial_reason(self, queue_path: str, application_id: str, usage: Mapping[str, int], user: UserGroup) -> str:
        """Why `increase_tracked_resource` with these arguments says no: who, where, which limit."""
        self.flush()
        try:
            levels = path_levels(queue_path)
        except QueuePathError as err:
            return str(err)
        if not application_id:
            return "the pod has no application id"
        with self._lock:
            table = self._table
            user_tracker = self._users.get(user.user) or UserTracker(user.user, table, self._generation)
            with user_tracker.lock:
                group_name = user_tracker.app_groups.get(application_id, _UNKNOWN)
                denial = user_tracker.check_increase(levels, application_id, usage, table)
            if denial is None:
                if group_name == _UNKNOWN:
                    group_name = table.resolve_group(queue_path, user.groups)
                if group_name is not None:
                    group_tracker = self._groups.get(group_name) or GroupTracker(group_name, table, self._generation)
                    exempt = table.named_user_levels(user.user, levels)
                    with group_tracker.lock:
                        denial = group_tracker.check_increase(levels, application_id, usage, table, exempt)
        if denial is None:
            return f"no limit of user {user.user} or their group blocks {application_id} at {queue_path}"
        return str(denial)

    # documents

    def users_documents(self) -> list[dict[str, Any]]:
        self.flush()
        with self._lock:
            trackers = [self._users[name] for name in sorted(self._users)]
            return [self._locked(tracker, user_document) for tracker in trackers]

    def groups_documents(self) -> list[dict[str, Any]]:
        self.flush()
        with self._lock:
            trackers = [self._groups[name] for name in sorted(self._groups)]
            return [self._locked(tracker, group_document) for tracker in trackers]

    def user_document(self, name: str) -> dict[str, Any] | None:
        self.flush()
        with self._lock:
            tracker = self._users.get(name)
            return None if tracker is None else self._locked(tracker, user_document)

    def group_document(self, name: str) -> dict[str, Any] | None:
        self.flush()
        with self._lock:
            tracker = self._groups.get(name)
            return None if tracker is None else self._locked(tracker, group_document)

    def usage_samples(self) -> list[UsageSample]:
        """Usage and limit of every tracked user and group at every tracked queue."""
        self.flush()
        with self._lock:
            samples: list[UsageSample] = []
            for tracker in chain(self._users.values(), self._groups.values()):
                with tracker.lock:
                    samples.extend(usage_samples(tracker))
            return samples

    def resource_limits(self, queue_path: str, user: UserGroup) -> list[tuple[str, str, Resource]]:
        """(who, queue, max resources) of every user or group limit that applies to `user`'s
        applications in `queue_path`, from the root down (a gang's size is checked against them)."""
        self.flush()
        with self._lock:
            table = self._table
        found: list[tuple[str, str, Resource]] = []
        group = table.resolve_group(queue_path, user.groups)
        try:
            levels = path_levels(queue_path)
        except QueuePathError:
            return found
        for _, path in levels:
            limit = table.limit_for(TrackingKind.USER, user.user, path)
            if limit.max_resources is not None:
                found.append((f"user {user.user}", path, limit.max_resources))
            if group is not None:
                limit = table.limit_for(TrackingKind.GROUP, group, path)
                if limit.max_resources is not None:
                    found.append((f"group {group}", path, limit.max_resources))
        return found

    # internals

    @staticmethod
    def _levels(queue_path: str, application_id: str, user: UserGroup) -> Levels | None:
        if not application_id:
            log.error("usage of user %s at %s has no application id: not tracked", user.user, queue_path)
            return None
        try:
            return path_levels(queue_path)
        except QueuePathError as err:
            log.error("usage of user %s for %s not tracked: %s", user.user, application_id, err)
            return None

    def _pin(self, user: UserGroup, application_id: str, queue_path: str, create: bool) -> _Pinned | None:
        """Step 1: find (or create) and pin the user's tracker and the application's group's."""
        with self._lock:
            if not create and user.user not in self._users:
                return None
            user_tracker = self._user_tracker(user.user)
            with user_tracker.lock:
                known_group = user_tracker.app_groups.get(application_id, _UNKNOWN)
            known = known_group != _UNKNOWN
            if not known and not create:
                return None
            group_name = known_group if known else self._table.resolve_group(queue_path, user.groups)
            group_tracker = None
            if group_name is not None:
                group_tracker = self._group_tracker(group_name)
                group_tracker.pins += 1
            user_tracker.pins += 1
            return _Pinned(user_tracker, group_tracker, group_name, known, self._table, self._generation)

    def _user_tracker(self, name: str) -> UserTracker:
        """The user's tracker, made when there is none (the manager lock is held)."""
        tracker = self._users.get(name)
        if tracker is None:
            tracker = self._users[name] = UserTracker(name, self._table, self._generation)
        return tracker

    def _group_tracker(self, name: str) -> GroupTracker:
        """The group's tracker, made when there is none (the manager lock is held)."""
        tracker = self._groups.get(name)
        if tracker is None:
            tracker = self._groups[name] = GroupTracker(name, self._table, self._generation)
        return tracker

    def _unpin(self, pinned: _Pinned) -> None:
        """Step 3: release the pins; drop trackers nothing uses any more."""
        with self._lock:
            pinned.user.pins -= 1
            self._release_unused(pinned.user)
            if pinned.group is not None:
                pinned.group.pins -= 1
                self._release_unused(pinned.group)

    @staticmethod
    def _increase_pinned(
        pinned: _Pinned, levels: Levels, application_id: str, usage: Mapping[str, int], force: bool
    ) -> bool | None:
        """Step 2 of an increase; None asks for a retry (the world moved since step 1)."""
        user_tracker, group_tracker = pinned.user, pinned.group
        with user_tracker.lock, group_tracker.lock if group_tracker is not None else nullcontext():
            if user_tracker.generation != pinned.generation:
                return None
            if group_tracker is not None and group_tracker.generation != pinned.generation:
                return None
            current = user_tracker.app_groups.get(application_id, _UNKNOWN)
            if (current != _UNKNOWN) != pinned.known or (pinned.known and current != pinned.group_name):
                return None
            table = pinned.table
            if not force and table.limits_on(levels):
                denial = user_tracker.check_increase(levels, application_id, usage, table)
                if denial is None and group_tracker is not None:
                    exempt = table.named_user_levels(user_tracker.name, levels)
                    denial = group_tracker.check_increase(levels, application_id, usage, table, exempt)
                if denial is not None:
                    return False
            _record_increase(user_tracker, group_tracker, pinned.group_name, levels, application_id, usage, table)
            return True

    @staticmethod
    def _decrease_pinned(
        pinned: _Pinned, levels: Levels, application_id: str, usage: Mapping[str, int], remove_app: bool
    ) -> bool:
        """Step 2 of a decrease; False asks for a retry (the world moved since step 1)."""
        user_tracker, group_tracker = pinned.user, pinned.group
        with user_tracker.lock, group_tracker.lock if group_tracker is not None else nullcontext():
            current = user_tracker.app_groups.get(application_id, _UNKNOWN)
            if current == _UNKNOWN:
                log.warning("decrease for %s of user %s: not running", application_id, user_tracker.name)
                return True
            if current != pinned.group_name:
                return False
            _record_decrease(user_tracker, group_tracker, levels, application_id, usage, remove_app)
        return True

    @staticmethod
    def _locked(tracker: _T, build: Callable[[_T], _R]) -> _R:
        with tracker.lock:
            return build(tracker)


def _record_increase(
    user_tracker: UserTracker,
    group_tracker: GroupTracker | None,
    group_name: str | None,
    levels: Levels,
    application_id: str,
    usage: Mapping[str, int],
    table: LimitTable,
) -> None:
    """Add the usage to the user's tree (and the group's); the caller holds both trackers' locks."""
    user_tracker.increase(levels, application_id, usage, table)
    user_tracker.app_groups.setdefault(application_id, group_name)
    if group_tracker is not None:
        group_tracker.increase(levels, application_id, usage, table)
        group_tracker.applications[application_id] = user_tracker.name


def _record_decrease(
    user_tracker: UserTracker,
    group_tracker: GroupTracker | None,
    levels: Levels,
    application_id: str,
    usage: Mapping[str, int],
    remove_app: bool,
) -> None:
    """Take the usage off the user's tree (and the group's); the caller holds both trackers' locks."""
    user_tracker.decrease(levels, application_id, usage, remove_app)
    if group_tracker is not None:
        group_tracker.decrease(levels, application_id, usage, remove_app)
    if remove_app:
        del user_tracker.app_groups[application_id]
        if group_tracker is not None:
            group_tracker.applications.pop(application_id, None)
