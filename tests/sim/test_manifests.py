"""The simulator's timestamps: a pod's creation and start times as the conversion reads them back."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shim.convert.pods import _timestamp
from shim.sim.manifests import rfc3339


def _by_datetime(seconds: float) -> str:
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    micro = f".{moment.microsecond:06d}" if moment.microsecond else ""
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + micro + "Z"


@pytest.mark.parametrize(
    "seconds, text",
    [
        (0.0, "1970-01-01T00:00:00Z"),
        (30, "1970-01-01T00:00:30Z"),
        (12.5, "1970-01-01T00:00:12.500000Z"),
        (86_399.9999996, "1970-01-02T00:00:00Z"),  # rounds up into the next day
        (610_319.9, "1970-01-08T01:31:59.900000Z"),
        (0.5e-6, "1970-01-01T00:00:00Z"),  # half a microsecond: to even, as datetime rounds
        (1.5e-6, "1970-01-01T00:00:00.000002Z"),
        (-1.5, "1969-12-31T23:59:58.500000Z"),
    ],
)
def test_a_moment_is_the_timestamp_kubernetes_writes(seconds: float, text: str) -> None:
    assert rfc3339(seconds) == text == _by_datetime(seconds)


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=0, max_value=10 * 365 * 24 * 3600, allow_nan=False))
def test_any_moment_of_a_scenario_reads_as_datetime_writes_it_and_back(seconds: float) -> None:
    text = rfc3339(seconds)
    assert text == _by_datetime(seconds)
    assert _timestamp(text, "here") == pytest.approx(seconds, abs=1e-6)
