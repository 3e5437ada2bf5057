"""The REST API as a YuniKorn user sees it: paths, field names, 404/400 bodies, readiness.

Every test runs the real aiohttp application on a real local port against a real scheduler
fed through shim/convert/ (see rest_world.py for the world and its numbers).
"""

from __future__ import annotations

import asyncio
import textwrap
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
import yaml

from core.config import load_config
from core.scheduler import Scheduler
from shim.convert.nodes import node_to_info
from shim.convert.pods import pod_to_ask
from shim.rest import RestStatus, ShimMetrics, build_rest_app, start_rest_server
from tests.seeds import SEED_004_NAMESPACE_MAPPING
from tests.shim.rest_world import GI, NAMESPACE, NOW, QUEUES, Recorder, Served, build_scheduler, node, pod, serve

P = "/ws/v1/partition/default"


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    sched, _ = build_scheduler()
    async with serve(sched, RestStatus(identity="herder-0"), ShimMetrics()) as world:
        yield world


def by_id(docs: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    return {doc[key]: doc for doc in docs}


def assert_error(status: int, body: Any, expected: int, message: str) -> None:
    assert status == expected
    assert set(body) == {"status_code", "message", "description"}
    assert body["status_code"] == expected
    assert body["message"] == message
    assert body["description"]


# -- partitions and queues ---------------------------------------------------------------


async def test_partitions_list_the_default_partition_with_capacity_and_app_counts(served: Served) -> None:
    status, body = await served.get("/ws/v1/partitions")
    assert status == 200
    [partition] = body
    assert partition["name"] == "default"
    assert partition["totalNodes"] == 3
    assert partition["capacity"]["capacity"] == {"memory": 24 * GI, "pods": 30, "vcore": 12000}
    assert partition["applications"] == {"total": 3, "Accepted": 1, "Running": 2}
    assert partition["totalContainers"] == 3
    assert partition["pendingRequests"] == 1


async def test_queue_tree_nests_children_with_yunikorn_field_names(served: Served) -> None:
    status, root = await served.get(f"{P}/queues")
    assert status == 200
    assert root["queuename"] == "root"
    [batch] = root["children"]
    for field in (
        "queuename",
        "status",
        "partition",
        "isLeaf",
        "isManaged",
        "maxResource",
        "guaranteedResource",
        "allocatedResource",
        "pendingResource",
        "maxRunningApps",
        "runningApps",
        "properties",
        "children",
    ):
        assert field in batch, field
    assert batch["queuename"] == "root.batch"
    assert batch["isLeaf"] is True
    assert batch["maxResource"] == {"memory": 12 * GI, "vcore": 6000}
    assert batch["guaranteedResource"] == {"memory": 4 * GI, "vcore": 2000}
    assert batch["allocatedResource"] == {"memory": 3 * GI, "pods": 3, "vcore": 3000}
    assert batch["pendingResource"] == {"memory": GI, "pods": 1, "vcore": 5000}
    assert batch["runningApps"] == 2
    assert batch["maxRunningApps"] == 10
    assert (batch["preemptionEnabled"], batch["isPreemptionFence"], batch["preemptionDelay"]) == (True, False, "30s")


async def test_one_queue_names_its_children_and_nests_them_only_with_subtree(served: Served) -> None:
    status, root = await served.get(f"{P}/queue/root")
    assert status == 200
    assert root["childNames"] == ["root.batch"]
    assert root["children"] == []
    status, root = await served.get(f"{P}/queue/root?subtree")
    assert [child["queuename"] for child in root["children"]] == ["root.batch"]
    status, batch = await served.get(f"{P}/queue/root.batch")
    assert status == 200
    assert batch["allocatedResource"]["vcore"] == 3000


async def test_placement_rules_are_the_configured_ones(served: Served) -> None:
    status, rules = await served.get(f"{P}/placementrules")
    assert status == 200
    assert [(rule["name"], rule["value"], rule["create"]) for rule in rules] == [("tag", "namespace", True)]


# -- applications ------------------------------------------------------------------------


async def test_applications_carry_yunikorn_fields_and_filter_by_state_and_queue(served: Served) -> None:
    status, apps = await served.get(f"{P}/applications")
    assert status == 200
    apps_by_id = by_id(apps, "applicationID")
    assert set(apps_by_id) == {"job-1", "job-2", "job-3"}
    job1 = apps_by_id["job-1"]
    for field in (
        "applicationID",
        "queueName",
        "partition",
        "applicationState",
        "user",
        "groups",
        "usedResource",
        "pendingResource",
        "submissionTime",
        "allocations",
        "requests",
    ):
        assert field in job1, field
    assert (job1["user"], job1["groups"], job1["applicationState"]) == ("alice", ["ml"], "Running")
    assert job1["usedResource"] == {"memory": 2 * GI, "pods": 2, "vcore": 2000}
    assert sorted(a["allocationKey"] for a in job1["allocations"]) == ["uid-job-1-a", "uid-job-1-b"]

    _, running = await served.get(f"{P}/applications?state=running")
    assert sorted(a["applicationID"] for a in running) == ["job-1", "job-2"]
    _, several = await served.get(f"{P}/applications?state=Accepted,Running&queue=root.batch")
    assert len(several) == 3
    _, elsewhere = await served.get(f"{P}/applications?queue=root.other")
    assert elsewhere == []


async def test_applications_by_state_group_follow_yunikorn_active_rejected_completed(served: Served) -> None:
    lost = pod("lost", "job-9", "dave", [], "1")
    lost["metadata"]["namespace"] = "elsewhere"
    served.sched.add_ask(pod_to_ask(lost, None))  # no namespace tag, no root.default: rejected
    for key in ("uid-job-2-a",):
        served.sched.release_allocation(key)
    served.sched.schedule(now=2_000_000_000.0)  # long past the Completing timeout

    _, active = await served.get(f"{P}/applications/active")
    assert sorted(a["applicationID"] for a in active) == ["job-1", "job-3"]
    _, accepted = await served.get(f"{P}/applications/active?status=accepted")
    assert [a["applicationID"] for a in accepted] == ["job-3"]
    _, rejected = await served.get(f"{P}/applications/rejected")
    assert [a["applicationID"] for a in rejected] == ["job-9"]
    assert "no placement rule matched" in rejected[0]["rejectedMessage"]
    _, completed = await served.get(f"{P}/applications/completed")
    assert [(a["applicationID"], a["applicationState"]) for a in completed] == [("job-2", "Completed")]
    _, in_queue = await served.get(f"{P}/queue/root.batch/applications/completed")
    assert [a["applicationID"] for a in in_queue] == ["job-2"]


async def test_one_application_tells_why_its_pod_waits(served: Served) -> None:
    status, app = await served.get(f"{P}/application/job-3")
    assert status == 200
    assert app["applicationState"] == "Accepted"
    [request] = app["requests"]
    assert request["allocationKey"] == "uid-job-3-a"
    assert "root.batch" in request["pendingReason"] and "max" in request["pendingReason"]
    status, same = await served.get(f"{P}/queue/root.batch/application/job-3")
    assert status == 200 and same["applicationID"] == "job-3"


async def test_a_finished_application_is_still_found_by_id(served: Served) -> None:
    served.sched.release_allocation("uid-job-2-a")
    served.sched.schedule(now=2_000_000_000.0)
    status, app = await served.get(f"{P}/application/job-2")
    assert status == 200
    assert app["applicationState"] == "Completed"
    assert app["allocations"] == []


# -- nodes -------------------------------------------------------------------------------


async def test_nodes_show_herder_and_foreign_allocations(served: Served) -> None:
    status, nodes = await served.get(f"{P}/nodes")
    assert status == 200
    nodes_by_id = by_id(nodes, "nodeID")
    assert set(nodes_by_id) == {"node-0", "node-1", "node-2"}
    assert nodes_by_id["node-2"]["schedulable"] is False
    status, n0 = await served.get(f"{P}/node/node-0")
    assert status == 200
    for field in ("nodeID", "attributes", "capacity", "allocated", "occupied", "available", "schedulable"):
        assert field in n0, field
    [foreign] = n0["foreignAllocations"]
    assert foreign["allocationKey"] == "uid-other"
    assert foreign["allocationTags"] == {
        "foreign": "default",
        "kubernetes.io/meta/namespace": "batch",
        "kubernetes.io/meta/podName": "other",
    }
    assert n0["occupied"] == {"memory": GI // 4, "pods": 1, "vcore": 500}
    herder_pods = {a["allocationKey"]: a for a in n0["allocations"]}
    assert set(herder_pods) == {"uid-job-1-a", "uid-job-1-b", "uid-job-2-a"}
    assert herder_pods["uid-job-1-a"]["applicationId"] == "job-1"
    assert n0["allocated"] == {"memory": 3 * GI, "pods": 3, "vcore": 3000}
    assert n0["available"]["vcore"] == 4000 - 3000 - 500


# -- users and groups --------------------------------------------------------------------


async def test_user_usage_follows_seed_001_with_limits_per_queue(served: Served) -> None:
    status, users = await served.get(f"{P}/usage/users")
    assert status == 200
    assert [u["userName"] for u in users] == ["alice", "bob"]
    status, alice = await served.get(f"{P}/usage/user/alice")
    assert status == 200
    assert alice["groups"] == {"job-1": "ml"}
    root = alice["queues"]
    assert root["queuePath"] == "root"
    assert root["runningApplications"] == ["job-1"]
    [batch] = root["children"]
    assert batch["queuePath"] == "root.batch"
    assert batch["resourceUsage"] == {"memory": 2 * GI, "pods": 2, "vcore": 2000}
    assert batch["maxResources"] == {"vcore": 4000}
    assert batch["maxApplications"] == 3


async def test_group_usage_lists_its_applications_and_limit(served: Served) -> None:
    status, groups = await served.get(f"{P}/usage/groups")
    assert status == 200
    assert [g["groupName"] for g in groups] == ["ml"]
    status, ml = await served.get(f"{P}/usage/group/ml")
    assert status == 200
    assert ml["applications"] == ["job-1"]
    [batch] = ml["queues"]["children"]
    assert batch["maxResources"] == {"vcore": 5000}
    assert batch["resourceUsage"]["vcore"] == 2000


async def test_the_wildcard_group_is_a_path_segment_like_any_name(served: Served) -> None:
    status, body = await served.get(f"{P}/usage/group/*")
    assert_error(status, body, 404, "Group not found")  # nobody falls under a '*' group limit here
    status, body = await served.get(f"{P}/usage/user/%2A")
    assert_error(status, body, 404, "User not found")


async def test_a_tracked_wildcard_group_is_found_as_star_and_as_percent_2a() -> None:
    wildcard = "              - {limit: other groups, groups: ['*'], maxresources: {vcore: 3}}\n"
    config = textwrap.dedent(QUEUES) + wildcard
    sched = Scheduler(Recorder(), load_config(config), clock=lambda: NOW)
    sched.update_node(node_to_info(node("node-0")))
    sched.add_ask(pod_to_ask(pod("dev-a", "job-9", "dave", ["dev"], "1"), NAMESPACE))
    sched.schedule()
    async with serve(sched, RestStatus(), ShimMetrics()) as served:
        status, groups = await served.get(f"{P}/usage/groups")
        assert [g["groupName"] for g in groups] == ["*"]
        for segment in ("*", "%2A"):
            status, group = await served.get(f"{P}/usage/group/{segment}")
            assert status == 200
            assert (group["groupName"], group["users"], group["applications"]) == ("*", ["dave"], ["job-9"])


# -- 404 and 400 -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/ws/v1/partition/gpu/queues", "Partition not found"),
        (f"{P}/queue/root.nope", "Queue not found"),
        (f"{P}/queue/root.nope/applications", "Queue not found"),
        (f"{P}/application/job-404", "Application not found"),
        (f"{P}/queue/root.batch/application/job-404", "Application not found"),
        (f"{P}/node/node-9", "Node not found"),
        (f"{P}/usage/user/carol", "User not found"),  # carol only waits: nothing tracked
        (f"{P}/usage/group/ops", "Group not found"),
        ("/ws/v1/no-such-thing", "Not Found"),
    ],
)
async def test_unknown_objects_answer_404_with_yunikorn_error_body(served: Served, path: str, message: str) -> None:
    status, body = await served.get(path)
    assert_error(status, body, 404, message)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (f"{P}/queue/root.bad name", "Invalid queue name"),
        (f"{P}/queue/root..batch", "Invalid queue name"),
        (f"{P}/applications?state=sleeping", "Invalid application state"),
        (f"{P}/applications/finished", "Invalid application state"),
        (f"{P}/applications/active?status=completed", "Invalid application state"),
        (f"{P}/usage/user/9lives", "Invalid user name"),
        (f"{P}/usage/group/@ops", "Invalid group name"),
        ("/ws/v1/events/batch?count=ten", "Invalid count"),
        ("/ws/v1/events/batch?count=0", "Invalid count"),
        ("/ws/v1/events/batch?start=-1", "Invalid start"),
    ],
)
async def test_bad_input_answers_400_naming_the_problem(served: Served, path: str, message: str) -> None:
    status, body = await served.get(path)
    assert_error(status, body, 400, message)


