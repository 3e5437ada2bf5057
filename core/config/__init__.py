"""The scheduler configuration: YuniKorn queues.yaml parsing and validation, defaults, and settings."""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from core.config.defaults import default_config
from core.config.errors import ConfigError, SettingsError
from core.config.notes import config_notes
from core.config.parse import parse_config
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
    """Parse and validate; raises ConfigError with every problem found. The result's `warnings`
    hold what parsing noted and the notes on the whole configuration."""
    cfg = parse_config(source)
    problems = validate_config(cfg)
    if problems:
        raise ConfigError(problems)
    notes = config_notes(cfg)
    return replace(cfg, warnings=cfg.warnings + tuple(notes)) if notes else cfg


__all__ = [
    "ChildTemplate",
    "ConfigError",
    "FilterConfig",
    "Limit",
    "NodeSortPolicyConfig",
    "PartitionConfig",
    "PlacementRuleConfig",
    "QueueConfig",
    "SchedulerConfig",
    "Settings",
    "SettingsError",
    "config_document",
    "default_config",
    "load_config",
    "parse_config",
    "parse_duration",
    "parse_settings",
    "validate_config",
]
