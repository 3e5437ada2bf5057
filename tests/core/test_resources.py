"""Resource vectors and the Kubernetes quantity grammar."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.resources import (
    QuantityError,
    Resource,
    format_amounts,
    format_resource,
    parse_quantity,
    quantity_milli,
    quantity_value,
    resource_from_config,
    resource_from_kubernetes,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", 1),
        ("1k", 1000),
        ("1M", 10**6),
        ("1G", 10**9),
        ("1T", 10**12),
        ("1P", 10**15),
        ("1E", 10**18),
        ("1Ki", 1024),
        ("1Mi", 2**20),
        ("1Gi", 2**30),
        ("1Ti", 2**40),
        ("1Pi", 2**50),
        ("1Ei", 2**60),
        ("1.5Gi", 3 * 2**29),
        ("1e3", 1000),
        ("1E3", 1000),
        ("12e-1", 2),  # 1.2 rounds up
        (".5", 1),
        ("5.", 5),
        ("+7", 7),
        ("100m", 1),  # 0.1 rounds up to a whole unit
        (" 2 ", 2),
    ],
)
def test_quantity_values_are_exact_and_round_up(text: str, expected: int) -> None:
    assert quantity_value(text) == expected


@pytest.mark.parametrize(
    ("text", "milli"),
    [("250m", 250), ("1", 1000), ("0.5", 500), ("1.0001", 1001), ("2k", 2_000_000), ("1e-3", 1)],
)
def test_cpu_becomes_millicores(text: str, milli: int) -> None:
    assert quantity_milli(text) == milli


def test_exact_fraction_keeps_decimals() -> None:
    assert parse_quantity("0.1") == Fraction(1, 10)
    assert parse_quantity("-1.5Ki") == Fraction(-1536)


@pytest.mark.parametrize("bad", ["", "abc", "1KB", "1K", "1.2.3", "--1", "1 Gi", "e3", "1e", "Gi", "1ii"])
def test_malformed_quantities_are_refused_with_the_value_named(bad: str) -> None:
    with pytest.raises(QuantityError, match="invalid quantity"):
        parse_quantity(bad)


def test_quantity_too_large_is_refused() -> None:
    with pytest.raises(QuantityError, match="too large"):
        quantity_value("100Ei")


def test_numbers_from_yaml_are_accepted_but_not_booleans() -> None:
    assert quantity_value(3) == 3
    assert quantity_milli(0.25) == 250
    with pytest.raises(QuantityError):
        parse_quantity(True)


def test_kubernetes_resources_map_cpu_to_vcore() -> None:
    res = resource_from_kubernetes({"cpu": "250m", "memory": "1Gi", "nvidia.com/gpu": "2", "pods": "110"})
    assert res == {"vcore": 250, "memory": 2**30, "nvidia.com/gpu": 2, "pods": 110}


def test_kubernetes_resource_error_names_where_and_which() -> None:
    with pytest.raises(QuantityError, match=r"pod ns/p: resource 'memory'"):
        resource_from_kubernetes({"memory": "lots"}, where="pod ns/p")


def test_config_vcore_is_in_cores_and_cpu_is_read_as_vcore_with_a_warning() -> None:
    res, warnings = resource_from_config({"vcore": "10", "memory": "1G"})
    assert res == {"vcore": 10000, "memory": 10**9} and not warnings
    res, warnings = resource_from_config({"cpu": "500m"}, where="root.a")
    assert res == {"vcore": 500}
    assert warnings == ["root.a: resource 'cpu' is read as 'vcore'"]


def test_config_refuses_negative_and_doubled_resources() -> None:
    with pytest.raises(QuantityError, match="negative"):
        resource_from_config({"memory": "-1"})
    with pytest.raises(QuantityError, match="given twice"):
        resource_from_config({"cpu": "1", "vcore": "1"})


def test_fits_in_treats_unnamed_available_as_zero() -> None:
    request = Resource({"vcore": 1000, "nvidia.com/gpu": 1})
    assert not request.fits_in({"vcore": 2000})
    assert request.fits_in({"vcore": 1000, "nvidia.com/gpu": 1})
    assert request.insufficient({"vcore": 500}) == ["nvidia.com/gpu", "vcore"]


def test_within_max_limits_only_named_resources() -> None:
    used = Resource({"vcore": 5000, "memory": 10**12})
    assert used.within_max({"vcore": 5000})
    assert not used.within_max({"vcore": 4999})
    assert used.exceeding({"vcore": 1, "memory": 10**13}) == ["vcore"]


def test_resource_is_immutable_and_hashable() -> None:
    res = Resource({"vcore": 1})
    with pytest.raises(AttributeError):
        res.x = 1  # type: ignore[attr-defined]
    assert hash(res) == hash(Resource({"vcore": 1}))
    assert format_resource({"vcore": 2500, "memory": 2**30}) == "memory 1Gi, vcore 2500m"


names = st.sampled_from(["vcore", "memory", "pods", "nvidia.com/gpu"])
vectors = st.dictionaries(names, st.integers(min_value=0, max_value=10**12)).map(Resource)


@given(vectors, vectors)
def test_adding_then_subtracting_returns_the_original(a: Resource, b: Resource) -> None:
    back = (a + b) - b
    assert all(back.get_value(k) == a.get_value(k) for k in set(a) | set(b))


@given(vectors, vectors)
def test_a_part_always_fits_in_the_sum(a: Resource, b: Resource) -> None:
    assert a.fits_in(a + b)
    assert a.within_max(a + b)


@given(st.integers(min_value=0, max_value=10**15), st.sampled_from(["", "k", "M", "Ki", "Mi", "m"]))
def test_formatted_integers_parse_back(value: int, suffix: str) -> None:
    scale = {"": 1, "k": 1000, "M": 10**6, "Ki": 1024, "Mi": 2**20, "m": Fraction(1, 1000)}[suffix]
    assert parse_quantity(f"{value}{suffix}") == value * scale


def test_amounts_a_reason_compares_share_one_unit_a_person_reads() -> None:
    # The example: "45000000000 used + 9000000000 asked > 48828125Ki".
    figures = format_amounts("memory", 45_000_000_000, 9_000_000_000, 48828125 * 1024)
    assert figures == ("41.91Gi", "8.38Gi", "46.57Gi")
    assert format_amounts("memory", 0, 5 * 2**30, 4 * 2**30) == ("0", "5Gi", "4Gi")
    assert format_amounts("memory", 512 * 2**20, 100 * 2**30) == ("0.5Gi", "100Gi")
    assert format_amounts("memory", 100_000, 2**20) == ("0.1Mi", "1Mi")
    assert format_amounts("memory", 100_000, 2**30) == ("0.1Mi", "1024Mi")  # 0.0001Gi would read as 0
    assert format_amounts("memory", 1, 2**30) == ("1", "1073741824")  # a byte stays exact
    assert format_amounts("ephemeral-storage", 3 * 2**30) == ("3Gi",)
    assert format_amounts("vcore", 8000, 2000, 9000) == ("8000m", "2000m", "9000m")
    assert format_amounts("nvidia.com/gpu", 3, 1, 2) == ("3", "1", "2")