async def test_wrong_method_answers_405_with_the_same_body(served: Served) -> None:
    status, body = await served.request("POST", f"{P}/queues")
    assert_error(status, body, 405, "Method Not Allowed")


async def test_answers_carry_no_cors_headers_unless_origins_are_configured(served: Served) -> None:
    headers = {"Origin": "https://evil.example"}
    async with served.session.get(served.base + f"{P}/queues", headers=headers) as response:
        assert "Access-Control-Allow-Origin" not in response.headers
    async with served.session.get(served.base + f"{P}/node/none", headers=headers) as response:
        assert "Access-Control-Allow-Origin" not in response.headers


# -- quotas, events, dump, config --------------------------------------------------------


async def test_quotas_show_the_tree_with_runtime_used_and_request(served: Served) -> None:
    status, quotas = await served.get("/ws/v1/quotas")
    assert status == 200
    assert [q["name"] for q in quotas] == ["batch", "system", "default"]
    batch = quotas[0]
    for field in (
        "name",
        "namespace",
        "parent",
        "isParent",
        "min",
        "max",
        "sharedWeight",
        "allowLentResource",
        "request",
        "used",
        "runtime",
        "children",
    ):
        assert field in batch, field
    assert (batch["min"], batch["max"]) == ({"vcore": 2000}, {"vcore": 6000})
    assert batch["used"] == {"vcore": 3000}
    assert batch["request"] == {"vcore": 8000}  # three placed + the waiting 5-cpu pod
    assert batch["runtime"] == {"vcore": 6000}


