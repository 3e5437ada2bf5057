"""PodSync keeps the core in step with pods whatever order and how often the API shows them.

The real core and the shim's cache, fed directly (no API server): replays, pods before their
namespace, bindings that failed or landed, pods that vanished without a DELETED event.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.config import load_config
from core.objects.node_info import NodeInfo
from core.scheduler import Scheduler
from shim.convert.nodes import node_to_info
from shim.kube.watch.cache import KubeCache
from shim.kube.watch.pods import PodSync


class Recorded:
    def __init__(self) -> None:
        self.bound: list[tuple[str, str]] = []

    def bind(self, allocation: Any) -> None:
        self.bound.append((allocation.key, allocation.node_id))

    def evict(self, allocation: Any, reason: str) -> None:
        pass

    def report(self, event: Any) -> None:
        pass


CONFIG = """
partitions:
  - name: default
    placementrules:
      - {name: tag, value: namespace, create: true, parent: {name: tag, value: namespace.parentqueue}}
      - {name: tag, value: namespace, create: true}
    queues:
      - name: root
        submitacl: "*"
        queues: [{name: teams, parent: true}]
"""


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def world() -> tuple[Scheduler, PodSync, Recorded, Clock]:
    recorded = Recorded()
    clock = Clock()
    scheduler = Scheduler(recorded, load_config(CONFIG), clock=clock)
    scheduler.update_node(_node("node-0"))
    scheduler.update_node(_node("node-1"))
    return scheduler, PodSync(scheduler, KubeCache(), lambda key: None, clock=clock), recorded, clock


def _node(name: str) -> NodeInfo:
    allocatable = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return node_to_info({"metadata": {"name": name}, "status": {"allocatable": allocatable}})


def pod(name: str, node: str | None = None, phase: str = "Pending", scheduler: str = "herder") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
    }
    if node:
        spec["nodeName"] = node
    return {
        "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
        "spec": spec,
        "status": {"phase": phase},
    }


ML = {"metadata": {"name": "ml", "annotations": {"yunikorn.apache.org/parentqueue": "root.teams"}}}


def test_a_pod_seen_before_its_namespace_waits_and_then_lands_under_the_namespace_parent(world: Any) -> None:
    scheduler, pods, _, _ = world
    pods.apply(pod("early"))
    assert scheduler.schedule() == 0
    assert pods.counts()["waiting"] == 1
    pods.namespace_changed(ML)
    assert scheduler.schedule() == 1
    assert scheduler.queue_document("root.teams.ml")["allocatedResource"]["vcore"] == 1000


def test_replayed_events_count_a_pod_once(world: Any) -> None:
    scheduler, pods, _, _ = world
    pods.namespace_changed(ML)
    for _ in range(3):
        pods.apply(pod("running", node="node-0", phase="Running"))
        pods.apply(pod("waiting"))
        pods.namespace_changed(ML)
    root = scheduler.queue_document("root")
    assert root["allocatedResource"]["vcore"] == 1000
    assert root["pendingResource"]["vcore"] == 1000


def test_finished_pod_is_released_once_and_stays_released(world: Any) -> None:
    scheduler, pods, _, _ = world
    pods.namespace_changed(ML)
    pods.apply(pod("job", node="node-0", phase="Running"))
    pods.apply(pod("job", node="node-0", phase="Succeeded"))
    pods.apply(pod("job", node="node-0", phase="Succeeded"))
    assert scheduler.queue_document("root")["allocatedResource"].get("vcore", 0) == 0
    assert pods.counts() == {"ask": 0, "own": 0, "foreign": 0, "waiting": 0}


def test_foreign_pod_counts_on_its_node_only(world: Any) -> None:
    scheduler, pods, _, _ = world
    pods.apply(pod("daemon", node="node-1", phase="Running", scheduler="default-scheduler"))
    node = next(n for n in scheduler.nodes_document() if n["nodeID"] == "node-1")
    assert node["occupied"]["vcore"] == 1000
    assert scheduler.queue_document("root")["allocatedResource"].get("vcore", 0) == 0


def test_failed_binding_is_tried_again_after_a_back_off_pending_in_its_application(world: Any) -> None:
    scheduler, pods, _, clock = world
    pods.namespace_changed(ML)
    pods.apply(pod("job"))
    scheduler.schedule()
    assert scheduler.allocation("uid-job") is not None
    pods.binding_failed("uid-job", pod("job"), gone=False)
    assert scheduler.allocation("uid-job") is None
    assert "did not land; tried again in 0.5s" in (scheduler.pending_reason("uid-job") or "")
    app = scheduler.application_document("ml-autogen")  # no app id: the namespace's
    assert app is not None and app["applicationState"] != "Completing" and len(app["requests"]) == 1
    assert scheduler.schedule() == 0, "not tried again before the back-off is over"
    clock.now += 1
    assert pods.retry_due() == 0  # the core holds the pod: nothing for the shim to ask again
    assert scheduler.schedule() == 1


def test_binding_that_landed_despite_an_error_is_kept(world: Any) -> None:
    scheduler, pods, _, _ = world
    pods.namespace_changed(ML)
    pods.apply(pod("job"))
    scheduler.schedule()
    node = scheduler.allocation("uid-job").node_id
    pods.binding_failed("uid-job", pod("job", node=node, phase="Running"), gone=False)
    assert scheduler.allocation("uid-job").node_id == node
    assert scheduler.queue_document("root")["allocatedResource"]["vcore"] == 1000


def test_pod_bound_elsewhere_is_counted_where_it_runs(world: Any) -> None:
    scheduler, pods, _, _ = world
    pods.namespace_changed(ML)
    pods.apply(pod("job"))
    scheduler.schedule()
    placed = scheduler.allocation("uid-job").node_id
    elsewhere = "node-1" if placed == "node-0" else "node-0"
    pods.binding_failed("uid-job", pod("job", node=elsewhere, phase="Running"), gone=False)
    assert scheduler.allocation("uid-job").node_id == elsewhere
    assert scheduler.queue_document("root")["allocatedResource"]["vcore"] == 1000


def test_reconcile_forgets_pods_gone_before_the_listing_but_keeps_newer_ones(world: Any) -> None:
    scheduler, pods, _, clock = world
    pods.namespace_changed(ML)
    pods.apply(pod("ghost", node="node-0", phase="Running"))
    pods.apply(pod("kept", node="node-0", phase="Running"))
    clock.now += 1
    listing_started = clock.now
    clock.now += 1
    pods.apply(pod("newer", node="node-1", phase="Running"))
    assert pods.reconcile([pod("kept", node="node-0", phase="Running")], listing_started) == 1
    assert scheduler.queue_document("root")["allocatedResource"]["vcore"] == 2000


def test_fixing_a_malformed_namespace_annotation_lets_its_waiting_pods_run(world: Any) -> None:
    scheduler, pods, _, _ = world
    broken = {"metadata": {"name": "ml", "annotations": {"yunikorn.apache.org/namespace.quota": "{cpu: 2"}}}
    pods.namespace_changed(broken)
    pods.apply(pod("job"))
    assert scheduler.schedule() == 0
    assert "namespace.quota" in (scheduler.pending_reason("uid-job") or "")
    fixed = {"metadata": {"name": "ml", "annotations": {"yunikorn.apache.org/namespace.quota": '{"cpu": "2"}'}}}
    pods.namespace_changed(fixed)
    assert scheduler.schedule() == 1
    assert scheduler.queue_document("root.ml")["maxResource"]["vcore"] == 2000


def resized(base: dict[str, Any], spec_cpu: str, held_cpu: str, verdict: str | None = None) -> dict[str, Any]:
    """`base` after an in-place resize: the spec asks `spec_cpu`, the kubelet holds `held_cpu`."""
    containers = [{"name": "c", "resources": {"requests": {"cpu": spec_cpu}}}]
    pod = {**base, "spec": {**base["spec"], "containers": containers}}
    held = [{"name": "c", "resources": {"requests": {"cpu": held_cpu}}}]
    status: dict[str, Any] = {"phase": "Running", "containerStatuses": held}
    if verdict:
        status["resize"] = verdict
    return {**pod, "status": status}


def test_seed_003_herders_own_running_pod_resized_in_place_is_counted_at_its_new_size(world: Any) -> None:
    scheduler, pods, _, _ = world
    pods.namespace_changed(ML)
    running = pod("job", node="node-0", phase="Running")
    pods.apply(running)
    pods.apply(resized(running, "3", "3"))
    assert scheduler.queue_document("root.teams.ml")["allocatedResource"]["vcore"] == 3000
    pods.apply(resized(running, "2", "3"))  # shrinking, not done yet: the larger counts
    assert scheduler.allocation("uid-job").resource["vcore"] == 3000
    pods.apply(resized(running, "8", "2", verdict="Infeasible"))  # never happens: what it holds
    assert scheduler.allocation("uid-job").resource["vcore"] == 2000


def test_seed_003_a_foreign_pod_resized_in_place_changes_its_node(world: Any) -> None:
    scheduler, pods, _, _ = world
    other = pod("other", node="node-1", phase="Running", scheduler="default-scheduler")
    pods.apply(other)
    pods.apply(resized(other, "3", "3"))
    [node] = [n for n in scheduler.nodes_document() if n["nodeID"] == "node-1"]
    assert node["occupied"]["vcore"] == 3000


def test_a_lost_binding_response_with_an_unreadable_pod_keeps_the_placement_until_the_server_answers(
    world: Any,
) -> None:
    # Issue 15, point 8: under an overloaded server, placement never shrinks on a guess.
    scheduler, pods, _, clock = world
    pods.namespace_changed(ML)
    pods.apply(pod("job"))
    scheduler.schedule()
    node = scheduler.allocation("uid-job").node_id
    pods.binding_failed("uid-job", None, gone=False)  # the response was lost, the read failed too
    assert scheduler.allocation("uid-job").node_id == node
    assert pods.unresolved_due() == []  # read again after a back-off, not at once
    clock.now += 1
    assert pods.unresolved_due() == ["uid-job"]
    pods.binding_failed("uid-job", None, gone=False)  # still no answer: still kept
    assert scheduler.queue_document("root")["allocatedResource"]["vcore"] == 1000
    pods.binding_failed("uid-job", pod("job", node=node, phase="Running"), gone=False)  # it had landed
    assert scheduler.allocation("uid-job").node_id == node
    assert pods.unresolved() == 0


def test_an_unresolved_binding_the_server_shows_pending_is_rolled_back_and_asked_again(world: Any) -> None:
    scheduler, pods, _, clock = world
    pods.namespace_changed(ML)
    pods.apply(pod("job"))
    scheduler.schedule()
    pods.binding_failed("uid-job", None, gone=False)
    clock.now += 1
    pods.binding_failed("uid-job", pod("job"), gone=False)  # the server's word: pending
    assert scheduler.allocation("uid-job") is None
    assert scheduler.schedule() == 0
    clock.now += 1
    assert scheduler.schedule() == 1


def _kept_for_repost(scheduler: Any, pods: Any) -> str:
    """A placed pod whose binder gave up on transient errors, read back pending: its node."""
    pods.namespace_changed(ML)
    pods.apply(pod("job"))
    scheduler.schedule()
    pods.binding_given_up("uid-job", transient=True)  # the binder's attempts all timed out
    pods.binding_failed("uid-job", pod("job"), gone=False)  # read back pending
    node: str = scheduler.allocation("uid-job").node_id
    return node


def test_a_binding_given_up_on_transient_errors_keeps_its_placement_and_is_posted_again(world: Any) -> None:
    # Issue 15, point 8: an overloaded server never makes a placement come and go.
    scheduler, pods, _, clock = world
    node = _kept_for_repost(scheduler, pods)
    assert pods.repost_due() == []  # posted again after a back-off, not at once
    clock.now += 1
    assert pods.repost_due() == [("uid-job", node)]
    assert pods.repost_due() == []  # once, until the binder gives it back again
    pods.binding_given_up("uid-job", transient=True)
    pods.binding_failed("uid-job", pod("job"), gone=False)
    clock.now += 0.9
    assert pods.repost_due() == []  # the delay doubles
    clock.now += 0.2
    assert pods.repost_due() == [("uid-job", node)]
    clock.now += 600  # however long the server stays overloaded, the placement stays
    assert scheduler.queue_document("root")["allocatedResource"]["vcore"] == 1000
    pods.binding_given_up("uid-job", transient=True)
    pods.binding_failed("uid-job", pod("job", node=node, phase="Running"), gone=False)  # a held attempt landed
    assert scheduler.allocation("uid-job").node_id == node
    clock.now += 60
    assert pods.repost_due() == []


def test_a_final_refusal_rolls_a_reposted_placement_back(world: Any) -> None:
    scheduler, pods, _, clock = world
    _kept_for_repost(scheduler, pods)
    clock.now += 1
    assert len(pods.repost_due()) == 1
    pods.binding_given_up("uid-job", transient=False)  # say, a 403
    pods.binding_failed("uid-job", pod("job"), gone=False)
    assert scheduler.allocation("uid-job") is None
    clock.now += 60
    assert pods.repost_due() == []


def test_a_replica_that_steps_down_rolls_its_kept_placements_back(world: Any) -> None:
    # The Lease lapsed while bindings were kept to be posted again: the leader places those pods now.
    scheduler, pods, _, clock = world
    _kept_for_repost(scheduler, pods)
    assert pods.roll_back_reposts() == 1
    assert scheduler.allocation("uid-job") is None
    clock.now += 60
    assert pods.repost_due() == [] and pods.roll_back_reposts() == 0
    assert scheduler.schedule() == 1  # re-elected: a fresh decision, after the back-off


def test_a_reposted_binding_is_dropped_when_the_pod_goes(world: Any) -> None:
    scheduler, pods, _, clock = world
    _kept_for_repost(scheduler, pods)
    pods.delete(pod("job"))
    clock.now += 60
    assert pods.repost_due() == [] and scheduler.allocation("uid-job") is None


def _gang_member(name: str, node: str | None) -> dict[str, Any]:
    member = pod(name, node=node, phase="Running" if node else "Pending")
    groups = [{"name": "worker", "minMember": 3, "minResource": {"cpu": "1"}}]
    member["metadata"]["labels"] = {"applicationId": "gang"}
    member["metadata"]["annotations"] = {
        "yunikorn.apache.org/task-group-name": "worker",
        "yunikorn.apache.org/task-groups": json.dumps(groups),
    }
    return member


def _listing() -> list[dict[str, Any]]:
    """A listing's page as a restart meets it: running pods of several applications and users,
    a gang partly running, pending pods between them, another scheduler's pod, a finished one, a
    pod on a node the core does not know yet, one listed twice, an unreadable one."""
    page: list[dict[str, Any]] = []
    for index in range(12):
        running = pod(f"run-{index}", node=f"node-{index % 2}", phase="Running")
        running["metadata"]["labels"] = {"applicationId": f"app-{index % 3}"}
        user = {"user": f"user-{index % 2}", "groups": ["ml"]}
        running["metadata"]["annotations"] = {"yunikorn.apache.org/user.info": json.dumps(user)}
        page.append(running)
        if index % 4 == 1:
            page.append(pod(f"wait-{index}"))
    page[3:3] = [_gang_member("gang-0", "node-0"), _gang_member("gang-1", "node-1"), _gang_member("gang-2", None)]
    page.append(pod("daemon", node="node-1", phase="Running", scheduler="default-scheduler"))
    page.append(pod("done", node="node-0", phase="Succeeded"))
    page.append(pod("elsewhere", node="node-7", phase="Running"))
    for node, app in (("node-1", "solo"), ("node-0", "moved")):  # listed again, moved: counted once, where it runs now
        moved = pod("solo", node=node, phase="Running")
        moved["metadata"]["labels"] = {"applicationId": app}
        page.append(moved)
    broken = pod("broken", node="node-0", phase="Running")
    broken["spec"]["containers"] = "not a list"
    page.append(broken)
    return page


def _documents(scheduler: Scheduler) -> dict[str, Any]:
    return {
        "state": scheduler.state_dump(),
        "queues": scheduler.queues_document(),
        "nodes": scheduler.nodes_document(),
        "applications": scheduler.applications_document(),
        "users": scheduler.users_document(),
        "groups": scheduler.groups_document(),
        "quotas": scheduler.quotas_document(),
        "events": [event.to_dict() for event in scheduler.events.batch(0, 10_000)],
    }


def test_a_page_applied_at_once_leaves_the_core_as_its_pods_applied_one_by_one() -> None:
    """`apply_all` (the start-up listing's pages) recovers running pods together; every count,
    application, gang, node and event comes out as when each pod is applied in turn."""
    worlds = []
    for together in (False, True):
        recorded, clock = Recorded(), Clock()
        scheduler = Scheduler(recorded, load_config(CONFIG), clock=clock, wall_clock=lambda: 1.8e9)
        scheduler.update_node(_node("node-0"))
        scheduler.update_node(_node("node-1"))
        sync = PodSync(scheduler, KubeCache(), lambda key: None, clock=clock)
        sync.namespace_changed(ML)
        page = _listing()
        if together:
            sync.apply_all(page)
        else:
            for listed in page:
                sync.apply(listed)
        scheduler.update_node(_node("node-7"))  # the pod waiting for its node lands on it
        scheduler.schedule()
        worlds.append((_documents(scheduler), sync.counts(), recorded.bound))
    assert worlds[0] == worlds[1]
    documents, counts, _ = worlds[1]
    assert counts == {"ask": 4, "own": 17, "foreign": 1, "waiting": 0}
    root = documents["queues"]
    assert root["allocatedResource"]["vcore"] == 16_000  # the unreadable pod counts as one pod, no CPU
