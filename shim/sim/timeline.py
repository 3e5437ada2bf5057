"""The timeline the charts draw: queue usage, quota used against runtime, pending and running pods,
and with node groups the nodes of each group (those booting included) and the scenario's own.

A sample is taken at every moment the simulation stops at, and kept only when something in it
changed, so each sample holds until the next one (draw it as steps). Resources are in core
units, as everywhere in the report: `vcore` in millicores, `memory` in bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.elastic.manager import QuotaStatus
from core.elastic.spec import DEFAULT_QUOTA, SYSTEM_QUOTA


class Timeline:
    def __init__(self) -> None:
        self.samples: list[dict[str, Any]] = []
        self._last: dict[str, Any] | None = None

    def sample(
        self,
        t: float,
        queues: dict[str, dict[str, int]],
        quotas: Mapping[str, QuotaStatus],
        *,
        pending: int,
        running: int,
        nodes: Mapping[str, int] | None = None,
    ) -> None:
        body: dict[str, Any] = {
            "queues": queues,
            "quotas": {
                name: {"used": status.used.to_dict(), "runtime": status.runtime.to_dict()}
                for name, status in quotas.items()
                if name not in (SYSTEM_QUOTA, DEFAULT_QUOTA) or not status.used.is_zero()
            },
            "pending": pending,
            "running": running,
        }
        if nodes is not None:
            body["nodes"] = dict(nodes)
        if body == self._last:
            return
        self._last = body
        self.samples.append({"time": int(t) if float(t).is_integer() else t, **body})
