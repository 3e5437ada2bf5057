"""The status thread's round: the core's events reach the pod writers, every writer does what is
due, and only the leader writes anything."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from core.events import SchedulingEvent
from core.objects.ask import Allocation
from core.scheduler import Scheduler
from shim.convert.nodes import node_to_info
from shim.convert.pods import pod_to_ask
from shim.convert.quotas import quota_to_spec
from shim.kube.write.pod_events import EventCorrelator, EventWriter
from shim.kube.write.pod_status import PodConditionWriter
from shim.kube.write.quota_status import QuotaStatusWriter
from shim.kube.write.status import StatusWriters
from shim.kube.write.status_api import StatusApi
from tests.kube.conftest import team_pod
from tests.kube.kmock_thread import KmockThread

GROUP, VERSION, PLURAL = "scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas"
QUOTA = {
    "apiVersion": f"{GROUP}/{VERSION}",
    "kind": "ElasticQuota",
    "metadata": {"name": "team-a", "namespace": "team-a"},
    "spec": {"min": {"cpu": "1"}, "max": {"cpu": "2"}},
}


class Queued:
    """The core's callbacks as the operator's ShimCallbacks deliver events: into a queue."""

    def __init__(self) -> None:
        self.events: queue.Queue[SchedulingEvent] = queue.Queue()

    def bind(self, allocation: Allocation) -> None: ...
    def evict(self, allocation: Allocation, reason: str) -> None: ...

    def report(self, event: SchedulingEvent) -> None:
        self.events.put(event)


@pytest.fixture
def api() -> Iterator[KmockThread]:
    with KmockThread() as emulator:
        client.CustomObjectsApi(emulator.api_client()).create_namespaced_custom_object(
            GROUP, VERSION, "team-a", PLURAL, QUOTA
        )
        yield emulator


def writers(api: KmockThread, sched: Scheduler, events: queue.Queue[SchedulingEvent], leader: bool) -> StatusWriters:
    status_api = StatusApi(api.api_client())

    def cached(key: str) -> dict[str, Any] | None:
        return next((p for p in api.objects("pods") if p["metadata"]["uid"] == key), None)

    def locate(key: str) -> tuple[str, str] | None:
        found = cached(key)
        return (found["metadata"]["namespace"], found["metadata"]["name"]) if found else None

    def namespaces() -> dict[str, str]:
        return {name: spec.namespace for name, spec in sched.quota_tree()[0].items()}

    return StatusWriters(
        events,
        QuotaStatusWriter(status_api, sched.quota_status, namespaces, lambda: 1.0),
        PodConditionWriter(status_api, cached, sched.scale_up_view, lambda: 1.0),
        EventWriter(status_api, locate, EventCorrelator()),
        active=lambda: leader,
    )


def scheduled_world(api: KmockThread) -> tuple[Scheduler, Queued]:
    callbacks = Queued()
    sched = Scheduler(callbacks)
    sched.update_quota(quota_to_spec(QUOTA))
    sched.update_node(node_to_info({"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "8", "pods": "9"}}}))
    core = client.CoreV1Api(api.api_client())
    for item in (team_pod("fits", "1500m"), team_pod("waits", "1")):
        core.create_namespaced_pod("team-a", item)
        sched.add_ask(pod_to_ask(item, {"metadata": {"name": "team-a"}}))
    sched.schedule()
    return sched, callbacks


def test_one_round_shows_quota_figures_waiting_reasons_and_events(api: KmockThread) -> None:
    sched, callbacks = scheduled_world(api)
    writers(api, sched, callbacks.events, leader=True).run_once(now=0.0)
    [quota] = api.objects(PLURAL)
    assert quota["status"]["used"] == {"cpu": "1500m"}
    waits = next(p for p in api.objects("pods") if p["metadata"]["name"] == "waits")
    [condition] = waits["status"]["conditions"]
    # held back by its quota's max (1500m used + 1 > 2), not for lack of a node: no autoscaler adds one
    assert condition["reason"] == "SchedulingSkipped" and condition["message"] == sched.pending_reason("uid-waits")
    reasons = {(e["involvedObject"]["name"], e["reason"]) for e in api.objects("events")}
    assert reasons == {("fits", "Scheduled"), ("waits", "FailedScheduling")}


def test_a_standby_writes_nothing_and_keeps_no_backlog(api: KmockThread) -> None:
    sched, callbacks = scheduled_world(api)
    writers(api, sched, callbacks.events, leader=False).run_once(now=0.0)
    assert callbacks.events.empty()
    assert api.writes("/status") == [] and api.writes("/events") == []
