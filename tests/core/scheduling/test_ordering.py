"""Who goes first: queues by fair share of their guarantee, applications by fifo or fair with
priority, asks by priority then age."""

from __future__ import annotations

from tests.core.scheduling.world import World

GUARANTEED = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: big
            resources: {guaranteed: {vcore: 6}}
          - name: small
            resources: {guaranteed: {vcore: 2}}
"""

LEAF = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: q
            properties: {application.sort.policy: %s, application.sort.priority: %s}
"""


def _order(world: World, count: int) -> list[str]:
    """Place pods one at a time on a cluster that fits one more each time; their order."""
    placed: list[str] = []
    for i in range(count):
        world.node(f"n{i}", cpu=1, memory="1Gi", pods=1)
        placed.extend(world.schedule())
    return placed


def test_queues_share_by_their_guarantee() -> None:
    world = World(GUARANTEED)
    world.pods(10, prefix="big-", queue="root.big", app="big", cpu=1, memory="1Mi")
    world.pods(10, prefix="small-", queue="root.small", app="small", cpu=1, memory="1Mi")
    world.node("n1", cpu=8, memory="1Gi")
    world.schedule()
    assert world.allocated("root.big")["vcore"] == 6000
    assert world.allocated("root.small")["vcore"] == 2000


def test_the_queue_furthest_below_its_share_goes_first() -> None:
    world = World(GUARANTEED)
    world.node("n1", cpu=3, memory="4Gi")
    world.running("big-0", "n1", queue="root.big", app="big")
    world.running("big-1", "n1", queue="root.big", app="big")  # 2 of 6: a third of its guarantee
    world.pod("small-0", queue="root.small", app="small")  # 0 of 2
    world.pod("big-2", queue="root.big", app="big", created=-1.0)  # older, but its queue uses more
    assert world.schedule() == {"small-0": "n1"}


def test_fifo_serves_applications_by_submission_time() -> None:
    world = World(LEAF % ("fifo", "disabled"))
    world.pod("late", queue="root.q", app="late", created=5.0)
    world.now = 1.0
    world.pod("early-0", queue="root.q", app="early", cpu=1, memory="1Gi")
    world.pod("early-1", queue="root.q", app="early", cpu=1, memory="1Gi")
    world.now = 2.0
    world.pod("late-0", queue="root.q", app="late2")
    assert _order(world, 4) == ["late", "early-0", "early-1", "late-0"]


def test_priority_goes_before_submission_time_when_enabled() -> None:
    world = World(LEAF % ("fifo", "enabled"))
    world.pod("low", queue="root.q", app="first")
    world.now = 1.0
    world.pod("high", queue="root.q", app="second", priority=100)
    assert _order(world, 2) == ["high", "low"]


def test_priority_is_ignored_between_applications_when_disabled() -> None:
    world = World(LEAF % ("fifo", "disabled"))
    world.pod("low", queue="root.q", app="first")
    world.now = 1.0
    world.pod("high", queue="root.q", app="second", priority=100)
    assert _order(world, 2) == ["low", "high"]


# yunikorn-core sorters_test.go, TestSortAppsFifo "fifo first, priority second": with priority
# sorting disabled, submission time still comes first and priority decides between applications
# submitted at the same moment.
def test_fifo_without_priority_sorting_breaks_submission_ties_by_priority() -> None:
    world = World(LEAF % ("fifo", "disabled"))
    world.pod("zero", queue="root.q", app="app-0")
    world.now = 3.0
    world.pod("one", queue="root.q", app="app-1", priority=3)
    world.pod("two", queue="root.q", app="app-2")
    world.pod("three", queue="root.q", app="app-3", priority=5)
    world.now = 4.0
    world.pod("four", queue="root.q", app="app-4", priority=100)  # later: priority cannot lift it
    line = world.sched.pending_document("root.q") or []
    assert [entry["name"] for entry in line] == [f"default/{n}" for n in ("zero", "three", "one", "two", "four")]
    assert _order(world, 5) == ["zero", "three", "one", "two", "four"]


def test_without_priority_sorting_an_application_whose_best_ask_went_yields_its_tie() -> None:
    world = World(LEAF % ("fifo", "disabled"))
    world.pod("a-high", queue="root.q", app="A", priority=10)
    world.pod("a-low", queue="root.q", app="A", priority=0)
    world.pod("b-mid", queue="root.q", app="B", priority=5)  # submitted at the same moment as A
    assert _order(world, 3) == ["a-high", "b-mid", "a-low"]


