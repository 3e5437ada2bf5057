"""Latency histograms count each observation in the first bucket whose bound it does not pass
(Prometheus `le`: a value equal to a bound counts there), and in none past the last bound
(the exposition's +Inf bucket is the count)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.metrics import Histogram


def test_a_value_on_a_bound_counts_in_that_bucket_and_past_the_last_in_none() -> None:
    histogram = Histogram(buckets=(1.0, 2.0, 4.0))
    for value in (0.5, 1.0, 1.5, 2.0, 3.9, 4.0, 4.1, 100.0):
        histogram.observe(value)
    assert histogram.bucket_counts == [2, 2, 2]
    assert histogram.cumulative() == [(1.0, 2), (2.0, 4), (4.0, 6)]
    assert histogram.count == 8


@given(st.lists(st.floats(min_value=0, max_value=20, allow_nan=False), max_size=50))
def test_cumulative_buckets_count_every_value_at_or_below_each_bound(values: list[float]) -> None:
    histogram = Histogram(buckets=(0.5, 1.0, 2.5, 10.0))
    for value in values:
        histogram.observe(value)
    assert histogram.cumulative() == [(bound, sum(1 for v in values if v <= bound)) for bound in histogram.buckets]
