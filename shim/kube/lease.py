"""Leader election over one coordination.k8s.io/v1 Lease: acquire, renew, take over when expired, release.

Every write carries the resourceVersion it read, so two instances racing for an expired Lease
cannot both win: the loser's write conflicts (409) and it stays a standby this round.
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

    def expired(self, now: float) -> bool:
        return self.holder is None or now > self.renew_time + self.duration


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
            elif record.expired(now):
                taken = replace(mine, transitions=record.transitions + 1)
                won = self._store.replace(taken, version)
            else:
                won = False
        if won != self.is_leader:
            log.info("%s %s leadership", self.identity, "acquired" if won else "lost")
        self.is_leader = won
        return won

    def release(self, now: float) -> None:
        """On shutdown: hand the Lease back at once so a standby need not wait for it to expire."""
        current = self._store.read()
        if current is not None and current[0].holder == self.identity:
            record, version = current
            self._store.replace(replace(record, holder=None, renew_time=now), version)
        self.is_leader = False
