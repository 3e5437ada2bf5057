"""Reading Kubernetes objects as the API returns them (plain dicts and lists), and the
ConversionError every conversion in this room raises, naming the object and the field."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any


class ConversionError(ValueError):
    """A Kubernetes object Herder cannot read; the message names the object and the field."""


# Objects read from JSON or YAML are plain dicts and lists: `type(x) is dict` answers at once,
# the abstract Mapping/Sequence checks (slow: an ABC lookup each) only for anything else.


def map_at(obj: Mapping[str, Any] | None, *path: str) -> Mapping[str, Any]:
    cur: Any = obj or {}
    for key in path:
        cur = cur.get(key) if type(cur) is dict or isinstance(cur, Mapping) else None
        if cur is None:
            return {}
    return cur if type(cur) is dict or isinstance(cur, Mapping) else {}


def list_at(obj: Mapping[str, Any], *path: str) -> list[Any]:
    if len(path) == 1 and type(obj) is dict:  # the usual call: one key of a plain dict
        value = obj.get(path[0])
    else:
        value = map_at(obj, *path[:-1]).get(path[-1])
    if type(value) is list:
        return list(value)
    if value is None:
        return []
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str) else []


def meta_of(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if type(obj) is dict:  # read for every field of every pod: plain dicts first
        meta = obj.get("metadata")
        if type(meta) is dict:
            return meta
    return map_at(obj, "metadata")


def _in_meta(obj: Mapping[str, Any] | None, key: str) -> Mapping[str, Any]:
    if type(obj) is dict:
        meta = obj.get("metadata")
        if type(meta) is dict:
            found = meta.get(key)
            if type(found) is dict:
                return found
    return map_at(obj, "metadata", key)


def labels_of(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return _in_meta(obj, "labels")


def annotations_of(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return _in_meta(obj, "annotations")


def parse_json(raw: Any, where: str) -> Any:
    """An annotation's JSON value; ConversionError naming `where` when it is not JSON."""
    try:
        return json.loads(raw)
    except (TypeError, ValueError) as err:
        raise ConversionError(f"{where}: not JSON ({err}): {str(raw)[:200]!r}") from None


def object_name(obj: Mapping[str, Any] | None) -> str:
    """`<namespace>/<name>` (or just the name for cluster-scoped objects)."""
    meta = meta_of(obj)
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    return f"{ns}/{name}" if ns else str(name)
