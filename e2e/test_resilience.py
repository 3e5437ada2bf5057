"""A restarted or failed-over Herder rebuilds its state exactly and never double-binds."""

from __future__ import annotations

from e2e.backends import Cluster, wait_until_ready
from e2e.workloads import bound, create_quota, eventually, herder_pod, quota, quota_used_once


def test_restart_keeps_bindings_and_quota_usage(cluster: Cluster, namespace: str) -> None:
    create_quota(cluster, namespace, {"cpu": "200m"}, {"cpu": "300m"})
    for index in range(3):
        cluster.core.create_namespaced_pod(namespace, herder_pod(f"before-{index}", cpu="100m"))
    nodes = {index: bound(cluster, namespace, f"before-{index}") for index in range(3)}
    used = quota_used_once(cluster, namespace, ("300m", "0.3"))

    cluster.operator.restart_all()
    wait_until_ready(cluster.herder_url)

    cluster.core.create_namespaced_pod(namespace, herder_pod("after", cpu="100m"))
    for index, node in nodes.items():
        assert cluster.core.read_namespaced_pod(f"before-{index}", namespace).spec.node_name == node
    assert quota(cluster, namespace)["status"]["used"] == used
    # The quota is full: a scheduler that forgot its trackers would bind this pod.
    eventually(
        lambda: cluster.core.read_namespaced_pod("after", namespace).status.conditions,
        "a scheduling verdict for the pod created after the restart",
    )
    assert cluster.core.read_namespaced_pod("after", namespace).spec.node_name is None


def test_standby_takes_over_when_the_leader_dies(cluster: Cluster, namespace: str) -> None:
    old_leader = eventually(lambda: cluster.operator.leader() or None, "a Lease holder")
    cluster.operator.stop_leader()
    eventually(
        lambda: (lambda holder: holder and holder != old_leader)(cluster.operator.leader()),
        "another replica to take the Lease",
        timeout=90,
    )
    cluster.core.create_namespaced_pod(namespace, herder_pod("after-failover"))
    bound(cluster, namespace, "after-failover", timeout=90)
