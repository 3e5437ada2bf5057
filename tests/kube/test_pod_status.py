"""A waiting pod tells why: PodScheduled=False, reason Unschedulable (only nodes lack) or
SchedulingSkipped (a queue, limit or quota holds it), the core's reason as message, written through
the real client only when it changes, a few pods per interval, and never over a binding."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from core.config import load_config
from core.events import SchedulingEvent
from core.objects.ask import Allocation
from core.scheduler import Scheduler
from shim.convert.nodes import node_to_info
from shim.convert.pods import pod_to_ask
from shim.convert.quotas import quota_to_spec
from shim.kube.write.pod_status import PodConditionWriter, shown_condition
from shim.kube.write.status_api import StatusApi
from tests.kube.conftest import team_pod
from tests.kube.kmock_thread import KmockThread

NAMESPACE = {"metadata": {"name": "team-a"}}


class Reported:
    """Keeps the core's scheduling events, as the shim's callbacks queue them."""

    def __init__(self) -> None:
        self.events: list[SchedulingEvent] = []

    def bind(self, allocation: Allocation) -> None: ...
    def evict(self, allocation: Allocation, reason: str) -> None: ...

    def report(self, event: SchedulingEvent) -> None:
        self.events.append(event)

    def take(self) -> list[SchedulingEvent]:
        taken, self.events = self.events, []
        return taken


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class World:
    def __init__(self, api: KmockThread) -> None:
        self.api = api
        self.core = client.CoreV1Api(api.api_client())
        self.reported = Reported()
        self.scheduler = Scheduler(self.reported)
        self.clock = Clock()

    def submit(self, *pods: dict[str, Any]) -> None:
        for item in pods:
            self.core.create_namespaced_pod("team-a", item)
            self.scheduler.add_ask(pod_to_ask(item, NAMESPACE))
        self.scheduler.schedule()

    def cached(self, key: str) -> dict[str, Any] | None:
        """The pod as the operator's cache (fed by the watch) holds it."""
        for stored in self.api.objects("pods"):
            if stored["metadata"].get("uid") == key:
                return stored
        return None

    def writer(self, per_pass: int = 200, interval: float = 1.0) -> PodConditionWriter:
        return PodConditionWriter(
            StatusApi(self.api.api_client()),
            self.cached,
            self.scheduler.scale_up_view,
            lambda: interval,
            per_pass=per_pass,
            clock=self.clock,
        )

    def feed(self, writer: PodConditionWriter) -> None:
        for event in self.reported.take():
            writer.observe(event)

    def condition(self, name: str) -> dict[str, Any] | None:
        found = self.core.read_namespaced_pod(name, "team-a")
        for condition in found.status.conditions or [] if found.status else []:
            if condition.type == "PodScheduled":
                return {"status": condition.status, "reason": condition.reason, "message": condition.message}
        return None


@pytest.fixture
def world() -> Iterator[World]:
    with KmockThread() as api:
        yield World(api)


def test_waiting_pod_shows_the_schedulers_reason(world: World) -> None:
    world.submit(team_pod("job-1"))
    writer = world.writer()
    world.feed(writer)
    assert writer.tick() == 1
    reason = world.scheduler.pending_reason("uid-job-1")
    assert reason
    assert world.condition("job-1") == {"status": "False", "reason": "Unschedulable", "message": reason}


def test_an_unchanged_reason_is_not_written_again(world: World) -> None:
    world.submit(team_pod("job-1"))
    writer = world.writer()
    world.feed(writer)
    writer.tick()
    for _ in range(3):
        world.scheduler.schedule()  # the pod is tried again and parked with the same reason
        world.clock.now += 5
        assert writer.tick() == 0
    assert len(world.api.writes("/pods/job-1/status")) == 1


