"""The simulation run: the real core on a simulated cluster, on a virtual clock.

The clock jumps from one moment something can happen to the next (see `agenda`). At each
moment: everything due happens (pods end, scenario events, arrivals), other schedulers place
their waiting pods, then the core's scheduling cycle runs until it has nothing more to place
(evictions it asks for are carried out and the cycle runs again), then the recycler ticks if
one is due, then the timeline is sampled and a snapshot taken if one was asked for.

The recycler ticks at multiples of `quota.recycle.interval`, but only at the ticks that can
matter: the first tick after any change while some quota is above its runtime (the core
notes since when it is above), and the tick at which a quota's `quota.recycle.delay` runs
out. Between changes nothing moves a quota's used or runtime, so the ticks in between would
do nothing; skipping them keeps a day of simulated time fast and the result identical.

The core is also woken when a pending pod's `preemption.delay` runs out (it says when), so a
queue under its guarantee preempts at the exact moment it may.

With `nodeGroups`, a simulated cluster-autoscaler (shim/sim/autoscaler.py) looks at its scan
ticks, after the core settled: it removes nodes empty for long enough, asks for nodes for the
pods Herder marks `Unschedulable` (they join later, as scenario events), and counts node-hours.

Without `until`, the run ends when nothing can change any more: no event or arrival left,
no running pod with an end, no recycler or preemption delay running.
"""

from __future__ import annotations

import gc
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from typing import Any

from core.elastic.spec import DEFAULT_QUOTA, SYSTEM_QUOTA
from core.scheduler import COMPLETING_TIMEOUT, Scheduler
from shim.convert.objects import labels_of
from shim.convert.quotas import LABEL_PARENT
from shim.sim.agenda import ARRIVAL, EVENT, FINISH, SNAPSHOT, Agenda
from shim.sim.autoscaler import SimAutoscaler
from shim.sim.cluster import PENDING, RUNNING, AskMemo, SimCallbacks, SimCluster, SimPod, pod_deadline
from shim.sim.manifests import labels_match, node_manifest, pod_manifest
from shim.sim.resize import resize_pod
from shim.sim.scenario import (
    DEFAULT_NAMESPACE,
    OBJECT_KINDS,
    Scenario,
    ScenarioEvent,
    WorkloadEntry,
    node_names,
    pod_name,
    pod_names,
    pod_namespace,
)
from shim.sim.timeline import Timeline

MAX_ROUNDS = 1000  # scheduling rounds at one moment; more means the core and the cluster disagree

Progress = Callable[[float, SimCluster], None]
Pace = Callable[[float], None]  # returns once the simulated moment t may happen


def moment_key(t: float) -> str:
    """A time as the report's keys show it: `30`, `12.5`."""
    return str(int(t)) if float(t).is_integer() else repr(float(t))


