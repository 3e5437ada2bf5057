"""A candidate change to a scenario, for `herder simulate SCENARIO --compare CANDIDATE`.

The candidate file is one of:

- a `queues.yaml` (a mapping with `partitions`): it replaces the scenario's `config`;
- the scheduler ConfigMap (`kind: ConfigMap`): its `queues.yaml` replaces `config`, its other
  keys are settings merged over the scenario's;
- a settings file (a mapping of dotted setting keys, as `settings:` takes them): merged over the
  scenario's settings;
- a scenario patch (a mapping of scenario keys): `settings` is merged key by key; `nodes`,
  `namespaces`, `quotas`, `priorityclasses` and `objects` are merged by name (an entry with the
  name of an existing one replaces it, others are added); every other key replaces the
  scenario's.

The patched document is read by the same scenario reader as the original, so a candidate that
makes the scenario invalid is refused with every problem, as the original would be.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shim.sim.scenario import TOP_KEYS, ScenarioError

MERGED_BY_NAME = ("nodes", "namespaces", "quotas", "priorityclasses", "objects")


def _entry_key(key: str, entry: object) -> tuple[str, ...] | None:
    if not isinstance(entry, Mapping):
        return None
    if key == "nodes":
        return (str(entry.get("name")),)
    meta = entry.get("metadata")
    if not isinstance(meta, Mapping):
        return None
    kind = str(entry.get("kind", "")) if key == "objects" else ""
    namespace = str(meta.get("namespace") or "") if key in ("quotas", "objects") else ""
    return (kind, namespace, str(meta.get("name")))


def _merged(key: str, old: object, new: object) -> object:
    if not isinstance(old, list) or not isinstance(new, list):
        return new
    out = list(old)
    positions = {_entry_key(key, entry): i for i, entry in enumerate(out)}
    for entry in new:
        found = positions.get(_entry_key(key, entry))
        if found is not None and _entry_key(key, entry) is not None:
            out[found] = entry
        else:
            out.append(entry)
    return out


def _settings(document: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    current = document.get("settings")
    merged = dict(current) if isinstance(current, Mapping) else {}
    merged.update({str(key): value for key, value in extra.items()})
    return merged


def candidate_kind(candidate: object) -> str:
    """`queues.yaml`, `ConfigMap`, `settings` or `scenario patch`; ScenarioError for anything else."""
    if not isinstance(candidate, Mapping) or not candidate:
        expected = "a queues.yaml, a ConfigMap, settings or a scenario patch (a mapping)"
        raise ScenarioError([f"candidate: expected {expected}"])
    if candidate.get("kind") == "ConfigMap":
        return "ConfigMap"
    if "partitions" in candidate:
        return "queues.yaml"
    keys = [str(key) for key in candidate]
    if all(key in TOP_KEYS for key in keys):
        return "scenario patch"
    if all("." in key for key in keys):
        return "settings"
    unknown = next(key for key in keys if key not in TOP_KEYS)
    raise ScenarioError(
        [
            f"candidate: {unknown!r} is neither a scenario key ({', '.join(TOP_KEYS)}) nor a dotted setting;"
            " give a queues.yaml (with partitions), the scheduler ConfigMap, settings or a scenario patch"
        ]
    )


def apply_candidate(document: Mapping[str, Any], candidate: object) -> dict[str, Any]:
    """The scenario document with the candidate applied (the original is left as it is)."""
    kind = candidate_kind(candidate)
    assert isinstance(candidate, Mapping)
    out = dict(document)
    if kind == "queues.yaml":
        out["config"] = dict(candidate)
    elif kind == "ConfigMap":
        data = candidate.get("data")
        if not isinstance(data, Mapping):
            raise ScenarioError(["candidate: the ConfigMap has no data"])
        if "queues.yaml" in data:
            out["config"] = data["queues.yaml"]
        settings = {key: value for key, value in data.items() if key != "queues.yaml"}
        if settings:
            out["settings"] = _settings(document, settings)
    elif kind == "settings":
        out["settings"] = _settings(document, candidate)
    else:
        for key, value in candidate.items():
            if key == "settings" and isinstance(value, Mapping):
                out["settings"] = _settings(document, value)
            elif key in MERGED_BY_NAME:
                out[key] = _merged(key, document.get(key), value)
            else:
                out[key] = value
    return out
