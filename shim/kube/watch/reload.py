"""The scheduler ConfigMap: `queues.yaml` plus settings keys, read at start-up and hot-reloaded.

A change is validated whole (queues and settings together) before anything is applied; an
invalid one is refused with a Kubernetes Event on the ConfigMap naming every problem, and the
running configuration stays. A change applied with warnings (values read differently from how
they look, see core/config/notes.py) gets a `ConfigWarning` Event listing them. `--set` options
from the command line override the ConfigMap's settings; a `--config` file stands in when the
ConfigMap has no `queues.yaml`.

`scheduler.name` decides which pods are Herder's; changing it while running would turn pods
into someone else's, so that change is refused (restart to apply it). Leader election and
binder settings are read once at start-up; a change to them is applied to the settings and
logged as taking effect on the next start.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.config import ConfigError, Settings, check_config_data
from core.config.schema import SchedulerConfig
from core.scheduler import Scheduler
from shim.kube.write.recorder import EventRecorder

log = logging.getLogger("herder.config")

REFUSED = "ConfigRefused"
WARNED = "ConfigWarning"
RESTART_ONLY = (
    "lease_name",
    "lease_duration",
    "lease_renew_deadline",
    "lease_retry_period",
    "bind_workers",
    "bind_retries",
)


@dataclass(frozen=True, slots=True)
class ConfigSource:
    """Where the configuration comes from and what the command line adds."""

    namespace: str
    name: str = "herder-config"
    fallback: SchedulerConfig | None = None  # --config FILE, used when the ConfigMap has no queues.yaml
    overrides: Mapping[str, str] = field(default_factory=dict)  # --set key=value, wins over the ConfigMap


def parse_configmap(data: Mapping[str, Any] | None, source: ConfigSource) -> tuple[SchedulerConfig, Settings]:
    """The configuration and settings a ConfigMap's data means (`check_config_data`, the check
    `herder validate` and `POST /ws/v1/validate-conf` run); raises ConfigError with every
    problem found and the warnings."""
    data = data or {}
    if not isinstance(data, Mapping):
        raise ConfigError([f"data: expected a mapping of keys to text, got {type(data).__name__}"])
    report = check_config_data(data, source.overrides, fallback=source.fallback)
    if report.config is None or report.settings is None:
        raise ConfigError(report.problems, report.warnings)
    return report.config, report.settings


class ConfigReloader:
    """Applies ConfigMap contents to a running scheduler; `check()` reads and applies one change."""

    def __init__(
        self,
        scheduler: Scheduler,
        source: ConfigSource,
        read: Callable[[], Mapping[str, Any] | None],
        recorder: EventRecorder | None,
        initial: Mapping[str, Any] | None = None,
    ) -> None:
        self._scheduler = scheduler
        self._source = source
        self._read = read
        self._recorder = recorder
        self._last: Mapping[str, Any] | None = dict(initial) if initial is not None else None
        self._lock = threading.Lock()
        self.applied = 0
        self.refused = 0

    def check(self) -> bool | None:
        """Read the ConfigMap; apply it if it changed. True: applied, False: refused, None: no change."""
        obj = self._read()
        if obj is None:
            return None
        raw = obj.get("data") or {}
        data: Any = dict(raw) if isinstance(raw, Mapping) else raw  # anything else is refused by _apply
        with self._lock:
            if data == self._last:
                return None
            self._last = data
            return self._apply(obj, data)

    def tell_warnings(self, obj: Mapping[str, Any] | None, config: SchedulerConfig) -> None:
        """Log the configuration's warnings and say them in one Event on the ConfigMap."""
        if not config.warnings:
            return
        message = f"ConfigMap {self._source.namespace}/{self._source.name} applied with warnings: " + "; ".join(
            config.warnings
        )
        log.warning("%s", message)
        if self._recorder is not None and obj is not None:
            self._recorder.record(obj, "ConfigMap", "v1", WARNED, message)

    def _apply(self, obj: Mapping[str, Any], data: Any) -> bool:
        try:
            config, settings = parse_configmap(data, self._source)
            running = self._scheduler.settings
            if settings.scheduler_name != running.scheduler_name:
                raise ConfigError(
                    [
                        f"scheduler.name: cannot change from {running.scheduler_name!r} to "
                        f"{settings.scheduler_name!r} while running; restart Herder to apply it"
                    ]
                )
            if config.checksum != self._scheduler.config.checksum:
                self._scheduler.update_config(config)
        except ConfigError as error:
            self.refused += 1
            message = (
                f"ConfigMap {self._source.namespace}/{self._source.name} refused, the running configuration "
                f"stays: {'; '.join(error.problems)}"
            )
            if error.warnings:
                message += f" (warnings: {'; '.join(error.warnings)})"
            log.warning("%s", message)
            if self._recorder is not None:
                self._recorder.record(obj, "ConfigMap", "v1", REFUSED, message)
            return False
        if settings != running:
            later = [name for name in RESTART_ONLY if getattr(settings, name) != getattr(running, name)]
            self._scheduler.update_settings(settings)
            if later:
                log.info("settings %s take effect when Herder restarts", ", ".join(later))
        self.applied += 1
        if self._recorder is not None:
            self._recorder.forget(obj, "ConfigMap")
        self.tell_warnings(obj, config)
        log.info(
            "configuration reloaded from ConfigMap %s/%s (checksum %s)",
            self._source.namespace,
            self._source.name,
            config.checksum,
        )
        return True