class Simulation:
    def __init__(self, scenario: Scenario, progress: Progress | None = None, epoch: float | None = None) -> None:
        """`epoch`: the Unix time the simulated t=0 stands for in the scheduler's documents (its
        REST answers, event records); without it t=0 is the epoch itself, as in the report."""
        self.scenario = scenario
        self.now = 0.0
        self.callbacks = SimCallbacks()
        wall_clock = None if epoch is None else (lambda: epoch + self.now)
        self.scheduler = Scheduler(
            self.callbacks, scenario.config, scenario.settings, clock=lambda: self.now, wall_clock=wall_clock
        )
        self.agenda = Agenda()
        self.cluster = SimCluster(self.scheduler, self.callbacks, self._started, self._app_idle)
        self.autoscaler: SimAutoscaler | None = None
        if scenario.node_groups:
            self.autoscaler = SimAutoscaler(scenario.node_groups, self.cluster, self.scheduler, self._later)
        self.timeline = Timeline()
        self.snapshots: dict[str, dict[str, Any]] = {}
        self.wall_seconds = 0.0
        self._progress = progress
        self._snapshot_times = set(scenario.snapshots)
        self._over_since: dict[str, float] = {}
        self._next_tick: float | None = None
        self._last_tick: float | None = None
        self._changes_at_tick = -1
        self._uids: dict[str, int] = {}
        self._shapes: dict[tuple[object, ...], AskMemo] = {}  # a trace's row shapes: the first pod's ask
        # idle room on reserved nodes, integrated over time (resource -> amount x seconds)
        self.reserved_idle: dict[str, float] = {}
        self._idle_now: tuple[float, dict[str, int]] = (0.0, {})

    # -- setting up ----------------------------------------------------------------------
    def _setup(self) -> None:
        scenario, cluster = self.scenario, self.cluster
        for warning in scenario.config.warnings:
            cluster.note(0.0, "queues.yaml", "ConfigWarning", warning)
        for entry in scenario.nodes:
            for name in node_names(entry):
                cluster.add_node(node_manifest(entry, name), 0.0)
        if self.autoscaler is not None:
            self.autoscaler.start(0.0)
        for namespace in scenario.namespaces:
            cluster.apply_namespace(namespace, 0.0)
        for quota in _parents_first(scenario.quotas):
            cluster.apply_quota(quota, 0.0)
        for priority_class in scenario.priority_classes:
            cluster.priority_classes[str(priority_class["metadata"]["name"])] = priority_class
        for obj in sorted(scenario.objects, key=_storage_order):
            cluster.apply_object(obj, 0.0)
        for workload in scenario.workload:
            if workload.every is None:
                self.agenda.push(workload.at, ARRIVAL, partial(self._arrive, workload))
            else:
                for i in range(workload.count):
                    self.agenda.push(workload.arrival(i), ARRIVAL, partial(self._arrive_one, workload, i))
        for event in scenario.events:
            self.agenda.push(event.at, EVENT, partial(self._event, event))
        for moment in scenario.snapshots:
            self.agenda.push(moment, SNAPSHOT, _nothing)

    def _later(self, when: float, action: Callable[[float], None]) -> None:
        """Something to happen at `when` (a node the autoscaler asked for joins), as a scenario event."""
        self.agenda.push(when, EVENT, action)

    def _started(self, now: float, pod: SimPod) -> None:
        deadline = None if pod.placeholder else pod_deadline(pod.manifest)
        if deadline is not None and (pod.duration is None or pod.duration > deadline):
            # the kubelet ends it at its activeDeadlineSeconds
            self.agenda.push(now + deadline, FINISH, partial(self.cluster.deadline_exceeded, pod))
        elif pod.duration is not None:
            self.agenda.push(now + pod.duration, FINISH, partial(self.cluster.finish, pod))
        if pod.wake_after is not None:  # a gang's placeholder timeout runs out then
            self.agenda.push(now + pod.wake_after, FINISH, _nothing)

    def _app_idle(self, now: float, pod: SimPod) -> None:
        """The pod's application has nothing left: the core completes it a while later, by itself."""
        self.agenda.push(now + COMPLETING_TIMEOUT, FINISH, _nothing)

    def _arrive_one(self, workload: WorkloadEntry, index: int, t: float) -> None:
        """Copy `index` of an entry whose copies arrive `every` seconds apart."""
        template = workload.pod
        namespace = pod_namespace(template)
        name = pod_name(workload, index)
        uid = self._uid(namespace, name, template["metadata"].get("uid"), index if workload.count > 1 else None)
        created = t if workload.created is None else workload.created
        started = workload.started if template["spec"].get("nodeName") else None
        self.cluster.create_pod(pod_manifest(template, name, created, uid, started), workload.duration, t)

    def _uid(self, namespace: str, name: str, given: object, index: int | None) -> str:
        if isinstance(given, str) and given:
            return given if index is None else f"{given}-{index}"
        base = f"{namespace}/{name}"
        seen = self._uids.get(base, 0)
        self._uids[base] = seen + 1
        return base if seen == 0 else f"{base}#{seen + 1}"

    # -- running -------------------------------------------------------------------------
    def run(self, pace: Pace | None = None) -> None:
        """Play the scenario to its end; `pace(t)` (a served simulation's clock) returns when
        the moment t may happen, else the clock jumps at once."""
        started = time.perf_counter()
        with _collector_for_the_run():
            self._setup()
            _freeze_set_up()
            self._play(pace)
        self.wall_seconds = time.perf_counter() - started

    def _play(self, pace: Pace | None) -> None:
        until = self.scenario.until
        self._moment(0.0)
        while True:
            autoscaler = self.autoscaler.next_time() if self.autoscaler is not None else None
            scheduler = self.scheduler
            moments = (
                self.agenda.next_time(),
                self._next_tick,
                scheduler.preemption_due(),
                scheduler.reservation_due(),
                scheduler.gang_due(),
                autoscaler,
            )
            upcoming = [t for t in moments if t is not None]
            if not upcoming or (until is not None and min(upcoming) > until):
                break
            if pace is not None:
                pace(min(upcoming))
            self._moment(min(upcoming))
        if until is not None and until > self.now:
            if pace is not None:
                pace(until)
            self.now = until
            if self.autoscaler is not None:
                self.autoscaler.account(until)
            self._settle(until)
            self._sample(until)

    def _moment(self, t: float) -> None:
        self.now = t
        if self.autoscaler is not None:
            self.autoscaler.account(t)
        while True:
            due = self.agenda.pop_due(t)
            if not due:
                break
            for action in due:
                action(t)
        self._settle(t)
        self._plan_tick(t)
        while self._next_tick is not None and self._next_tick <= t:
            self._tick(t)
            self._plan_tick(t)
        if self.autoscaler is not None:
            if self.autoscaler.act(t):
                self._settle(t)
            self.autoscaler.observe(t)
        self._sample(t)
        if t in self._snapshot_times:
            self.snapshots[moment_key(t)] = self.scheduler.state_dump()
        if self._progress is not None:
            self._progress(t, self.cluster)

    def _settle(self, t: float) -> None:
        """Other schedulers place their waiting pods; the core places Herder's until it can place no more."""
        cluster, scheduler = self.cluster, self.scheduler
        for rounds in range(MAX_ROUNDS):
            before = cluster.changes
            if cluster.waiting_foreign:
                cluster.retry_foreign(t)
            cluster.tell_budgets()
            if not rounds or scheduler.has_work():
                # After the first cycle of a moment, one with no input since (its binds all
                # carried out as asked) would find what the last one left: nothing to place.
                scheduler.schedule(t)
            delivered = cluster.deliver(t)
            if not delivered and cluster.changes == before:
                return
        cluster.note(t, "simulator", "TooManyRounds", f"still binding or evicting after {MAX_ROUNDS} rounds")

    # -- the recycler --------------------------------------------------------------------
    def _over_quotas(self) -> set[str]:
        """Leaf quotas whose used is above their runtime now (the ones the recycler watches)."""
        cluster = self.cluster
        if not cluster.quotas:
            return set()
        over = set()
        for name, status in self.scheduler.quota_status().items():
            if name in (SYSTEM_QUOTA, DEFAULT_QUOTA) or name not in cluster.quotas or cluster.is_parent_quota(name):
                continue
            if any(status.used.get_value(key) > value for key, value in status.runtime.items()):
                over.add(name)
        return over

    def _plan_tick(self, t: float) -> None:
        settings = self.scheduler.settings
        if not settings.recycle_enabled:
            self._next_tick = None
            return
        interval = settings.recycle_interval
        changed = self.cluster.changes != self._changes_at_tick
        candidates: list[float] = []
        if changed and (self._over_since or self._over_quotas()):
            candidates.append(_grid(t, interval) if self._last_tick != t else _grid(t + interval, interval))
        for since in self._over_since.values():
            due = _grid(since + settings.recycle_delay, interval)
            if due > t or (due == t and self._last_tick != t):
                candidates.append(due)
        self._next_tick = min(candidates) if candidates else None

    def _tick(self, t: float) -> None:
        over = self._over_quotas()
        for name in over:
            self._over_since.setdefault(name, t)
        for name in [q for q in self._over_since if q not in over]:
            del self._over_since[name]
        self._last_tick = t
        self._changes_at_tick = self.cluster.changes
        self.scheduler.recycle(t)
        self._settle(t)

    # -- what the scenario does ----------------------------------------------------------
    def _arrive(self, workload: WorkloadEntry, t: float) -> None:
        template = workload.pod
        namespace = pod_namespace(template)
        given = template["metadata"].get("uid")
        shape = workload.shape
        replicas = AskMemo() if shape is None else self._shapes.setdefault(shape, AskMemo(siblings=True))
        for i, name in enumerate(pod_names(workload)):
            uid = self._uid(namespace, name, given, i if workload.count > 1 else None)
            created = t if workload.created is None else workload.created
            started = workload.started if template["spec"].get("nodeName") else None
            manifest = pod_manifest(template, name, created, uid, started)
            self.cluster.create_pod(manifest, workload.duration, t, replicas)

    def _event(self, event: ScenarioEvent, t: float) -> None:
        cluster = self.cluster
        if event.action == "remove-node" and event.name:
            cluster.remove_node(event.name, t)
        elif event.action in ("cordon-node", "uncordon-node") and event.name:
            cluster.set_unschedulable(event.name, event.action == "cordon-node", t)
        elif event.action == "add-node" and event.node is not None:
            for name in node_names(event.node):
                cluster.add_node(node_manifest(event.node, name), t)
        elif event.action == "apply" and event.obj is not None:
            self._apply(event, event.obj, t)
        elif event.action == "delete":
            self._delete(event, t)
        elif event.action == "resize" and event.name and event.requests is not None:
            what = f"{event.namespace or DEFAULT_NAMESPACE}/{event.name}"
            resize_pod(cluster, cluster.pods.get(what), what, event.requests, t)

    def _apply(self, event: ScenarioEvent, obj: Mapping[str, Any], t: float) -> None:
        cluster = self.cluster
        if "config" in obj:
            cluster.apply_config(obj["config"], t)
        if "settings" in obj:
            cluster.apply_settings(obj["settings"] or {}, t)
        if event.kind == "Namespace":
            cluster.apply_namespace(obj, t)
        elif event.kind == "ElasticQuota":
            cluster.apply_quota(obj, t)
        elif event.kind == "Pod":
            namespace, name = pod_namespace(obj), str(obj["metadata"]["name"])
            uid = self._uid(namespace, name, obj["metadata"].get("uid"), None)
            cluster.create_pod(pod_manifest(obj, name, t, uid), event.duration, t)
        elif event.kind is not None:
            cluster.apply_object({"kind": event.kind, **obj}, t)

    def _delete(self, event: ScenarioEvent, t: float) -> None:
        cluster, kind, name = self.cluster, event.kind, event.name
        what = f"{kind} {event.namespace + '/' if event.namespace else ''}{name or event.selector}"
        if kind == "Node" and name:
            cluster.remove_node(name, t)
        elif kind == "Namespace" and name:
            cluster.delete_namespace(name, t)
        elif kind == "Pod":
            if name:
                pod = cluster.pods.get(f"{event.namespace or DEFAULT_NAMESPACE}/{name}")
                pods = [pod] if pod is not None and pod.live else []
            else:
                pods = cluster.matching_pods(event.namespace, event.selector or {})
            if not pods:
                cluster.note(t, what, "NotFound", f"nothing to delete: no live {what}")
            for pod in pods:
                cluster.delete_pod(pod, t)
        elif kind in OBJECT_KINDS and name:
            if not cluster.delete_object(kind, event.namespace, name, t):
                cluster.note(t, what, "NotFound", f"nothing to delete: no {what}")
        elif kind == "ElasticQuota":
            names = (
                [name]
                if name
                else [
                    q
                    for q, obj in cluster.quotas.items()
                    if (event.namespace is None or obj["metadata"]["namespace"] == event.namespace)
                    and labels_match(obj, event.selector or {})
                ]
            )
            for quota in sorted(names, key=cluster.is_parent_quota):
                cluster.delete_quota(quota, t)

    # -- recording -----------------------------------------------------------------------
    def _sample(self, t: float) -> None:
        since, idle = self._idle_now
        for key, amount in idle.items():
            self.reserved_idle[key] = self.reserved_idle.get(key, 0.0) + amount * (t - since)
        self._idle_now = (t, self.scheduler.reserved_idle())
        counts = self.cluster.counts
        self.timeline.sample(
            t,
            self.scheduler.queue_usage(),
            self.scheduler.quota_status() if self.cluster.quotas else {},
            pending=counts[PENDING],
            running=counts[RUNNING],
            nodes=self.autoscaler.node_counts() if self.autoscaler is not None else None,
        )


