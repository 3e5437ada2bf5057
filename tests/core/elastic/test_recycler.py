"""The recycler through the Scheduler on a virtual clock: a quota above its runtime for the whole
`quota.recycle.delay` loses the fewest preemptible pods, lowest priority then newest first; nothing
else is ever evicted."""

from __future__ import annotations

from core.config.settings import Settings
from tests.core.scheduling.world import World

DELAY = 60.0


def borrowing_world(settings: Settings | None = None, cpu: int = 8) -> World:
    """`lender` (min 4) is idle and `borrower` (min 0) may take the whole node of `cpu` cores."""
    world = World(settings=settings or Settings(recycle_delay=DELAY))
    world.node("n1", cpu=cpu, memory="64Gi")
    world.quota("lender", min={"cpu": 4}, max={"cpu": cpu})
    world.quota("borrower", min={"cpu": 0}, max={"cpu": cpu})
    return world


def run(world: World, name: str, *, advance: float = 1.0, **kw: object) -> None:
    world.pod(name, namespace="borrower", memory="1Mi", **kw)
    assert world.schedule(advance=advance) == {name: "n1"}


def lender_wants_its_min(world: World) -> None:
    """Runtimes become lender 4, borrower cpu - 4."""
    world.pods(4, prefix="l", namespace="lender", memory="1Mi")
    assert world.schedule() == {}


def test_nothing_is_evicted_before_the_delay_has_passed() -> None:
    world = borrowing_world()
    for i in range(8):
        run(world, f"b{i}")
    lender_wants_its_min(world)
    for _ in range(int(DELAY) - 1):
        assert world.sched.recycle() == 0
        world.now += 1.0
    assert world.out.evicted() == []
    world.now += 1.0
    assert world.sched.recycle() == 4


def test_the_delay_restarts_when_used_drops_back_to_runtime() -> None:
    world = borrowing_world()
    for i in range(8):
        run(world, f"b{i}")
    lender_wants_its_min(world)
    start = world.now
    assert world.sched.recycle() == 0  # over from here
    world.now = start + 50.0
    for i in range(4):
        world.sched.remove_ask(f"l{i}")  # the lender gives up: the borrower's runtime is 8 again
    assert world.sched.recycle() == 0  # back within runtime: the clock stops
    world.now = start + 55.0
    lender_wants_its_min(world)
    assert world.sched.recycle() == 0  # over again from 55
    world.now = start + 55.0 + DELAY - 1.0
    assert world.sched.recycle() == 0  # 60 s after the first overrun, but only 59 after the second
    world.now = start + 55.0 + DELAY
    assert world.sched.recycle() == 4


def test_victims_go_by_priority_ascending_then_newest_first() -> None:
    world = borrowing_world()
    run(world, "old-p1", priority=1)
    run(world, "p5", priority=5)
    run(world, "mid-p1", priority=1)
    run(world, "p0", priority=0)
    run(world, "new-p1", priority=1)
    run(world, "p9-a", priority=9)
    run(world, "p9-b", priority=9)
    run(world, "p9-c", priority=9)
    world.pods(2, prefix="l", namespace="lender", memory="1Mi")  # runtimes: lender 2, borrower 6
    world.schedule()
    world.sched.recycle()
    world.now += DELAY
    assert world.sched.recycle() == 2
    assert sorted(world.out.evicted()) == ["new-p1", "p0"]


def test_the_cut_is_minimal_when_the_greedy_prefix_overshoots() -> None:
    # Over by 4. Least important first: tiny-1 (1), tiny-2 (1), big (4) frees 6 >= 4; walking back
    # from the most important, big is needed, tiny-2 and tiny-1 are not: only big goes.
    world = borrowing_world()
    run(world, "tiny-1", priority=1, cpu=1)
    run(world, "tiny-2", priority=2, cpu=1)
    run(world, "big", priority=3, cpu=4)
    run(world, "keep", priority=10, cpu=2)
    lender_wants_its_min(world)
    world.sched.recycle()
    world.now += DELAY
    assert world.sched.recycle() == 1
    assert world.out.evicted() == ["big"]
    world.finish("big")
    assert world.quota_used("borrower")["vcore"] <= world.sched.quota_status()["borrower"].runtime["vcore"]
    assert len(world.schedule()) == 4  # the lender's pods run in the room given back


