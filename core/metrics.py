"""The scheduler's numbers: counters and latency histograms as plain values.

No exporter lives here: the REST module publishes these through prometheus-client and the
benchmark reads quantiles from them. Latencies keep both Prometheus-style cumulative buckets
and a bounded window of raw samples for exact recent quantiles.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass, field

# Seconds, from 10 µs to about 10 s, as Prometheus buckets.
DEFAULT_BUCKETS: tuple[float, ...] = tuple(1e-5 * 2**i for i in range(21))


class Histogram:
    """Cumulative buckets, a count, a sum and the newest `window` raw samples."""

    def __init__(self, buckets: tuple[float, ...] = DEFAULT_BUCKETS, window: int = 200_000) -> None:
        self.buckets = buckets
        self.bucket_counts = [0] * len(buckets)
        self.count = 0
        self.sum = 0.0
        self._samples: deque[float] = deque(maxlen=window)
        self._lock = threading.Lock()

    def observe(self, value: float) -> None:
        with self._lock:
            self.count += 1
            self.sum += value
            self._samples.append(value)
            index = bisect_left(self.buckets, value)  # the first bound >= value
            if index < len(self.bucket_counts):
                self.bucket_counts[index] += 1

    def cumulative(self) -> list[tuple[float, int]]:
        """(upper bound, observations <= bound) pairs, as Prometheus exposes them."""
        with self._lock:
            out, running = [], 0
            for bound, n in zip(self.buckets, self.bucket_counts, strict=True):
                running += n
                out.append((bound, running))
            return out

    def quantile(self, q: float) -> float:
        """The q-quantile (0..1) of the newest samples; 0.0 when there are none."""
        with self._lock:
            samples = sorted(self._samples)
        if not samples:
            return 0.0
        index = min(len(samples) - 1, max(0, round(q * (len(samples) - 1))))
        return samples[index]

    def reset(self) -> None:
        with self._lock:
            self.bucket_counts = [0] * len(self.buckets)
            self.count = 0
            self.sum = 0.0
            self._samples.clear()


@dataclass
class SchedulerMetrics:
    """Everything the scheduler counts. Plain attributes; read them under no lock (ints)."""

    allocations: int = 0  # asks placed
    attempts_failed: int = 0  # asks tried and left pending
    releases: int = 0  # Herder allocations that ended
    evictions: int = 0  # evictions asked by the recycler or preemption
    evictions_refused: int = 0
    # victims of preemption by (the victim's queue, the rule): "quota" for in-quota preemption,
    # "guarantee" for a queue under its guarantee taking room back
    preemptions: dict[tuple[str, str], int] = field(default_factory=dict)
    config_updates: int = 0
    config_refused: int = 0
    quota_refused: int = 0
    cycles: int = 0
    decision_latency: Histogram = field(default_factory=Histogram)  # one successful placement
    cycle_latency: Histogram = field(default_factory=Histogram)  # one schedule() call
    apps_submitted: int = 0
    apps_rejected: int = 0

    def preempted(self, queue: str, rule: str) -> None:
        key = (queue, rule)
        self.preemptions[key] = self.preemptions.get(key, 0) + 1

    def counters(self) -> dict[str, int]:
        return {
            name: value for name, value in vars(self).items() if isinstance(value, int) and not isinstance(value, bool)
        }