async def test_events_batch_pages_with_start_and_count(served: Served) -> None:
    status, page = await served.get("/ws/v1/events/batch")
    assert status == 200
    assert set(page) == {"InstanceUUID", "LowestID", "HighestID", "EventRecords"}
    assert page["InstanceUUID"] == served.status.instance_uuid
    records = page["EventRecords"]
    assert [r["id"] for r in records] == list(range(page["LowestID"], page["HighestID"] + 1))
    first = records[0]
    for field in ("id", "type", "objectID", "reason", "timestampNano", "objectType", "eventChangeType"):
        assert field in first, field
    assert (first["type"], first["objectType"], first["objectID"]) == (3, "NODE", "node-0")
    assert (first["eventChangeType"], first["reason"]) == (2, "NodeAdded")  # ADD

    _, window = await served.get("/ws/v1/events/batch?start=3&count=2")
    assert [r["id"] for r in window["EventRecords"]] == [3, 4]
    _, beyond = await served.get(f"/ws/v1/events/batch?start={page['HighestID'] + 1}")
    assert beyond["EventRecords"] == []
    assert beyond["HighestID"] == page["HighestID"]


async def test_full_state_dump_holds_every_document_of_the_simulation_contract(served: Served) -> None:
    status, dump = await served.get("/ws/v1/fullstatedump")
    assert status == 200
    for key in ("partitions", "queues", "applications", "nodes", "usage", "quotas", "config", "timestamp"):
        assert key in dump, key
    assert set(dump["usage"]) == {"users", "groups"}
    assert dump["queues"]["queuename"] == "root"
    assert isinstance(dump["timestamp"], int) and dump["timestamp"] > 1_600_000_000 * 10**9  # Unix nanoseconds
    _, debug = await served.get("/debug/fullstatedump")
    assert debug["nodes"] == dump["nodes"]


