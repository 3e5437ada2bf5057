"""At most one instance leads; a standby takes over an expired or released Lease."""

from __future__ import annotations

import threading

from hypothesis import given
from hypothesis import strategies as st

from shim.kube.leader.lease import LeaderElector, LeaseRecord


class VersionedLease:
    """One Lease with the API server's optimistic concurrency on resourceVersion."""

    def __init__(self) -> None:
        self.record: LeaseRecord | None = None
        self.version = 0
        self._lock = threading.Lock()

    def read(self) -> tuple[LeaseRecord, str] | None:
        with self._lock:
            return None if self.record is None else (self.record, str(self.version))

    def create(self, record: LeaseRecord) -> bool:
        with self._lock:
            if self.record is not None:
                return False
            self.record, self.version = record, self.version + 1
            return True

    def replace(self, record: LeaseRecord, version: str) -> bool:
        with self._lock:
            if str(self.version) != version:
                return False
            self.record, self.version = record, self.version + 1
            return True


def test_first_instance_leads_and_the_other_stands_by() -> None:
    lease = VersionedLease()
    a, b = LeaderElector(lease, "a", 10), LeaderElector(lease, "b", 10)
    assert a.tick(0.0)
    assert not b.tick(1.0)
    assert a.tick(5.0)
    assert not b.tick(14.0)


def test_standby_takes_over_a_lease_duration_after_it_last_saw_a_renewal() -> None:
    lease = VersionedLease()
    a, b = LeaderElector(lease, "a", 10), LeaderElector(lease, "b", 10)
    a.tick(0.0)
    assert not b.tick(1.0)
    a.tick(2.0)  # the last renewal; b sees it at 3.0
    assert not b.tick(3.0)
    assert not b.tick(12.5)
    assert b.tick(13.5)
    assert lease.record is not None and lease.record.transitions == 1
    assert not a.tick(14.0)


def test_a_standby_just_started_waits_a_lease_duration_before_taking_an_abandoned_lease() -> None:
    lease = VersionedLease()
    LeaderElector(lease, "crashed", 10).tick(0.0)
    late = LeaderElector(lease, "late", 10)
    assert not late.tick(500.0)  # renewTime is long past, but only by the crashed holder's clock
    assert late.tick(510.5)


def test_a_standby_whose_clock_runs_ahead_never_takes_a_lease_that_is_being_renewed() -> None:
    lease = VersionedLease()
    leader, standby = LeaderElector(lease, "leader", 10), LeaderElector(lease, "standby", 10)
    skew = 3600.0  # the standby's node is an hour ahead
    for second in range(0, 60, 2):
        assert leader.tick(float(second))
        assert not standby.tick(second + 1 + skew)


def test_released_lease_is_taken_at_once() -> None:
    lease = VersionedLease()
    a, b = LeaderElector(lease, "a", 10), LeaderElector(lease, "b", 10)
    a.tick(0.0)
    a.release(1.0)
    assert not a.is_leader
    assert b.tick(1.5)


def test_racing_for_an_expired_lease_only_one_wins() -> None:
    lease = VersionedLease()
    LeaderElector(lease, "old", 10).tick(0.0)
    racers = [LeaderElector(lease, f"r{i}", 10) for i in range(8)]
    stale = lease.read()
    assert stale is not None
    wins = [r for r in racers if lease.replace(LeaseRecord(r.identity, 20.0, 10), stale[1])]
    assert len(wins) == 1


@given(st.lists(st.tuples(st.sampled_from("abc"), st.floats(0, 5)), max_size=40))
def test_never_two_leaders_within_one_lease_duration(steps: list[tuple[str, float]]) -> None:
    lease = VersionedLease()
    electors = {name: LeaderElector(lease, name, 10) for name in "abc"}
    last_win: dict[str, float] = {}
    now = 0.0
    for name, gap in steps:
        now += gap
        if electors[name].tick(now):
            last_win[name] = now
        believing = [n for n, e in electors.items() if e.is_leader and now - last_win[n] <= 10]
        assert len(believing) <= 1


def test_a_leader_past_its_renew_deadline_may_not_act_before_it_even_ticks_again() -> None:
    """The fence is read by the cycle and the writers, not by the (possibly paused) Lease thread."""
    from core.config import Settings
    from core.scheduler import Scheduler
    from shim.kube.leader.loops import Leadership
    from tests.shim.rest_world import Recorder

    clock = [100.0]
    scheduler = Scheduler(Recorder(), settings=Settings(lease_duration=15.0, lease_renew_deadline=10.0))
    leadership = Leadership(
        LeaderElector(VersionedLease(), "a", 15.0),
        scheduler,
        on_elected=lambda: None,
        on_deposed=lambda: None,
        clock=lambda: clock[0],
        monotonic=lambda: clock[0],
    )
    assert not leadership.may_act()  # not elected yet
    leadership._tick(10.0)
    assert leadership.leading and leadership.may_act()
    clock[0] += 10.0
    assert leadership.may_act()  # exactly at the deadline
    clock[0] += 0.5
    assert leadership.leading and not leadership.may_act()  # still "leading", but fenced
    leadership._tick(10.0)
    assert leadership.may_act()  # a successful renewal opens the fence again
