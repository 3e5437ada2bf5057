"""What the whole-configuration checks collect: problems, warnings, and how to word an amount.

Each check module (validate.py, validate_limits.py, validate_rules.py) adds to one `Findings`.
A check whose input could not be read (`unreadable`, from parsing) is skipped, so a mistake is
reported once, where it is, and not again as a wrong comparison further on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from core.config.quantities import amount_text
from core.config.suggest import Guesser


@dataclass(slots=True)
class Findings:
    unreadable: frozenset[str] = frozenset()
    written: Mapping[tuple[str, int], str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    guesser: Guesser = field(default_factory=Guesser)

    def known(self, path: str) -> bool:
        """Whether the value at `path` was read (a check on it means something)."""
        return path not in self.unreadable

    def amount(self, key: str, value: int) -> str:
        """An amount as the configuration wrote it (see quantities.py)."""
        return amount_text(key, value, self.written)