async def test_config_is_yaml_by_default_and_json_when_asked(served: Served) -> None:
    status, text = await served.get("/ws/v1/config")
    assert status == 200
    config = yaml.safe_load(text)
    [partition] = config["partitions"]
    assert partition["queues"][0]["queues"][0]["name"] == "batch"
    assert config["checksum"] == served.sched.config.checksum
    status, doc = await served.get("/ws/v1/config", headers={"Accept": "application/json"})
    assert status == 200
    assert doc["checksum"] == config["checksum"]
    assert "settings" in doc


# -- validate-conf -----------------------------------------------------------------------

VALID = """
partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: a
            resources: {max: {vcore: 4}}
"""

CHILD_ABOVE_PARENT = """
partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: a
            resources: {max: {vcore: 4}}
            queues:
              - name: b
                resources: {max: {vcore: 8}}
"""


async def test_validate_conf_allows_a_valid_queues_yaml(served: Served) -> None:
    status, body = await served.request("POST", "/ws/v1/validate-conf", data=textwrap.dedent(VALID))
    assert status == 200
    assert body == {"allowed": True, "reason": ""}


@pytest.mark.parametrize(
    ("config", "named"),
    [
        (CHILD_ABOVE_PARENT, "root.a.b"),
        (VALID.replace("resources:", "resourses:"), "resourses"),
        ("partitions: [\n", "invalid YAML"),
        (VALID.replace("vcore: 4", "vcore: lots"), "lots"),
    ],
)
async def test_validate_conf_refuses_and_names_the_problem(served: Served, config: str, named: str) -> None:
    status, body = await served.request("POST", "/ws/v1/validate-conf", data=textwrap.dedent(config))
    assert status == 200
    assert body["allowed"] is False
    assert named in body["reason"]


