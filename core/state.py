"""Everything the scheduler knows, in one place, guarded by the scheduler's lock.

`CoreState` is the partition plus the indexes the scheduler keeps beside it (which pending
pod belongs to which application, which pods are placed, why a pod waits), the user group
manager and the elastic quota manager. Outputs to the shim (binds, evictions, events) are
queued in `outbox` while the lock is held and delivered after it is released, so a callback
can never deadlock against the core.

`version` counts the changes that can let a waiting pod run (a pod ended, a node came or
changed, the configuration or a quota changed). A pod that could not run is parked with the
version it failed at and tried again only once the version moved.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

from core.callbacks import Callbacks
from core.config.schema import SchedulerConfig
from core.config.settings import Settings
from core.elastic.manager import ElasticQuotaManager
from core.events import (
    ADD,
    APP_COMPLETING,
    APP_FAILED,
    APP_FAILING,
    APP_RUNNING,
    APPLICATION,
    NODE,
    NODE_ALLOC,
    NODE_OCCUPIED,
    REMOVE,
    SET,
    EventRing,
    SchedulingEvent,
)
from core.gang.gang import GangRegistry
from core.metrics import SchedulerMetrics
from core.objects.application import Application
from core.objects.application_state import AppState
from core.objects.ask import Allocation, Ask
from core.objects.disruption_budget import DisruptionBudget
from core.objects.leaf_waits import Marks
from core.objects.partition import Partition
from core.objects.pod_rules import PodRules
from core.objects.queue import Queue
from core.preemption.kept_search import KeptSearches
from core.reservations.book import ReservationBook
from core.resources import Resource
from core.ugm.manager import UserGroupManager

HISTORY = 1000  # finished and rejected applications kept for the REST API

# Application states recorded as YuniKorn's APP SET events by `transition` (Accepted and
# Completed have reported events of their own; YuniKorn has no Starting).
_STATE_DETAILS = {
    AppState.RUNNING: APP_RUNNING,
    AppState.COMPLETING: APP_COMPLETING,
    AppState.FAILING: APP_FAILING,
    AppState.FAILED: APP_FAILED,
}


@dataclass(frozen=True, slots=True)
class Hold:
    """Room on `node_id` kept for a preemptor until its victims are gone and it is bound."""

    node_id: str
    victims: frozenset[str]
    resource: Resource
    queue_path: str


@dataclass(frozen=True, slots=True)
class Unplaced:
    """A pod Herder cannot queue yet (no queue for it, or input it could not read)."""

    ask: Ask
    reason: str


class CoreState:
    def __init__(self, config: SchedulerConfig, settings: Settings, callbacks: Callbacks, started: float = 0.0) -> None:
        self.callbacks = callbacks
        self.started = started  # the scheduler's clock when it was made
        self.config = config
        self.settings = settings
        self.partition = Partition(config.partition())
        self.ugm = UserGroupManager()
        self.ugm.update_config(config.partition())
        self.quotas = ElasticQuotaManager(settings)
        self.events = EventRing(settings.event_ring_capacity)
        self.metrics = SchedulerMetrics()
        self.version = 0
        self.ask_app: dict[str, Application] = {}
        self.ask_quota: dict[str, str] = {}
        self.unplaced: dict[str, Unplaced] = {}
        self.allocations: dict[str, Allocation] = {}
        self.foreign: dict[str, Allocation] = {}
        self.foreign_used: dict[str, int] = {}  # running sum of `foreign`: the quota pool leaves it out
        self.waiting_for_node: dict[str, Allocation] = {}
        self.reasons: dict[str, str] = {}
        self.rules: dict[str, str] = {}  # the kind of rule behind each reason (core.cycle's names)
        self.fit_failures: dict[object, tuple[int, str]] = {}  # by shape, or by pod key for rules
        self.rule_waiting: dict[str, PodRules] = {}  # pods that placing others may let run
        # the change counter at which a pod of an elastic quota last parked on its quota's
        # runtime (or waiting for room in-quota preemption may make): a larger request in a
        # quota may raise runtimes, so a new request moves the counter only if such a pod waits
        self.quota_sensitive_version = -1
        # why a request does not fit the cluster's size, while `usage_stamp()` is unchanged
        self.cluster_full: dict[Resource, str | None] = {}
        self.cluster_full_stamp: tuple[int, int] = (-1, -1)
        # which queue max a request shape passes, per leaf, while `usage_stamp()` holds
        self.over_max: dict[tuple[str, Resource], tuple[Queue, str] | None] = {}
        self.over_max_stamp: tuple[int, int] = (-1, -1)
        # pending pods whose last answer was the cluster's size alone: their leaf's count and group
        self.refusal_marks: Marks = {}
        self.preempting: dict[str, frozenset[str]] = {}
        # per quota: the lowest priority of its preemptible running pods, and when it was read
        self.preempt_floor: dict[str, tuple[tuple[int, int], int | None]] = {}
        self.evicting: set[str] = set()
        self.leaving_changes = 0  # moves whenever `evicting` does (preemption's kept searches read it)
        # cross-queue preemption (core/preemption): room held per preemptor, when each pending
        # pod was queued, the change counter a preemptor was last tried at, the next time a
        # preemption delay runs out (or now: searches left over for the next cycle)
        self.holds: dict[str, Hold] = {}
        # pods whose binding did not land, pending again in their application: when each is
        # tried again (the shim's back-off)
        self.bind_retries: dict[str, float] = {}
        # a hold was let go during the walk: its room is everyone's again once the walk ends
        # (bumping the change counter in the middle of a walk would unpark what it parks)
        self.hold_let_go = False
        # the leaf that placed the last pod: tried first while the walk would come to it first
        self.front_leaf: Queue | None = None
        self.tried_leaf: Queue | None = None  # a walk after trying `front_leaf` leaves it out
        # per queue path, the room held in or below it, while (version, placed pods, holders) holds
        self.held_room: dict[str, dict[str, int]] = {}
        self.held_room_stamp: tuple[int, int, tuple[str, ...]] = (-1, -1, ())
        # PodDisruptionBudgets by (namespace, name): which victims preemption prefers
        self.budgets: dict[tuple[str, str], DisruptionBudget] = {}
        self.pending_since: dict[str, float] = {}
        self.preempt_tried: dict[str, int] = {}
        self.kept_searches = KeptSearches()  # what preemption searches read, per node, kept until it changes
        self.preempt_due: float | None = None
        # reservations (core/reservations): nodes kept for pods that would otherwise starve
        self.reservations = ReservationBook()
        self.gangs = GangRegistry()
        self.finished_apps: deque[Application] = deque(maxlen=HISTORY)
        self.completing: dict[str, Application] = {}  # applications in state Completing
        self.rejected_apps: deque[tuple[str, str, str, float]] = deque(maxlen=HISTORY)
        self.outbox: list[Callable[[], None]] = []
        # Seconds to add to a time of the scheduler's clock to get Unix time (documents show
        # epoch nanoseconds); the scheduler sets it from its two clocks.
        self.epoch_offset: Callable[[], float] = lambda: 0.0

    def bump(self) -> None:
        self.version += 1

    def usage_stamp(self) -> tuple[int, int]:
        """Changes since which a usage-dependent answer (a queue max, the cluster's size) holds:
        the change counter and every pod put on or taken off a node. The number of placed pods
        is no stamp: a placeholder released and a pod placed in one cycle leave it as it was."""
        return (self.version, self.partition.usage_changes)

    def leaving_changed(self, node_id: str | None) -> None:
        """A pod was asked to leave its node, or its eviction was refused: what preemption
        searches kept for the node, and every search that counted the pods leaving, is stale."""
        self.leaving_changes += 1
        node = self.partition.nodes.get(node_id) if node_id is not None else None
        if node is not None:
            node.touch()

    def candidates_changed(self, app: Application, leaf: Queue | None = None) -> None:
        """An ask of the application (in `leaf`, when the caller has it) came, went, parked or was
        let go: where queue priorities order sibling queues, its queues' ranks may have moved
        (`Queue.ordered_children`)."""
        if self.partition.queue_priorities:
            if leaf is None:
                leaf = self.partition.find_queue(app.queue_path)
            if leaf is not None:
                leaf.candidates_changed()

    def emit(self, event: SchedulingEvent) -> None:
        self.outbox.append(partial(self.callbacks.report, self.events.add(event)))

    # YuniKorn's fine-grained records (allocations on nodes, application states) go to the ring
    # only (`events.add_record`: the REST batch and stream), never to the shim: they would only
    # crowd its Kubernetes Events and the simulator's journal.

    def transition(self, app: Application, target: AppState, now: float) -> None:
        """Move `app` to `target` (logged in its stateLog) and record YuniKorn's state event."""
        if target is app.state:
            return
        app.transition(target, now)
        if target is AppState.COMPLETING:
            self.completing[app.app_id] = app
        else:
            self.completing.pop(app.app_id, None)
        detail = _STATE_DETAILS.get(target)
        if detail is not None:
            self.events.add_record(now, APPLICATION, app.app_id, target.value, change=SET, detail=detail)

    def record_on_node(
        self, allocation: Allocation, added: bool, now: float, occupied: Mapping[str, int] | None = None
    ) -> None:
        """YuniKorn's NODE_ALLOC record for a pod placed on or gone from its node; for another
        scheduler's pod (seed 003) also NODE_OCCUPIED with the node's occupied resources."""
        foreign = allocation.foreign is not None
        self.events.add_record(
            now,
            NODE,
            allocation.node_id,
            "AllocationAdded" if added else "AllocationRemoved",
            "foreign" if foreign else "",
            allocation.key,
            allocation.name,
            ADD if added else REMOVE,
            NODE_ALLOC,
            allocation.resource,
        )
        if foreign:
            self.events.add_record(
                now,
                NODE,
                allocation.node_id,
                "OccupiedChanged",
                change=SET,
                detail=NODE_OCCUPIED,
                resource=dict(occupied or {}),
            )

    def drain_outbox(self) -> list[Callable[[], None]]:
        out, self.outbox = self.outbox, []
        return out
