"""Contract tests: Herder's REST documents in the shapes of YuniKorn's documented examples.

YuniKorn's web UI (yunikorn-web) and scripts written for YuniKorn read these fields; each
test pins, per endpoint, the fields and JSON types of the example in YuniKorn's REST API
documentation (yunikorn-site `docs/api/scheduler.md` and `cluster.md`) and the units the UI
relies on: times as Unix nanoseconds, priorities as strings, pods named by allocation tags.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from shim.convert.pods import pod_to_ask
from shim.rest import RestStatus, ShimMetrics
from shim.rest.cluster import History
from tests.shim.rest_world import NOW, Served, build_scheduler, pod, serve

P = "/ws/v1/partition/default"
NS = 10**9
NOW_NS = int(NOW * NS)

# Field -> JSON type, from YuniKorn's documented example of each document.
PARTITION = {
    "clusterId": str,
    "name": str,
    "state": str,
    "lastStateTransitionTime": int,
    "capacity": dict,
    "nodeSortingPolicy": dict,
    "applications": dict,
    "totalContainers": int,
    "totalNodes": int,
    "preemptionEnabled": bool,
    "quotaPreemptionEnabled": bool,
}
APPLICATION = {
    "applicationID": str,
    "usedResource": dict,
    "maxUsedResource": dict,
    "pendingResource": dict,
    "partition": str,
    "queueName": str,
    "submissionTime": int,
    "requests": list,
    "allocations": list,
    "applicationState": str,
    "user": str,
    "groups": list,
    "rejectedMessage": str,
    "stateLog": list,
    "hasReserved": bool,
    "reservations": list,
}
REQUEST = {
    "allocationKey": str,
    "allocationTags": dict,
    "requestTime": int,
    "resource": dict,
    "pendingCount": int,
    "priority": str,
    "applicationId": str,
    "partition": str,
    "placeholder": bool,
}
ALLOCATION = {
    "allocationKey": str,
    "allocationTags": dict,
    "requestTime": int,
    "allocationTime": int,
    "allocationDelay": int,
    "allocationID": str,
    "resource": dict,
    "priority": str,
    "nodeId": str,
    "applicationId": str,
    "partition": str,
    "placeholder": bool,
    "placeholderUsed": bool,
}
NODE = {
    "nodeID": str,
    "hostName": str,
    "rackName": str,
    "partition": str,
    "attributes": dict,
    "capacity": dict,
    "allocated": dict,
    "occupied": dict,
    "available": dict,
    "utilized": dict,
    "allocations": list,
    "schedulable": bool,
    "isReserved": bool,
    "reservations": list,
}
CLUSTER = {"startTime": int, "rmBuildInformation": list, "partition": str, "clusterName": str}
BUILD = {"buildDate": str, "buildVersion": str, "rmId": str, "isPluginVersion": str}


def assert_shape(doc: dict[str, Any], shape: dict[str, type], what: str) -> None:
    missing = sorted(set(shape) - set(doc))
    assert not missing, f"{what} lacks YuniKorn's {missing}"
    for key, kind in shape.items():
        assert type(doc[key]) is kind, f"{what}.{key} is {type(doc[key]).__name__}, YuniKorn sends {kind.__name__}"


def a_recent_epoch_ns(value: int) -> bool:
    """Unix nanoseconds of this century, not seconds and not 1970."""
    return 1_600_000_000 * NS < value < 4_000_000_000 * NS


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    sched, _ = build_scheduler()
    async with serve(sched, RestStatus(identity="herder-0"), ShimMetrics(), history_interval=0.05) as world:
        yield world


async def test_partition_has_yunikorn_fields_and_counts_finished_and_rejected_applications(served: Served) -> None:
    served.sched.release_allocation("uid-job-2-a")
    served.sched.schedule(now=NOW + 60)  # past the Completing timeout: job-2 completes
    lost = pod("lost", "job-9", "dave", [], "1")
    lost["metadata"]["namespace"] = "elsewhere"
    served.sched.add_ask(pod_to_ask(lost, None))  # rejected: no queue for its namespace
    _, [partition] = await served.get("/ws/v1/partitions")
    assert_shape(partition, PARTITION, "partition")
    assert partition["applications"] == {"total": 4, "Accepted": 1, "Running": 1, "Completed": 1, "Rejected": 1}
    assert a_recent_epoch_ns(partition["lastStateTransitionTime"])


async def test_applications_show_epoch_nanoseconds_a_state_log_and_named_pods(served: Served) -> None:
    _, apps = await served.get(f"{P}/applications")
    job1 = next(app for app in apps if app["applicationID"] == "job-1")
    assert_shape(job1, APPLICATION, "application")
    assert job1["submissionTime"] == NOW_NS
    assert [entry["applicationState"] for entry in job1["stateLog"]] == ["Accepted", "Starting", "Running"]
    assert all(entry["time"] == NOW_NS for entry in job1["stateLog"])
    assert job1["lastStateChangeTime"] == NOW_NS and job1["finishedTime"] is None
    allocation = job1["allocations"][0]
    assert_shape(allocation, ALLOCATION, "allocation")
    assert allocation["allocationTags"]["kubernetes.io/meta/namespace"] == "batch"
    assert allocation["allocationTags"]["kubernetes.io/meta/podName"] == "job-1-a"
    assert allocation["priority"] == "0" and allocation["partition"] == "default"
    assert a_recent_epoch_ns(allocation["requestTime"]) and a_recent_epoch_ns(allocation["allocationTime"])
    assert allocation["allocationDelay"] == allocation["allocationTime"] - allocation["requestTime"]

    _, job3 = await served.get(f"{P}/application/job-3")
    [request] = job3["requests"]
    assert_shape(request, REQUEST, "request")
    assert request["allocationTags"]["kubernetes.io/meta/podName"] == "job-3-a"
    assert a_recent_epoch_ns(request["requestTime"])


async def test_nodes_show_utilization_host_partition_and_zeros_instead_of_empty_maps(served: Served) -> None:
    _, nodes = await served.get(f"{P}/nodes")
    by_id = {node["nodeID"]: node for node in nodes}
    n0, n1 = by_id["node-0"], by_id["node-1"]
    assert_shape(n0, NODE, "node")
    assert (n0["hostName"], n0["partition"]) == ("node-0", "default")
    assert n0["utilized"] == {"memory": 37, "pods": 30, "vcore": 75}  # 3 of 4 cpu, 3 of 8Gi, 3 of 10 pods
    assert n1["allocated"] == {"memory": 0, "pods": 0, "vcore": 0}
    assert n1["utilized"] == {"memory": 0, "pods": 0, "vcore": 0}
    foreign = n0["foreignAllocations"][0]
    assert foreign["allocationTags"]["kubernetes.io/meta/podName"] == "other"


async def test_clusters_name_the_partition_start_time_and_build(served: Served) -> None:
    status, clusters = await served.get("/ws/v1/clusters")
    assert status == 200
    [cluster] = clusters
    assert_shape(cluster, CLUSTER, "cluster")
    assert_shape(cluster["rmBuildInformation"][0], BUILD, "build information")
    assert cluster["partition"] == "default"
    assert abs(cluster["startTime"] - time.time_ns()) < 60 * NS


async def test_history_samples_applications_and_containers_at_each_interval(served: Served) -> None:
    await asyncio.sleep(0.2)
    _, apps = await served.get("/ws/v1/history/apps")
    _, containers = await served.get("/ws/v1/history/containers")
    assert len(apps) >= 2 and len(containers) >= 2
    assert apps[0] == {"timestamp": apps[0]["timestamp"], "totalApplications": "3"}
    assert containers[0]["totalContainers"] == "3"
    assert all(a_recent_epoch_ns(sample["timestamp"]) for sample in apps)
    assert [s["timestamp"] for s in apps] == sorted(s["timestamp"] for s in apps)


async def test_history_keeps_a_bounded_number_of_samples() -> None:
    sched, _ = build_scheduler()
    history = History(kept=3)
    for tick in range(5):
        history.take(sched, tick)
    assert [sample.timestamp for sample in history.samples] == [2, 3, 4]


async def test_node_utilizations_put_every_node_in_one_of_ten_buckets_per_resource(served: Served) -> None:
    status, body = await served.get("/ws/v1/scheduler/node-utilizations")
    assert status == 200
    [partition] = body
    assert (partition["clusterId"], partition["partition"]) == ("herder", "default")
    by_type = {entry["type"]: entry["utilization"] for entry in partition["utilizations"]}
    assert set(by_type) == {"memory", "pods", "vcore"}
    for buckets in by_type.values():
        assert [b["bucketName"] for b in buckets] == [f"{i * 10}-{i * 10 + 10}%" for i in range(10)]
        assert sum(b["numOfNodes"] for b in buckets) == 3
    vcore = {b["bucketName"]: b["nodeNames"] for b in by_type["vcore"] if b["numOfNodes"]}
    assert vcore == {"0-10%": ["node-1", "node-2"], "70-80%": ["node-0"]}
