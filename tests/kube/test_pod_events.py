"""Pods get Kubernetes Events for what the scheduler did to them, correlated like the kubelet's
(repeats bump a count, many similar messages collapse) and capped in writes per second, so a
burst of thousands of decisions cannot flood the API server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from core.events import REQUEST, SchedulingEvent
from shim.kube.write.pod_events import COMBINED, EventCorrelator, EventNote, EventWriter, pod_event
from shim.kube.write.status_api import StatusApi
from tests.kube.kmock_thread import KmockThread


def scheduled(pod: str, node: str = "n1") -> SchedulingEvent:
    return SchedulingEvent(0.0, REQUEST, f"uid-{pod}", "Scheduled", f"placed on node {node}", name=f"team-a/{pod}")


def waiting(pod: str, why: str) -> SchedulingEvent:
    return SchedulingEvent(0.0, REQUEST, f"uid-{pod}", "Unschedulable", why, name=f"team-a/{pod}")


@pytest.fixture
def api() -> Iterator[KmockThread]:
    with KmockThread() as emulator:
        yield emulator


def writer(api: KmockThread, **limits: Any) -> EventWriter:
    correlator = EventCorrelator(component="herder", instance="herder-0", **limits)
    return EventWriter(StatusApi(api.api_client()), lambda key: None, correlator, clock=lambda: 0.0)


def events(api: KmockThread) -> list[dict[str, Any]]:
    return api.objects("events")


def test_scheduled_and_waiting_pods_get_events_under_kubernetes_names(api: KmockThread) -> None:
    out = writer(api)
    out.observe(scheduled("job-1"))
    out.observe(waiting("job-2", "quota team-a would exceed its runtime"))
    assert out.flush() == 2
    by_pod = {e["involvedObject"]["name"]: e for e in events(api)}
    assert by_pod["job-1"]["reason"] == "Scheduled" and by_pod["job-1"]["type"] == "Normal"
    failed = by_pod["job-2"]
    assert (failed["reason"], failed["type"]) == ("FailedScheduling", "Warning")
    assert failed["message"] == "quota team-a would exceed its runtime"
    assert failed["involvedObject"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": "team-a",
        "name": "job-2",
        "uid": "uid-job-2",
    }
    assert failed["metadata"]["namespace"] == "team-a" and failed["source"] == {"component": "herder"}


def test_events_the_kubelet_would_not_show_are_not_posted(api: KmockThread) -> None:
    out = writer(api)
    out.observe(SchedulingEvent(0.0, "NODE", "n1", "NodeAdded"))
    out.observe(SchedulingEvent(0.0, "APP", "app-1", "Accepted", "placed in queue root.a"))
    assert out.flush() == 0 and events(api) == []


def test_repeats_become_one_event_with_a_count(api: KmockThread) -> None:
    out = writer(api)
    for _ in range(50):
        out.observe(waiting("job-1", "no node fits"))
    out.flush()
    for _ in range(30):
        out.observe(waiting("job-1", "no node fits"))
    out.flush()
    [event] = events(api)
    assert event["count"] == 80
    assert len(api.writes("/events")) == 2  # one create, one patch


def test_many_different_messages_for_one_pod_collapse_into_one_event(api: KmockThread) -> None:
    out = writer(api, max_similar=10)
    for i in range(40):
        out.observe(waiting("job-1", f"node n{i} is full"))
    out.flush()
    stored = events(api)
    combined = [e for e in stored if e["message"].startswith(COMBINED)]
    assert len(stored) == 11  # ten distinct messages, then one combined Event
    assert len(combined) == 1 and combined[0]["count"] == 30
    assert combined[0]["message"] == COMBINED + "node n39 is full"


def test_a_burst_is_written_at_the_capped_rate() -> None:
    correlator = EventCorrelator(rate=10.0, burst=20, cache_size=10_000)
    for i in range(300):
        correlator.observe(_note(i), now=0.0)
    per_second = [len(correlator.next_writes(now=float(second))) for second in range(5)]
    assert per_second == [20, 10, 10, 10, 10]
    assert correlator.waiting() == 300 - 60


def test_a_burst_beyond_the_backlog_drops_the_oldest_and_counts_them() -> None:
    correlator = EventCorrelator(rate=1000.0, burst=1000, cache_size=100)
    for i in range(10_000):
        correlator.observe(_note(i), now=0.0)
    writes = correlator.next_writes(now=0.0)
    assert len(writes) == 100
    assert correlator.dropped == 9_900
    assert writes[-1].body["involvedObject"]["name"] == "job-9999"


def test_an_expired_event_is_created_again(api: KmockThread) -> None:
    out = writer(api)
    out.observe(scheduled("job-1"))
    out.flush()
    [first] = events(api)
    client.CoreV1Api(api.api_client()).delete_namespaced_event(first["metadata"]["name"], "team-a")
    out.observe(scheduled("job-1"))
    out.flush()  # the patch finds nothing: 404
    out.flush()  # so the Event is created anew, with the count so far
    [again] = events(api)
    assert again["count"] == 2 and again["metadata"]["name"] != first["metadata"]["name"]


def _note(i: int) -> EventNote:
    note = pod_event(scheduled(f"job-{i}"), lambda key: None)
    assert note is not None
    return note


def test_preemption_posts_events_on_the_victim_and_on_the_preemptor(api: KmockThread) -> None:
    out = writer(api)
    victim = "preempted by team-a/ml-0 (priority 0) of queue root.ml, under its guarantee, on node n1"
    out.observe(SchedulingEvent(0.0, REQUEST, "uid-batch-3", "Preempted", victim, name="team-a/batch-3"))
    out.observe(
        SchedulingEvent(0.0, REQUEST, "uid-ml-0", "Preempting", "waiting for 1: team-a/batch-3", name="team-a/ml-0")
    )
    assert out.flush() == 2
    by_pod = {e["involvedObject"]["name"]: e for e in events(api)}
    assert (by_pod["batch-3"]["reason"], by_pod["batch-3"]["message"]) == ("Preempted", victim)
    assert by_pod["ml-0"]["reason"] == "Preempting" and by_pod["ml-0"]["type"] == "Normal"


def test_events_wait_while_bindings_are_queued_and_are_written_when_the_queue_is_gone(api: KmockThread) -> None:
    queued = [True]
    now = [0.0]
    correlator = EventCorrelator(component="herder", instance="herder-0")
    out = EventWriter(
        StatusApi(api.api_client()), lambda key: None, correlator, clock=lambda: now[0], busy=lambda: queued[0], hold=10
    )
    out.observe(scheduled("job-1"))
    out.observe(waiting("job-2", "no node has room"))
    assert out.flush() == 0 and events(api) == []
    now[0] = 3.0
    out.observe(scheduled("job-3"))
    assert out.flush() == 0 and correlator.waiting() == 3
    queued[0] = False
    assert out.flush() == 3
    assert {e["involvedObject"]["name"] for e in events(api)} == {"job-1", "job-2", "job-3"}


def test_a_backlog_that_never_ends_holds_events_back_only_for_the_hold(api: KmockThread) -> None:
    now = [0.0]
    correlator = EventCorrelator(component="herder", instance="herder-0")
    out = EventWriter(
        StatusApi(api.api_client()), lambda key: None, correlator, clock=lambda: now[0], busy=lambda: True, hold=10
    )
    out.observe(scheduled("job-1"))
    assert out.flush() == 0
    now[0] = 9.9
    assert out.flush() == 0
    now[0] = 10.0
    assert out.flush() == 1
    out.observe(scheduled("job-2"))
    now[0] = 10.1
    assert out.flush() == 1  # still busy: the hold is spent, Events are written at the usual rate
