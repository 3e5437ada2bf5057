"""Resource vectors and Kubernetes quantities.

A `Resource` is an immutable map from a resource name to a non-negative or negative integer:
`vcore` in millicores, `memory` in bytes, `pods` as a count and every other resource by its
Kubernetes name as an integer. All arithmetic is exact integer arithmetic.

Two readings of "fits" matter to a scheduler and are kept apart on purpose:

- `fits_in(available)`: every resource the request names must be available; a resource the
  available side does not name counts as zero (node fit).
- `within_max(maximum)`: only the resources the maximum names are limited; a resource the
  maximum does not name is unlimited (queue max, user limits, quotas).

Quantities follow the Kubernetes grammar: a signed decimal number (`1`, `1.5`, `.5`, `5.`),
then a binary suffix (`Ki` .. `Ei`), a decimal suffix (`m`, `k`, `M`, `G`, `T`, `P`, `E`) or a
decimal exponent (`e3`, `E-2`). Values are parsed exactly as fractions and rounded up to
whole units, as Kubernetes' `Value()` and `MilliValue()` do.
"""

from __future__ import annotations

import math
import re
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from fractions import Fraction
from functools import lru_cache
from typing import Final, TypeVar, overload

VCORE: Final = "vcore"
MEMORY: Final = "memory"
PODS: Final = "pods"

