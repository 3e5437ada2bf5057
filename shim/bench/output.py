"""What the benches print besides their tables: progress on stderr, figures as labelled lines.

A bench runs from seconds to minutes, so each step says on stderr what it starts (stdout keeps
only the figures, for `--json` and pipes), and the time the step before it took. Figures that
are not a table print one per line with a label and unit a person can read.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Any, TextIO

# Labels for the figures of `--emulator`, `--emulator --restart`, `--soak` and `--watch-drops` (unlisted keys
# are shown with their underscores turned into spaces).
LABELS: dict[str, str] = {
    "nodes": "nodes",
    "pods": "pods",
    "pods_bound_per_second": "pods bound per second",
    "bind_latency_p50_ms": "creation to binding, p50 (ms)",
    "bind_latency_p99_ms": "creation to binding, p99 (ms)",
    "emulator_ceiling_pods_per_second": "emulator's ceiling (pods/s, no Herder)",
    "emulator_ceiling_latency_p50_ms": "ceiling's creation to binding, p50 (ms)",
    "emulator_ceiling_latency_p99_ms": "ceiling's creation to binding, p99 (ms)",
    "fraction_of_ceiling": "share of the ceiling",
    "all_bound_seconds": "first creation to last binding (s)",
    "herder_cpu_seconds": "Herder's CPU (s)",
    "herder_cpu_ms_per_pod": "Herder's CPU per pod (ms)",
    "emulator_cpu_ms_per_pod": "emulator's CPU per pod serving Herder (ms)",
    "ceiling_emulator_cpu_ms_per_pod": "emulator's CPU per pod serving the ceiling (ms)",
    "ceiling_client_cpu_ms_per_pod": "ceiling's client CPU per pod (ms)",
    "rounds": "rounds (ceiling, then Herder; medians above)",
    "fraction_of_ceiling_each_round": "share of the ceiling, each round",
    "herder_cpu_ms_per_pod_each_round": "Herder's CPU per pod, each round (ms)",
    "load_average": "load average (1 min, start -> end)",
    "bind_request_p50_ms": "binding request round trip, p50 (ms)",
    "bind_request_p99_ms": "binding request round trip, p99 (ms)",
    "restart_recovery_seconds": "restart: ready again after (s)",
    "recovered_vcore": "restart: vcore recovered (millicores)",
    "bindings_after_restart": "restart: pods bound again (must be 0)",
    "memory_mib": "memory (MiB, ru_maxrss growth)",
    "ready_seconds": "herder run to ready (s)",
    "sync_seconds": "initial sync (s)",
    "recovered_pods": "bound pods recovered",
    "herder_cpu_seconds_to_ready": "Herder's CPU to ready (s)",
    "delays_seconds": "delayed requests wait (s)",
    "cut_every_seconds": "connections cut every (s)",
    "cuts": "moments every connection was cut",
    "connections_cut": "connections cut",
    "nodes_added": "nodes added",
    "node_used_after_p50_seconds": "node added to used, p50 (s)",
    "node_used_after_max_seconds": "node added to used, max (s; target 5)",
    "pods_deleted": "pods deleted meanwhile",
    "double_binds": "pods bound twice (must be 0)",
    "lost_pods": "pods lost (must be 0)",
    "held": "every check held",
    "wall_seconds": "wall time (s)",
    "cpu_seconds": "CPU (s)",
    "outcome": "outcome",
}


class Progress:
    """`herder bench: <step> ...` on stderr; each new step ends the one before with its time."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream
        self._began: float | None = None

    def step(self, what: str) -> None:
        stream = self._stream or sys.stderr
        now = time.monotonic()
        if self._began is not None:
            stream.write(f" ({now - self._began:.1f} s)\n")
        stream.write(f"herder bench: {what} ...")
        stream.flush()
        self._began = now

    def done(self) -> None:
        if self._began is not None:
            stream = self._stream or sys.stderr
            stream.write(f" ({time.monotonic() - self._began:.1f} s)\n")
            stream.flush()
            self._began = None


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".") if not value.is_integer() else f"{value:,.0f}"
    return str(value)


def figure_lines(figures: Mapping[str, Any], indent: str = "  ") -> list[str]:
    """One `label  value` line per figure, labels aligned."""
    labels = {key: LABELS.get(key, key.replace("_", " ")) for key in figures}
    width = max((len(label) for label in labels.values()), default=0)
    return [f"{indent}{labels[key]:<{width}}  {_value(value)}" for key, value in figures.items()]


def counted(reasons: Mapping[str, int], indent: str = "  ") -> list[str]:
    """`188  no node fits`: counts of pods by reason, most first."""
    return [f"{indent}{count:>8,}  {reason}" for reason, count in sorted(reasons.items(), key=lambda item: -item[1])]