# TestSortAppsFair "app-1 & app-3 allocated, app-3 high priority": with priority sorting
# disabled, the share in use comes first and priority decides between equal shares.
def test_fair_without_priority_sorting_breaks_share_ties_by_priority() -> None:
    world = World(LEAF % ("fair", "disabled"))
    world.node("full", cpu=4, memory="4Gi", pods=4)
    world.running("a1-run", "full", queue="root.q", app="a1")
    world.running("a3-run", "full", queue="root.q", app="a3")
    world.running("a2-run-0", "full", queue="root.q", app="a2")
    world.running("a2-run-1", "full", queue="root.q", app="a2")
    world.pod("a1-next", queue="root.q", app="a1", priority=2)
    world.pod("a2-next", queue="root.q", app="a2", priority=10)  # uses more: waits despite priority
    world.now = 1.0
    world.pod("a3-next", queue="root.q", app="a3", priority=3)
    assert _order(world, 3) == ["a3-next", "a1-next", "a2-next"]


def test_fair_serves_the_application_using_least() -> None:
    world = World(LEAF % ("fair", "disabled"))
    world.node("n0", cpu=4, memory="4Gi")
    world.running("a-run-0", "n0", queue="root.q", app="a")
    world.running("a-run-1", "n0", queue="root.q", app="a")
    world.running("b-run-0", "n0", queue="root.q", app="b")
    world.pod("a-0", queue="root.q", app="a")
    world.pod("b-0", queue="root.q", app="b")
    assert world.schedule() == {"b-0": "n0"}


def test_fair_alternates_between_equal_applications() -> None:
    world = World(LEAF % ("fair", "disabled"))
    world.pods(3, prefix="a-", queue="root.q", app="a")
    world.pods(3, prefix="b-", queue="root.q", app="b")
    assert _order(world, 4) == ["a-0", "b-0", "a-1", "b-1"]


def test_asks_of_an_application_go_by_priority_then_age() -> None:
    world = World(LEAF % ("fifo", "enabled"))
    world.pod("old-low", queue="root.q", created=1.0, priority=0)
    world.pod("new-high", queue="root.q", created=3.0, priority=10)
    world.pod("old-high", queue="root.q", created=2.0, priority=10)
    world.pod("oldest-low", queue="root.q", created=0.0, priority=0)
    assert _order(world, 4) == ["old-high", "new-high", "oldest-low", "old-low"]


def test_a_big_ask_that_cannot_fit_does_not_block_smaller_ones_behind_it() -> None:
    world = World(LEAF % ("fifo", "enabled"))
    world.node("n1", cpu=2)
    world.pod("huge", queue="root.q", cpu=64, created=0.0)
    world.pod("small", queue="root.q", cpu=1, created=1.0)
    assert world.schedule() == {"small": "n1"}
    assert world.reason("huge") is not None


def test_an_application_whose_best_ask_was_placed_yields_to_a_higher_priority_one() -> None:
    world = World(LEAF % ("fifo", "enabled"))
    world.pod("a-high", queue="root.q", app="A", priority=10)
    world.pod("a-low", queue="root.q", app="A", priority=0)
    world.now = 1.0
    world.pod("b-mid", queue="root.q", app="B", priority=5)
    assert _order(world, 3) == ["a-high", "b-mid", "a-low"]


def test_a_high_priority_ask_that_could_not_fit_goes_first_once_room_appears() -> None:
    world = World(LEAF % ("fifo", "enabled"))
    world.node("small", cpu=1, memory="1Gi", pods=1)
    world.pod("a-big", queue="root.q", app="A", priority=10, cpu=2)
    world.now = 1.0
    world.pod("b-0", queue="root.q", app="B", priority=5)
    world.pod("b-1", queue="root.q", app="B", priority=5)
    assert world.schedule() == {"b-0": "small"}  # a-big does not fit anywhere yet
    world.pod("b-2", queue="root.q", app="B", priority=5)
    assert world.schedule() == {}
    world.node("big", cpu=2, memory="2Gi", pods=2)  # room for a-big, or for b-1 and b-2
    assert world.schedule() == {"a-big": "big"}