_BINARY: Final = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL: Final = {
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY_RE: Final = re.compile(
    r"^(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<binary>Ki|Mi|Gi|Ti|Pi|Ei)|(?P<exp>[eE][+-]?[0-9]+)|(?P<decimal>[mkMGTPE]?))$"
)
# Larger than any real cluster, small enough to stay a plain int64 in JSON consumers.
MAX_VALUE: Final = 2**63 - 1


class QuantityError(ValueError):
    """A quantity that does not follow the Kubernetes grammar, or does not fit in an int64."""


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a Kubernetes quantity exactly. Integers and floats from YAML are accepted too."""
    if isinstance(value, bool):
        raise QuantityError(f"invalid quantity {value!r}: a boolean is not a quantity")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"invalid quantity {value!r}: not a finite number")
        return Fraction(repr(value))
    if not isinstance(value, str):
        raise QuantityError(f"invalid quantity {value!r}: expected a string or a number")
    text = value.strip()
    match = _QUANTITY_RE.match(text)
    if match is None:
        raise QuantityError(
            f"invalid quantity {value!r}: expected a number with an optional suffix "
            "(m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent such as e3)"
        )
    number = Fraction(match["number"])
    if match["binary"]:
        number *= _BINARY[match["binary"]]
    elif match["exp"]:
        exponent = int(match["exp"][1:])
        if abs(exponent) > 30:
            raise QuantityError(f"invalid quantity {value!r}: exponent out of range")
        number *= Fraction(10) ** exponent
    else:
        number *= _DECIMAL[match["decimal"] or ""]
    return -number if match["sign"] == "-" else number


def _ceil_checked(value: Fraction, original: object) -> int:
    result = math.ceil(value)
    if abs(result) > MAX_VALUE:
        raise QuantityError(f"invalid quantity {original!r}: too large (above 2^63-1)")
    return result


# Pod specs repeat a few quantities ("250m", "1Gi") thousands of times, and exact parsing with
# fractions costs microseconds: a string's value is kept (a malformed one raises every time).
@lru_cache(maxsize=4096)
def _text_value(text: str, milli: bool) -> int:
    return _ceil_checked(parse_quantity(text) * 1000 if milli else parse_quantity(text), text)


def quantity_value(value: str | int | float) -> int:
    """The whole-unit value of a quantity, rounded up (`Value()`): `1Gi` -> 1073741824."""
    if type(value) is str:
        return _text_value(value, False)
    return _ceil_checked(parse_quantity(value), value)


def quantity_milli(value: str | int | float) -> int:
    """The value in thousandths, rounded up (`MilliValue()`): `250m` -> 250, `2` -> 2000."""
    if type(value) is str:
        return _text_value(value, True)
    return _ceil_checked(parse_quantity(value) * 1000, value)


_T = TypeVar("_T")


class Resource(Mapping[str, int]):
    """An immutable vector of named integer quantities. Zero entries are kept as given."""

    __slots__ = ("_hash", "_values")
    _values: dict[str, int]
    _hash: int  # set on the first hash: requests are dictionary keys on every decision

    def __init__(self, values: Mapping[str, int] | Iterable[tuple[str, int]] = ()) -> None:
        object.__setattr__(self, "_values", dict(values))

    @classmethod
    def _wrap(cls, values: dict[str, int]) -> Resource:
        res = cls.__new__(cls)
        object.__setattr__(res, "_values", values)
        return res

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Resource is immutable")

    def __getitem__(self, key: str) -> int:
        return self._values[key]

    @property
    def amounts(self) -> Mapping[str, int]:
        """The values as a mapping (the map itself, read-only: nobody may change it), for the
        loops that run on every decision and read one resource at a time."""
        return self._values

    def get_value(self, key: str) -> int:
        """The value of a resource, zero when it is not named."""
        return self._values.get(key, 0)

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    # Mapping's generic readers go through __getitem__ one key at a time; the scheduler reads
    # resources on every decision, so these hand out the dict's own (read-only) views.
    def __contains__(self, key: object) -> bool:
        return key in self._values

    @overload
    def get(self, key: str, /) -> int | None: ...
    @overload
    def get(self, key: str, default: int | _T, /) -> int | _T: ...
    def get(self, key: str, default: object = None, /) -> object:
        return self._values.get(key, default)

    def keys(self) -> KeysView[str]:
        return self._values.keys()

    def items(self) -> ItemsView[str, int]:
        return self._values.items()

    def values(self) -> ValuesView[int]:
        return self._values.values()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Resource):
            return self._values == other._values
        if isinstance(other, Mapping):
            return self._values == dict(other)
        return NotImplemented

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            value = hash(frozenset(self._values.items()))
            object.__setattr__(self, "_hash", value)
            return value

    def __repr__(self) -> str:
        return f"Resource({self._values!r})"

    def to_dict(self) -> dict[str, int]:
        return dict(self._values)

    def __add__(self, other: Mapping[str, int]) -> Resource:
        values = dict(self._values)
        for key, val in other.items():
            values[key] = values.get(key, 0) + val
        return Resource._wrap(values)

    def __sub__(self, other: Mapping[str, int]) -> Resource:
        values = dict(self._values)
        for key, val in other.items():
            values[key] = values.get(key, 0) - val
        return Resource._wrap(values)

    def __neg__(self) -> Resource:
        return Resource._wrap({k: -v for k, v in self._values.items()})

    def scaled(self, factor: int) -> Resource:
        return Resource._wrap({k: v * factor for k, v in self._values.items()})

    def is_zero(self) -> bool:
        """True when every named value is zero (an empty resource is zero)."""
        return all(v == 0 for v in self._values.values())

    def has_negative(self) -> bool:
        return any(v < 0 for v in self._values.values())

    def fits_in(self, available: Mapping[str, int]) -> bool:
        """Every positive value here is available; unnamed resources of `available` are zero."""
        for key, val in self._values.items():
            if val > 0 and val > available.get(key, 0):
                return False
        return True

    def within_max(self, maximum: Mapping[str, int]) -> bool:
        """No value here exceeds the maximum; resources the maximum does not name are unlimited."""
        for key, limit in maximum.items():
            if self._values.get(key, 0) > limit:
                return False
        return True

    def exceeding(self, maximum: Mapping[str, int]) -> list[str]:
        """The names of the resources above `maximum` (only those `maximum` names), sorted."""
        return sorted(k for k, limit in maximum.items() if self._values.get(k, 0) > limit)

    def insufficient(self, available: Mapping[str, int]) -> list[str]:
        """The names of the positive resources here that `available` cannot cover, sorted."""
        return sorted(k for k, v in self._values.items() if v > 0 and v > available.get(k, 0))

    def masked(self, keys: Iterable[str]) -> Resource:
        """Only the resources named in `keys` (missing ones are left out, not set to zero)."""
        return Resource._wrap({k: self._values[k] for k in keys if k in self._values})

    def component_min(self, other: Mapping[str, int]) -> Resource:
        """Per resource present on both sides, the smaller value."""
        return Resource._wrap({k: min(v, other[k]) for k, v in self._values.items() if k in other})

    def component_max(self, other: Mapping[str, int]) -> Resource:
        """Per resource named on either side, the larger value (an unnamed one is zero)."""
        values = dict(self._values)
        for key, val in other.items():
            if val > values.get(key, 0) or key not in values:
                values[key] = max(val, values.get(key, 0))
        return Resource._wrap(values)

    def clamp_non_negative(self) -> Resource:
        return Resource._wrap({k: max(v, 0) for k, v in self._values.items()})

    def without_zeros(self) -> Resource:
        return Resource._wrap({k: v for k, v in self._values.items() if v != 0})


ZERO: Final = Resource()


def format_amount(key: str, value: int) -> str:
    """One amount in its resource's usual unit: vcore `2500m`, memory `1Gi` or `41.91Gi`, others plain."""
    return format_amounts(key, value)[0]


def _is_bytes(key: str) -> bool:
    return key in (MEMORY, "ephemeral-storage") or key.startswith("hugepages-")


def format_amounts(key: str, *values: int) -> tuple[str, ...]:
    """Amounts of one resource that a reason compares, all in one unit a person reads: vcore in
    millicores; bytes in the largest binary unit (Ti, Gi, Mi, Ki) at which the largest amount is
    at least one and every other is at least 0.01, with up to two decimals (`41.91Gi used +
    8.38Gi asked > 46.57Gi`); others plain."""
    if key == VCORE:
        return tuple(f"{value}m" for value in values)
    if not _is_bytes(key):
        return tuple(str(value) for value in values)
    sizes = [abs(value) for value in values if value]
    for suffix, factor in _BYTE_UNITS:
        if sizes and max(sizes) >= factor and min(sizes) * 100 >= factor:
            return tuple(_in_unit(value, factor, suffix) for value in values)
    return tuple(str(value) for value in values)


_BYTE_UNITS: Final = (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def _in_unit(value: int, factor: int, suffix: str) -> str:
    if value == 0:
        return "0"
    if value % factor == 0:
        return f"{value // factor}{suffix}"
    return f"{value / factor:.2f}".rstrip("0").rstrip(".") + suffix


def format_resource(res: Mapping[str, int]) -> str:
    """A short human form: `memory 1Gi, pods 3, vcore 2500m`."""
    parts = [f"{key} {format_amount(key, res[key])}" for key in sorted(res)]
    return ", ".join(parts) if parts else "nothing"


def format_bytes(value: int) -> str:
    for suffix, factor in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if value and value % factor == 0:
            return f"{value // factor}{suffix}"
    return str(value)


def resource_from_kubernetes(values: Mapping[str, object], where: str = "") -> Resource:
    """Kubernetes requests/allocatable -> core resource: `cpu` to `vcore` millicores, others whole.

    Raises QuantityError naming `where` and the key on a malformed or negative value (the API
    server refuses negative requests and capacities; one slipping through would lower usage).
    """
    out: dict[str, int] = {}
    prefix = f"{where}: " if where else ""
    for key, raw in values.items():
        try:
            amount = quantity_milli(raw) if key == "cpu" else quantity_value(raw)  # type: ignore[arg-type]
        except QuantityError as err:
            raise QuantityError(f"{prefix}resource {key!r}: {err}") from None
        if amount < 0:
            raise QuantityError(f"{prefix}resource {key!r}: negative quantity {raw!r}")
        target = VCORE if key == "cpu" else str(key)
        out[target] = out.get(target, 0) + amount
    return Resource._wrap(out)


def resource_from_config(values: Mapping[str, object], where: str = "") -> tuple[Resource, list[str]]:
    """A config resource map -> core resource, with warnings.

    `vcore` is read as cores and held in millicores (`10` -> 10000, `500m` -> 500); `cpu` is
    taken as `vcore` with a warning; every other key is an integer quantity (`memory: 1Gi`).
    Negative values are errors.
    """
    out: dict[str, int] = {}
    warnings: list[str] = []
    prefix = f"{where}: " if where else ""
    for key, raw in values.items():
        if not isinstance(key, str) or not key:
            raise QuantityError(f"{prefix}resource name {key!r} is not a non-empty string")
        try:
            if key in (VCORE, "cpu"):
                amount = quantity_milli(raw)  # type: ignore[arg-type]
                if key == "cpu":
                    warnings.append(f"{prefix}resource 'cpu' is read as 'vcore'")
                target = VCORE
            else:
                amount = quantity_value(raw)  # type: ignore[arg-type]
                target = key
        except QuantityError as err:
            raise QuantityError(f"{prefix}resource {key!r}: {err}") from None
        if amount < 0:
            raise QuantityError(f"{prefix}resource {key!r}: negative quantity {raw!r}")
        if target in out:
            raise QuantityError(f"{prefix}resource {target!r} is given twice (as 'cpu' and 'vcore')")
        out[target] = amount
    return Resource._wrap(out), warnings


def add_into(target: dict[str, int], delta: Mapping[str, int], sign: int = 1) -> None:
    """`target += sign * delta` in place, dropping keys that reach zero (running usage sums)."""
    for key, val in delta.items():
        left = target.get(key, 0) + sign * val
        if left:
            target[key] = left
        else:
            target.pop(key, None)
