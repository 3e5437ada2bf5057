"""Errors raised for bad scheduler configuration and bad settings, listing every problem found."""

from __future__ import annotations

from collections.abc import Iterable


class ConfigError(ValueError):
    """The queues configuration is invalid; `problems` names each one with its path, `warnings`
    holds what was noted on the way (they often explain a problem: a value read in new units)."""

    def __init__(self, problems: Iterable[str] | str, warnings: Iterable[str] = ()) -> None:
        self.problems: list[str] = [problems] if isinstance(problems, str) else list(problems)
        self.warnings: list[str] = list(warnings)
        super().__init__("\n".join(self.problems))


class SettingsError(ValueError):
    """One or more scheduler settings are unknown or have a bad value; each problem names the key."""

    def __init__(self, problems: Iterable[str] | str) -> None:
        self.problems: list[str] = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))