# The cyclic collector during a run. The scenario (a trace's workload entries: a pod manifest a
# row) lives for the whole run, so once it is set up it is frozen out of the collector's
# generations, and the youngest generation is scanned every 100,000 net allocations: a
# moment's objects (asks, allocations, events, samples) die by reference counting or live on,
# and a 30,000-pod replay peaks at the same memory with the collector off. Both are put back
# when the outermost run ends (a run may be one of several in a process: `--compare`, tests).
RUN_YOUNG_THRESHOLD = 100_000
_runs = 0
_thresholds_before: tuple[int, int, int] = gc.get_threshold()
_may_freeze = False  # nothing else had frozen objects when the outermost run began
_runs_lock = threading.Lock()


@contextmanager
def _collector_for_the_run() -> Iterator[None]:
    global _runs, _thresholds_before, _may_freeze
    with _runs_lock:
        if _runs == 0:
            _thresholds_before = gc.get_threshold()
            _may_freeze = gc.get_freeze_count() == 0
            young, middle, oldest = _thresholds_before
            gc.set_threshold(max(young, RUN_YOUNG_THRESHOLD), middle, oldest)
        _runs += 1
    try:
        yield
    finally:
        with _runs_lock:
            _runs -= 1
            if _runs == 0:
                if _may_freeze:
                    gc.unfreeze()
                gc.set_threshold(*_thresholds_before)


