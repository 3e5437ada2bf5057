"""Gang scheduling in the core: task groups, placeholders, Soft and Hard timeouts, the rules.

A gang here is an application whose pods name a task group; its first pod carries the
definition. The test plays the shim: a placeholder's bind puts a pod on the node, an eviction
of a placeholder deletes it (the core has released it already), and a real pod's bind that
`replaces` a placeholder deletes that placeholder first.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.config.settings import Settings
from core.gang.gang import placeholder_ask
from core.gang.spec import HARD, SOFT, GangSpec, TaskGroup
from core.objects.ask import Allocation, Ask
from tests.core.scheduling.world import World, queues_config, res

QUEUES = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
          - name: small
            resources:
              max: {vcore: 2}
          - name: limited
            limits:
              - limit: alice at most 2 cpu
                users: [alice]
                maxresources: {vcore: 2}
"""


def spec(*groups: tuple[str, int, float], timeout: float = 60.0, style: str = SOFT) -> GangSpec:
    return GangSpec(
        groups=tuple(TaskGroup(name, count, res(cpu, "1Gi", 1)) for name, count, cpu in groups),
        timeout=timeout,
        style=style,
    )


def gang_pods(
    world: World, app: str, definition: GangSpec, counts: dict[str, int], cpu: float = 1, **kw: Any
) -> list[str]:
    """Submit the real pods of a gang: `counts` per group; the first pod carries the definition."""
    names = []
    for group, count in counts.items():
        for i in range(count):
            name = f"{app}-{group}-{i}"
            ask = world.ask(name, app=app, cpu=cpu, queue=kw.get("queue", "root.a"), **_rest(kw))
            ask = ask._replace(task_group=group, gang=replace(definition, originator=name) if not names else None)
            world.asks[name] = ask
            world.sched.add_ask(ask)
            names.append(name)
    return names


def _rest(kw: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kw.items() if k != "queue"}


def placeholders(world: World) -> dict[str, str]:
    """Placeholders on nodes now, by key."""
    return {
        a["allocationKey"]: a["nodeId"]
        for node in world.sched.nodes_document()
        for a in node["allocations"]
        if a.get("placeholder")
    }


def real_running(world: World, app: str) -> list[str]:
    doc = world.sched.application_document(app)
    return [] if doc is None else [a["allocationKey"] for a in doc["allocations"] if not a.get("placeholder")]


def play_shim(world: World) -> None:
    """Deleted placeholders are confirmed gone, as the shim's watch would report them."""

    def on_evict(allocation: Any, reason: str) -> None:
        world.sched.release_allocation(allocation.key)

    world.out.on_evict = on_evict


def test_real_pods_wait_until_every_placeholder_is_allocated_then_replace_them_on_the_same_nodes() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=2)
    world.node("n2", cpu=2)
    names = gang_pods(world, "job", spec(("worker", 4, 1)), {"worker": 4})
    bound = world.schedule()
    held = placeholders(world)
    # The placeholders went first; the real pods then took their places in the same cycle.
    placeholder_binds = [a for a in world.out.binds if a.placeholder]
    real_binds = [a for a in world.out.binds if not a.placeholder]
    assert len(placeholder_binds) == 4 and held == {}
    assert sorted(a.key for a in real_binds) == sorted(names)
    where = {a.key: a.node_id for a in placeholder_binds}
    for allocation in real_binds:
        assert allocation.replaces in where and where[allocation.replaces] == allocation.node_id
    assert len({a.replaces for a in real_binds}) == 4
    assert set(bound) >= set(names)
    doc = world.sched.application_document("job")
    assert doc is not None
    assert doc["placeholderData"] == [
        {"taskGroupName": "worker", "count": 4, "minResource": dict(res(1, "1Gi", 1)), "replaced": 4, "timedout": 0}
    ]
    assert world.allocated("root.a") == dict(res(4, "4Gi", 4))


def test_no_real_pod_runs_while_a_placeholder_is_missing() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=4)
    world.foreign("busy", "n1", cpu=1)  # 3 cores free: the gang of 4 reserves 3 and waits
    gang_pods(world, "job", spec(("worker", 4, 1)), {"worker": 4})
    world.schedule()
    assert len(placeholders(world)) == 3
    assert real_running(world, "job") == []
    assert "waiting for all 4 placeholders" in (world.reason("job-worker-0") or "")
    world.node("n2", cpu=1)
    world.schedule()
    assert len(real_running(world, "job")) == 4
    assert placeholders(world) == {}


