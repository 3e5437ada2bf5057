"""The core's public interface: one `Scheduler` per partition.

Inputs are thread-safe and cheap: they record the change under the lock and return;
placement happens in `schedule()`. Outputs (bind, evict, report) go through the `Callbacks`
the shim provides, always after the lock is released. Time and threads stay outside: the
caller passes `now` (or the injected clock supplies it), the operator runs `schedule()` and
`recycle()` in threads, and the simulator calls them on its virtual clock, so a simulation is
deterministic.

    sched = Scheduler(callbacks, config=None, settings=None, clock=time.monotonic, wall_clock=time.time)
    sched.update_config(cfg)  sched.update_settings(s)
    sched.update_node(info)   sched.remove_node(node_id)
    sched.add_ask(ask)        sched.remove_ask(key)
    sched.add_allocation(a)   sched.release_allocation(key)   sched.eviction_failed(key, why)
    sched.update_quota(spec)  sched.remove_quota(name)
    sched.schedule(now) -> allocations made      sched.recycle(now) -> evictions asked
    sched.preemption_due() -> when a pending pod's preemption delay next runs out
    sched.reservation_due() -> when the next front pod's reservation delay runs out
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

from core import dao, lifecycle, pending
from core.callbacks import Callbacks
from core.config import ConfigError, default_config, validate_config
from core.config.schema import SchedulerConfig
from core.config.settings import Settings
from core.cycle import allocate_one, request_eviction
from core.elastic.manager import QuotaStatus
from core.elastic.spec import ElasticQuotaSpec
from core.events import CONFIG, INPUT_IGNORED, NODE, QUOTA, REQUEST, EventRing, SchedulingEvent
from core.fit import node_verdicts
from core.gang import tidy as gangs
from core.lifecycle import COMPLETING_TIMEOUT, RECOVERY_QUEUE
from core.metrics import SchedulerMetrics
from core.objects.ask import Allocation, Ask
from core.objects.disruption_budget import DisruptionBudget
from core.objects.node import Node
from core.objects.node_info import NodeInfo
from core.objects.queue import Queue
from core.objects.volumes import PersistentVolume, PersistentVolumeClaim, StorageClass, VolumeCatalog
from core.preemption.holds import drop_holds_on
from core.preemption.preemptor import preempt
from core.reservations import reserve as reservations
from core.reservations.view import idle_reserved, reservation_documents, reserved_total
from core.resize import resize
from core.resources import Resource
from core.scale_up import EMPTY, ScaleUpView, scale_up_view
from core.state import CoreState
from core.ugm.documents import UsageSample

__all__ = ["COMPLETING_TIMEOUT", "RECOVERY_QUEUE", "Callbacks", "Scheduler"]


class _StateLock:
    """The scheduler's lock around its state, as a context manager: the outputs queued while it
    is held (taken under it) are delivered after it is released, also when the body raised (a
    ConfigRefused event before the error, say). A class rather than a generator: inputs take it
    several times a pod, and a generator's setup cost more than the work of many of them.
    Re-entrant like the lock: an inner exit delivers what was queued so far, the outer one the rest."""

    __slots__ = ("_lock", "_state")

    def __init__(self, lock: threading.RLock, state: CoreState) -> None:
        self._lock = lock
        self._state = state

    def __enter__(self) -> CoreState:
        self._lock.acquire()
        return self._state

    def __exit__(self, *exc: object) -> None:
        try:
            outbox = self._state.drain_outbox()
        finally:
            self._lock.release()
        for deliver in outbox:
            deliver()


class Scheduler:
    def __init__(
        self,
        callbacks: Callbacks,
        config: SchedulerConfig | None = None,
        settings: Settings | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] | None = None,
    ) -> None:
        config = config or default_config()
        problems = validate_config(config)
        if problems:
            raise ConfigError(problems)
        self._clock = clock
        self._lock = threading.RLock()
        self._work = threading.Event()
        self._state = CoreState(config, settings or Settings(), callbacks, clock())
        self._state_lock = _StateLock(self._lock, self._state)
        wall = wall_clock or (time.time if clock is time.monotonic else clock)
        self._state.epoch_offset = lambda: wall() - clock()
        self._scale_up = EMPTY
        self._scale_up_stamp: tuple[object, ...] = ()
        self._scale_up_at = 0.0  # when it was last worked out (perf_counter) and what that cost
        self._scale_up_cost = 0.0
        # every queue in document order, with the root and the structure generation it was read at
        self._queue_order: list[Queue] = []
        self._queue_order_of: tuple[object, int] = (None, -1)

    # -- plumbing ------------------------------------------------------------------------
    def _locked(self) -> _StateLock:
        """`with self._locked() as state:` the state under the lock; the outputs queued meanwhile
        go out once it is released."""
        return self._state_lock

    def _now(self, now: float | None) -> float:
        return self._clock() if now is None else now

    def _changed(self, state: CoreState) -> None:
        state.bump()
        if not self._work.is_set():  # setting it takes a lock; a cycle clears it before it reads the state
            self._work.set()

    @property
    def events(self) -> EventRing:
        return self._state.events

    @property
    def metrics(self) -> SchedulerMetrics:
        return self._state.metrics

    @property
    def settings(self) -> Settings:
        return self._state.settings

    @property
    def config(self) -> SchedulerConfig:
        return self._state.config

    def has_work(self) -> bool:
        return self._work.is_set()

    def wait_for_work(self, timeout: float) -> bool:
        """Block until an input arrives or `timeout` passes (for the operator's cycle thread)."""
        return self._work.wait(timeout)

    # -- configuration -------------------------------------------------------------------
    def update_config(self, config: SchedulerConfig, now: float | None = None) -> None:
        """Validate the whole configuration, then apply it in one step; on error nothing changes."""
        problems = validate_config(config)
        with self._locked() as state:
            when = self._now(now)
            if problems:
                state.metrics.config_refused += 1
                state.emit(SchedulingEvent(when, CONFIG, "queues.yaml", "ConfigRefused", "; ".join(problems)))
                raise ConfigError(problems)
            state.config = config
            before = {app.app_id: app.queue_path for app in state.partition.applications.values()}
            state.partition.apply_config(config.partition())
            state.ugm.update_config(config.partition())
            self._move_user_usage(state, before)
            state.fit_failures.clear()
            state.metrics.config_updates += 1
            applied = f"checksum {config.checksum}"
            if config.warnings:
                applied += "; warnings: " + "; ".join(config.warnings)
            state.emit(SchedulingEvent(when, CONFIG, "queues.yaml", "ConfigApplied", applied))
            lifecycle.retry_unplaced(state, when)
            self._changed(state)

    @staticmethod
    def _move_user_usage(state: CoreState, before: dict[str, str]) -> None:
        """Applications a config change moved (into a draining queue) take their user and group
        usage along, so the pods' releases find it where they look."""
        for app in state.partition.applications.values():
            old_path = before.get(app.app_id, app.queue_path)
            if old_path == app.queue_path or not app.used:
                continue
            state.ugm.decrease_tracked_resource(old_path, app.app_id, app.used, app.user, True)
            state.ugm.increase_tracked_resource(app.queue_path, app.app_id, app.used, app.user, force=True)

    def update_settings(self, settings: Settings) -> None:
        with self._locked() as state:
            state.settings = settings
            state.quotas.update_settings(settings)
            self._changed(state)

    # -- nodes ---------------------------------------------------------------------------
    def update_node(self, info: NodeInfo, now: float | None = None) -> None:
        with self._locked() as state:
            partition = state.partition
            node = partition.nodes.get(info.node_id)
            old_capacity = None
            if node is None:
                node = Node(info)
                partition.nodes[info.node_id] = node
                node.journal = partition.node_journal
                node.journal.note(info.node_id)
                state.emit(SchedulingEvent(self._now(now), NODE, info.node_id, "NodeAdded", resource=info.capacity))
            elif node.info == info:
                return
            else:
                old_capacity = node.info.capacity
                node.replace_info(info)
            partition.node_index.put(node)
            if old_capacity is not None and node.held:
                reservations.node_changed(state, info.node_id, self._now(now))
            for key, allocation in list(state.waiting_for_node.items()):
                if allocation.node_id == info.node_id:
                    del state.waiting_for_node[key]
                    lifecycle.add_allocation(state, allocation, self._now(now))
            self._capacity_changed(state, old_capacity, info.capacity)
            self._changed(state)

    def remove_node(self, node_id: str, now: float | None = None) -> None:
        """A node left: the pods on it are gone with it."""
        with self._locked() as state:
            node = state.partition.nodes.get(node_id)
            if node is None:
                return
            when = self._now(now)
            drop_holds_on(state, node_id=node_id)
            reservations.node_removed(state, node_id, when)
            for key in list(node.allocations) + list(node.foreign):
                lifecycle.release(state, key, when)
            del state.partition.nodes[node_id]
            state.partition.node_journal.note(node_id)
            node.journal = None
            state.partition.node_index.remove(node_id)
            state.emit(SchedulingEvent(when, NODE, node_id, "NodeRemoved"))
            self._capacity_changed(state, node.info.capacity, None)
            self._changed(state)

    def set_namespace_labels(self, namespace: str, labels: Mapping[str, str]) -> None:
        """A namespace's labels now, for the `namespaceSelector` of rules between pods: a change
        may let a waiting pod in (or keep the next one out), so waiting pods are tried again."""
        with self._locked() as state:
            if state.partition.topology.set_namespace_labels(namespace, labels):
                self._changed(state)

    # -- disruption budgets (which victims preemption prefers, core/objects/disruption_budget.py)
    def update_disruption_budget(self, budget: DisruptionBudget) -> None:
        """A PodDisruptionBudget came or changed (its selector, or how many pods it allows to
        go now). It changes which victims preemption takes, never whether a pod may run."""
        with self._locked() as state:
            if state.budgets.get((budget.namespace, budget.name)) != budget:
                state.budgets[(budget.namespace, budget.name)] = budget
                self._work.set()  # a cycle's preemption pass may take other victims now

    def remove_disruption_budget(self, namespace: str, name: str) -> None:
        with self._locked() as state:
            if state.budgets.pop((namespace, name), None) is not None:
                self._work.set()

    def disruption_budget(self, namespace: str, name: str) -> DisruptionBudget | None:
        """The budget as the core last heard of it, or None."""
        with self._lock:
            return self._state.budgets.get((namespace, name))

    # -- storage (kube-scheduler's volume filters, core/objects/volumes.py) -------------------
    def update_storage_class(self, storage_class: StorageClass) -> None:
        self._storage_changed(lambda catalog: catalog.put_class(storage_class))

    def remove_storage_class(self, name: str) -> None:
        self._storage_changed(lambda catalog: catalog.remove_class(name))

    def update_volume(self, volume: PersistentVolume) -> None:
        self._storage_changed(lambda catalog: catalog.put_volume(volume))

    def remove_volume(self, name: str) -> None:
        self._storage_changed(lambda catalog: catalog.remove_volume(name))

    def update_claim(self, claim: PersistentVolumeClaim) -> None:
        self._storage_changed(lambda catalog: catalog.put_claim(claim))

    def remove_claim(self, key: str) -> None:
        self._storage_changed(lambda catalog: catalog.remove_claim(key))

    def _storage_changed(self, change: Callable[[VolumeCatalog], bool]) -> None:
        """A storage object came, changed or went: pods waiting on a claim are tried again."""
        with self._locked() as state:
            if change(state.partition.volumes):
                self._changed(state)

    @staticmethod
    def _capacity_changed(state: CoreState, old: Resource | None, new: Resource | None) -> None:
        state.partition.node_capacity_changed(old, new)
        state.quotas.set_cluster_total(Resource(state.partition.cluster_capacity))
        state.fit_failures.clear()
        state.gangs.nodes_changed()

    # -- asks ----------------------------------------------------------------------------
    def add_ask(self, ask: Ask, now: float | None = None) -> None:
        with self._locked() as state:
            when = self._now(now)
            if ask.key in state.allocations:
                return
            previous = state.ask_app.get(ask.key)
            before = previous.asks.get(ask.key) if previous is not None else None
            if previous is not None:
                if before == ask:
                    return
                lifecycle.remove_ask(state, ask.key, when)
            unplaced = state.unplaced.pop(ask.key, None)
            if ask.notices:
                before = before or (unplaced.ask if unplaced else None)
                if before is None or before.notices != ask.notices:  # said once, not at every watch event
                    message = "; ".join(ask.notices)
                    state.emit(
                        SchedulingEvent(
                            when, REQUEST, ask.key, INPUT_IGNORED, message, ask.application_id, ask.display_name
                        )
                    )
            lifecycle.queue_ask(state, ask, when)
            gangs.tidy(state, when)
            self._work.set()

    def remove_ask(self, key: str, now: float | None = None) -> None:
        """A pending pod was deleted (or was bound by someone else)."""
        with self._locked() as state:
            lifecycle.remove_ask(state, key, self._now(now))
            gangs.tidy(state, self._now(now))
            self._changed(state)

    # -- allocations ---------------------------------------------------------------------
    def add_allocation(self, allocation: Allocation, now: float | None = None) -> None:
        """A pod already on a node: Herder's own (recovery) or another scheduler's (foreign)."""
        with self._locked() as state:
            lifecycle.add_allocation(state, allocation, self._now(now))
            gangs.tidy(state, self._now(now))
            self._changed(state)

    def add_allocations(self, allocations: Iterable[Allocation], now: float | None = None) -> None:
        """Pods already on nodes, in order (a restart's listing): as `add_allocation` of each in
        turn, under one hold of the lock, with one time (`now`) for them all."""
        with self._locked() as state:
            when = self._now(now)
            for allocation in allocations:
                lifecycle.add_allocation(state, allocation, when)
                if state.gangs.touched:  # what `gangs.tidy` reads: nothing to do without it
                    gangs.tidy(state, when)
                self._changed(state)

    def resize_allocation(self, key: str, resource: Resource) -> bool:
        """A running pod's requests changed in place (its own or a foreign pod): every count follows."""
        with self._locked() as state:
            changed = resize(state, key, resource)
            if changed:
                self._changed(state)  # room a smaller pod freed may place a waiting one
            return changed

    def release_allocation(self, key: str, now: float | None = None) -> None:
        """The pod finished or was deleted, or its bind failed: every tracker rolls back."""
        with self._locked() as state:
            lifecycle.release(state, key, self._now(now))
            gangs.tidy(state, self._now(now))
            self._changed(state)

    def binding_failed(self, key: str, retry_after: float, now: float | None = None) -> None:
        """The pod's binding did not land and the server shows it still pending: every tracker
        rolls back, and the pod waits in its application (not tried for `retry_after` seconds)."""
        with self._locked() as state:
            when = self._now(now)
            lifecycle.binding_failed(state, key, when + retry_after, when)
            gangs.tidy(state, when)
            self._changed(state)

    def eviction_failed(self, key: str, reason: str, now: float | None = None) -> None:
        """The shim could not evict (a PodDisruptionBudget said no): the recycler moves on."""
        with self._locked() as state:
            when = self._now(now)
            allocation = state.allocations.get(key)
            state.evicting.discard(key)
            state.quotas.eviction_refused(key, when)  # a search passes the pod over for a while
            state.leaving_changed(allocation.node_id if allocation is not None else None)
            state.metrics.evictions_refused += 1
            for ask_key, victims in list(state.preempting.items()):
                if key in victims:
                    del state.preempting[ask_key]
            drop_holds_on(state, victim=key)
            name = allocation.display_name if allocation else key
            state.emit(SchedulingEvent(when, REQUEST, key, "EvictionRefused", reason, name=name))
            self._changed(state)

    # -- elastic quotas ------------------------------------------------------------------
    def update_quota(self, spec: ElasticQuotaSpec, now: float | None = None) -> None:
        with self._locked() as state:
            when = self._now(now)
            try:
                state.quotas.update_quota(spec)
            except ValueError as err:
                state.metrics.quota_refused += 1
                state.emit(SchedulingEvent(when, QUOTA, spec.name, "QuotaRefused", str(err)))
                raise
            state.emit(SchedulingEvent(when, QUOTA, spec.name, "QuotaApplied"))
            self._reresolve_quotas(state)
            lifecycle.retry_unplaced(state, when)  # a pod refused for naming a parent quota may fit now
            self._changed(state)

    def remove_quota(self, name: str, now: float | None = None) -> None:
        with self._locked() as state:
            when = self._now(now)
            try:
                state.quotas.remove_quota(name)
            except ValueError as err:
                state.metrics.quota_refused += 1
                state.emit(SchedulingEvent(when, QUOTA, name, "QuotaRefused", str(err)))
                raise
            state.emit(SchedulingEvent(when, QUOTA, name, "QuotaRemoved"))
            self._reresolve_quotas(state)
            lifecycle.retry_unplaced(state, when)
            self._changed(state)

    @staticmethod
    def _reresolve_quotas(state: CoreState) -> None:
        """Pods follow quota changes (a namespace's quota may appear or go): pending ones, and
        running ones too, as Koordinator moves running pods out of the default quota when their
        namespace's quota is created; otherwise their usage would not count against it."""
        for key, app in state.ask_app.items():
            ask = app.asks.get(key)
            if ask is None:
                continue
            quota = state.quotas.resolve(ask.namespace, ask.quota)
            if state.ask_quota.get(key) != quota:
                state.quotas.remove_request(key)
                state.quotas.add_request(key, quota, ask.resource, ask.preemptible)
                state.ask_quota[key] = quota
        for key, allocation in state.allocations.items():
            ask = allocation.ask
            if ask is None:
                continue
            quota = state.quotas.resolve(ask.namespace, ask.quota)
            if state.ask_quota.get(key) != quota:
                state.quotas.release(key)
                state.quotas.remove_request(key)
                state.quotas.add_request(key, quota, ask.resource, ask.preemptible)
                state.quotas.allocate(
                    key, quota, ask.resource, ask.preemptible, allocation.priority, allocation.allocation_time
                )
                state.ask_quota[key] = quota

    def quota_status(self) -> dict[str, QuotaStatus]:
        with self._locked() as state:
            return state.quotas.status()

    def quota_tree(self) -> tuple[dict[str, ElasticQuotaSpec], dict[str, int]]:
        """The quota specs by name and the pods counting against each (what the webhook validates against)."""
        with self._lock:
            return self._state.quotas.tree()

    # -- running -------------------------------------------------------------------------
    def schedule(self, now: float | None = None) -> int:
        """One scheduling cycle: place every pending pod that can run now."""
        start = time.perf_counter()
        when = self._now(now)
        placed = 0
        self._work.clear()
        with self._locked() as state:
            state.metrics.cycles += 1
            gangs.expire(state, when)
            gangs.tidy(state, when)
            lifecycle.expire_completing(state, when)
            if state.bind_retries:
                lifecycle.retry_bindings(state, when)
        while True:
            with self._lock:
                state = self._state
                began = time.perf_counter()
                allocation = allocate_one(state, when)
                if allocation is not None:
                    state.metrics.decision_latency.observe(time.perf_counter() - began)
                    state.outbox.append(_binder(state.callbacks, allocation))
                outbox = state.drain_outbox()
            for deliver in outbox:
                deliver()
            if allocation is None:
                break
            placed += 1
        with self._locked() as state:
            reservations.reserve(state, when)
            if preempt(state, when):
                self._work.set()  # the preemptors take the held room once their victims are gone
            state.ugm.flush()  # the cycle's placements on paths without limits, summed per application
        self._state.metrics.cycle_latency.observe(time.perf_counter() - start)
        return placed

    def preemption_due(self) -> float | None:
        """When the next pending pod's `preemption.delay` runs out (None: none is waiting for
        one); the simulator wakes the core then, the operator's cycle runs often anyway."""
        with self._lock:
            return self._state.preempt_due

    def reservation_due(self) -> float | None:
        """When the next pod at the front of its queue's line has waited `reservation.delay`
        (None: none is waiting for it); the simulator wakes the core then."""
        with self._lock:
            return self._state.reservations.due

    def reservations_document(self) -> list[dict[str, Any]]:
        """Every reservation: the pod, its application, the node, the room kept, since when and
        the reserved pods' earliest start there (seconds from now, None when no deadline
        promises one)."""
        with self._lock:
            return reservation_documents(self._state, self._now(None))

    def reservation_counts(self) -> dict[str, Any]:
        """Reservations made, pods placed as backfills, reservations ended by why, and what is
        kept now (nodes, and room per resource)."""
        with self._lock:
            book = self._state.reservations
            return {
                "made": book.made,
                "backfills": book.backfills,
                "ended": dict(book.ended),
                "nodes": len(book.by_node),
                "reserved": reserved_total(self._state),
            }

    def reserved_idle(self) -> dict[str, int]:
        """Free room that sits idle on reserved nodes now (per resource, at most what each
        node keeps for its reservations): what fairness costs while they drain."""
        with self._lock:
            return idle_reserved(self._state)

    def gang_due(self) -> float | None:
        """When the timeout of a gang too large for the cluster runs out (None: none waits so):
        it has no placeholder whose timer the simulator would wake the core for."""
        with self._lock:
            return self._state.gangs.too_large_due()

    def recycle(self, now: float | None = None) -> int:
        """One recycler tick: evict pods of quotas that stayed above their runtime too long."""
        with self._locked() as state:
            when = self._now(now)
            asked = 0
            for victim in state.quotas.recycle(when):
                allocation = state.allocations.get(victim.key)
                if allocation is None or victim.key in state.evicting:
                    continue
                request_eviction(state, allocation, victim.reason, "Evicted", when)
                asked += 1
            return asked

    # -- reading -------------------------------------------------------------------------
    def pending_reason(self, key: str) -> str | None:
        with self._lock:
            return self._state.reasons.get(key)

    def scale_up_view(self, busy_share: float | None = None) -> ScaleUpView:
        """Each waiting pod's category for autoscalers and each reserving gang's need
        (core/scale_up.py); worked out again only when the scheduler's state changed. With
        `busy_share` (the operator's writers), not more often than keeps the time spent on it,
        under the scheduler's lock, to that share of the time (a big backlog's view is a little
        older instead); without it (the simulator), always as of now."""
        with self._locked() as state:
            stamp = (
                state.version,
                state.events.highest_id(),
                len(state.ask_app),
                len(state.unplaced),
                len(state.allocations),
                state.settings,
            )
            if stamp == self._scale_up_stamp:
                return self._scale_up
            began = time.perf_counter()
            if busy_share and began - self._scale_up_at < self._scale_up_cost / busy_share:
                return self._scale_up
            self._scale_up = scale_up_view(state, self._scale_up.generation + 1)
            self._scale_up_stamp = stamp
            self._scale_up_at = time.perf_counter()
            self._scale_up_cost = self._scale_up_at - began
            return self._scale_up

    def node_verdicts(self, ask: Ask) -> dict[str, str | None]:
        """Per node, why `ask` could not go there now (None: it could), placing nothing."""
        with self._lock:
            return node_verdicts(self._state, ask)

    def allocation(self, key: str) -> Allocation | None:
        """The placement the core holds for `key`, read without waiting for a cycle to end.

        One dictionary read of an immutable value (atomic in CPython): the answer is the state
        just before or just after the cycle's commit of that pod, as with the lock, whose holder
        may be in the middle of placing a whole batch. Every change a caller then asks for
        (`add_ask`, `add_allocation`, `release_allocation`) checks the state again under the lock.
        The pod watch asks this for every event; waiting for the lock there cost it 40 µs an
        event in a burst."""
        return self._state.allocations.get(key)

    def quota_of(self, key: str) -> str | None:
        """The elastic quota a pending or running pod counts against (`default`, `system` or a tree quota)."""
        with self._lock:
            return self._state.ask_quota.get(key)

    def state_dump(self) -> dict[str, Any]:
        with self._lock:
            return dao.full_state_dump(self._state)

    def partitions_document(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dao.partition_document(self._state)]

    def queues_document(self) -> dict[str, Any]:
        with self._lock:
            return dao.queue_document(self._state, self._state.partition.root)

    def queue_usage(self) -> dict[str, dict[str, int]]:
        """What each queue has allocated, by path (the `allocatedResource` of `queues_document`)."""
        with self._lock:
            root = self._state.partition.root
            # The simulator reads this at every moment: the walk is made again only once a queue
            # came or went (or a new configuration made a new tree), each queue's document is
            # kept by the queue until its usage changes.
            seen = (root, Queue.structure_generation)
            if self._queue_order_of[0] is not root or self._queue_order_of[1] != seen[1]:
                self._queue_order = list(dao.queues_in_document_order(root))
                self._queue_order_of = seen
            return {queue.path: queue.allocated_doc() for queue in self._queue_order}

    def queue_document(self, path: str) -> dict[str, Any] | None:
        with self._lock:
            queue = self._state.partition.find_queue(path)
            return dao.queue_document(self._state, queue) if queue is not None else None

    def nodes_document(self) -> list[dict[str, Any]]:
        with self._lock:
            return dao.nodes_document(self._state)

    def node_document(self, node_id: str) -> dict[str, Any] | None:
        with self._lock:
            node = self._state.partition.nodes.get(node_id)
            return dao.node_document(node, self._state.partition.name, dao.kept_owners(self._state)) if node else None

    def pending_document(self, queue_path: str) -> list[dict[str, Any]] | None:
        """The queue's waiting pods in the order they will be tried (None: no such queue)."""
        with self._lock:
            rows = pending.pending_rows(self._state, queue_path)
        return None if rows is None else pending.pending_from_rows(rows)

    def explain(self, pod: str) -> dict[str, Any] | None:
        """One pod by uid or `namespace/name`: its place in line and what holds it, or its node."""
        with self._lock:
            return pending.explain_document(self._state, pod, self._clock())

    def pending_by_rule(self) -> dict[str, int]:
        """Waiting pods counted by the first rule that held them (`not-tried-yet` for the rest)."""
        with self._lock:
            return pending.count_by_rule(self._state)

    def node_utilizations_document(self) -> dict[str, Any]:
        with self._lock:
            return dao.node_utilizations(self._state)

    def history_counts(self) -> tuple[int, int]:
        """(live applications, placed pods): one sample of YuniKorn's history."""
        with self._lock:
            return dao.history_counts(self._state)

    def epoch_offset(self) -> float:
        """Seconds to add to a time of the scheduler's clock (an event's, say) to get Unix time."""
        return self._state.epoch_offset()

    def node_counts(self) -> dict[str, int]:
        with self._lock:
            return dao.node_counts(self._state)

    def application_document(self, app_id: str) -> dict[str, Any] | None:
        with self._lock:
            return dao.find_application_document(self._state, app_id)

    def applications_document(self) -> list[dict[str, Any]]:
        with self._lock:
            return dao.applications_document(self._state)

    def users_document(self) -> list[dict[str, Any]]:
        with self._lock:
            return self._state.ugm.users_documents()

    def groups_document(self) -> list[dict[str, Any]]:
        with self._lock:
            return self._state.ugm.groups_documents()

    def user_document(self, name: str) -> dict[str, Any] | None:
        with self._lock:
            return self._state.ugm.user_document(name)

    def group_document(self, name: str) -> dict[str, Any] | None:
        with self._lock:
            return self._state.ugm.group_document(name)

    def usage_samples(self) -> list[UsageSample]:
        """Every tracked user's and group's usage and limits per queue (for metrics)."""
        with self._lock:
            return self._state.ugm.usage_samples()

    def quotas_document(self) -> list[dict[str, Any]]:
        with self._lock:
            return self._state.quotas.documents()

    def config_document(self) -> dict[str, Any]:
        with self._lock:
            return dao.config_doc(self._state)


def _binder(callbacks: Callbacks, allocation: Allocation) -> Callable[[], None]:
    return partial(callbacks.bind, allocation)  # called at once, without a frame of its own
