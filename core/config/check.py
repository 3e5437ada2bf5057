"""The one configuration check: every problem and every warning a configuration has, in one pass.

`herder validate`, the scheduler ConfigMap's reload (shim/kube/watch/reload.py) and `POST
/ws/v1/validate-conf` (through `python -m core.config`) all call `check_config` (or, for a
ConfigMap's data, `check_config_data`), so the three can never disagree. A check finds what can
be found without the rest: a YAML syntax error stops it (nothing after it can be read), but a
repeated key, an unknown key or a bad value does not, so one run lists the structural
problems (parse.py), the whole-configuration ones (validate.py and its rule and limit checks)
and the settings' problems together, then every warning (values read differently from how they
look, unknown resource names, notes on the tree), whether the configuration is valid or not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from core.config.errors import SettingsError
from core.config.notes import config_notes
from core.config.parse import read_config
from core.config.schema import SchedulerConfig
from core.config.settings import Settings, parse_settings, settings_notes
from core.config.validate import check_whole

QUEUES_KEY = "queues.yaml"  # the ConfigMap key holding the queues; every other key is a setting
LISTED = 200  # problems, and warnings, a report lists; past it, how many more there are


def _listed(items: list[str], what: str) -> tuple[str, ...]:
    if len(items) <= LISTED:
        return tuple(items)
    return (*items[:LISTED], f"... and {len(items) - LISTED} more {what}")


@dataclass(frozen=True, slots=True)
class ConfigReport:
    """A checked configuration: `config` and `settings` are None when there is any problem."""

    config: SchedulerConfig | None
    settings: Settings | None
    problems: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def valid(self) -> bool:
        return not self.problems


def check_config(source: str | Mapping[str, Any] | None) -> ConfigReport:
    """Check queues.yaml: text, an already-loaded mapping, or None for the default configuration.
    The valid configuration carries the warnings; `settings` is None (see `check_config_data`)."""
    read = read_config(source)
    problems = list(read.problems)
    warnings = list(read.warnings)
    if read.config is not None:
        found = check_whole(read.config, read.unreadable)
        problems += found.problems
        warnings += found.warnings
        warnings += config_notes(read.config)
    listed = _listed(warnings, "warnings")
    if problems or read.config is None:
        return ConfigReport(None, None, _listed(problems, "problems"), listed)
    return ConfigReport(replace(read.config, warnings=listed), None, (), listed)


def check_config_data(
    data: Mapping[str, Any],
    overrides: Mapping[str, object] | None = None,
    base: Settings | None = None,
    fallback: SchedulerConfig | None = None,
) -> ConfigReport:
    """Check a scheduler ConfigMap's `data`: `queues.yaml` (`fallback` stands in when there is
    none; without one, the default configuration) and the settings beside it, `overrides` (the
    command line's `--set`) winning over the ConfigMap's. Problems and warnings of the queues
    are prefixed with `queues.yaml: ` (the configuration's own `warnings` are not); a setting's
    problem names its key."""
    queues = data.get(QUEUES_KEY)
    if queues is None and fallback is not None:
        report = ConfigReport(fallback, None, (), fallback.warnings)
    else:
        report = check_config(queues)
    problems = [f"{QUEUES_KEY}: {problem}" for problem in report.problems]
    values = {str(key): value for key, value in data.items() if key != QUEUES_KEY}
    values.update(overrides or {})
    settings: Settings | None = None
    try:
        settings = parse_settings(values, base)
    except SettingsError as err:
        problems += err.problems
    notes = settings_notes(values)
    warnings = (*(f"{QUEUES_KEY}: {warning}" for warning in report.warnings), *notes)
    if problems or report.config is None:
        return ConfigReport(None, None, tuple(problems), warnings)
    config = replace(report.config, warnings=(*report.config.warnings, *notes)) if notes else report.config
    return ConfigReport(config, settings, (), warnings)