def test_a_quota_within_its_runtime_never_loses_a_pod() -> None:
    world = borrowing_world()
    for i in range(4):
        run(world, f"b{i}", priority=0)
    world.pods(4, prefix="l", namespace="lender", memory="1Mi", priority=0)
    assert len(world.schedule()) == 4
    for _ in range(5):  # used == runtime on both sides, for far longer than the delay
        world.now += DELAY
        assert world.sched.recycle() == 0
    assert world.out.evicted() == []


def test_only_the_quota_above_its_runtime_loses_pods() -> None:
    world = borrowing_world(cpu=10)
    for i in range(8):
        run(world, f"b{i}", priority=100)
    world.pods(2, prefix="l", namespace="lender", memory="1Mi", priority=0)
    assert len(world.schedule()) == 2  # the lender runs 2 at priority 0, within its runtime
    world.pods(2, prefix="m", namespace="lender", memory="1Mi", priority=0)
    world.schedule()  # runtimes: lender 4, borrower 6
    world.sched.recycle()
    world.now += DELAY
    assert world.sched.recycle() == 2
    assert all(key.startswith("b") for key in world.out.evicted())


def test_non_preemptible_pods_are_never_chosen() -> None:
    world = World(settings=Settings(recycle_delay=DELAY))
    world.node("n1", cpu=8, memory="64Gi")
    world.quota("lender", min={"cpu": 6}, max={"cpu": 8})
    world.quota("borrower", min={"cpu": 2}, max={"cpu": 8})
    run(world, "fixed-0", priority=0, preemptible=False)
    run(world, "fixed-1", priority=0, preemptible=False)
    for i in range(6):
        run(world, f"loose-{i}", priority=5)
    world.pods(6, prefix="l", namespace="lender", memory="1Mi")  # runtimes: lender 6, borrower 2
    world.schedule()
    world.sched.recycle()
    world.now += DELAY
    assert world.sched.recycle() == 6
    assert sorted(world.out.evicted()) == [f"loose-{i}" for i in range(6)]


def test_a_disabled_recycler_evicts_nothing() -> None:
    world = borrowing_world(Settings(recycle_delay=DELAY, recycle_enabled=False))
    for i in range(8):
        run(world, f"b{i}")
    lender_wants_its_min(world)
    for _ in range(5):
        world.now += DELAY
        assert world.sched.recycle() == 0
    assert world.out.evicted() == []


def test_seed_002_borrower_returns_to_its_runtime_of_50() -> None:
    # Seed 002 "Min Guarantee": A alone requests and uses 100; B submits and both runtimes are 50;
    # A keeps using 100 until the recycler takes the 50 back, after which B's pods can run.
    world = World(settings=Settings(recycle_delay=DELAY))
    world.node("n1", cpu=100, memory="64Gi")
    world.quota("a", min={"cpu": 0}, max={"cpu": 100})
    world.quota("b", min={"cpu": 0}, max={"cpu": 100})
    for i in range(10):
        world.pod(f"a{i}", namespace="a", cpu=10, memory="1Mi")
        world.schedule(advance=1.0)
    assert world.quota_used("a")["vcore"] == 100_000
    world.pods(10, prefix="b", namespace="b", cpu=10, memory="1Mi")
    assert world.schedule() == {}
    status = world.sched.quota_status()
    assert status["a"].runtime["vcore"] == status["b"].runtime["vcore"] == 50_000
    world.sched.recycle()
    world.now += DELAY
    assert world.sched.recycle() == 5
    assert sorted(world.out.evicted()) == [f"a{i}" for i in range(5, 10)]  # the newest five
    world.finish(*world.out.evicted())
    assert world.quota_used("a")["vcore"] == 50_000
    assert len(world.schedule()) == 5
    assert world.quota_used("b")["vcore"] == 50_000
