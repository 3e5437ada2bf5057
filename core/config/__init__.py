"""The scheduler configuration: YuniKorn queues.yaml parsing and validation, defaults, and settings."""

from collections.abc import Mapping
from typing import Any

from core.config.check import QUEUES_KEY, ConfigReport, check_config, check_config_data
from core.config.defaults import default_config
from core.config.errors import ConfigError, SettingsError
from core.config.parse import parse_config, read_config
from core.config.schema import (
    ChildTemplate,
    FilterConfig,
    Limit,
    NodeSortPolicyConfig,
    PartitionConfig,
    PlacementRuleConfig,
    QueueConfig,
    SchedulerConfig,
    config_document,
)
from core.config.settings import Settings, parse_duration, parse_settings
from core.config.validate import validate_config


def load_config(source: str | Mapping[str, Any] | None) -> SchedulerConfig:
    """Parse and validate (`check_config`); raises ConfigError with every problem found, and the
    warnings. The result's `warnings` hold what parsing noted and the notes on the whole
    configuration."""
    report = check_config(source)
    if report.config is None:
        raise ConfigError(report.problems, report.warnings)
    return report.config


__all__ = [
    "QUEUES_KEY",
    "ChildTemplate",
    "ConfigError",
    "ConfigReport",
    "FilterConfig",
    "Limit",
    "NodeSortPolicyConfig",
    "PartitionConfig",
    "PlacementRuleConfig",
    "QueueConfig",
    "SchedulerConfig",
    "Settings",
    "SettingsError",
    "check_config",
    "check_config_data",
    "config_document",
    "default_config",
    "load_config",
    "parse_config",
    "parse_duration",
    "parse_settings",
    "read_config",
    "validate_config",
]
