"""A cluster's objects written as a scenario: what each pod becomes, and how long it runs."""

from __future__ import annotations

from typing import Any

import pytest

from shim.whatif.anonymize import anonymize
from shim.whatif.snapshot import ClusterObjects, Durations, scenario_document

NOW = 1_800_000_000.0  # 2027-01-15T08:00:00Z


def stamp(seconds_before: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(NOW - seconds_before, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(name: str, namespace: str = "batch", node: str | None = None, age: float = 100, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "creationTimestamp": stamp(age)},
        "spec": {"schedulerName": "herder", "containers": [{"name": "c", "image": "secret/image:1"}], **spec},
        "status": {"phase": "Pending"},
    }
    if node:
        body["spec"]["nodeName"] = node
        body["status"] = {"phase": "Running", "startTime": stamp(age - 10)}
    return body


def entries(*pods: dict[str, Any], durations: Durations | None = None) -> dict[str, dict[str, Any]]:
    cluster = ClusterObjects(taken_at=NOW, source="test", pods=list(pods))
    document = scenario_document(cluster, durations or Durations())
    return {entry["pod"]["metadata"]["name"]: entry for entry in document["workload"]}


def test_bound_pods_keep_their_node_start_and_creation_before_t0() -> None:
    found = entries(pod("a", node="n1", age=100))
    assert found["a"] == {
        "at": 0,
        "created": -100.0,
        "started": -90.0,
        "pod": {
            "metadata": {"name": "a", "namespace": "batch", "uid": "uid-a"},
            "spec": {
                "schedulerName": "herder",
                "containers": [{"name": "c", "image": "secret/image:1"}],
                "nodeName": "n1",
            },
        },
    }


def test_pending_pods_arrive_at_t0_in_their_creation_order_after_the_bound_ones() -> None:
    found = entries(pod("late", age=5), pod("early", age=50), pod("running", node="n1", age=1))
    assert list(found) == ["running", "early", "late"]
    assert (found["early"]["created"], found["late"]["created"]) == (-50.0, -5.0)


def test_durations_come_from_the_deadline_then_the_namespace_then_the_default() -> None:
    durations = Durations(default=600, per_namespace={"web": 3600})
    found = entries(
        pod("deadline", node="n1", age=100, activeDeadlineSeconds=300),  # started 90 s ago: 210 s left
        pod("web", namespace="web", node="n1", age=100),  # 3600 - 90
        pod("other", node="n1", age=100),  # 600 - 90
        pod("waiting", age=100),  # pending: the whole default
        pod("overdue", node="n1", age=1000, activeDeadlineSeconds=60),  # past its deadline: ends at once
        durations=durations,
    )
    assert {name: e.get("duration") for name, e in found.items()} == {
        "deadline": 210.0,
        "web": 3510.0,
        "other": 510.0,
        "overdue": 1.0,
        "waiting": 600,
    }
    assert durations.describe() == "a pod's activeDeadlineSeconds, then 3600 s in namespace web, then 600 s otherwise"


def test_without_a_duration_pods_run_until_the_end_and_ended_pods_are_left_out() -> None:
    done = pod("done", node="n1")
    done["status"]["phase"] = "Succeeded"
    found = entries(pod("a", node="n1"), done, durations=Durations(use_deadline=False))
    assert list(found) == ["a"]
    assert "duration" not in found["a"]


def test_what_herder_wrote_on_quotas_is_left_out_and_the_configmap_becomes_config_and_settings() -> None:
    quota = {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {
            "name": "team",
            "namespace": "team",
            "annotations": {"quota.scheduling.koordinator.sh/runtime": '{"cpu": "4"}', "keep": "me"},
            "resourceVersion": "12",
        },
        "spec": {"min": {"cpu": "4"}, "max": {"cpu": "8"}},
        "status": {"used": {"cpu": "2"}},
    }
    config_map = {"data": {"queues.yaml": "partitions: []\n", "quota.recycle.delay": "30s"}}
    cluster = ClusterObjects(taken_at=NOW, source="test", quotas=[quota], config_map=config_map)
    document = scenario_document(cluster, Durations())
    assert document["quotas"] == [
        {
            "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {"name": "team", "namespace": "team", "annotations": {"keep": "me"}},
            "spec": {"min": {"cpu": "4"}, "max": {"cpu": "8"}},
        }
    ]
    assert document["config"] == "partitions: []\n"
    assert document["settings"] == {"quota.recycle.delay": "30s"}


@pytest.mark.parametrize("taken", ["alice", "team-ml", "ml-train-0", "uid-ml-train-0", "secret/image"])
def test_anonymized_scenarios_hold_no_name_of_a_person_team_or_workload(taken: str) -> None:
    user = '{"user": "alice", "groups": ["team-ml"]}'
    a = pod("ml-train-0", namespace="team-ml", node="n1")
    a["metadata"]["annotations"] = {"yunikorn.apache.org/user.info": user}
    a["metadata"]["labels"] = {"applicationId": "ml-train", "yunikorn.apache.org/queue": "root.team-ml"}
    config_map = {
        "data": {"queues.yaml": "partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: alice\n"}
    }
    cluster = ClusterObjects(taken_at=NOW, source="test", pods=[a], config_map=config_map)
    anonymized, _ = anonymize(scenario_document(cluster, Durations()))
    assert taken not in repr(anonymized)
    labels = anonymized["workload"][0]["pod"]["metadata"]["labels"]
    namespace = anonymized["workload"][0]["pod"]["metadata"]["namespace"]
    assert labels["yunikorn.apache.org/queue"] == f"root.{namespace}"  # the queue still follows its namespace
    assert "submitacl: user-1" in anonymized["config"]


def test_an_anonymized_pod_group_keeps_naming_its_pods_under_a_stand_in() -> None:
    member = pod("w-0", namespace="team-ml")
    member["metadata"]["labels"] = {"scheduling.x-k8s.io/pod-group": "secret-llm"}
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "secret-llm", "namespace": "team-ml"},
        "spec": {"minMember": 2},
    }
    cluster = ClusterObjects(taken_at=NOW, source="test", pods=[member], objects=[group])
    anonymized, _ = anonymize(scenario_document(cluster, Durations()))
    assert "secret-llm" not in repr(anonymized) and "team-ml" not in repr(anonymized)
    [kept] = anonymized["objects"]
    label = anonymized["workload"][0]["pod"]["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"]
    assert label == kept["metadata"]["name"] and kept["spec"] == {"minMember": 2}
