"""Reading one YAML document into typed values while collecting every problem on the way.

`DocumentReader` is what `parse.py` reads queues.yaml with: each method takes the raw value and
its path, returns a typed value, and on a bad value records the problem, returns a neutral
default and remembers the path as unreadable. Reading therefore never stops at the first
mistake, and the whole-configuration checks that run afterwards (`validate.py`) can skip a
check whose input was unreadable instead of reporting a problem that is only an echo of it.

It also keeps what messages need later: the text each resource amount was written in
(`written`, see quantities.py) and warnings (unknown resource names, with a guess).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from core.config.quantities import is_requestable, unknown_resource_warning
from core.config.suggest import Guesser
from core.config.units import old_unit_warnings
from core.resources import VCORE, QuantityError, Resource, parse_quantity, resource_from_config


class DocumentReader:
    """Collects problems, warnings, unreadable paths and written amounts while reading one document."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.warnings: list[str] = []
        self.unreadable: set[str] = set()
        self.written: dict[tuple[str, int], str] = {}
        self._odd_resources: list[tuple[str, str]] = []  # (name, where) of names no pod requests
        self.guesser = Guesser()

    def bad(self, path: str, message: str) -> None:
        self.problems.append(f"{path}: {message}")
        self.unreadable.add(path)

    def mapping(self, value: object, path: str, keys: frozenset[str]) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.bad(path, f"expected a mapping, got {type(value).__name__}")
            return {}
        for key in value:
            if key not in keys:
                hint = self.guesser.did_you_mean(str(key), keys) or f" (known keys: {', '.join(sorted(keys))})"
                self.problems.append(f"{path}: unknown key {key!r}{hint}")
        return value

    def seq(self, value: object, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.bad(path, f"expected a list, got {type(value).__name__}")
            return []
        return value

    def string(self, value: object, path: str, default: str = "") -> str:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            self.bad(path, f"expected a string, got {type(value).__name__}")
            return default
        return str(value)

    def boolean(self, value: object, path: str) -> bool:
        if value is None:
            return False
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        self.bad(path, f"expected true or false, got {value!r}")
        return False

    def count(self, value: object, path: str) -> int:
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, int):
            self.bad(path, f"expected a whole number, got {value!r}")
            return 0
        if value < 0:
            self.bad(path, f"must not be negative, got {value}")
            return 0
        return value

    def names(self, value: object, path: str) -> tuple[str, ...]:
        if value is None:
            return ()
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        out: list[str] = []
        for i, item in enumerate(self.seq(value, path)):
            name = self.string(item, f"{path}[{i}]")
            if f"{path}[{i}]" in self.unreadable:
                self.unreadable.add(path)
            out.append(name)
        return tuple(out)

    def strings(self, value: object, path: str) -> dict[str, str]:
        out: dict[str, str] = {}
        if value is None:
            return out
        if not isinstance(value, Mapping):
            self.bad(path, f"expected a mapping, got {type(value).__name__}")
            return out
        for key, item in value.items():
            out[str(key)] = self.string(item, f"{path}.{key}")
        return out

    def resource(self, value: object, path: str) -> Resource | None:
        """A resource map; each bad amount is its own problem, and a map with one is unreadable."""
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.bad(path, f"expected a mapping, got {type(value).__name__}")
            return None
        try:
            res, warnings = resource_from_config(value, path)
            for key, raw in value.items():
                _whole(key, raw)
        except (QuantityError, TypeError, ValueError):
            self._each_problem(value, path)  # one problem per bad amount, not just the first
            self.unreadable.add(path)
            self.warnings.extend(old_unit_warnings(value, path))
            return None
        self.warnings.extend(warnings)
        for key, raw in value.items():
            name = "vcore" if key == "cpu" else key
            self.written.setdefault((name, res[name]), str(raw).strip())
            if not is_requestable(key):
                self._odd_resources.append((key, path))
        self.warnings.extend(old_unit_warnings(value, path))
        return res

    def _each_problem(self, value: Mapping[Any, object], path: str) -> None:
        seen: set[str] = set()
        for key, raw in value.items():
            try:
                one, _ = resource_from_config({key: raw}, path)
                _whole(key, raw)
            except (QuantityError, TypeError, ValueError) as err:
                text = str(err)
                self.problems.append(text if text.startswith(path) else f"{path}: {text}")
                continue
            [name] = one
            if name in seen:
                self.problems.append(f"{path}: resource {name!r} is given twice (as 'cpu' and 'vcore')")
            seen.add(name)

    def resource_name_warnings(self) -> list[str]:
        """A warning for each resource name no pod can request, guessing among the file's own names."""
        seen = {name for (name, _amount) in self.written if "/" in name}
        out: list[str] = []
        for name, where in self._odd_resources:
            warning = unknown_resource_warning(name, where, seen, self.guesser)
            if warning is not None:
                out.append(warning)
        return out


def _whole(key: object, raw: object) -> None:
    """Refuse an amount that is not a whole number of its unit (`memory: 500m`, half a pod):
    YuniKorn refuses it too, and rounding it up would hide the mistake."""
    if isinstance(raw, int) or not isinstance(raw, (str, float)):
        return  # whole already (or not a quantity: resource_from_config says so)
    milli = key in (VCORE, "cpu")
    if not _is_whole(raw, milli):
        if milli:
            raise QuantityError(f"resource {key!r}: {raw!r} is finer than a millicore (1m)")
        raise QuantityError(f"resource {key!r}: {raw!r} is not a whole number (only vcore takes 'm')")


@lru_cache(maxsize=4096)
def _is_whole(raw: str | float, milli: bool) -> bool:
    exact = parse_quantity(raw)
    return (exact * 1000 if milli else exact).denominator == 1