def test_two_gangs_on_a_cluster_that_fits_one_run_one_after_the_other() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.node("n1", cpu=6)
    first = gang_pods(world, "first", spec(("w", 4, 1)), {"w": 4})
    world.now = 1.0
    second = gang_pods(world, "second", spec(("w", 4, 1)), {"w": 4})
    world.schedule()
    assert sorted(real_running(world, "first")) == sorted(first)
    assert real_running(world, "second") == []
    assert len(placeholders(world)) == 2  # the second gang reserves what is left, and waits
    world.finish(*first)
    world.schedule()
    assert sorted(real_running(world, "second")) == sorted(second)
    assert placeholders(world) == {}


def test_a_later_gang_does_not_reserve_while_an_earlier_one_in_its_queue_still_reserves() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=5)
    world.foreign("busy", "n1", cpu=2)  # 3 cores free
    gang_pods(world, "first", spec(("w", 2, 2)), {"w": 2}, cpu=2)
    world.now = 1.0
    gang_pods(world, "second", spec(("w", 1, 1)), {"w": 1})
    world.schedule()
    assert len(placeholders(world)) == 1  # one of the first gang's two; 1 cpu stays free
    doc = world.sched.application_document("second")
    assert doc is not None
    waiting = [r["pendingReason"] for r in doc["requests"] if r.get("placeholder")]
    assert waiting == ["waiting for gang first, which arrived earlier in queue root.a, to reserve"]
    world.pod("plain", app="other", queue="root.a")
    assert world.schedule() == {"plain": "n1"}  # plain pods are not held


def test_hard_timeout_fails_the_application_and_tells_its_pods_why() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.node("n1", cpu=4)
    world.foreign("busy", "n1", cpu=1)  # 3 cores free: the gang of 4 reserves 3 and waits
    names = gang_pods(world, "job", spec(("w", 4, 1), timeout=30, style=HARD), {"w": 4})
    world.schedule()
    assert len(placeholders(world)) == 3
    world.schedule(advance=31)
    assert placeholders(world) == {}
    assert world.app_state("job") == "Failed"
    assert len(world.out.evictions) == 3
    for name in names:
        assert "ResourceReservationTimeout" in (world.reason(name) or "")
    assert world.allocated("root.a") == {}
    # Its pods stay out, and other applications run.
    world.pod("plain", app="other", queue="root.a")
    assert world.schedule() == {"plain": "n1"}
    assert world.node_of(names[0]) is None


def test_hard_timeout_says_for_each_waiting_pod_that_it_failed_so_the_shim_can_fail_it() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.node("n1", cpu=3)
    names = gang_pods(world, "job", spec(("w", 4, 1), timeout=30, style=HARD), {"w": 4})
    world.schedule()
    world.schedule(advance=31)
    failed = [e for e in world.out.events if e.type == "REQUEST" and e.reason == "ResourceReservationTimeout"]
    assert sorted(e.object_id for e in failed) == sorted(names)
    assert all(e.reference_id == "job" and "not all allocated within 30s" in e.message for e in failed)


def test_soft_timeout_releases_the_placeholders_and_schedules_the_pods_normally() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.node("n1", cpu=4)
    world.foreign("busy", "n1", cpu=1)  # 3 cores free: the gang of 4 reserves 3 and waits
    gang_pods(world, "job", spec(("w", 4, 1), timeout=30), {"w": 4})
    world.schedule()
    world.schedule(advance=29)
    assert real_running(world, "job") == []
    world.schedule(advance=2)
    assert placeholders(world) == {}
    assert len(real_running(world, "job")) == 3
    assert [e.reason for e in world.out.events if e.object_id == "job"].count("ResourceReservationTimeout") == 1


def test_a_gang_larger_than_its_queue_is_rejected_at_once_and_others_are_unaffected() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=8)
    names = gang_pods(world, "big", spec(("w", 3, 1)), {"w": 3}, queue="root.small")
    world.pod("plain", app="other", queue="root.small")
    assert world.schedule() == {"plain": "n1"}
    rejected = world.sched.application_document("big")
    assert rejected is not None and rejected["applicationState"] == "Rejected"
    assert "above the max of queue root.small" in rejected["rejectedMessage"]
    for name in names:
        assert "above the max of queue root.small" in (world.reason(name) or "")
    assert placeholders(world) == {}


