"""In-quota preemption and elastic quota admission through the Scheduler: a higher-priority pod takes
the room of lower-priority preemptible pods of its own quota on one node, only when that makes room
(`used - preempted + request <= runtime`), and a quota's "no" leaves every tracker untouched."""

from __future__ import annotations

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
              - {limit: ann, users: [ann], maxresources: {vcore: 3}}
"""


def test_preemption_takes_the_lowest_priority_then_the_newest_pod() -> None:
    world = World()
    world.node("n1", cpu=3)
    world.quota("team", min={"cpu": 3}, max={"cpu": 3})
    world.pod("low-new", namespace="team", priority=1, created=0.0)
    world.pod("mid", namespace="team", priority=5)
    world.pod("low-old", namespace="team", priority=1)
    world.schedule()
    world.finish("low-new")  # started again later than low-old: the newest of the lowest priority
    world.pod("low-new", namespace="team", priority=1)
    assert world.schedule(advance=5.0) == {"low-new": "n1"}
    world.pod("high", namespace="team", priority=10)
    assert world.schedule() == {}
    assert world.out.evicted() == ["low-new"]
    world.finish("low-new")
    assert world.schedule() == {"high": "n1"}


def test_preemption_never_takes_non_preemptible_pods() -> None:
    world = World()
    world.node("n1", cpu=2)
    world.quota("team", min={"cpu": 2}, max={"cpu": 2})
    world.pod("fixed-0", namespace="team", priority=1, preemptible=False)
    world.pod("fixed-1", namespace="team", priority=1, preemptible=False)
    assert len(world.schedule()) == 2
    world.pod("high", namespace="team", priority=100)
    assert world.schedule() == {}
    assert world.out.evicted() == []


def test_preemption_never_takes_pods_of_another_quota_even_on_the_only_node() -> None:
    world = World()
    world.node("n1", cpu=2)
    world.quota("a", min={"cpu": 1}, max={"cpu": 2})
    world.quota("b", min={"cpu": 1}, max={"cpu": 2})
    world.pod("b-low", namespace="b", priority=1)
    world.pod("a-low", namespace="a", priority=1)
    assert len(world.schedule()) == 2
    world.pod("a-high", namespace="a", priority=100, cpu=2)
    world.schedule()
    assert "b-low" not in world.out.evicted()


def test_no_preemption_when_it_would_not_make_room_in_the_quota() -> None:
    # runtime 2: used 2 - preempted 1 + asked 2 = 3 > 2 even with the only lower pod gone.
    world = World()
    world.node("n1", cpu=8)
    world.quota("team", min={"cpu": 2}, max={"cpu": 2})
    world.pod("fixed", namespace="team", priority=50, preemptible=False)
    world.pod("low", namespace="team", priority=1)
    assert len(world.schedule()) == 2
    world.pod("big", namespace="team", priority=100, cpu=2)
    assert world.schedule() == {}
    assert world.out.evicted() == []


def test_no_preemption_for_equal_or_lower_priority() -> None:
    world = World()
    world.node("n1", cpu=2)
    world.quota("team", min={"cpu": 2}, max={"cpu": 2})
    world.pods(2, prefix="low", namespace="team", priority=5)
    world.schedule()
    world.pod("same", namespace="team", priority=5)
    world.schedule()
    assert world.out.evicted() == []


def test_a_non_preemptible_pod_beyond_the_min_preempts_nobody() -> None:
    # fixed-1 may never run while fixed-0 holds the whole min: evicting "low" would not let it in.
    world = World()
    world.node("n1", cpu=2)
    world.quota("team", min={"cpu": 1}, max={"cpu": 4})
    world.pod("fixed-0", namespace="team", priority=50, preemptible=False)
    world.pod("low", namespace="team", priority=1)
    assert len(world.schedule()) == 2
    world.pod("fixed-1", namespace="team", priority=100, preemptible=False)
    assert world.schedule() == {}
    assert world.out.evicted() == []
    world.finish("low")  # even with room in the runtime and on the node, the min still says no
    assert world.schedule() == {}
    assert "non-preemptible pods may use only its min" in (world.reason("fixed-1") or "")


def test_admission_holds_used_plus_request_within_runtime() -> None:
    world = World()
    world.node("n1", cpu=16)
    world.quota("team", min={"cpu": 3}, max={"cpu": 3})
    world.pods(4, namespace="team", cpu=1)
    assert len(world.schedule()) == 3
    assert world.quota_used("team")["vcore"] == 3000
    assert world.reason("p3") == (
        "quota team would exceed its runtime: vcore 3000m used + 1000m asked > 3000m runtime (min 3000m, max 3000m)"
    )


def test_a_quota_refusal_leaves_queue_user_and_node_usage_untouched() -> None:
    world = World(LIMITS)
    world.node("n1", cpu=8)
    world.quota("team", min={"cpu": 1}, max={"cpu": 1})
    world.pod("p0", queue="root.a", user="ann", namespace="team")
    assert world.schedule() == {"p0": "n1"}
    before = world.usage_snapshot()
    world.pod("p1", queue="root.a", user="ann", namespace="team")
    assert world.schedule() == {}
    assert (world.reason("p1") or "").startswith("quota team would exceed its runtime")
    assert world.usage_snapshot() == before


def test_a_user_limit_refusal_leaves_the_quota_untouched() -> None:
    world = World(LIMITS)
    world.node("n1", cpu=8)
    world.quota("team", min={"cpu": 8}, max={"cpu": 8})
    world.pods(3, queue="root.a", user="ann", namespace="team")
    world.schedule()
    before = world.usage_snapshot()
    world.pod("extra", queue="root.a", user="ann", namespace="team")
    assert world.schedule() == {}
    assert (world.reason("extra") or "").startswith("user ann would exceed maxresources")
    assert world.usage_snapshot() == before
    assert world.quota_used("team")["vcore"] == 3000


def test_a_parent_quota_refuses_pods_with_a_reason_naming_it() -> None:
    world = World()
    world.node("n1")
    world.quota("org", is_parent=True, min={"cpu": 2}, max={"cpu": 8})
    world.quota("team", parent="org", min={"cpu": 1}, max={"cpu": 4})
    world.pod("p1", quota="org", namespace="x")
    assert world.schedule() == {}
    assert "org" in (world.reason("p1") or "") and "parent quota" in (world.reason("p1") or "")
