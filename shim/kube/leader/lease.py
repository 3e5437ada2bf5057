"""Leader election over one coordination.k8s.io/v1 Lease: acquire, renew, take over when expired, release.

Every write carries the resourceVersion it read, so two instances racing for an expired Lease
cannot both win: the loser's write conflicts (409) and it stays a standby this round.

A standby never compares the holder's `renewTime` with its own clock: clocks of two nodes may
disagree by more than a lease duration, and a standby whose clock runs ahead would take the
Lease from a leader still renewing it. As client-go does, it notes on its own clock when it
first saw the Lease's current resourceVersion, and takes over only after a whole lease
duration without seeing it change. A standby that has just started therefore waits one lease
duration; a released Lease (no holder) is taken at once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Protocol

log = logging.getLogger("herder.lease")


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    holder: str | None
    renew_time: float
    duration: float
    transitions: int = 0


class LeaseStore(Protocol):
    def read(self) -> tuple[LeaseRecord, str] | None:
        """The Lease and its resourceVersion, or None when it does not exist."""

    def create(self, record: LeaseRecord) -> bool:
        """False when someone else created it first (409)."""

    def replace(self, record: LeaseRecord, version: str) -> bool:
        """False when the Lease changed since `version` was read (409)."""


class LeaderElector:
    def __init__(self, store: LeaseStore, identity: str, duration: float = 15.0) -> None:
        self._store = store
        self.identity = identity
        self._duration = duration
        self.is_leader = False
        self._observed: tuple[str, float] | None = None  # (resourceVersion, when this replica first saw it)

    def tick(self, now: float) -> bool:
        """Acquire or renew the Lease; returns whether this instance leads until the next tick."""
        current = self._store.read()
        mine = LeaseRecord(self.identity, now, self._duration)
        if current is None:
            won = self._store.create(mine)
        else:
            record, version = current
            if record.holder == self.identity:
                won = self._store.replace(replace(record, renew_time=now), version)
            elif self._expired(record, version, now):
                taken = replace(mine, transitions=record.transitions + 1)
                won = self._store.replace(taken, version)
            else:
                won = False
        if won != self.is_leader:
            log.info("%s %s leadership", self.identity, "acquired" if won else "lost")
        self.is_leader = won
        return won

    def _expired(self, record: LeaseRecord, version: str, now: float) -> bool:
        if record.holder is None:
            return True
        if self._observed is None or self._observed[0] != version:
            self._observed = (version, now)
        return now > self._observed[1] + record.duration

    def release(self, now: float) -> None:
        """On shutdown: hand the Lease back at once so a standby need not wait for it to expire."""
        current = self._store.read()
        if current is not None and current[0].holder == self.identity:
            record, version = current
            self._store.replace(replace(record, holder=None, renew_time=now), version)
        self.is_leader = False
