"""Herder's Prometheus metrics: read from the scheduler at scrape time, plus the shim's own.

`HerderCollector.collect()` turns the core's plain numbers (`core.metrics`), its documents
(queues, partition, nodes), the elastic quota status and the user group manager's usage
samples into metric families on every scrape, so nothing is kept twice and nothing goes
stale. `ShimMetrics` is the part only the operator knows: how long binds take, why they
fail, how evictions end; the binder and evictor call it, the collector reads it.

Names follow Prometheus habits: `herder_` prefix, `_total` counters, `_seconds` histograms.
Resource gauges carry a `resource` label and core units (`vcore` in millicores, `memory` in
bytes, `pods` and other resources as counts). Labels are bounded by the cluster's shape:
resource, queue, quota, user, group, state or result; never a pod or a node name.

    shim_metrics = ShimMetrics()
    registry = metrics_registry(scheduler, status, shim_metrics)   # served at /metrics
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from core.metrics import Histogram
from core.scheduler import Scheduler

if TYPE_CHECKING:  # shim.rest imports this module; the status is only read here
    from shim.rest.status import RestStatus

# Seconds, 5 ms to 30 s: a bind is an API call, slower than a scheduling decision.
BIND_BUCKETS: tuple[float, ...] = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
MAX_LABEL_VALUES = 32  # distinct bind-error reasons or eviction results kept; more are "other"

# The partition document counts these too (finished and rejected applications it still shows);
# the gauge of applications is about live ones.
KEPT_AFTER_THE_END = ("Completed", "Failed", "Rejected")


def _herder_version() -> str:
    try:
        return version("herder")
    except PackageNotFoundError:
        return "0+unknown"


class _LabelCounter:
    """Counts per label value, with a bounded number of distinct values."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def inc(self, value: str) -> None:
        value = value.strip().lower() or "unknown"
        with self._lock:
            if value not in self._counts and len(self._counts) >= MAX_LABEL_VALUES:
                value = "other"
            self._counts[value] = self._counts.get(value, 0) + 1

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)


class ShimMetrics:
    """What the operator measures: bind latency and errors, eviction results. Thread-safe.

    Pass short, fixed words, not error messages: bind errors `gone` (404/409), `failed`
    (a final API error), `exhausted` (retries used up); eviction results `evicted`,
    `refused` (a PodDisruptionBudget said no), `gone`, `failed`.
    """

    def __init__(self) -> None:
        self.bind_latency = Histogram(BIND_BUCKETS, window=10_000)
        self._bind_errors = _LabelCounter()
        self._evictions = _LabelCounter()
        self._watch_restarts = _LabelCounter()

    def observe_bind(self, seconds: float) -> None:
        self.bind_latency.observe(seconds)

    def bind_error(self, reason: str) -> None:
        self._bind_errors.inc(reason)

    def eviction(self, result: str) -> None:
        self._evictions.inc(result)

    def watch_restart(self, resource: str, reason: str) -> None:
        """A pod or node watch reopened: `ended` (the server closed it), `broken` or `expired` (410, listed again)."""
        self._watch_restarts.inc(f"{resource}/{reason}")

    def bind_errors(self) -> dict[str, int]:
        return self._bind_errors.snapshot()

    def watch_restarts(self) -> dict[tuple[str, str], int]:
        out: dict[tuple[str, str], int] = {}
        for label, count in self._watch_restarts.snapshot().items():
            resource, _, reason = label.partition("/")
            out[(resource, reason)] = count
        return out

    def evictions(self) -> dict[str, int]:
        return self._evictions.snapshot()