def test_a_gang_above_its_users_limit_or_its_quotas_max_is_rejected() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=8)
    gang_pods(world, "over-user", spec(("w", 3, 1)), {"w": 3}, queue="root.limited")
    doc = world.sched.application_document("over-user")
    assert doc is not None and "limit of user alice in queue root.limited" in doc["rejectedMessage"]
    world.quota("team", max={"cpu": 2})
    gang_pods(world, "over-quota", spec(("w", 3, 1)), {"w": 3}, namespace="team")
    doc = world.sched.application_document("over-quota")
    assert doc is not None and "max of elastic quota team" in doc["rejectedMessage"]


def test_a_real_pod_larger_than_its_placeholder_releases_it_and_is_placed_normally() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.node("n1", cpu=4)
    gang_pods(world, "job", spec(("w", 2, 1)), {"w": 2}, cpu=1.5)
    world.schedule()
    world.schedule()
    assert len(real_running(world, "job")) == 2
    assert placeholders(world) == {}
    too_small = world.out.reasons("PlaceholderTooSmall")
    assert len(too_small) == 2 and "placed normally" in too_small[0].message
    assert world.allocated("root.a") == dict(res(3, "2Gi", 2))


def test_placeholders_count_in_every_tracker_and_everything_returns_to_zero() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.quota("team", max={"cpu": 8})
    world.node("n1", cpu=4)
    world.foreign("busy", "n1", cpu=1)  # 3 cores free: the gang of 4 reserves 3 and waits
    names = gang_pods(world, "job", spec(("w", 4, 1)), {"w": 4}, namespace="team", groups=["dev"])
    world.schedule()
    three = dict(res(3, "3Gi", 3))
    assert world.allocated("root.a") == three
    assert world.user_usage("alice", "root.a") == three
    assert world.quota_used("team") == {"vcore": 3000}
    assert world.node_doc("n1")["allocated"] == three
    world.node("n2", cpu=2)
    world.schedule()
    world.finish(*names)
    world.schedule()
    snapshot = world.usage_snapshot()
    assert snapshot["queues"]["root.a"] == ({}, 0)
    assert all(alloc == {} for alloc, _ in snapshot["nodes"].values())
    assert world.user_usage("alice", "root.a") == {}
    assert world.quota_used("team") == {}


def test_unused_placeholders_are_released_when_the_application_completes() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.node("n1", cpu=4)
    names = gang_pods(world, "job", spec(("w", 3, 1)), {"w": 2})
    world.schedule()
    assert len(real_running(world, "job")) == 2 and len(placeholders(world)) == 1
    world.finish(*names)
    assert placeholders(world) == {}
    assert world.out.reasons("PlaceholderReleased")
    assert world.allocated("root.a") == {}


def test_a_pod_naming_an_unknown_group_waits_with_the_reason_and_others_run() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=4)
    gang_pods(world, "job", spec(("w", 1, 1)), {"w": 1})
    stray = world.ask("stray", app="job", queue="root.a")._replace(task_group="driver")
    world.sched.add_ask(stray)
    orphan = world.ask("orphan", app="nodef", queue="root.a")._replace(task_group="w")
    world.sched.add_ask(orphan)
    world.schedule()
    assert "names task group 'driver', which application job does not define" in (world.reason("stray") or "")
    assert "has no task-groups definition" in (world.reason("orphan") or "")
    assert real_running(world, "job") == ["job-w-0"]


def _recovered_placeholders(template: Ask, count: int, node: str) -> list[Allocation]:
    """Placeholder pods a previous Herder made, as the shim reads them back after a restart."""
    assert template.gang is not None
    group = template.gang.groups[0]
    return [
        Allocation.for_ask(placeholder_ask(template, template.gang, group, set(), 100 + i), node, 0.0)
        for i in range(count)
    ]