async def test_validate_conf_allows_seed_004_namespace_mapping_and_warns_stateaware_is_fifo(served: Served) -> None:
    status, body = await served.request("POST", "/ws/v1/validate-conf", data=SEED_004_NAMESPACE_MAPPING)
    assert status == 200
    assert body == {
        "allowed": True,
        "reason": "",
        "warnings": [
            "partitions[default].queues.root.properties.application.sort.policy: 'stateaware' is deprecated "
            "(YuniKorn 1.5 removed it) and is read as 'fifo'"
        ],
    }


async def test_validate_conf_warns_about_a_property_herder_does_not_read(served: Served) -> None:
    config = SEED_004_NAMESPACE_MAPPING.replace("stateaware", 'fair\n          max.reserved: "4"')
    status, body = await served.request("POST", "/ws/v1/validate-conf", data=config)
    assert status == 200 and body["allowed"] is True
    [warning] = body["warnings"]
    assert warning.startswith("partitions[default].queues.root.properties.max.reserved: property kept")
    assert "Herder does not read it" in warning


async def test_validate_conf_refusal_names_every_problem_in_the_files_units_and_brings_its_warnings(
    served: Served,
) -> None:
    config = VALID.replace("resources: {max: {vcore: 4}}", "resources: {guaranteed: {vcore: 10000}, max: {vcore: 5}}")
    config = config.replace("          - name: a\n", "          - name: a\n            maxApplication: 3\n")
    status, body = await served.request("POST", "/ws/v1/validate-conf", data=textwrap.dedent(config))
    assert status == 200
    assert body["allowed"] is False
    assert body["reason"] == (
        "partitions[default].queues.root.a: unknown key 'maxApplication' (did you mean 'maxapplications'?); "
        "partitions[default].queues.root.a: guaranteed vcore 10000 exceeds max 5"
    )
    [warning] = body["warnings"]
    assert warning.startswith("partitions[default].queues.root.a.resources.guaranteed: vcore 10000 is read as 10000")


