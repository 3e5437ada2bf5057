"""The user group manager: per-user and per-group usage, checked against their limits.

One manager per partition. The scheduler calls `increase_tracked_resource` when it places a
pod (True: user and group usage grew along the whole queue path; False: a limit would be
broken and nothing changed anywhere), and `decrease_tracked_resource` when the shim confirms a
pod is gone (never denied). Trackers are created by the first increase and dropped by the
decrease that empties them.

One lock guards everything: the user and group maps, the limit table and every tracker's tree.
An update holds it from finding its trackers to changing the last level, and a tracker is only
dropped from the maps under it, by the update that empties it. So seed 000's lost update (an
increase holding a tracker that a concurrent decrease has just removed from the map) cannot
happen, and a user's and a group's trees change together or not at all. Seed 000 gives each
user and group tracker a lock of its own so that different users' updates run in parallel;
here every call comes from the core, which holds its own lock around it, and Python runs one
thread at a time, so those locks (and the pins that kept a found tracker alive between them)
bought no parallelism and cost three lock rounds per limited placement.

Where no queue of a pod's path has a limit of any user or group (`limits_apply` False), an
increase cannot be refused, and a decrease never is: the scheduler then hands them to
`defer_increase` / `defer_decrease`, which keep them in order per queue path and application,
summing consecutive ones that move usage the same way, and they are applied in one pass
(`flush`) before anything else reads, checks or changes usage, and at the end of each
scheduling cycle. Tracking one pod then costs a dict update instead of walking two trees;
every reader still sees every pod.

On a limited path an application's pods after its second take a kept route through both trees
(routes.py): the levels its earlier pods reached and the caps that bind them there. The route is
forgotten when the application stops running and every route when the limits change.

A configuration change builds the new limit table without the lock, then under it swaps the
table in and re-applies it to every tracker, so no increase is ever checked against a mix of
old and new limits.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from itertools import chain
from typing import Any

from core.config.schema import PartitionConfig
from core.objects.ask import UserGroup
from core.resources import Resource
from core.ugm.deferred import DECREASE, INCREASE, REMOVE_APP, DeferredOps, plain_usage
from core.ugm.documents import UsageSample, group_document, usage_samples, user_document
from core.ugm.limits import LimitTable, TrackingKind
from core.ugm.queue_tracker import Levels, QueuePathError, path_levels
from core.ugm.routes import Route, route_of
from core.ugm.trackers import GroupTracker, Tracker, UserTracker

log = logging.getLogger(__name__)

_UNKNOWN = "\0unknown"  # an application id the user tracker does not know (never a group name)


class UserGroupManager:
    """Tracks usage per user and per group along the queue hierarchy and enforces limits."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: dict[str, UserTracker] = {}
        self._groups: dict[str, GroupTracker] = {}
        self._table = LimitTable()
        self._deferred: dict[tuple[str, str], DeferredOps] = {}  # per (queue path, application)
        self._routes: dict[tuple[str, str], Route] = {}  # per (user, running application)

    # configuration

    def update_config(self, partition: PartitionConfig) -> None:
        """Take the limits of every queue of a validated partition config and re-apply them to
        the live trackers in one step (a removed limit is cleared)."""
        table = LimitTable.from_partition(partition)
        with self._lock:
            if table == self._table:
                return
            self._table = table
            self._routes.clear()
            for tracker in chain(self._users.values(), self._groups.values()):
                tracker.apply_limits(table)

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
        """Apply the deferred operations (increases forced: no limit applied when they were made),
        the whole batch under one hold of the lock."""
        if not self._deferred:
            return
        with self._lock:
            batch, self._deferred = self._deferred, {}
            table = self._table
            for (queue_path, application_id), ops in batch.items():
                for kind, user, usage in ops.operations():
                    levels = self._levels(queue_path, application_id, user)
                    if levels is None:
                        continue
                    if kind == INCREASE:
                        self._increase(levels, queue_path, application_id, usage, user, table, check=False)
                    else:
                        self._decrease(levels, application_id, usage, user, kind == REMOVE_APP)

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
        with self._lock:
            return self._increase(levels, queue_path, application_id, usage, user, self._table, check=not force)

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
        with self._lock:
            self._decrease(levels, application_id, usage, user, remove_app)

    def _increase(
        self,
        levels: Levels,
        queue_path: str,
        application_id: str,
        usage: Mapping[str, int],
        user: UserGroup,
        table: LimitTable,
        check: bool,
    ) -> bool:
        """Check the limits (when `check`), then add the usage to the user's tree and the
        group's; the lock is held. False: a limit says no, nothing changed, and a tracker made
        for this increase is dropped again. A running application's pods on a limited path take
        the route its second pod left (routes.py): its caps, then an add at each level."""
        route = self._routes.get((user.user, application_id))
        if route is not None and route.path == queue_path:
            if check and not route.fits(usage):
                return False
            route.add(usage)
            if route.group is not None:
                route.group.applications[application_id] = user.user
            return True
        user_tracker = self._user_tracker(user.user)
        group_name = user_tracker.app_groups.get(application_id, _UNKNOWN)
        running = group_name != _UNKNOWN
        if not running:
            group_name = table.resolve_group(queue_path, user.groups)
        group_tracker = self._group_tracker(group_name) if group_name is not None else None
        if check and table.limits_on(levels):
            denial = user_tracker.check_increase(levels, application_id, usage, table)
            if denial is None and group_tracker is not None:
                exempt = table.named_user_levels(user_tracker.name, levels)
                denial = group_tracker.check_increase(levels, application_id, usage, table, exempt)
            if denial is not None:
                self._release_unused(user_tracker)
                if group_tracker is not None:
                    self._release_unused(group_tracker)
                return False
        user_tracker.increase(levels, application_id, usage, table)
        user_tracker.app_groups.setdefault(application_id, group_name)
        if group_tracker is not None:
            group_tracker.increase(levels, application_id, usage, table)
            group_tracker.applications[application_id] = user_tracker.name
        if check and running:  # a second pod on a limited path: the next ones take its way
            self._routes[(user.user, application_id)] = route_of(queue_path, levels, user_tracker, group_tracker, table)
        return True

    def _decrease(
        self, levels: Levels, application_id: str, usage: Mapping[str, int], user: UserGroup, remove_app: bool
    ) -> None:
        """Take the usage off the user's tree and the group's, dropping a tracker it empties;
        the lock is held."""
        user_tracker = self._users.get(user.user)
        if user_tracker is None:
            log.warning("decrease for %s of user %s: not tracked", application_id, user.user)
            return
        group_name = user_tracker.app_groups.get(application_id, _UNKNOWN)
        if group_name == _UNKNOWN:
            log.warning("decrease for %s of user %s: not running", application_id, user.user)
            return
        group_tracker = self._groups.get(group_name) if group_name is not None else None
        user_tracker.decrease(levels, application_id, usage, remove_app)
        if group_tracker is not None:
            group_tracker.decrease(levels, application_id, usage, remove_app)
        if remove_app:
            self._routes.pop((user.user, application_id), None)
            del user_tracker.app_groups[application_id]
            if group_tracker is not None:
                group_tracker.applications.pop(application_id, None)
        self._release_unused(user_tracker)
        if group_tracker is not None:
            self._release_unused(group_tracker)

    def _release_unused(self, tracker: Tracker) -> None:
        """Drop a tracker nothing uses any more (the lock is held)."""
        if not tracker.is_unused():
            return
        if isinstance(tracker, UserTracker):
            if self._users.get(tracker.name) is tracker:
                del self._users[tracker.name]
        elif isinstance(tracker, GroupTracker) and self._groups.get(tracker.name) is tracker:
            del self._groups[tracker.name]

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
            user_tracker = self._users.get(user.user) or UserTracker(user.user, table)
            group_name = user_tracker.app_groups.get(application_id, _UNKNOWN)
            denial = user_tracker.check_increase(levels, application_id, usage, table)
            if denial is None:
                if group_name == _UNKNOWN:
                    group_name = table.resolve_group(queue_path, user.groups)
                if group_name is not None:
                    group_tracker = self._groups.get(group_name) or GroupTracker(group_name, table)
                    exempt = table.named_user_levels(user.user, levels)
                    denial = group_tracker.check_increase(levels, application_id, usage, table, exempt)
        if denial is None:
            return f"no limit of user {user.user} or their group blocks {application_id} at {queue_path}"
        return str(denial)

    # documents

    def users_documents(self) -> list[dict[str, Any]]:
        self.flush()
        with self._lock:
            trackers = [self._users[name] for name in sorted(self._users)]
            return [user_document(tracker) for tracker in trackers]

    def groups_documents(self) -> list[dict[str, Any]]:
        self.flush()
        with self._lock:
            trackers = [self._groups[name] for name in sorted(self._groups)]
            return [group_document(tracker) for tracker in trackers]

    def user_document(self, name: str) -> dict[str, Any] | None:
        self.flush()
        with self._lock:
            tracker = self._users.get(name)
            return None if tracker is None else user_document(tracker)

    def group_document(self, name: str) -> dict[str, Any] | None:
        self.flush()
        with self._lock:
            tracker = self._groups.get(name)
            return None if tracker is None else group_document(tracker)

    def usage_samples(self) -> list[UsageSample]:
        """Usage and limit of every tracked user and group at every tracked queue."""
        self.flush()
        with self._lock:
            samples: list[UsageSample] = []
            for tracker in chain(self._users.values(), self._groups.values()):
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

    def _user_tracker(self, name: str) -> UserTracker:
        """The user's tracker, made when there is none (the lock is held)."""
        tracker = self._users.get(name)
        if tracker is None:
            tracker = self._users[name] = UserTracker(name, self._table)
        return tracker

    def _group_tracker(self, name: str) -> GroupTracker:
        """The group's tracker, made when there is none (the lock is held)."""
        tracker = self._groups.get(name)
        if tracker is None:
            tracker = self._groups[name] = GroupTracker(name, self._table)
        return tracker
