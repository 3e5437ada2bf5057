"""/metrics as Prometheus scrapes it: the known world's numbers, histograms, the shim's counters.

Scrapes go over HTTP to the real server and are parsed with prometheus_client's own parser,
so what is checked is what Prometheus would store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from core.metrics import DEFAULT_BUCKETS
from shim.metrics import BIND_BUCKETS, MAX_LABEL_VALUES
from shim.rest import RestStatus, ShimMetrics
from tests.shim.rest_world import GI, Served, build_scheduler, serve

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    sched, _ = build_scheduler()
    async with serve(sched, RestStatus(identity="herder-0"), ShimMetrics()) as world:
        yield world


async def scrape(served: Served, path: str = "/metrics") -> Samples:
    async with served.session.get(served.base + path) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        text = await response.text()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


def series(samples: Samples, name: str) -> dict[frozenset[tuple[str, str]], float]:
    return {labels: val for (sample, labels), val in samples.items() if sample == name}


async def test_queue_metrics_show_allocated_pending_max_and_guaranteed(served: Served) -> None:
    s = await scrape(served)
    assert value(s, "herder_queue_allocated_resource", queue="root.batch", resource="vcore") == 3000
    assert value(s, "herder_queue_allocated_resource", queue="root.batch", resource="memory") == 3 * GI
    assert value(s, "herder_queue_allocated_resource", queue="root", resource="pods") == 3
    assert value(s, "herder_queue_pending_resource", queue="root.batch", resource="vcore") == 5000
    assert value(s, "herder_queue_max_resource", queue="root.batch", resource="vcore") == 6000
    assert value(s, "herder_queue_max_resource", queue="root", resource="vcore") == 12000  # the cluster's size
    assert value(s, "herder_queue_guaranteed_resource", queue="root.batch", resource="memory") == 4 * GI
    assert value(s, "herder_queue_running_applications", queue="root.batch") == 2
    assert value(s, "herder_queue_max_running_applications", queue="root.batch") == 10
    assert (
        "herder_queue_guaranteed_resource",
        frozenset({("queue", "root"), ("resource", "vcore")}),
    ) not in s  # no guarantee configured, no series


async def test_quota_metrics_show_min_max_runtime_used_and_request(served: Served) -> None:
    s = await scrape(served)
    quota = {"quota": "batch", "resource": "vcore"}
    assert value(s, "herder_quota_min_resource", **quota) == 2000
    assert value(s, "herder_quota_max_resource", **quota) == 6000
    assert value(s, "herder_quota_runtime_resource", **quota) == 6000
    assert value(s, "herder_quota_used_resource", **quota) == 3000
    assert value(s, "herder_quota_request_resource", **quota) == 8000
    assert not [labels for labels in series(s, "herder_quota_used_resource") if ("resource", "memory") in labels]


async def test_user_and_group_metrics_show_usage_and_limits_per_queue(served: Served) -> None:
    s = await scrape(served)
    assert value(s, "herder_user_used_resource", user="alice", queue="root.batch", resource="vcore") == 2000
    assert value(s, "herder_user_used_resource", user="bob", queue="root", resource="memory") == GI
    assert value(s, "herder_user_max_resource", user="alice", queue="root.batch", resource="vcore") == 4000
    assert value(s, "herder_user_running_applications", user="alice", queue="root.batch") == 1
    assert value(s, "herder_user_max_applications", user="alice", queue="root.batch") == 3
    assert value(s, "herder_group_used_resource", group="ml", queue="root.batch", resource="vcore") == 2000
    assert value(s, "herder_group_max_resource", group="ml", queue="root.batch", resource="vcore") == 5000
    assert not [labels for labels in series(s, "herder_user_used_resource") if ("user", "carol") in labels]


async def test_usage_series_go_away_when_the_pods_end(served: Served) -> None:
    for key in ("uid-job-1-a", "uid-job-1-b", "uid-job-2-a"):
        served.sched.release_allocation(key)
    s = await scrape(served)
    assert series(s, "herder_user_used_resource") == {}
    assert series(s, "herder_group_running_applications") == {}
    # the queue's series stay, at zero, so graphs and alerts see the drop
    assert value(s, "herder_queue_allocated_resource", queue="root.batch", resource="vcore") == 0
    assert value(s, "herder_queue_allocated_resource", queue="root", resource="memory") == 0
    assert value(s, "herder_quota_used_resource", quota="batch", resource="vcore") == 0
    assert value(s, "herder_allocations_released_total") == 3


async def test_cluster_node_pod_and_application_gauges(served: Served) -> None:
    s = await scrape(served)
    assert value(s, "herder_nodes") == 3
    assert value(s, "herder_nodes_schedulable") == 2  # node-2 is cordoned
    assert value(s, "herder_cluster_capacity_resource", resource="vcore") == 12000
    assert value(s, "herder_cluster_used_resource", resource="vcore") == 3500  # Herder's 3 cpu + the foreign 500m
    assert value(s, "herder_allocated_pods") == 3
    assert value(s, "herder_pending_pods") == 1
    assert series(s, "herder_pending_pods_by_reason") == {frozenset({("reason", "queue-max")}): 1.0}  # job-3's pod
    assert value(s, "herder_applications", state="Running") == 2
    assert value(s, "herder_applications", state="Accepted") == 1


async def test_finished_applications_leave_the_live_application_gauge(served: Served) -> None:
    served.sched.release_allocation("uid-job-2-a")
    served.sched.schedule(now=2_000_000_000.0)  # past the Completing timeout
    s = await scrape(served)
    assert value(s, "herder_applications", state="Running") == 1
    assert series(s, "herder_applications").keys() == {
        frozenset({("state", "Running")}),
        frozenset({("state", "Accepted")}),
    }


async def test_scheduling_counters_follow_the_core(served: Served) -> None:
    s = await scrape(served)
    assert value(s, "herder_scheduling_attempts_total", result="allocated") == 3
    assert value(s, "herder_scheduling_attempts_total", result="pending") == served.sched.metrics.attempts_failed
    assert value(s, "herder_scheduling_cycles_total") == 1
    assert value(s, "herder_applications_submitted_total", result="accepted") == 3
    assert value(s, "herder_applications_submitted_total", result="rejected") == 0
    served.sched.schedule()
    s = await scrape(served)
    assert value(s, "herder_scheduling_cycles_total") == 2


async def test_preemptions_are_counted_by_the_queue_that_lost_the_pod_and_the_rule(served: Served) -> None:
    s = await scrape(served)
    assert series(s, "herder_preemptions_total") == {}  # none yet: no series invented
    for rule in ("guarantee", "guarantee", "quota"):  # what the core's two preemptions count as they evict
        served.sched.metrics.preempted("root.batch", rule)
    counted = series(await scrape(served), "herder_preemptions_total")
    assert {dict(labels)["reason"]: count for labels, count in counted.items()} == {"guarantee": 2, "quota": 1}
    assert {dict(labels)["queue"] for labels in counted} == {"root.batch"}


async def test_latency_histograms_keep_the_cores_buckets(served: Served) -> None:
    s = await scrape(served)
    for name, count in (
        ("herder_scheduling_decision_duration_seconds", 3),  # three pods placed
        ("herder_scheduling_cycle_duration_seconds", 1),
    ):
        buckets = series(s, f"{name}_bucket")
        assert len(buckets) == len(DEFAULT_BUCKETS) + 1
        assert value(s, f"{name}_bucket", le="+Inf") == count
        assert value(s, f"{name}_count") == count
        assert value(s, f"{name}_sum") > 0
        counts = [val for _, val in sorted((float(dict(labels)["le"]), val) for labels, val in buckets.items())]
        assert counts == sorted(counts)  # cumulative


async def test_bind_latency_errors_and_eviction_results_come_from_the_shim(served: Served) -> None:
    shim = served.shim_metrics
    shim.observe_bind(0.02)
    shim.observe_bind(3.0)
    shim.bind_error("gone")
    shim.bind_error("gone")
    shim.bind_error("Failed")
    shim.eviction("evicted")
    shim.eviction("refused")
    s = await scrape(served)
    assert len(series(s, "herder_bind_duration_seconds_bucket")) == len(BIND_BUCKETS) + 1
    assert value(s, "herder_bind_duration_seconds_bucket", le="0.01") == 0
    assert value(s, "herder_bind_duration_seconds_bucket", le="0.025") == 1
    assert value(s, "herder_bind_duration_seconds_bucket", le="5.0") == 2
    assert value(s, "herder_bind_duration_seconds_count") == 2
    assert value(s, "herder_bind_duration_seconds_sum") == pytest.approx(3.02)
    assert value(s, "herder_bind_errors_total", reason="gone") == 2
    assert value(s, "herder_bind_errors_total", reason="failed") == 1
    assert value(s, "herder_evictions_total", result="evicted") == 1
    assert value(s, "herder_evictions_total", result="refused") == 1


async def test_watch_restarts_are_counted_by_resource_and_reason(served: Served) -> None:
    shim = served.shim_metrics
    shim.watch_restart("pods", "ended")
    shim.watch_restart("pods", "expired")
    shim.watch_restart("pods", "ended")
    shim.watch_restart("nodes", "broken")
    s = await scrape(served)
    assert value(s, "herder_watch_restarts_total", resource="pods", reason="ended") == 2
    assert value(s, "herder_watch_restarts_total", resource="pods", reason="expired") == 1
    assert value(s, "herder_watch_restarts_total", resource="nodes", reason="broken") == 1


async def test_label_values_from_callers_stay_bounded(served: Served) -> None:
    for i in range(3 * MAX_LABEL_VALUES):
        served.shim_metrics.bind_error(f"error {i}")
    s = await scrape(served)
    errors = series(s, "herder_bind_errors_total")
    assert len(errors) == MAX_LABEL_VALUES + 1
    assert value(s, "herder_bind_errors_total", reason="other") == 2 * MAX_LABEL_VALUES
    assert sum(errors.values()) == 3 * MAX_LABEL_VALUES


async def test_leader_and_ready_follow_the_replicas_status(served: Served) -> None:
    s = await scrape(served)
    assert value(s, "herder_leader") == 0
    assert value(s, "herder_ready") == 0
    served.status.mark_synced()
    served.status.set_leader(True)
    s = await scrape(served)
    assert value(s, "herder_leader") == 1
    assert value(s, "herder_ready") == 1
    [info] = series(s, "herder_info")
    assert ("identity", "herder-0") in info


async def test_yunikorns_metrics_path_serves_the_same_families(served: Served) -> None:
    s = await scrape(served, "/ws/v1/metrics")
    assert value(s, "herder_nodes") == 3


async def test_metrics_live_in_their_own_registry_not_the_process_global_one(served: Served) -> None:
    await scrape(served)
    assert not [name for name in REGISTRY._names_to_collectors if name.startswith("herder_")]


async def test_no_series_is_labelled_by_pod_or_node(served: Served) -> None:
    s = await scrape(served)
    label_names = {name for _, labels in s for name, _ in labels}
    assert label_names <= {
        "resource",
        "queue",
        "quota",
        "user",
        "group",
        "state",
        "result",
        "reason",
        "le",
        "identity",
        "version",
    }
