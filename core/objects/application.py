"""An application: the pods that share an application id, in one leaf queue, for one user.

Pending asks are kept in the order they are tried: priority (highest first), then creation
time, then key. An ask that cannot run now is *parked* with the partition's change counter;
parked asks are tried again only after something changed that could let them run (a pod
ended, a node came, the config changed). That keeps a cycle from retrying thousands of
pending pods that cannot fit, while a new ask is always tried at once. An ask *held* (a gang's
pod waiting for its placeholders, core/gang/; a pod whose binding did not land, waiting out its
back-off) is not tried again on any change, only once `release_held` says its gang may go on
(or `release_one` that its back-off is over).
"""

from __future__ import annotations

from bisect import insort
from itertools import count

from core.objects.application_state import AppState, check_transition
from core.objects.ask import Allocation, Ask, UserGroup

_COMPACT_AT = 256
_CREATED = count()


class Application:
    """One application: its pods share one namespace and one user (`foreign_to` says who may join)."""

    __slots__ = (
        "_head",
        "_in_pending",
        "_parked_version",
        "_pending",
        "_revision",
        "_top",
        "allocations",
        "app_id",
        "asks",
        "created",
        "finished_time",
        "held",
        "namespace",
        "parked",
        "pending_resource",
        "queue_path",
        "reason",
        "state",
        "state_log",
        "state_time",
        "submission_time",
        "tags",
        "used",
        "user",
    )

    def foreign_to(self, ask: Ask) -> str | None:
        """Why `ask` may not join this application (another namespace or user), or None."""
        if ask.namespace != self.namespace:
            return (
                f"application {self.app_id} belongs to namespace {self.namespace or '(none)'}; a pod of namespace"
                f" {ask.namespace or '(none)'} cannot join it (use another applicationId)"
            )
        if ask.user.user != self.user.user:
            return (
                f"application {self.app_id} belongs to user {self.user.user}; a pod of user {ask.user.user}"
                " cannot join it (use another applicationId)"
            )
        return None

    def __init__(
        self,
        app_id: str,
        queue_path: str,
        user: UserGroup,
        tags: dict[str, str],
        submission_time: float,
        namespace: str = "",
    ) -> None:
        self.app_id = app_id
        self.created = next(_CREATED)  # applications listed in the order they were made
        self.namespace = namespace
        self.queue_path = queue_path
        self.user = user
        self.tags = tags
        self.submission_time = submission_time
        self.state = AppState.NEW
        self.state_time = submission_time
        self.state_log: list[tuple[float, AppState]] = []  # every transition: (when, new state)
        self.finished_time: float | None = None
        self.reason = ""
        self.asks: dict[str, Ask] = {}
        self.allocations: dict[str, Allocation] = {}
        self.used: dict[str, int] = {}
        self.pending_resource: dict[str, int] = {}
        self.parked: dict[str, Ask] = {}
        self.held: dict[str, Ask] = {}
        self._pending: list[tuple[int, float, str]] = []
        self._in_pending: set[str] = set()
        self._head = 0
        self._parked_version = -1
        # Every change to the pending or parked asks bumps the revision; the best pending
        # priority is kept with the revision it was read at, as ordering reads it for every
        # application of a leaf each time one application's best ask changes.
        self._revision = 0
        self._top: tuple[int, int] = (-1, 0)

    # -- state ---------------------------------------------------------------------------
    def transition(self, target: AppState, now: float) -> None:
        if target is self.state:
            return
        check_transition(self.state, target)
        self.state = target
        self.state_time = now
        self.state_log.append((now, target))

    @property
    def is_running(self) -> bool:
        """Counted as a running application (has at least one allocation)."""
        return bool(self.allocations)

    # -- asks ----------------------------------------------------------------------------
    def add_ask(self, ask: Ask) -> None:
        self.asks[ask.key] = ask
        for key, val in ask.resource.items():
            self.pending_resource[key] = self.pending_resource.get(key, 0) + val
        self._push(ask)

    def _push(self, ask: Ask) -> None:
        insort(self._pending, (-ask.priority, ask.created, ask.key), lo=self._head)
        self._in_pending.add(ask.key)
        self._revision += 1

    def remove_ask(self, key: str) -> Ask | None:
        ask = self.asks.pop(key, None)
        if ask is None:
            return None
        self._revision += 1
        self._in_pending.discard(key)
        self.parked.pop(key, None)
        self.held.pop(key, None)
        for res, val in ask.resource.items():
            left = self.pending_resource.get(res, 0) - val
            if left:
                self.pending_resource[res] = left
            else:
                self.pending_resource.pop(res, None)
        return ask

    def unpark(self, version: int) -> None:
        """Asks parked before `version` become candidates again."""
        if self.parked and self._parked_version != version:
            for ask in self.parked.values():
                self._push(ask)
            self.parked.clear()

    def park(self, key: str, version: int) -> None:
        self.unpark(version)
        ask = self.asks.get(key)
        if ask is None:
            return
        self._in_pending.discard(key)
        self.parked[key] = ask
        self._parked_version = version
        self._revision += 1

    def hold(self, key: str) -> None:
        """Keep the ask out of the candidates until `release_held`, whatever changes meanwhile."""
        ask = self.asks.get(key)
        if ask is None:
            return
        self._in_pending.discard(key)
        self.parked.pop(key, None)
        self.held[key] = ask
        self._revision += 1

    def release_held(self) -> None:
        for ask in self.held.values():
            self._push(ask)
        self.held.clear()

    def release_one(self, key: str) -> bool:
        """The one held ask becomes a candidate again (its binding's back-off is over)."""
        ask = self.held.pop(key, None)
        if ask is None:
            return False
        self._push(ask)
        return True

    def next_candidate(self, version: int) -> Ask | None:
        """The first ask to try now, or None when every pending ask is parked."""
        self.unpark(version)
        pending = self._pending
        while self._head < len(pending):
            key = pending[self._head][2]
            if key in self._in_pending:
                return self.asks[key]
            self._head += 1
        if self._head:
            self._pending = []
            self._head = 0
        return None

    def take(self, key: str) -> Ask | None:
        """The ask was placed: it leaves the pending set."""
        ask = self.remove_ask(key)
        if self._head > _COMPACT_AT and self._head * 2 > len(self._pending):
            self._pending = self._pending[self._head :]
            self._head = 0
        return ask

    def has_candidates(self, version: int) -> bool:
        return self.next_candidate(version) is not None

    def top_priority(self, version: int) -> int:
        """The priority of the first ask to try now (0 when every pending ask is parked)."""
        revision, priority = self._top
        if revision == self._revision and not (self.parked and self._parked_version != version):
            return priority
        ask = self.next_candidate(version)
        priority = ask.priority if ask is not None else 0
        self._top = (self._revision, priority)
        return priority

    # -- allocations ---------------------------------------------------------------------
    def add_allocation(self, allocation: Allocation) -> None:
        self.allocations[allocation.key] = allocation
        for key, val in allocation.resource.items():
            self.used[key] = self.used.get(key, 0) + val

    def remove_allocation(self, key: str) -> Allocation | None:
        allocation = self.allocations.pop(key, None)
        if allocation is None:
            return None
        for res, val in allocation.resource.items():
            left = self.used.get(res, 0) - val
            if left:
                self.used[res] = left
            else:
                self.used.pop(res, None)
        return allocation