async def test_validate_conf_refuses_a_body_that_is_not_text(served: Served) -> None:
    status, body = await served.request("POST", "/ws/v1/validate-conf", data=b"\xff\xfe\x00queues")
    assert status == 200
    assert body["allowed"] is False and "UTF-8" in body["reason"]


# -- health and readiness ----------------------------------------------------------------


async def test_healthcheck_passes_every_bookkeeping_check_of_a_sound_world(served: Served) -> None:
    status, body = await served.get("/ws/v1/scheduler/healthcheck")
    assert status == 200
    assert body["Healthy"] is True
    names = [check["Name"] for check in body["HealthChecks"]]
    assert names == ["Negative resources", "Node allocations", "Orphan allocations", "Queue usage"]
    assert all(check["Succeeded"] for check in body["HealthChecks"])


async def test_readyz_answers_503_until_the_initial_sync_and_then_says_who_leads(served: Served) -> None:
    status, body = await served.get("/readyz")
    assert status == 503
    assert body["ready"] is False and "sync" in body["reason"]
    served.status.mark_synced()
    status, body = await served.get("/readyz")
    assert status == 200
    assert (body["ready"], body["leader"], body["identity"]) == (True, False, "herder-0")
    served.status.set_leader(True)
    _, body = await served.get("/readyz")
    assert body["leader"] is True


async def test_readyz_waits_for_the_webhook_server_when_webhooks_are_configured(served: Served) -> None:
    # The API server calls webhooks through a Service, which routes to ready pods only: a replica
    # that says ready before its webhook server listens makes pod creation fail (failurePolicy Fail).
    served.status.webhooks_expected = True
    served.status.mark_synced()
    status, body = await served.get("/readyz")
    assert status == 503
    assert body["ready"] is False and "webhook" in body["reason"]
    served.status.mark_webhooks_serving()
    status, body = await served.get("/readyz")
    assert status == 200 and body["ready"] is True


async def test_healthz_answers_before_the_sync(served: Served) -> None:
    status, body = await served.get("/healthz")
    assert status == 200
    assert body["alive"] is True


async def test_a_scheduler_busy_under_its_lock_never_stalls_healthz() -> None:
    """A document request waits for the scheduler's lock on a REST thread, not on the event loop."""
    gate = threading.Event()
    holding = threading.Event()
    blocking = threading.local()

    def clock() -> float:
        if getattr(blocking, "on", False):
            holding.set()
            gate.wait()
        return 0.0

    sched = Scheduler(Recorder(), clock=clock)

    def add_node_slowly() -> None:
        blocking.on = True
        sched.update_node(node_to_info(node("slow")))  # reads the clock under the scheduler's lock

    holder = threading.Thread(target=add_node_slowly)
    holder.start()
    try:
        assert await asyncio.to_thread(holding.wait, 30)
        async with serve(sched, RestStatus(), ShimMetrics()) as world:
            queues = asyncio.ensure_future(world.get(f"{P}/queues"))
            status, _ = await world.get("/healthz")
            assert status == 200
            assert not queues.done()  # still waiting for the lock, yet /healthz answered
            gate.set()
            status, root = await queues
            assert status == 200 and root["maxResource"]["vcore"] == 4000
    finally:
        gate.set()
        await asyncio.to_thread(holder.join)


async def test_a_pod_placed_after_start_shows_at_once(served: Served) -> None:
    served.sched.add_ask(pod_to_ask(pod("job-2-b", "job-2", "bob", [], "1"), NAMESPACE))
    served.sched.schedule()
    _, app = await served.get(f"{P}/application/job-2")
    assert len(app["allocations"]) == 2
    _, bob = await served.get(f"{P}/usage/user/bob")
    assert bob["queues"]["resourceUsage"]["vcore"] == 2000


async def test_a_busy_port_is_reported_to_the_caller(served: Served) -> None:
    port = int(served.base.rsplit(":", 1)[1])
    app = build_rest_app(served.sched, RestStatus(), ShimMetrics())
    with pytest.raises(OSError):
        await start_rest_server(app, "127.0.0.1", port)
