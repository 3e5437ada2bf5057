"""With the whole operator running, users see its decisions on their objects: the quota's used and
runtime, why a pod waits, and Events on the pods."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from shim.convert.quotas import ANNOTATION_RUNTIME
from tests.kube.conftest import Cluster, eventually, quota_body
from tests.kube.emulator_api import EVENTS, PODS

pytestmark = pytest.mark.timeout(60)
GROUP, VERSION, PLURAL = "scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas"


def test_operator_shows_quota_usage_waiting_reasons_and_events(cluster: Cluster) -> None:
    cluster.start_herder()
    cluster.create_namespace("team-a")
    body = quota_body("team-a", "team-a", {"cpu": "1"}, {"cpu": "2"})
    cluster.custom.create_namespaced_custom_object(GROUP, VERSION, "team-a", PLURAL, body)
    cluster.create_pods("team-a", 1, prefix="fits", cpu="1500m")
    cluster.bound("team-a", "fits-0")
    cluster.create_pods("team-a", 1, prefix="waits", cpu="1")

    def quota() -> dict[str, Any]:
        found: dict[str, Any] = cluster.custom.get_namespaced_custom_object(GROUP, VERSION, "team-a", PLURAL, "team-a")
        return found

    def used() -> dict[str, str] | None:
        shown = (quota().get("status") or {}).get("used")
        return dict(shown) if shown and shown.get("cpu") == "1500m" else None

    def runtime() -> dict[str, str] | None:
        shown = (quota()["metadata"].get("annotations") or {}).get(ANNOTATION_RUNTIME)
        figures = json.loads(shown) if shown else {}
        return figures if figures.get("cpu") == "2" else None  # the waiting pod lifts runtime to max

    def waiting_reason() -> str | None:
        status = cluster.core.read_namespaced_pod("waits-0", "team-a").status
        for condition in status.conditions or []:
            if condition.type == "PodScheduled" and condition.status == "False":
                return str(condition.message)
        return None

    def reasons(pod: str) -> set[tuple[str, str]] | None:
        events = cluster.server.objects(EVENTS)
        found = {(e["type"], e["reason"]) for e in events if e["involvedObject"]["name"] == pod}
        return found or None

    assert eventually(used, "status.used of the quota") == {"cpu": "1500m"}
    assert eventually(runtime, "the runtime annotation at the quota's max") == {"cpu": "2"}
    assert "quota team-a" in eventually(waiting_reason, "PodScheduled=False on the waiting pod")
    assert eventually(lambda: reasons("fits-0"), "an Event on the bound pod") == {("Normal", "Scheduled")}
    assert eventually(lambda: reasons("waits-0"), "an Event on the waiting pod") == {("Warning", "FailedScheduling")}


def test_a_pod_whose_resources_cannot_be_read_waits_with_a_reason_and_an_event_and_others_run(
    cluster: Cluster,
) -> None:
    cluster.start_herder()
    cluster.create_namespace("team-b")
    broken = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "broken", "namespace": "team-b"},
        "spec": {"schedulerName": "herder", "containers": None},
    }
    # Posted as raw JSON: the Python client would refuse to send `containers: null` itself.
    request = urllib.request.Request(
        f"{cluster.server.url}/api/v1/namespaces/team-b/pods",
        data=json.dumps(broken).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status in (200, 201)
    cluster.create_pods("team-b", 1, prefix="good", cpu="1")
    cluster.bound("team-b", "good-0")

    def failed_scheduling() -> str | None:
        events = cluster.server.objects(EVENTS)
        found = [e["message"] for e in events if e["involvedObject"]["name"] == "broken"]
        return found[0] if found else None

    message = eventually(failed_scheduling, "an Event on the unreadable pod")
    assert "pod team-b/broken spec.containers: expected a non-empty list of containers, got null" in message
    [stored] = [pod for pod in cluster.server.objects(PODS) if pod["metadata"]["name"] == "broken"]
    assert not stored["spec"].get("nodeName")
