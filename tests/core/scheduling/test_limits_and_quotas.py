"""User/group limits and elastic quotas inside the scheduling cycle: a "no" at any step leaves
every tracker as it was; borrowed capacity is taken back by eviction through the callbacks."""

from __future__ import annotations

from core.config.settings import Settings
from tests.core.scheduling.world import World

LIMITS = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: a
            limits:
              - {limit: ann, users: [ann], maxresources: {vcore: 2}}
              - {limit: one app each, users: ['*'], maxapplications: 1}
"""

NO_LIMITS = LIMITS.split("            limits:")[0]


def test_a_user_limit_denial_leaves_queue_node_and_quota_untouched() -> None:
    world = World(LIMITS)
    world.node("n1", cpu=8)
    world.quota("team", min={"cpu": 1}, max={"cpu": 8})
    world.pods(2, queue="root.a", user="ann", namespace="team")
    world.schedule()
    before = world.usage_snapshot()
    world.pod("extra", queue="root.a", user="ann", namespace="team")
    assert world.schedule() == {}
    assert (
        world.reason("extra") == "user ann would exceed maxresources at root.a: vcore 2000m used + 1000m asked > 2000m"
    )
    assert world.usage_snapshot() == before


def test_a_wildcard_application_limit_applies_to_each_user() -> None:
    world = World(LIMITS)
    world.node("n1", cpu=8)
    world.pod("bob-1", queue="root.a", user="bob", app="bob-job-1")
    world.pod("bob-2", queue="root.a", user="bob", app="bob-job-2")
    world.pod("cat-1", queue="root.a", user="cat", app="cat-job-1")
    assert set(world.schedule()) == {"bob-1", "cat-1"}
    assert "maxapplications" in (world.reason("bob-2") or "")
    assert "bob" in (world.reason("bob-2") or "")


def test_a_quota_refusal_rolls_the_user_increase_back() -> None:
    world = World(LIMITS)
    world.node("n1", cpu=8)
    world.quota("small", min={"cpu": 1}, max={"cpu": 1})
    world.pod("p0", queue="root.a", user="ann", namespace="small")
    world.pod("p1", queue="root.a", user="ann", namespace="small")
    assert world.schedule() == {"p0": "n1"}
    assert world.reason("p1") == (
        "quota small would exceed its runtime: vcore 1000m used + 1000m asked > 1000m runtime (min 1000m, max 1000m)"
    )
    assert world.user_usage("ann", "root.a")["vcore"] == 1000
    assert world.allocated("root.a")["vcore"] == 1000


def test_a_node_fit_failure_rolls_the_user_increase_back() -> None:
    world = World(LIMITS)
    world.node("n1", cpu=1)
    world.node("n2", cpu=1)
    world.pod("p0", queue="root.a", user="ann", cpu=1.5)
    assert world.schedule() == {}
    assert world.sched.users_document() == []
    assert world.queue("root.a")["runningApps"] == 0


def test_non_preemptible_pods_are_admitted_only_up_to_the_min() -> None:
    world = World()
    world.node("n1", cpu=8)
    world.quota("team", min={"cpu": 1}, max={"cpu": 8})
    world.pod("fixed-0", namespace="team", preemptible=False)
    world.pod("fixed-1", namespace="team", preemptible=False)
    world.pod("loose", namespace="team")
    assert set(world.schedule()) == {"fixed-0", "loose"}
    assert world.reason("fixed-1") == (
        "quota team: non-preemptible pods may use only its min: vcore 1000m used + 1000m asked > 1000m min"
    )


def test_higher_priority_preempts_lower_priority_in_the_same_quota() -> None:
    world = World()
    world.node("n1", cpu=8)
    world.quota("team", min={"cpu": 2}, max={"cpu": 2})
    world.pod("low-0", namespace="team", priority=1)
    world.schedule()
    world.pod("low-1", namespace="team", priority=1)
    world.schedule(advance=1.0)  # started last: the first to go among equals
    world.pod("high", namespace="team", priority=100)
    assert world.schedule() == {}
    victims = [(a.key, reason) for a, reason in world.out.evictions]
    assert victims == [("low-1", "preempted by team/high (priority 100) in quota team")]
    assert "waiting for preempted pods of quota team to end" in (world.reason("high") or "")
    world.schedule()
    assert len(world.out.evictions) == 1  # asked once, not every cycle
    world.finish("low-1")  # the shim confirms the eviction
    assert world.schedule() == {"high": "n1"}


def test_preemption_never_crosses_quotas() -> None:
    world = World()
    world.node("n1", cpu=2)
    world.quota("a", min={"cpu": 1}, max={"cpu": 2})
    world.quota("b", min={"cpu": 1}, max={"cpu": 2})
    world.pod("a-low", namespace="a", priority=1)
    world.pod("a-low2", namespace="a", priority=1)
    world.schedule()
    world.pod("b-high", namespace="b", priority=100)
    world.schedule()
    assert [a.key for a, _ in world.out.evictions] == []


def test_borrowed_capacity_is_recycled_after_the_delay() -> None:
    world = World(settings=Settings(recycle_delay=60.0))
    world.node("n1", cpu=8, memory="64Gi")
    world.quota("lender", min={"cpu": 6}, max={"cpu": 8})
    world.quota("borrower", min={"cpu": 2}, max={"cpu": 8})
    for i in range(8):  # lender idle: borrower takes all 8, one a second
        world.pod(f"b{i}", namespace="borrower")
        assert world.schedule(advance=1.0) == {f"b{i}": "n1"}
    world.pods(6, prefix="l", namespace="lender")  # the lender wants its min back
    assert world.schedule() == {}
    assert world.sched.recycle() == 0
    world.now += 59.0
    assert world.sched.recycle() == 0
    world.now += 1.0
    assert world.sched.recycle() == 6
    victims = sorted(a.key for a, _ in world.out.evictions)
    assert victims == ["b2", "b3", "b4", "b5", "b6", "b7"]  # same priority: newest first
    assert all(r.startswith("quota borrower above its runtime") for _, r in world.out.evictions)
    assert world.sched.recycle() == 0  # not asked twice
    world.finish(*victims)
    assert len(world.schedule()) == 6


def test_a_refused_eviction_moves_on_to_another_pod() -> None:
    world = World(settings=Settings(recycle_delay=0.0))
    world.node("n1", cpu=4, memory="64Gi")
    world.quota("lender", min={"cpu": 3}, max={"cpu": 4})
    world.quota("borrower", min={"cpu": 1}, max={"cpu": 4})
    for i in range(4):
        world.pod(f"b{i}", namespace="borrower")
        world.schedule(advance=1.0)
    world.pod("l0", namespace="lender")  # runtimes: lender 1, borrower 3
    world.schedule()
    assert world.sched.recycle() == 1
    assert [a.key for a, _ in world.out.evictions] == ["b3"]
    assert world.sched.recycle() == 0  # b3 is still being evicted
    world.sched.eviction_failed("b3", "Cannot evict pod as it would violate the pod's disruption budget")
    refused = world.out.reasons("EvictionRefused")
    assert refused and refused[0].name == "borrower/b3" and "disruption budget" in refused[0].message
    assert world.sched.recycle() == 1
    assert [a.key for a, _ in world.out.evictions] == ["b3", "b2"]
    world.finish("b2")
    assert world.schedule() == {"l0": "n1"}


def test_an_in_quota_preemptor_keeps_the_node_room_its_victim_frees() -> None:
    world = World(
        """
        partitions:
          - name: default
            queues: [{name: root, submitacl: '*', queues: [{name: a}, {name: b}]}]
        """
    )
    world.node("n1", cpu=2, memory="8Gi")
    world.quota("team", min={"cpu": 1}, max={"cpu": 8})
    world.pod("low-0", queue="root.a", app="x", namespace="team", priority=1)
    world.schedule()
    world.pod("low-1", queue="root.a", app="x", namespace="team", priority=1)
    world.schedule(advance=1.0)
    world.pod("high", queue="root.a", app="y", namespace="team", priority=100)
    world.schedule()
    assert [a.key for a, _ in world.out.evictions] == ["low-1"]
    world.pod("other", queue="root.b", app="z", namespace="free")  # another quota's pod
    assert world.schedule() == {}  # the room low-1 is leaving is held for high
    world.finish("low-1")
    assert world.schedule() == {"high": "n1"}  # not taken by the pod tried first
    assert [a.key for a, _ in world.out.evictions] == ["low-1"]  # so nobody else is preempted


def test_a_pod_naming_a_parent_quota_waits_and_runs_once_the_quota_is_a_leaf() -> None:
    world = World()
    world.node("n1")
    world.quota("org", is_parent=True, min={"cpu": 4}, max={"cpu": 8})
    world.quota("team", parent="org", min={"cpu": 1}, max={"cpu": 2})
    world.pod("p1", quota="org", namespace="x")
    assert world.schedule() == {}
    assert world.reason("p1") == "pod names quota org, which is a parent quota; pods belong to leaves"
    world.sched.remove_quota("team")
    world.sched.remove_quota("org")  # seed 002: a parent is never turned into a leaf; it is made anew
    world.quota("org", min={"cpu": 4}, max={"cpu": 8})
    assert world.schedule() == {"p1": "n1"}
    assert world.sched.quota_of("p1") == "org"


def test_usage_placed_where_no_limit_applied_counts_once_a_limit_is_added() -> None:
    world = World(NO_LIMITS)
    world.node("n1", cpu=8)
    world.pods(2, queue="root.a", user="ann")
    assert len(world.schedule()) == 2
    assert world.user_usage("ann", "root.a")["vcore"] == 2000
    world.configure(LIMITS)
    world.pod("extra", queue="root.a", user="ann")
    assert world.schedule() == {}
    assert world.reason("extra") == (
        "user ann would exceed maxresources at root.a: vcore 2000m used + 1000m asked > 2000m"
    )