def test_recovered_placeholders_are_adopted_not_duplicated() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=4)
    template = world.ask("job-w-0", app="job", queue="root.a")._replace(task_group="w", gang=spec(("w", 4, 1)))
    recovered = _recovered_placeholders(template, 3, "n1")
    for allocation in recovered:
        world.sched.add_allocation(allocation)
    names = gang_pods(world, "job", spec(("w", 4, 1)), {"w": 4})
    world.schedule()
    made = [a for a in world.out.binds if a.placeholder]
    assert len(made) == 1 and made[0].key not in {a.key for a in recovered}  # only the missing fourth
    # ... cut from the real pod that defines the gang, not from a recovered placeholder.
    assert made[0].ask is not None and made[0].ask.gang is not None
    assert made[0].ask.gang.originator == "job-w-0"
    assert sorted(real_running(world, "job")) == sorted(names)
    assert placeholders(world) == {}
    assert world.allocated("root.a") == dict(res(4, "4Gi", 4))


def test_placeholders_recovered_after_the_pods_drop_the_surplus_asks() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=4)
    names = gang_pods(world, "job", spec(("w", 2, 1)), {"w": 2})
    for allocation in _recovered_placeholders(world.asks[names[0]], 2, "n1"):
        world.sched.add_allocation(allocation)
    world.schedule()
    assert [a for a in world.out.binds if a.placeholder] == []
    assert sorted(real_running(world, "job")) == sorted(names)
    assert world.allocated("root.a") == dict(res(2, "2Gi", 2))


def test_a_gang_parameter_read_past_is_said_once_as_a_warning_and_the_gang_still_runs() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.node("n1", cpu=4)
    notice = "pod default/job-w-0 annotation ...: gangSchedulingStyle must be Soft or Hard, got 'abc'; the gang is Soft"
    [first] = gang_pods(world, "job", spec(("w", 1, 1)), {"w": 1})
    ask = world.asks[first]._replace(notices=(notice,))
    world.sched.remove_ask(first)
    world.out.events.clear()
    world.sched.add_ask(ask)
    world.sched.add_ask(ask)  # the watch shows the pod again: said once
    world.sched.add_ask(ask._replace(priority=1))  # the pod changed, its notice did not
    said = world.out.reasons("AnnotationIgnored")
    assert [(e.object_id, e.message, e.reference_id) for e in said] == [(first, notice, "job")]
    world.schedule()
    world.schedule()
    assert len(real_running(world, "job")) == 1  # a warning, never a reason to wait


def test_a_notice_is_said_even_for_a_pod_that_waits_on_a_problem() -> None:
    world = World(QUEUES)
    ask = world.ask("p", queue="root.a")._replace(problems=("pod default/p spec: bad",), notices=("ignored x",))
    world.sched.add_ask(ask)
    world.sched.add_ask(ask)
    assert [e.message for e in world.out.reasons("AnnotationIgnored")] == ["ignored x"]


def test_real_pods_larger_than_their_placeholders_never_take_the_queue_above_its_max() -> None:
    """Three placeholders of one core, three real pods of 1.5 in a queue of max 4: each real pod
    lets its placeholder go and is placed normally, so the third (4.5 cores) must wait. A queue
    max answer was kept while the number of placed pods stood still, which a placeholder let go
    and a pod placed in one cycle does (the shim confirms the deletions later), and the third pod
    was placed over the max."""
    world = World(
        """
        partitions:
          - name: default
            queues:
              - name: root
                submitacl: "*"
                queues:
                  - name: four
                    resources: {max: {vcore: 4}}
        """
    )
    world.node("n1", cpu=8)
    gang_pods(world, "job", spec(("w", 3, 1)), {"w": 3}, cpu=1.5, queue="root.four")
    world.schedule()
    assert world.allocated("root.four")["vcore"] <= 4000
    assert len(real_running(world, "job")) == 2
    assert "queue root.four would exceed max vcore" in (world.reason("job-w-2") or "")


def test_a_gangs_pods_waiting_for_their_placeholders_never_preempt_the_placeholders_do() -> None:
    """prod is guaranteed one core and the node is full of batch pods. The real pod waits for its
    gang's placeholder; had it preempted, the room held for it would use prod's guarantee, the
    placeholder could never preempt, and the held room would stay held for ever."""
    world = World(
        queues_config(
            """
            - name: prod
              resources: {guaranteed: {vcore: 1}}
            - name: batch
            """,
            root_properties="{preemption.delay: 10s}",
        )
    )
    play_shim(world)
    world.node("n1", cpu=4)
    for i in range(4):
        world.pod(f"b{i}", queue="root.batch", app="batch")
        world.schedule(advance=1)
    gang_pods(world, "job", spec(("w", 1, 1)), {"w": 1}, queue="root.prod")
    world.schedule(advance=11)
    assert world.out.evicted() == ["b3"]
    world.finish("b3")
    world.schedule()
    world.schedule()
    assert real_running(world, "job") == ["job-w-0"]


