"""Herder schedules pods through queues and quotas, maps namespaces to queues and tags users."""

from __future__ import annotations

import json

import yaml
from kubernetes import client

from e2e.backends import Cluster
from e2e.workloads import (
    bound,
    create_quota,
    eventually,
    herder_pod,
    queue_names,
    quota_used_once,
    rest,
    set_settings,
    unschedulable_reason,
)


def test_pod_within_its_quota_is_bound_and_counted_as_used(cluster: Cluster, namespace: str) -> None:
    create_quota(cluster, namespace, {"cpu": "200m", "memory": "64Mi"}, {"cpu": "400m", "memory": "128Mi"})
    cluster.core.create_namespaced_pod(namespace, herder_pod("job-1", cpu="100m"))
    bound(cluster, namespace, "job-1")
    used = quota_used_once(cluster, namespace, ("100m", "0.1"))
    assert used["memory"] in ("16Mi", str(16 * 1024 * 1024))


def test_pod_beyond_quota_max_stays_pending_with_a_reason(cluster: Cluster, namespace: str) -> None:
    create_quota(cluster, namespace, {"cpu": "100m"}, {"cpu": "200m"})
    cluster.core.create_namespaced_pod(namespace, herder_pod("fits", cpu="150m"))
    bound(cluster, namespace, "fits")
    cluster.core.create_namespaced_pod(namespace, herder_pod("too-much", cpu="100m"))
    reason = eventually(
        lambda: unschedulable_reason(cluster, namespace, "too-much"), "a PodScheduled=False reason"
    )
    assert reason
    assert cluster.core.read_namespaced_pod("too-much", namespace).spec.node_name is None


def test_namespace_maps_to_a_queue_under_its_parent_annotation(cluster: Cluster, namespace: str) -> None:
    cluster.core.create_namespaced_pod(namespace, herder_pod("mapped"))
    bound(cluster, namespace, "mapped")
    names = queue_names(rest(cluster, "/ws/v1/partition/default/queues"))
    assert f"root.e2e.{namespace}" in names


def test_webhook_records_the_creating_user_on_the_pod(cluster: Cluster, namespace: str) -> None:
    created = cluster.core.create_namespaced_pod(namespace, herder_pod("tagged"))
    info = json.loads(created.metadata.annotations["yunikorn.apache.org/user.info"])
    assert info["user"]
    assert isinstance(info["groups"], list)


def test_webhook_rejects_a_forged_user_from_an_untrusted_client(cluster: Cluster, namespace: str) -> None:
    pod = herder_pod("forged")
    pod.metadata.annotations = {
        "yunikorn.apache.org/user.info": json.dumps({"user": "mallory", "groups": []})
    }
    try:
        created = cluster.core.create_namespaced_pod(namespace, pod)
    except client.ApiException as error:
        assert error.status in (400, 403)
    else:
        assert json.loads(created.metadata.annotations["yunikorn.apache.org/user.info"])["user"] != "mallory"


def test_user_limit_holds_back_the_pod_over_it(cluster: Cluster, namespace: str) -> None:
    queues = cluster.core.read_namespaced_config_map("herder-config", cluster.herder_namespace).data[
        "queues.yaml"
    ]
    config = yaml.safe_load(queues)
    root = config["partitions"][0]["queues"][0]
    # vcore takes Kubernetes quantities as cores: 150m lets one 100m pod run, not two.
    root["limits"] = [{"limit": "e2e", "users": ["*"], "maxresources": {"vcore": "150m"}}]
    limited = yaml.safe_dump(config)
    previous = set_settings(cluster, {"queues.yaml": limited})
    try:
        cluster.core.create_namespaced_pod(namespace, herder_pod("first", cpu="100m"))
        bound(cluster, namespace, "first")
        cluster.core.create_namespaced_pod(namespace, herder_pod("second", cpu="100m"))
        eventually(lambda: unschedulable_reason(cluster, namespace, "second"), "the user limit to hold")
        usage = rest(cluster, "/ws/v1/partition/default/usage/users")
        assert any(entry.get("userName") for entry in usage)
    finally:
        set_settings(cluster, previous)


def test_foreign_pod_is_reported_and_its_room_respected(cluster: Cluster, namespace: str) -> None:
    node = cluster.core.list_node().items[-1].metadata.name
    pod = herder_pod("foreign", cpu="50m")
    pod.spec.scheduler_name = "default-scheduler"
    pod.spec.node_name = node
    cluster.core.create_namespaced_pod(namespace, pod)

    def foreign_on_node() -> bool:
        nodes = rest(cluster, "/ws/v1/partition/default/nodes")
        entry = next((n for n in nodes if n.get("nodeID") == node), {})
        return any(namespace in json.dumps(a) for a in entry.get("foreignAllocations") or [])

    assert eventually(foreign_on_node, "the foreign pod in the node's foreignAllocations")


def test_webhook_copies_the_preemption_opt_out_of_the_pods_priority_class(cluster: Cluster, namespace: str) -> None:
    classes = client.SchedulingV1Api(cluster.core.api_client)
    name = f"{namespace}-keep"
    opt_out = {"yunikorn.apache.org/allow-preemption": "false"}
    classes.create_priority_class(
        client.V1PriorityClass(metadata=client.V1ObjectMeta(name=name, annotations=opt_out), value=10)
    )
    tries = iter(range(1000))

    def created_with_the_opt_out() -> bool:  # Herder learns of the class through its watch
        pod = herder_pod(f"keep-{next(tries)}")
        pod.spec.priority_class_name = name
        created = cluster.core.create_namespaced_pod(namespace, pod)
        return (created.metadata.annotations or {}).get("yunikorn.apache.org/allow-preemption") == "false"

    try:
        eventually(created_with_the_opt_out, "a pod carrying its PriorityClass's allow-preemption annotation")
    finally:
        classes.delete_priority_class(name)
