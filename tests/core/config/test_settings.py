"""Settings from dotted keys: defaults, conversion, validation naming the key, round trip."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.config import Settings, SettingsError, parse_duration, parse_settings


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("120s", 120.0), ("2m", 120.0), ("1h", 3600.0), ("500ms", 0.5), ("1m30s", 90.0), (3, 3.0), ("1.5", 1.5)],
)
def test_durations_are_read_as_seconds(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "abc", "5x", "1m 30s", "s", True])
def test_bad_durations_are_refused(text: object) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


def test_defaults_when_nothing_is_set() -> None:
    s = parse_settings({})
    assert s == Settings()
    assert s.scheduler_name == "herder" and s.recycle_delay == 120.0 and s.system_namespaces == ("kube-system",)


def test_values_are_converted_from_strings() -> None:
    s = parse_settings(
        {
            "quota.recycle.enabled": "FALSE",
            "quota.recycle.delay": "2m",
            "quota.systemNamespaces": "kube-system, herder",
            "quota.defaultMax": '{"cpu": "2", "memory": "1Gi"}',
            "bind.workers": "4",
            "gang.maxMembers": "500",
        }
    )
    assert s.recycle_enabled is False
    assert s.recycle_delay == 120.0
    assert s.system_namespaces == ("kube-system", "herder")
    assert s.default_max == {"vcore": 2000, "memory": 1024**3}
    assert s.bind_workers == 4
    assert s.gang_max_members == 500 and Settings().gang_max_members == 10_000


def test_base_settings_are_kept_for_keys_not_given() -> None:
    base = parse_settings({"bind.retries": 9})
    assert parse_settings({"bind.workers": 2}, base).bind_retries == 9


def test_every_bad_key_is_named() -> None:
    with pytest.raises(SettingsError) as info:
        parse_settings(
            {
                "no.such": 1,
                "scheduler.interval": "0s",
                "bind.workers": -1,
                "scheduler.name": "Not_DNS",
                "admission.trustedUsers": "(",
                "quota.defaultMax": "{bad",
                "gang.maxMembers": 0,
            }
        )
    keys = [p.split(":")[0] for p in info.value.problems]
    assert keys == [
        "no.such",
        "scheduler.interval",
        "bind.workers",
        "scheduler.name",
        "admission.trustedUsers",
        "quota.defaultMax",
        "gang.maxMembers",
    ]


def test_zero_recycle_delay_is_allowed() -> None:
    assert parse_settings({"quota.recycle.delay": 0}).recycle_delay == 0.0


def test_to_dict_round_trips() -> None:
    s = parse_settings({"quota.defaultMax": {"memory": "1Gi"}, "leader.retryPeriod": "500ms"})
    again = parse_settings(s.to_dict())
    assert again.lease_retry_period == 0.5
    assert again.to_dict() == s.to_dict()


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=59))
def test_minutes_and_seconds_add_up(minutes: int, seconds: int) -> None:
    assert parse_duration(f"{minutes}m{seconds}s") == minutes * 60 + seconds