def test_a_gang_of_more_members_than_the_setting_allows_is_rejected_at_once() -> None:
    world = World(QUEUES)
    world.node("n1", cpu=8)
    names = gang_pods(world, "huge", spec(("w", 1_000_000_000, 1)), {"w": 2})
    world.pod("plain", app="other", queue="root.a")
    assert world.schedule() == {"plain": "n1"}
    doc = world.sched.application_document("huge")
    assert doc is not None and doc["applicationState"] == "Rejected"
    why = "the gang has 1000000000 members in all, above the setting gang.maxMembers (10000)"
    assert doc["rejectedMessage"] == why and doc["requests"] == []
    assert all(world.reason(name) == why for name in names)
    assert placeholders(world) == {} and world.out.binds[0].key == "plain"


def test_gang_max_members_is_a_setting_summed_over_task_groups() -> None:
    world = World(QUEUES, settings=Settings(gang_max_members=4))
    world.node("n1", cpu=8)
    gang_pods(world, "five", spec(("a", 2, 1), ("b", 3, 1)), {"a": 2, "b": 3})
    four = gang_pods(world, "four", spec(("a", 2, 1), ("b", 2, 1)), {"a": 2, "b": 2})
    world.schedule()
    assert world.app_state("five") == "Rejected"
    assert sorted(real_running(world, "four")) == sorted(four)


def test_a_gang_larger_than_the_cluster_places_no_placeholder_and_reserves_once_nodes_come() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.node("n1", cpu=3)
    names = gang_pods(world, "job", spec(("w", 4, 1)), {"w": 4})
    world.pod("plain", app="other", queue="root.a")
    assert world.schedule() == {"plain": "n1"}  # the gang holds no room meanwhile
    assert placeholders(world) == {}
    why = (
        "the gang's placeholders need vcore 4000m in all, above what the whole cluster has (3000m):"
        " no placeholder is placed until nodes are added"
    )
    doc = world.sched.application_document("job")
    assert doc is not None
    waiting = [r["pendingReason"] for r in doc["requests"] if r.get("placeholder")]
    assert waiting == [why] * 4  # pending, as autoscalers see them
    assert all(world.reason(name) == why for name in names)
    world.finish("plain")
    world.node("n2", cpu=1)
    world.schedule()
    assert sorted(real_running(world, "job")) == sorted(names)


def test_a_gang_larger_than_the_cluster_times_out_as_its_style_says() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.node("n1", cpu=3)
    hard = gang_pods(world, "hard", spec(("w", 4, 1), timeout=30, style=HARD), {"w": 4})
    soft = gang_pods(world, "soft", spec(("w", 5, 1), timeout=60), {"w": 2})
    world.schedule(advance=29)
    assert world.app_state("hard") != "Failed" and real_running(world, "soft") == []
    world.schedule(advance=2)
    assert world.app_state("hard") == "Failed"
    assert all("ResourceReservationTimeout" in (world.reason(name) or "") for name in hard)
    world.schedule(advance=30)  # Soft: its pods are scheduled normally, as many as fit
    assert sorted(real_running(world, "soft")) == sorted(soft)
    assert world.out.evictions == []  # no placeholder was ever made


def test_no_pod_is_preempted_for_a_gang_larger_than_the_cluster() -> None:
    world = World(QUEUES)
    play_shim(world)
    world.quota("team", max={"cpu": 8})
    world.node("n1", cpu=2)
    for i in range(2):
        world.running(f"low-{i}", "n1", app="low", queue="root.a", namespace="team")
    names = gang_pods(world, "job", spec(("w", 3, 1)), {"w": 3}, namespace="team", priority=100)
    world.schedule()
    world.schedule(advance=30)  # within its timeout: still reserving
    assert world.out.evictions == [] and placeholders(world) == {}
    assert "above what the whole cluster has" in (world.reason(names[0]) or "")