# The core's counters: attribute -> (metric name without _total, help, labels).
_CORE_COUNTERS: dict[str, tuple[str, str, dict[str, str]]] = {
    "allocations": (
        "herder_scheduling_attempts",
        "Pending pods the scheduler tried to place, by result",
        {"result": "allocated"},
    ),
    "attempts_failed": (
        "herder_scheduling_attempts",
        "Pending pods the scheduler tried to place, by result",
        {"result": "pending"},
    ),
    "cycles": ("herder_scheduling_cycles", "Scheduling cycles run", {}),
    "releases": ("herder_allocations_released", "Herder pods that ended (finished, deleted or rolled back)", {}),
    "evictions": ("herder_eviction_requests", "Evictions the recycler or preemption asked for", {}),
    "evictions_refused": ("herder_eviction_refusals", "Evictions refused (a PodDisruptionBudget, an API error)", {}),
    "config_updates": ("herder_config_updates", "Configuration updates, by result", {"result": "applied"}),
    "config_refused": ("herder_config_updates", "Configuration updates, by result", {"result": "refused"}),
    "quota_refused": ("herder_quota_updates_refused", "ElasticQuota changes refused as invalid", {}),
    "apps_submitted": ("herder_applications_submitted", "Applications submitted, by result", {"result": "accepted"}),
    "apps_rejected": ("herder_applications_submitted", "Applications submitted, by result", {"result": "rejected"}),
}


def _histogram(name: str, documentation: str, hist: Histogram) -> HistogramMetricFamily:
    cumulative = hist.cumulative()
    count, total = hist.count, hist.sum
    top = max(count, cumulative[-1][1] if cumulative else 0)
    buckets: list[tuple[str, float]] = [(repr(float(bound)), float(n)) for bound, n in cumulative]
    buckets.append(("+Inf", float(top)))
    return HistogramMetricFamily(name, documentation, buckets=buckets, sum_value=total)


Row = tuple[list[str], Mapping[str, int] | None]


def _resource_gauge(
    name: str, documentation: str, labels: list[str], rows: Iterable[Row], zero: Iterable[str] = ()
) -> GaugeMetricFamily:
    """One sample per row and resource; resources in `zero` are shown as 0 when absent, so a
    series that drops to nothing reads 0 instead of vanishing from graphs and alerts."""
    family = GaugeMetricFamily(
        name, documentation + " (vcore in millicores, memory in bytes)", labels=[*labels, "resource"]
    )
    always = dict.fromkeys(zero, 0)
    for values, resource in rows:
        for key, amount in sorted({**always, **(resource or {})}.items()):
            family.add_metric([*values, key], float(amount))
    return family