def test_a_new_reason_replaces_the_old_one(world: World) -> None:
    world.submit(team_pod("big", cpu="6"))
    writer = world.writer()
    world.feed(writer)
    writer.tick()
    first = world.condition("big")
    world.scheduler.update_node(
        node_to_info({"metadata": {"name": "small"}, "status": {"allocatable": {"cpu": "4", "pods": "10"}}})
    )
    world.scheduler.schedule()
    world.feed(writer)
    world.clock.now += 1
    assert writer.tick() == 1
    second = world.condition("big")
    assert first is not None and second is not None
    assert second["message"] == world.scheduler.pending_reason("uid-big") != first["message"]


def test_a_burst_of_waiting_pods_is_written_a_few_per_interval(world: World) -> None:
    world.submit(*(team_pod(f"job-{i}") for i in range(5)))
    writer = world.writer(per_pass=2, interval=1.0)
    world.feed(writer)
    made = [writer.tick()]
    world.clock.now = 0.5
    made.append(writer.tick())
    for second in (1, 2, 3):
        world.clock.now = second
        made.append(writer.tick())
    assert made == [2, 0, 2, 1, 0]
    assert all(world.condition(f"job-{i}") is not None for i in range(5))


def test_a_pod_placed_before_the_write_is_left_to_its_binding(world: World) -> None:
    world.submit(team_pod("job-1"))
    writer = world.writer()
    world.feed(writer)
    world.scheduler.update_node(
        node_to_info({"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "8", "pods": "10"}}})
    )
    world.scheduler.schedule()
    assert writer.tick() == 0
    world.feed(writer)  # the Scheduled event ends the writer's interest
    assert writer.pending() == 0
    assert world.api.writes("/pods/job-1/status") == []


def test_a_bound_pod_is_never_marked_unschedulable(world: World) -> None:
    world.submit(team_pod("job-1"))
    writer = world.writer()
    world.feed(writer)
    world.core.patch_namespaced_pod("job-1", "team-a", {"spec": {"nodeName": "n1"}})
    assert writer.tick() == 0
    assert world.api.writes("/pods/job-1/status") == []


def test_reason_already_shown_after_a_restart_is_not_rewritten(world: World) -> None:
    world.submit(team_pod("job-1"))
    first = world.writer()
    world.feed(first)
    first.tick()
    restarted = world.writer()
    assert restarted.tick() == 0
    shown = shown_condition(world.cached("uid-job-1") or {})
    assert shown == ("Unschedulable", world.scheduler.pending_reason("uid-job-1"))


def test_a_pod_over_its_queues_max_says_scheduling_skipped_and_one_within_it_unschedulable(world: World) -> None:
    config = """
partitions:
  - name: default
    placementrules: [{name: tag, value: namespace, create: true}]
    queues:
      - name: root
        submitacl: "*"
        queues:
          - {name: team-a, resources: {max: {vcore: "1"}}}
"""
    world.scheduler.update_config(load_config(config))
    world.submit(team_pod("first"), team_pod("second"))
    writer = world.writer()
    assert writer.tick() == 2
    first, second = world.condition("first"), world.condition("second")
    assert first is not None and first["reason"] == "Unschedulable"
    assert second is not None and second["reason"] == "SchedulingSkipped"
    assert "queue root.team-a has no headroom left for it" in second["message"]


def test_a_pod_whose_category_changes_gets_a_new_condition(world: World) -> None:
    world.submit(team_pod("first"), team_pod("second"))
    world.scheduler.update_quota(
        quota_to_spec(
            {
                "metadata": {"name": "team-a", "namespace": "team-a"},
                "spec": {"min": {"cpu": "1"}, "max": {"cpu": "1"}},
            }
        )
    )
    world.scheduler.schedule()
    writer = world.writer()
    writer.tick()
    assert (world.condition("second") or {}).get("reason") == "SchedulingSkipped"
    world.scheduler.update_quota(
        quota_to_spec(
            {
                "metadata": {"name": "team-a", "namespace": "team-a"},
                "spec": {"min": {"cpu": "2"}, "max": {"cpu": "2"}},
            }
        )
    )
    world.scheduler.schedule()
    world.clock.now += 1
    assert writer.tick() >= 1
    assert (world.condition("second") or {}).get("reason") == "Unschedulable"
