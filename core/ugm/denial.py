"""Why a user or group increase was denied, in words a person can act on.

A `Denial` names who (user or group), where (the queue path) and which limit; its text is the
pending reason of the pod that could not be placed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from core.resources import format_amounts
from core.ugm.limits import WILDCARD, TrackingKind


@dataclass(frozen=True, slots=True)
class Denial:
    kind: TrackingKind
    name: str
    queue_path: str
    limit: str  # "maxapplications" | "maxresources"
    detail: str

    @property
    def who(self) -> str:
        if self.kind is TrackingKind.GROUP and self.name == WILDCARD:
            return "group * (everyone matched by the wildcard group limit)"
        return f"{self.kind.value} {self.name}"

    def __str__(self) -> str:
        if self.limit == "maxapplications":
            return f"{self.who} would exceed maxapplications {self.detail} at {self.queue_path}"
        return f"{self.who} would exceed maxresources at {self.queue_path}: {self.detail}"


def applications_denial(kind: TrackingKind, name: str, queue_path: str, maximum: int) -> Denial:
    return Denial(kind, name, queue_path, "maxapplications", str(maximum))


def resources_denial(
    kind: TrackingKind,
    name: str,
    queue_path: str,
    used: Mapping[str, int],
    asked: Mapping[str, int],
    maximum: Mapping[str, int],
    exceeded: list[str],
) -> Denial:
    parts = []
    for key in exceeded:
        held, more, ceiling = format_amounts(key, used.get(key, 0), asked.get(key, 0), maximum[key])
        parts.append(f"{key} {held} used + {more} asked > {ceiling}")
    return Denial(kind, name, queue_path, "maxresources", ", ".join(parts))