def _walk(queue: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield queue
    for child in queue.get("children", []):
        yield from _walk(child)


class HerderCollector(Collector):
    def __init__(self, scheduler: Scheduler, status: RestStatus, shim: ShimMetrics | None = None) -> None:
        self._scheduler = scheduler
        self._status = status
        self._shim = shim

    def collect(self) -> Iterator[Metric]:
        yield from self._service()
        yield from self._core_counters()
        yield from self._latencies()
        yield from self._partition()
        yield from self._queues()
        yield from self._quotas()
        yield from self._usage()
        if self._shim is not None:
            yield from self._shim_families(self._shim)

    def _service(self) -> Iterator[Metric]:
        status = self._status
        yield GaugeMetricFamily(
            "herder_leader", "1 when this replica holds the Lease and schedules", value=float(status.leader)
        )
        yield GaugeMetricFamily(
            "herder_ready",
            "1 once the initial sync of the cluster's state is done (and the webhook server listens, when configured)",
            value=float(status.ready),
        )
        info = GaugeMetricFamily("herder_info", "This replica's identity and version", labels=["identity", "version"])
        info.add_metric([status.identity, _herder_version()], 1.0)
        yield info

    def _core_counters(self) -> Iterator[Metric]:
        families: dict[str, CounterMetricFamily] = {}
        for attribute, value in self._scheduler.metrics.counters().items():
            name, documentation, labels = _CORE_COUNTERS.get(
                attribute, (f"herder_core_{attribute}", f"The core's {attribute} counter", {})
            )
            family = families.get(name)
            if family is None:
                family = families[name] = CounterMetricFamily(name, documentation, labels=list(labels))
            family.add_metric(list(labels.values()), float(value))
        yield from families.values()
        preemptions = CounterMetricFamily(
            "herder_preemptions",
            "Pods preempted, by the queue that lost them and the rule (guarantee: across queues; quota: in-quota)",
            labels=["queue", "reason"],
        )
        taken = dict(self._scheduler.metrics.preemptions)  # a copy: the core adds keys meanwhile
        for (queue, reason), count in sorted(taken.items()):
            preemptions.add_metric([queue, reason], float(count))
        yield preemptions

    def _latencies(self) -> Iterator[Metric]:
        metrics = self._scheduler.metrics
        yield _histogram(
            "herder_scheduling_decision_duration_seconds",
            "Time to place one pending pod (checks, node fit and score, tracker updates)",
            metrics.decision_latency,
        )
        yield _histogram(
            "herder_scheduling_cycle_duration_seconds", "Time of one whole scheduling cycle", metrics.cycle_latency
        )

    def _partition(self) -> Iterator[Metric]:
        part = self._scheduler.partitions_document()[0]
        counts = self._scheduler.node_counts()
        yield GaugeMetricFamily("herder_nodes", "Nodes known to the scheduler", value=float(counts["total"]))
        yield GaugeMetricFamily(
            "herder_nodes_schedulable",
            "Nodes that take new pods (not cordoned, ready)",
            value=float(counts["schedulable"]),
        )
        capacity = part["capacity"]
        yield _resource_gauge(
            "herder_cluster_capacity_resource", "The nodes' allocatable, summed", [], [([], capacity["capacity"])]
        )
        yield _resource_gauge(
            "herder_cluster_used_resource",
            "Used on the nodes by Herder's and other pods",
            [],
            [([], capacity["usedCapacity"])],
        )
        apps = GaugeMetricFamily("herder_applications", "Live applications by state", labels=["state"])
        for state, count in part["applications"].items():
            if state not in ("total", *KEPT_AFTER_THE_END):
                apps.add_metric([state], float(count))
        yield apps
        yield GaugeMetricFamily(
            "herder_allocated_pods", "Herder pods placed on nodes", value=float(part["totalContainers"])
        )
        yield GaugeMetricFamily(
            "herder_pending_pods", "Herder pods waiting for a node", value=float(part["pendingRequests"])
        )
        by_rule = GaugeMetricFamily(
            "herder_pending_pods_by_reason",
            "Herder pods waiting, by the first rule that held them (not-tried-yet: not tried since they came)",
            labels=["reason"],
        )
        for rule, count in sorted(self._scheduler.pending_by_rule().items()):
            by_rule.add_metric([rule], float(count))
        yield by_rule
        yield from self._reservations(list(capacity["capacity"]))

    def _reservations(self, cluster: list[str]) -> Iterator[Metric]:
        counts = self._scheduler.reservation_counts()
        yield GaugeMetricFamily(
            "herder_reserved_nodes", "Nodes kept for pods that would otherwise starve", value=float(counts["nodes"])
        )
        yield _resource_gauge(
            "herder_reserved_resource",
            "Room kept on reserved nodes for the pods they are reserved for",
            [],
            [([], counts["reserved"])],
            cluster,
        )
        yield _resource_gauge(
            "herder_reserved_idle_resource",
            "Free room on reserved nodes that no pod uses while they drain (the cost of fairness)",
            [],
            [([], self._scheduler.reserved_idle())],
            cluster,
        )
        yield CounterMetricFamily(
            "herder_reservations", "Reservations made (a gang counts one per placeholder)", value=float(counts["made"])
        )
        ended = CounterMetricFamily(
            "herder_reservations_ended", "Reservations ended, by why (placed: their pod was placed)", labels=["reason"]
        )
        for reason, count in sorted(counts["ended"].items()):
            ended.add_metric([reason], float(count))
        yield ended
        yield CounterMetricFamily(
            "herder_backfills", "Pods placed on a reserved node as backfills", value=float(counts["backfills"])
        )

    def _queues(self) -> Iterator[Metric]:
        queues = list(_walk(self._scheduler.queues_document()))
        cluster = list(queues[0]["maxResource"])  # the root's max is the cluster's size
        for field, what, zero in (
            ("allocatedResource", "allocated", cluster),
            ("pendingResource", "pending", cluster),
            ("maxResource", "max", []),
            ("guaranteedResource", "guaranteed", []),
        ):
            yield _resource_gauge(
                f"herder_queue_{what}_resource",
                f"The queue's {what} resources",
                ["queue"],
                [([q["queuename"]], q[field]) for q in queues],
                zero,
            )
        running = GaugeMetricFamily(
            "herder_queue_running_applications", "Applications running in the queue", labels=["queue"]
        )
        limit = GaugeMetricFamily(
            "herder_queue_max_running_applications", "The queue's maxapplications (when set)", labels=["queue"]
        )
        for q in queues:
            running.add_metric([q["queuename"]], float(q["runningApps"]))
            if q["maxRunningApps"]:
                limit.add_metric([q["queuename"]], float(q["maxRunningApps"]))
        yield running
        yield limit

    def _quotas(self) -> Iterator[Metric]:
        status = self._scheduler.quota_status()
        for what, documentation in (
            ("min", "The quota's guaranteed minimum"),
            ("max", "The quota's maximum"),
            ("runtime", "The quota's fair share now: what it may use"),
            ("used", "What the quota's pods use"),
            ("request", "What the quota's pods ask (pending and running)"),
        ):
            family = GaugeMetricFamily(
                f"herder_quota_{what}_resource",
                documentation + " (vcore in millicores, memory in bytes)",
                labels=["quota", "resource"],
            )
            for name, quota in sorted(status.items()):
                # A quota limits the resources its max names: show those even at zero.
                amounts = {**dict.fromkeys(quota.max, 0), **getattr(quota, what)}
                for key, amount in sorted(amounts.items()):
                    family.add_metric([name, key], float(amount))
            yield family

    def _usage(self) -> Iterator[Metric]:
        samples = self._scheduler.usage_samples()
        for kind in ("user", "group"):
            mine = [s for s in samples if s.kind == kind]
            yield _resource_gauge(
                f"herder_{kind}_used_resource",
                f"What the {kind}'s pods use in the queue",
                [kind, "queue"],
                [([s.name, s.queue_path], s.resource) for s in mine],
            )
            yield _resource_gauge(
                f"herder_{kind}_max_resource",
                f"The {kind}'s maxresources limit in the queue (when set)",
                [kind, "queue"],
                [([s.name, s.queue_path], s.max_resources) for s in mine],
            )
            running = GaugeMetricFamily(
                f"herder_{kind}_running_applications",
                f"The {kind}'s running applications in the queue",
                labels=[kind, "queue"],
            )
            limit = GaugeMetricFamily(
                f"herder_{kind}_max_applications",
                f"The {kind}'s maxapplications limit in the queue (when set)",
                labels=[kind, "queue"],
            )
            for s in mine:
                running.add_metric([s.name, s.queue_path], float(s.running_applications))
                if s.max_applications:
                    limit.add_metric([s.name, s.queue_path], float(s.max_applications))
            yield running
            yield limit

    @staticmethod
    def _shim_families(shim: ShimMetrics) -> Iterator[Metric]:
        yield _histogram(
            "herder_bind_duration_seconds", "Time to bind a placed pod through the API server", shim.bind_latency
        )
        errors = CounterMetricFamily("herder_bind_errors", "Binds that failed, by reason", labels=["reason"])
        for reason, count in sorted(shim.bind_errors().items()):
            errors.add_metric([reason], float(count))
        yield errors
        evictions = CounterMetricFamily(
            "herder_evictions", "Evictions the shim carried out, by result", labels=["result"]
        )
        for result, count in sorted(shim.evictions().items()):
            evictions.add_metric([result], float(count))
        yield evictions
        restarts = CounterMetricFamily(
            "herder_watch_restarts",
            "Pod and node watch streams reopened, by resource and reason (ended, broken, expired)",
            labels=["resource", "reason"],
        )
        for (resource, reason), count in sorted(shim.watch_restarts().items()):
            restarts.add_metric([resource, reason], float(count))
        yield restarts


def metrics_registry(scheduler: Scheduler, status: RestStatus, shim: ShimMetrics | None = None) -> CollectorRegistry:
    """A registry of its own (not the process-global one) holding Herder's collector."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(HerderCollector(scheduler, status, shim))
    return registry