def _freeze_set_up() -> None:
    """Freeze what is alive now, unless someone else froze objects before the runs began
    (the operator after its first sync): unfreezing at the end would take theirs back too."""
    with _runs_lock:
        if _may_freeze:
            gc.freeze()


def _storage_order(obj: Mapping[str, Any]) -> int:
    """Classes before volumes before claims, as an administrator applies them."""
    order = ("PriorityClass", "StorageClass", "PersistentVolume", "PersistentVolumeClaim")
    kind = obj.get("kind")
    return order.index(kind) if kind in order else len(order)


def _nothing(t: float) -> None:
    """A moment to stop at, with nothing of its own to do (a snapshot, the core's own timers)."""


def _grid(t: float, interval: float) -> float:
    """The first recycler tick at or after `t` (ticks fall on multiples of the interval)."""
    return round(math.ceil(t / interval - 1e-9) * interval, 9)


def _parents_first(quotas: tuple[Mapping[str, Any], ...]) -> list[Mapping[str, Any]]:
    """Quotas ordered so every parent is applied before its children (as a careful kubectl user would)."""
    by_name = {str(q["metadata"]["name"]): q for q in quotas}
    done: set[str] = set()
    ordered: list[Mapping[str, Any]] = []

    def parent_of(name: str) -> str | None:
        parent = labels_of(by_name[name]).get(LABEL_PARENT)
        return parent if isinstance(parent, str) and parent in by_name else None

    for name in by_name:
        chain: list[str] = []  # name, its parent, ... up to one already placed (no recursion: chains can be long)
        step: str | None = name
        while step is not None and step not in done and step not in chain:
            chain.append(step)
            step = parent_of(step)
        for member in reversed(chain):
            done.add(member)
            ordered.append(by_name[member])
    return ordered
