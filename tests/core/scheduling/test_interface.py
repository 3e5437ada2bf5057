"""The core's interface as the shim relies on it (DESIGN "The core's interface").

Inputs only record; placement happens in `schedule(now)`; outputs arrive through the callbacks
after the scheduler's lock is released; a configuration is validated as a whole and applied in
one step; a failed bind handed back with `release_allocation` rolls every tracker back.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from core.config import ConfigError, parse_config
from core.config.settings import Settings
from core.objects.disruption_budget import DisruptionBudget
from core.objects.pod_rules import LabelRequirement, LabelSelector
from core.scheduler import COMPLETING_TIMEOUT
from tests.core.scheduling.world import World

TWO_QUEUES = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: a
            resources: {max: {vcore: 2}}
          - name: b
"""

LIMITED = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: a
            resources: {max: {vcore: 4}}
            limits:
              - limit: per user
                users: [alice]
                maxresources: {vcore: 3}
"""


def test_inputs_only_record_and_nothing_binds_before_a_cycle() -> None:
    world = World(TWO_QUEUES)
    world.node("n1")
    world.pod("p1", queue="root.a")
    assert world.out.binds == []
    assert world.node_of("p1") is None
    assert world.sched.has_work()
    assert world.schedule() == {"p1": "n1"}
    assert world.node_of("p1") == "n1"
    assert not world.sched.has_work()


def test_schedule_uses_the_time_it_is_given() -> None:
    world = World(TWO_QUEUES)
    world.node("n1")
    world.pod("p1", queue="root.a", created=3.0)
    world.sched.schedule(now=42.0)
    allocation = world.sched.allocation("p1")
    assert allocation is not None
    assert allocation.allocation_time == 42.0 and allocation.request_time == 3.0


def test_a_bind_callback_may_call_back_into_the_scheduler() -> None:
    world = World(TWO_QUEUES)
    world.node("n1", cpu=4)
    seen: list[str] = []

    def bind_then_read(allocation: object) -> None:
        # The lock must be free here: another thread can get in while the callback runs.
        other = threading.Thread(target=lambda: seen.append(str(world.sched.pending_reason("p2"))))
        other.start()
        other.join(timeout=10)
        assert not other.is_alive(), "the scheduler's lock was still held during the bind callback"
        world.sched.add_ask(world.ask("late", queue="root.b"))

    world.out.on_bind = bind_then_read
    world.pod("p1", queue="root.b")
    placed = world.schedule()
    assert placed["p1"] == "n1"
    assert seen  # the other thread ran to the end
    assert world.node_of("late") == "n1"  # asked from inside the callback, placed in the same cycle


def test_a_bind_that_fails_inside_the_callback_rolls_back_at_once() -> None:
    world = World(LIMITED)
    world.node("n1", cpu=4)
    world.out.on_bind = lambda allocation: world.sched.release_allocation(allocation.key)
    world.pod("p1", queue="root.a")
    world.schedule()
    assert world.node_of("p1") is None
    assert world.allocated("root") == {}
    assert world.user_usage("alice") == {}
    assert not any(world.node_doc("n1")["allocated"].values())


def test_events_are_reported_through_the_callbacks() -> None:
    world = World(TWO_QUEUES)
    world.node("n1", cpu=2)
    world.node("n2", cpu=2)
    world.pod("p1", queue="root.b", cpu=1.5)
    world.pod("p2", queue="root.b", cpu=1.5)
    world.pod("p3", queue="root.b", cpu=1)
    world.schedule()
    scheduled = world.out.reasons("Scheduled")
    waiting = world.out.reasons("Unschedulable")
    assert [e.object_id for e in scheduled] == ["p1", "p2"]
    assert [e.object_id for e in waiting] == ["p3"]
    assert waiting[0].name == "default/p3"
    assert waiting[0].message == world.reason("p3") == "no node fits: 2 insufficient vcore"


def test_an_invalid_config_changes_nothing_and_says_what_and_where() -> None:
    world = World(TWO_QUEUES)
    world.node("n1")
    world.pod("p1", queue="root.a")
    world.schedule()
    before = (world.sched.queues_document(), world.sched.config_document())
    bad = parse_config(
        """
        partitions:
          - name: default
            queues:
              - name: root
                queues:
                  - name: a
                    resources: {max: {vcore: 2}}
                    queues:
                      - name: child
                        resources: {max: {vcore: 4}}
        """
    )
    with pytest.raises(ConfigError) as raised:
        world.sched.update_config(bad)
    assert "root.a.child" in str(raised.value) and "parent max" in str(raised.value)
    assert (world.sched.queues_document(), world.sched.config_document()) == before
    refused = world.out.reasons("ConfigRefused")
    assert len(refused) == 1, "the refusal must reach the shim through report() at once"
    assert "root.a.child" in refused[0].message


def test_a_config_without_the_default_partition_is_refused_whole() -> None:
    world = World(TWO_QUEUES)
    before = world.sched.config_document()
    other = parse_config("partitions: [{name: other, queues: [{name: root}]}]")
    with pytest.raises(ConfigError) as raised:
        world.sched.update_config(other)
    assert "default" in str(raised.value)
    assert world.sched.config_document() == before


def test_a_valid_config_applies_in_one_step_and_is_announced() -> None:
    world = World(TWO_QUEUES)
    world.configure(TWO_QUEUES.replace("vcore: 2", "vcore: 5"))
    assert world.queue("root.a")["maxResource"] == {"vcore": 5000}
    assert len(world.out.reasons("ConfigApplied")) == 1


def test_raising_a_queue_max_lets_waiting_pods_run() -> None:
    world = World(TWO_QUEUES)
    world.node("n1")
    world.pods(4, queue="root.a")
    assert set(world.schedule()) == {"p0", "p1"}
    world.configure(TWO_QUEUES.replace("vcore: 2", "vcore: 4"))
    assert set(world.schedule()) == {"p2", "p3"}
    assert world.allocated("root.a")["vcore"] == 4000


def test_a_config_change_keeps_usage_counted_once() -> None:
    world = World(TWO_QUEUES)
    world.node("n1")
    world.pods(2, queue="root.a")
    world.pod("b1", queue="root.b", app="other")
    world.schedule()
    world.configure(TWO_QUEUES.replace("vcore: 2", "vcore: 3"))
    assert world.allocated("root.a") == {"vcore": 2000, "memory": 2 * 2**30, "pods": 2}
    assert world.allocated("root")["pods"] == 3
    assert world.queue("root")["runningApps"] == 2
    world.finish("p0", "p1", "b1")
    assert world.allocated("root") == {}


def test_a_failed_bind_restores_every_tracker_exactly() -> None:
    world = World(LIMITED)
    world.node("n1", cpu=4)
    world.node("n2", cpu=4)
    world.quota("default-ns", namespace="default", min={"cpu": 1}, max={"cpu": 3})
    world.pod("p1", queue="root.a")
    world.schedule()
    before = world.usage_snapshot()
    world.pod("p2", queue="root.a")
    assert world.schedule() == {"p2": "n1"}
    assert world.usage_snapshot() != before
    world.sched.release_allocation("p2")  # the shim could not bind it
    assert world.usage_snapshot() == before
    assert world.quota_used("default-ns") == {"vcore": 1000}
    assert world.user_usage("alice", "root.a")["vcore"] == 1000


def test_the_first_pod_of_an_application_failing_to_bind_leaves_no_usage_behind() -> None:
    world = World(LIMITED)
    world.node("n1")
    before = world.usage_snapshot()
    world.pod("p1", queue="root.a")
    world.schedule()
    world.sched.release_allocation("p1")
    assert world.usage_snapshot() == before
    assert world.sched.users_document() == []
    assert world.queue("root.a")["runningApps"] == 0


def test_applications_of_a_leaf_that_became_a_parent_drain_beside_it() -> None:
    world = World(TWO_QUEUES)
    world.node("n1", cpu=8)
    world.pod("p1", queue="root.b", app="one")
    world.schedule()
    world.pod("p2", queue="root.b", app="two")
    world.configure(TWO_QUEUES + "            queues: [{name: child}]\n")
    draining = world.queue("root.b-draining")
    assert draining["status"] == "Draining"
    assert draining["allocatedResource"]["pods"] == 1 and draining["runningApps"] == 1
    assert world.user_usage("alice", "root.b-draining")["pods"] == 1
    assert world.schedule() == {"p2": "n1"}  # work already in it goes on
    world.finish("p1", "p2")
    world.schedule(advance=60.0)
    assert not world.has_queue("root.b-draining")
    assert world.allocated("root") == {}
    assert world.sched.users_document() == []


def test_config_warnings_are_told_when_it_is_applied() -> None:
    world = World(TWO_QUEUES)
    world.configure(TWO_QUEUES.replace("vcore: 2", "cpu: 2"))
    assert world.queue("root.a")["maxResource"] == {"vcore": 2000}
    applied = world.out.reasons("ConfigApplied")
    assert "resource 'cpu' is read as 'vcore'" in applied[-1].message
    assert "root.a" in applied[-1].message


def test_an_evict_callback_may_answer_at_once() -> None:
    world = World(TWO_QUEUES, settings=Settings(recycle_delay=0.0))
    world.node("n1", cpu=2)
    world.quota("lender", min={"cpu": 1}, max={"cpu": 2})
    world.quota("borrower", min={"cpu": 1}, max={"cpu": 2})
    world.pods(2, queue="root.b", namespace="borrower")
    world.schedule()
    world.pod("l0", queue="root.b", namespace="lender", app="lend")
    world.schedule()
    world.out.on_evict = lambda allocation, reason: world.sched.release_allocation(allocation.key)
    assert world.sched.recycle(now=1.0) == 1
    assert len(world.out.evictions) == 1
    assert world.schedule() == {"l0": "n1"}


def test_queue_usage_is_every_queues_allocated_resource_in_document_order() -> None:
    world = World(TWO_QUEUES)
    world.node("n1", cpu=8)
    world.pods(2, queue="root.a")
    world.pod("b1", queue="root.b", app="app-b")
    assert len(world.schedule()) == 3

    def walk(doc: dict[str, Any], out: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
        out[doc["queuename"]] = doc["allocatedResource"]
        for child in doc["children"]:
            walk(child, out)
        return out

    usage = world.sched.queue_usage()
    assert usage == walk(world.sched.queues_document(), {})
    assert list(usage) == ["root", "root.a", "root.b"]
    assert usage["root.a"]["vcore"] == 2000 and usage["root"]["vcore"] == 3000


def test_queue_usage_follows_a_pod_moving_between_queues_between_two_reads() -> None:
    """The simulator reads every queue's usage at every moment (the walk over the queues kept
    while none comes or goes): a pod ending in one queue and one of the same size placed in
    another leave the root's total as it was, and the next read shows both queues as they are."""
    world = World(TWO_QUEUES)
    world.node("n1", cpu=8)
    world.pod("a1", queue="root.a")
    world.schedule()
    first = world.sched.queue_usage()
    assert first["root.a"]["vcore"] == 1000 and first["root.b"] == {}
    assert world.sched.queue_usage() == first
    world.finish("a1")
    world.pod("b1", queue="root.b", app="app-b")
    world.schedule()
    moved = world.sched.queue_usage()
    assert moved["root"] == first["root"]
    assert moved["root.a"] == {} and moved["root.b"]["vcore"] == 1000


