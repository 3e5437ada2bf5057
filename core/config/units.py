"""Plain numbers that only make sense in YuniKorn's old units.

YuniKorn before 1.0 read a queue's `memory` in MB and `vcore` in millicores; its documentation
still shows such values (seed 004's static queues: `memory: 100000`, `vcore: 10000`). Herder,
like YuniKorn today, reads Kubernetes quantities: `memory: 100000` is 100 kB and `vcore: 10000`
is ten thousand cores. The values are kept as written (a plain number is a valid quantity) and
each one that is only plausible in the old units gets a warning saying how it is read now and
how to write what the old reading meant.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from core.resources import MEMORY, VCORE

MEBIBYTE = 2**20
OLD_VCORE_FROM = 1000  # cores; the old unit's 1000 was one core
_PLAIN = re.compile(r"^[0-9]+$")


def _plain_number(raw: object) -> int | None:
    """The value when it is a whole number without a unit suffix, else None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and _PLAIN.match(raw.strip()):
        return int(raw.strip())
    return None


def old_unit_warnings(values: Mapping[object, object], where: str) -> list[str]:
    """A warning for each plain `memory` below 1 MiB and each plain `vcore` of 1,000 or more."""
    warnings: list[str] = []
    prefix = f"{where}: " if where else ""
    for key, raw in values.items():
        number = _plain_number(raw)
        if number is None or number <= 0:
            continue
        if key == MEMORY and number < MEBIBYTE:
            warnings.append(
                f"{prefix}memory {number} is read as {number} bytes; YuniKorn before 1.0 read a plain memory "
                f"number as MB: write '{number}M' for {number} MB"
            )
        elif key in (VCORE, "cpu") and number >= OLD_VCORE_FROM:
            warnings.append(
                f"{prefix}{key} {number} is read as {number} cores; YuniKorn before 1.0 read a plain vcore "
                f"number as millicores: write '{number}m' for {number / 1000:g} cores"
            )
    return warnings
