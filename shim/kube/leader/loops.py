"""The operator's threads: the scheduling cycle, the recycler, and the leadership loop that runs them.

The core is synchronous; these threads give it time. The cycle waits for work (an input wakes
it) or `scheduler.interval`, then places what it can. The recycler ticks every
`quota.recycle.interval` while `quota.recycle.enabled`. Both run only while this replica holds
the Lease: `Leadership` renews it every `leader.retryPeriod` and starts or stops them. A replica
that cannot renew for `leader.renewDeadline` steps down before its Lease can expire, so a
standby that takes over never overlaps with it.

Fencing. Stepping down happens on the leadership thread's next tick, which a paused process
(SIGSTOP, a long GC or swap stall, a frozen VM) reaches only after its other threads have
resumed too. So nothing waits for it: before every cycle and recycler tick, and before every
binding, eviction and status write (`HerderOperator.may_write`), the replica checks
`Leadership.may_act()`: it leads and its last successful renewal was *sent* less than
`leader.renewDeadline` ago on the monotonic clock. A standby takes over only after a whole
`leader.leaseDuration` (longer) without seeing the Lease change, so a fenced leader stops
writing before anyone else can start.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from core.scheduler import Scheduler
from shim.kube.leader.lease import LeaderElector

log = logging.getLogger("herder.operator")


class SchedulingLoops:
    """The cycle and recycler threads; `start()` and `stop()` may be called again and again."""

    def __init__(
        self,
        scheduler: Scheduler,
        on_cycle: Callable[[int], None] | None = None,
        may_act: Callable[[], bool] = lambda: True,
    ) -> None:
        self._scheduler = scheduler
        self._on_cycle = on_cycle
        self._may_act = may_act
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def running(self) -> bool:
        return any(thread.is_alive() for thread in self._threads)

    def start(self) -> None:
        if self.running:
            return
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._cycle, args=(self._stop,), name="herder-cycle", daemon=True),
            threading.Thread(target=self._recycle, args=(self._stop,), name="herder-recycler", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout)
        self._threads = []

    def _cycle(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self._scheduler.wait_for_work(self._scheduler.settings.scheduler_interval)
            if stop.is_set():
                return
            if not self._may_act():
                stop.wait(self._scheduler.settings.scheduler_interval)
                continue
            try:
                placed = self._scheduler.schedule()
            except Exception:
                log.exception("scheduling cycle failed; the next one starts from the same state")
                stop.wait(1.0)
                continue
            if placed and self._on_cycle is not None:
                self._on_cycle(placed)

    def _recycle(self, stop: threading.Event) -> None:
        while not stop.wait(self._scheduler.settings.recycle_interval):
            if not self._scheduler.settings.recycle_enabled or not self._may_act():
                continue
            try:
                asked = self._scheduler.recycle()
            except Exception:
                log.exception("recycler tick failed")
                continue
            if asked:
                log.info("recycler asked to evict %d pod(s) from quotas above their runtime", asked)


class Leadership:
    """Keeps (or waits for) the Lease in a thread; calls `on_elected` / `on_deposed` on changes.

    `housekeeping` runs on every tick, leader or not (retries, reconciliation, progress logs).
    """

    def __init__(
        self,
        elector: LeaderElector,
        scheduler: Scheduler,
        on_elected: Callable[[], None],
        on_deposed: Callable[[], None],
        housekeeping: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._elector = elector
        self._scheduler = scheduler
        self._on_elected = on_elected
        self._on_deposed = on_deposed
        self._housekeeping = housekeeping
        self._clock = clock
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="herder-leadership", daemon=True)
        self._leading = False
        self._last_renewal = 0.0
        self._monotonic = monotonic
        self._renewal_sent: float | None = None  # monotonic time the last successful renewal was sent

    @property
    def leading(self) -> bool:
        return self._leading

    def may_act(self) -> bool:
        """Whether this replica may write now: it leads, and renewed within the renew deadline."""
        sent = self._renewal_sent
        if not self._leading or sent is None:
            return False
        return self._monotonic() - sent <= self._scheduler.settings.lease_renew_deadline

    @property
    def identity(self) -> str:
        return self._elector.identity

    def start(self) -> None:
        self._thread.start()

    def stop(self, release: bool = True) -> None:
        """Stop ticking; step down, and hand the Lease back at once when `release`."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(30)
        self._step_down("shutting down")
        if release:
            try:
                self._elector.release(self._clock())
                log.info("%s released the Lease", self.identity)
            except Exception as error:
                log.warning("could not release the Lease (a standby takes over when it expires): %s", error)

    def _run(self) -> None:
        while not self._stop.is_set():
            settings = self._scheduler.settings
            self._tick(settings.lease_renew_deadline)
            try:
                self._housekeeping()
            except Exception:
                log.exception("housekeeping failed")
            self._stop.wait(settings.lease_retry_period)

    def _tick(self, renew_deadline: float) -> None:
        now = self._clock()
        sent = self._monotonic()  # before the request: the Lease may have been renewed any time after
        try:
            leads = self._elector.tick(now)
        except Exception as error:
            if self._leading and now - self._last_renewal > renew_deadline:
                self._step_down(f"could not renew the Lease for {now - self._last_renewal:.1f}s ({error})")
            else:
                log.warning("Lease check failed: %s", error)
            return
        if leads:
            self._last_renewal = now
            self._renewal_sent = sent
            if not self._leading:
                self._leading = True
                log.info("%s became the leader; scheduling starts", self.identity)
                self._on_elected()
        elif self._leading:
            self._step_down("another replica holds the Lease")

    def _step_down(self, why: str) -> None:
        if not self._leading:
            return
        self._leading = False
        self._renewal_sent = None
        log.warning("%s stops scheduling: %s", self.identity, why)
        self._on_deposed()