def test_queue_usage_follows_queues_coming_and_going() -> None:
    world = World()  # the default config: a queue per namespace, made and dropped on demand
    world.node("n1", cpu=8)
    world.pod("a1", namespace="team-a", app="job-a")
    world.schedule()
    assert list(world.sched.queue_usage()) == ["root", "root.team-a"]
    world.finish("a1")
    assert world.sched.queue_usage()["root.team-a"] == {}  # the job may still come back
    world.schedule(advance=COMPLETING_TIMEOUT)  # it completes: its queue goes, no usage moved
    assert list(world.sched.queue_usage()) == ["root"]
    world.configure(TWO_QUEUES)
    assert list(world.sched.queue_usage()) == ["root", "root.a", "root.b"]


def test_a_disruption_budget_that_changes_asks_for_a_cycle() -> None:
    """Budgets change which victims preemption takes: the cycle thread (and the simulator's next
    round at the same moment) runs again for a new or changed one, not for one told again."""
    world = World(TWO_QUEUES)
    world.node("n1")
    world.schedule()
    assert not world.sched.has_work()
    budget = DisruptionBudget("default", "keep", LabelSelector((LabelRequirement("app", "In", frozenset({"db"})),)), 0)
    world.sched.update_disruption_budget(budget)
    assert world.sched.has_work()
    world.schedule()
    world.sched.update_disruption_budget(budget)
    assert not world.sched.has_work()
    world.sched.remove_disruption_budget("default", "keep")
    assert world.sched.has_work()
