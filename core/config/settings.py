"""Scheduler settings (the ConfigMap's dotted keys, e.g. `quota.recycle.delay`) as one frozen value."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from core.config.errors import SettingsError
from core.config.suggest import Guesser
from core.resources import QuantityError, Resource, resource_from_kubernetes

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True, slots=True)
class Settings:
    scheduler_name: str = "herder"
    scheduler_interval: float = 0.1
    recycle_enabled: bool = True
    recycle_delay: float = 120.0
    recycle_interval: float = 1.0
    min_scaling: bool = True
    check_parent_quota: bool = True
    system_namespaces: tuple[str, ...] = ("kube-system",)
    default_max: Resource | None = None
    group_objects: bool = True  # the leader creates the system and default ElasticQuota objects
    group_namespace: str = ""  # where; "" is Herder's own namespace
    event_ring_capacity: int = 10000
    event_max_streams: int = 100
    event_max_streams_per_host: int = 15
    event_rest_response_size: int = 10000
    lease_name: str = "herder-scheduler"
    lease_duration: float = 15.0
    lease_renew_deadline: float = 10.0
    lease_retry_period: float = 2.0
    bind_workers: int = 64
    bind_retries: int = 5
    status_interval: float = 1.0
    admission_trusted_users: tuple[str, ...] = (
        "system:serviceaccount:kube-system:.*",
        "system:kube-controller-manager",
        "system:serviceaccount:herder:.*",
    )
    admission_trust_controllers: bool = True
    admission_namespace_label: str = "herder.io/scheduler"
    admission_template_paths: tuple[str, ...] = ()  # `Kind=dotted.path` of custom kinds' pod templates
    placeholder_image: str = "registry.k8s.io/pause:3.10"
    # pods held back by a queue, a limit or a quota say SchedulingSkipped to cluster autoscalers
    # (False: every waiting pod says Unschedulable, as before; docs/autoscaling.md)
    scheduling_skipped: bool = True
    provisioning_requests: bool = False  # gangs that lack only nodes get a ProvisioningRequest
    reservation_enabled: bool = True  # a large pod that waits for room reserves a node
    reservation_delay: float = 2.0  # how long it waits first (YuniKorn's reservation delay)
    reservation_backfill: bool = True  # pods that provably end in time may use a reserved node
    gang_max_members: int = 10_000  # members of one gang (all its task groups) before it is rejected
    gang_fail_pods: bool = True  # a Hard gang that times out marks its waiting pods Failed (as YuniKorn)

    def to_dict(self) -> dict[str, object]:
        """The settings under their dotted keys; durations in seconds, resources as plain maps."""
        out: dict[str, object] = {}
        for key, (name, _) in _KEYS.items():
            value = getattr(self, name)
            if isinstance(value, Resource):
                value = dict(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[key] = value
        return out


def parse_duration(value: object) -> float:
    """Seconds from a number or a Go-style duration string (`500ms`, `2m`, `1m30s`); finite."""
    seconds = _duration(value)
    if not math.isfinite(seconds):
        raise ValueError(f"not a finite duration: {str(value)[:40]!r}")
    return seconds


def _duration(value: object) -> float:
    if isinstance(value, bool):
        raise ValueError(f"not a duration: {value!r}")
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an integer past any float
            return math.inf
    if not isinstance(value, str):
        raise ValueError(f"not a duration: {value!r}")
    text = value.strip()
    try:
        return float(text)
    except ValueError:
        pass
    pos = 0
    total = 0.0
    for match in _DURATION_PART.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        pos = match.end()
    if pos != len(text) or not text:
        raise ValueError(f"not a duration: {value!r} (use e.g. 120s, 2m, 1h, 500ms, 1m30s)")
    return total


def _boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError(f"expected true or false, got {value!r}")


def _string(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"expected a non-empty string, got {value!r}")
    return value


def _name(value: object) -> str:
    text = _string(value)
    if len(text) > 253 or not _DNS_SUBDOMAIN.match(text):
        raise ValueError(f"{text!r} is not a valid DNS-1123 subdomain")
    return text


def _optional_name(value: object) -> str:
    """A DNS-1123 name, or "" for the default."""
    return "" if value == "" else _name(value)


def _positive_int(value: object) -> int:
    if isinstance(value, bool):
        raise ValueError(f"expected a positive whole number, got {value!r}")
    try:
        number = int(value) if isinstance(value, (int, str)) else None
    except ValueError:
        number = None
    if number is None or number <= 0:
        raise ValueError(f"expected a positive whole number, got {value!r}")
    return number


def _positive_duration(value: object) -> float:
    seconds = parse_duration(value)
    if seconds <= 0:
        raise ValueError(f"must be greater than zero, got {value!r}")
    return seconds


def _delay(value: object) -> float:
    seconds = parse_duration(value)
    if seconds < 0:
        raise ValueError(f"must not be negative, got {value!r}")
    return seconds


def _list(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise ValueError(f"expected a comma-separated string or a list of strings, got {value!r}")


def _regexps(value: object) -> tuple[str, ...]:
    items = _list(value)
    for item in items:
        try:
            re.compile(item)
        except re.error as err:
            raise ValueError(f"{item!r} is not a valid regexp: {err}") from None
    return items


def _template_paths(value: object) -> tuple[str, ...]:
    entries = _list(value)
    for entry in entries:
        kind, sep, path = entry.partition("=")
        if not sep or not kind.strip() or not path.strip() or any(not part for part in path.strip().split(".")):
            raise ValueError(f"{entry!r}: expected Kind=dotted.path, e.g. RayCluster=spec.workerGroupSpecs.*.template")
    return entries


def _resource(value: object) -> Resource | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as err:
            raise ValueError(f"not a JSON object: {err}") from None
    if not isinstance(value, Mapping):
        raise ValueError(f"expected a mapping of quantities, got {value!r}")
    try:
        return resource_from_kubernetes(value)
    except (QuantityError, TypeError) as err:
        raise ValueError(str(err)) from None


_KEYS: dict[str, tuple[str, Callable[[object], Any]]] = {
    "scheduler.name": ("scheduler_name", _name),
    "scheduler.interval": ("scheduler_interval", _positive_duration),
    "quota.recycle.enabled": ("recycle_enabled", _boolean),
    "quota.recycle.delay": ("recycle_delay", _delay),
    "quota.recycle.interval": ("recycle_interval", _positive_duration),
    "quota.minScaling": ("min_scaling", _boolean),
    "quota.checkParentQuota": ("check_parent_quota", _boolean),
    "quota.systemNamespaces": ("system_namespaces", _list),
    "quota.defaultMax": ("default_max", _resource),
    "quota.groupObjects": ("group_objects", _boolean),
    "quota.groupNamespace": ("group_namespace", _optional_name),
    "event.ringBufferCapacity": ("event_ring_capacity", _positive_int),
    "event.maxStreams": ("event_max_streams", _positive_int),
    "event.maxStreamsPerHost": ("event_max_streams_per_host", _positive_int),
    "event.RESTResponseSize": ("event_rest_response_size", _positive_int),
    "leader.leaseName": ("lease_name", _name),
    "leader.leaseDuration": ("lease_duration", _positive_duration),
    "leader.renewDeadline": ("lease_renew_deadline", _positive_duration),
    "leader.retryPeriod": ("lease_retry_period", _positive_duration),
    "bind.workers": ("bind_workers", _positive_int),
    "bind.retries": ("bind_retries", _positive_int),
    "status.interval": ("status_interval", _positive_duration),
    "admission.trustedUsers": ("admission_trusted_users", _regexps),
    "admission.trustControllers": ("admission_trust_controllers", _boolean),
    "admission.namespaceLabel": ("admission_namespace_label", _string),
    "admission.templatePaths": ("admission_template_paths", _template_paths),
    "service.placeholderImage": ("placeholder_image", _string),
    "autoscaling.schedulingSkipped": ("scheduling_skipped", _boolean),
    "autoscaling.provisioningRequests": ("provisioning_requests", _boolean),
    "reservation.enabled": ("reservation_enabled", _boolean),
    "reservation.delay": ("reservation_delay", _delay),
    "reservation.backfill": ("reservation_backfill", _boolean),
    "gang.maxMembers": ("gang_max_members", _positive_int),
    "gang.failPodsOnTimeout": ("gang_fail_pods", _boolean),
}
assert {name for name, _ in _KEYS.values()} == {f.name for f in fields(Settings)}

# YuniKorn's own ConfigMap keys (its service configuration, k8shim `pkg/conf`) that Herder has no
# use for: a YuniKorn ConfigMap may keep them, with a warning, instead of being refused.
YUNIKORN_SETTINGS: dict[str, str] = {
    "service.clusterId": "",
    "service.policyGroup": "",
    "service.schedulingInterval": "scheduler.interval",
    "service.volumeBindTimeout": "",
    "service.eventChannelCapacity": "",
    "service.dispatchTimeout": "",
    "service.disableGangScheduling": "",
    "service.enableConfigHotRefresh": "",
    "service.placeholderRunAsUser": "",
    "service.placeholderRunAsGroup": "",
    "service.placeholderFsGroup": "",
    "service.instanceTypeNodeLabelKey": "",
    "event.trackingEnabled": "",
    "event.requestCapacity": "",
    "health.checkInterval": "",
    "log.level": "herder run --log-level",
    "kubernetes.qps": "",
    "kubernetes.burst": "",
    "admissionController.webHook.amServiceName": "",
    "admissionController.webHook.schedulerServiceAddress": "",
    "admissionController.filtering.processNamespaces": "admission.namespaceLabel",
    "admissionController.filtering.bypassNamespaces": "admission.namespaceLabel",
    "admissionController.filtering.labelNamespaces": "admission.namespaceLabel",
    "admissionController.filtering.noLabelNamespaces": "admission.namespaceLabel",
    "admissionController.filtering.generateUniqueAppId": "",
    "admissionController.filtering.defaultQueue": "",
    "admissionController.accessControl.bypassAuth": "",
    "admissionController.accessControl.trustControllers": "admission.trustControllers",
    "admissionController.accessControl.systemUsers": "admission.trustedUsers",
    "admissionController.accessControl.externalUsers": "",
    "admissionController.accessControl.externalGroups": "",
}


def _yunikorn_setting(key: str) -> bool:
    return key in YUNIKORN_SETTINGS or (key.startswith("log.") and key.endswith(".level"))


def settings_notes(values: Mapping[str, object]) -> list[str]:
    """A warning for each of YuniKorn's own settings among `values`: kept, not read."""
    notes = []
    for key in values:
        if key not in _KEYS and _yunikorn_setting(key):
            instead = YUNIKORN_SETTINGS.get(key, "")
            hint = f" (Herder's nearest is {instead})" if instead else ""
            notes.append(f"{key}: a YuniKorn setting Herder does not read; ignored{hint}")
    return notes


def parse_settings(values: Mapping[str, object], base: Settings | None = None) -> Settings:
    """`base` (or the defaults) with dotted keys of `values` applied; SettingsError lists every bad key.
    YuniKorn's own settings are skipped (`settings_notes` warns about them)."""
    changes: dict[str, Any] = {}
    problems: list[str] = []
    guesser = Guesser()
    for key, raw in values.items():
        entry = _KEYS.get(key)
        if entry is None and _yunikorn_setting(key):
            continue  # said by settings_notes
        if entry is None:
            problems.append(f"{key}: unknown setting{guesser.did_you_mean(str(key), _KEYS)}")
            continue
        name, convert = entry
        try:
            changes[name] = convert(raw)
        except ValueError as err:
            problems.append(f"{key}: {err}")
    if problems:
        raise SettingsError(problems)
    return replace(base or Settings(), **changes)
