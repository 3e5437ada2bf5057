"""Two replicas, one Lease: only the holder schedules, a standby stays warm and takes over.

Lease timings are shortened with `--set` (3s Lease, 2s renew deadline, 0.3s retry period) so a
takeover after a killed leader happens within seconds; nothing here asserts how fast.
"""

from __future__ import annotations

from collections import Counter

import pytest
from kubernetes import client

from tests.kube.conftest import Cluster, eventually
from tests.kube.emulator import HERDER_NAMESPACE, HerderReplica

pytestmark = pytest.mark.timeout(90)

FAST_LEASE = {"leader.leaseDuration": "3s", "leader.renewDeadline": "2s", "leader.retryPeriod": "0.3s"}


def holder(cluster: Cluster) -> str | None:
    api = client.CoordinationV1Api(cluster.server.api_client())
    try:
        lease = api.read_namespaced_lease("herder-scheduler", HERDER_NAMESPACE)
    except client.ApiException:
        return None
    return lease.spec.holder_identity or None


def pair(cluster: Cluster) -> tuple[HerderReplica, HerderReplica]:
    leader = cluster.start_herder("herder-a", settings=FAST_LEASE)
    eventually(lambda: leader.leading, "herder-a to take the Lease")
    standby = cluster.start_herder("herder-b", settings=FAST_LEASE)
    return leader, standby


def queues_and_usage(replica: HerderReplica) -> dict[str, object]:
    dump = replica.scheduler.state_dump()
    return {"queues": dump["queues"], "usage": dump["usage"], "quotas": dump["quotas"]}


def test_killed_leader_is_replaced_by_the_warm_standby_without_double_binding(cluster: Cluster) -> None:
    leader, standby = pair(cluster)
    cluster.create_namespace("batch")
    cluster.create_pods("batch", 6, prefix="before", cpu="1")
    cluster.all_bound("batch")
    assert holder(cluster) == "herder-a"
    assert not standby.leading
    eventually(
        lambda: queues_and_usage(standby) == queues_and_usage(leader),
        "the standby's trackers to match the leader's",
    )

    leader.kill()
    cluster.create_pods("batch", 4, prefix="after", cpu="1")
    eventually(lambda: holder(cluster) == "herder-b", "herder-b to take over the expired Lease")
    # the Lease shows herder-b as soon as its write lands; the replica leads once the answer is back
    eventually(lambda: standby.leading, "herder-b to lead on the Lease it took")
    cluster.all_bound("batch")

    bindings = cluster.server.bindings()
    successes = Counter(f"{b.namespace}/{b.name}" for b in bindings if b.code == 201)
    assert len(successes) == 10
    assert max(successes.values()) == 1
    assert [b for b in bindings if b.code == 409] == []


def test_standby_never_binds_while_the_leader_holds_the_lease(cluster: Cluster) -> None:
    leader, standby = pair(cluster)
    cluster.create_namespace("batch")
    cluster.create_pods("batch", 8, cpu="1")
    cluster.all_bound("batch")
    assert standby.operator is not None and standby.operator.bound == 0
    assert leader.operator is not None and leader.operator.bound == 8


def test_stopped_leader_hands_the_lease_over_at_once(cluster: Cluster) -> None:
    leader, standby = pair(cluster)
    leader.stop()
    assert holder(cluster) in (None, "herder-b"), "a stopped leader releases its Lease"
    eventually(lambda: standby.leading, "herder-b to lead")
    cluster.create_namespace("batch")
    cluster.create_pods("batch", 2, cpu="1")
    cluster.all_bound("batch")


def test_leader_that_loses_its_lease_stops_scheduling(cluster: Cluster) -> None:
    leader = cluster.start_herder("herder-a", settings=FAST_LEASE)
    eventually(lambda: leader.leading, "herder-a to take the Lease")
    api = client.CoordinationV1Api(cluster.server.api_client())
    far_future = {"holderIdentity": "someone-else", "renewTime": "2999-01-01T00:00:00.000000Z"}
    api.patch_namespaced_lease("herder-scheduler", HERDER_NAMESPACE, {"spec": far_future})
    eventually(lambda: not leader.leading, "herder-a to notice it no longer holds the Lease")
    cluster.create_namespace("batch")
    cluster.create_pods("batch", 1, cpu="1")
    key = cluster.core.read_namespaced_pod("job-0", "batch").metadata.uid
    eventually(lambda: key in {a["allocationKey"] for a in _asks(leader)}, "the pod known to herder-a as pending")
    assert cluster.node_of("batch", "job-0") is None
    assert cluster.server.bindings() == []


def _asks(replica: HerderReplica) -> list[dict[str, object]]:
    return [
        request
        for app in replica.scheduler.applications_document()
        for request in app.get("requests", [])  # type: ignore[attr-defined]
    ]
