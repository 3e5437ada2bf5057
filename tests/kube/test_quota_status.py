"""ElasticQuotas show what the scheduler computed for them (used, runtime, request), written
through the real client to the emulated API server only when it changed, at most once per interval."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from core.events import SchedulingEvent
from core.objects.ask import Allocation
from core.scheduler import Scheduler
from shim.convert.nodes import node_to_info
from shim.convert.pods import pod_to_ask
from shim.convert.quotas import ANNOTATION_REQUEST, ANNOTATION_RUNTIME, quota_to_spec
from shim.kube.write.quota_status import QuotaStatusWriter, kube_quantities
from shim.kube.write.status_api import StatusApi
from tests.kube.kmock_thread import KmockThread

GROUP, VERSION, PLURAL = "scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas"
TEAM = {
    "apiVersion": f"{GROUP}/{VERSION}",
    "kind": "ElasticQuota",
    "metadata": {"name": "team-a", "namespace": "team-a"},
    "spec": {"min": {"cpu": "1"}, "max": {"cpu": "4", "memory": "8Gi"}},
}


class Ignored:
    """The core's outputs go nowhere: only its quota figures are under test here."""

    def bind(self, allocation: Allocation) -> None: ...
    def evict(self, allocation: Allocation, reason: str) -> None: ...
    def report(self, event: SchedulingEvent) -> None: ...


def pod(name: str, cpu: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "team-a", "uid": f"uid-{name}"},
        "spec": {"schedulerName": "herder", "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
    }


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def cluster() -> Iterator[KmockThread]:
    with KmockThread() as api:
        custom = client.CustomObjectsApi(api.api_client())
        custom.create_namespaced_custom_object(GROUP, VERSION, "team-a", PLURAL, TEAM)
        yield api


@pytest.fixture
def scheduler() -> Scheduler:
    sched = Scheduler(Ignored())
    sched.update_quota(quota_to_spec(TEAM))
    sched.update_node(node_to_info({"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "8", "pods": "10"}}}))
    return sched


def run(sched: Scheduler, *pods: dict[str, Any]) -> None:
    for item in pods:
        sched.add_ask(pod_to_ask(item, {"metadata": {"name": "team-a"}}))
    sched.schedule()


def writer(api: KmockThread, sched: Scheduler, clock: Clock, interval: float = 1.0) -> QuotaStatusWriter:
    def namespaces() -> dict[str, str]:
        return {name: spec.namespace for name, spec in sched.quota_tree()[0].items()}

    return QuotaStatusWriter(StatusApi(api.api_client()), sched.quota_status, namespaces, lambda: interval, clock)


def stored(api: KmockThread) -> dict[str, Any]:
    [quota] = api.objects(PLURAL)
    return quota


def test_quota_shows_used_runtime_and_request_in_kubernetes_units(cluster: KmockThread, scheduler: Scheduler) -> None:
    run(scheduler, pod("a", "1500m"))
    writer(cluster, scheduler, Clock()).tick()
    quota = stored(cluster)
    assert quota["status"]["used"] == {"cpu": "1500m", "memory": "0"}
    annotations = quota["metadata"]["annotations"]
    assert json.loads(annotations[ANNOTATION_REQUEST]) == {"cpu": "1500m", "memory": "0"}
    runtime = json.loads(annotations[ANNOTATION_RUNTIME])
    assert set(runtime) == {"cpu", "memory"} and runtime["cpu"] == "1500m"


def test_unchanged_figures_are_written_once(cluster: KmockThread, scheduler: Scheduler) -> None:
    run(scheduler, pod("a", "1"))
    clock = Clock()
    status = writer(cluster, scheduler, clock)
    assert status.tick() == 2  # status.used and the annotations
    for _ in range(5):
        clock.now += 10
        assert status.tick() == 0
    assert len(cluster.writes("/elasticquotas/")) == 2


def test_a_change_is_written_no_sooner_than_the_interval(cluster: KmockThread, scheduler: Scheduler) -> None:
    clock = Clock()
    status = writer(cluster, scheduler, clock, interval=5.0)
    status.tick()
    before = len(cluster.writes("/elasticquotas/"))
    run(scheduler, pod("a", "1"))
    clock.now = 4.9
    assert status.tick() == 0
    run(scheduler, pod("b", "1"))
    clock.now = 5.0
    assert status.tick() == 2
    assert len(cluster.writes("/elasticquotas/")) == before + 2
    assert stored(cluster)["status"]["used"]["cpu"] == "2"


def test_a_new_leader_rewrites_nothing_that_is_already_right(cluster: KmockThread, scheduler: Scheduler) -> None:
    run(scheduler, pod("a", "1"))
    writer(cluster, scheduler, Clock()).tick()
    written = len(cluster.writes("/elasticquotas/"))
    assert writer(cluster, scheduler, Clock()).tick() == 0
    assert len(cluster.writes("/elasticquotas/")) == written


def test_a_resource_that_leaves_the_max_leaves_status_used(cluster: KmockThread, scheduler: Scheduler) -> None:
    clock = Clock()
    status = writer(cluster, scheduler, clock)
    status.tick()
    narrower = {**TEAM, "spec": {"min": {"cpu": "1"}, "max": {"cpu": "4"}}}
    scheduler.update_quota(quota_to_spec(narrower))
    clock.now = 2
    status.tick()
    assert stored(cluster)["status"]["used"] == {"cpu": "0"}


def test_a_quota_deleted_meanwhile_is_skipped_quietly(cluster: KmockThread, scheduler: Scheduler) -> None:
    client.CustomObjectsApi(cluster.api_client()).delete_namespaced_custom_object(
        GROUP, VERSION, "team-a", PLURAL, "team-a"
    )
    assert writer(cluster, scheduler, Clock()).tick() == 0


def test_cpu_is_shown_in_cores_or_millicores_and_memory_in_bytes() -> None:
    assert kube_quantities({"vcore": 2000, "memory": 2**30}) == {"cpu": "2", "memory": "1073741824"}
    assert kube_quantities({"vcore": 250}, ("vcore", "nvidia.com/gpu")) == {"cpu": "250m", "nvidia.com/gpu": "0"}
