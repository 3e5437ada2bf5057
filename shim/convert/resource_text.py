"""Resource lists written as annotation text: JSON, or the shorthand of Koordinator's design.

Seed 002 writes an ElasticQuota's resource annotations as `{cpu:4, memory: 8Gi}`: a brace
mapping of names to quantities, without quotes, with or without a space after the colon.
JSON (`{"cpu": "4", "memory": "8Gi"}`) is read first; text that is not JSON is read as the
shorthand, and anything else is refused with what was expected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from core.resources import QuantityError, Resource, resource_from_kubernetes
from shim.convert.objects import ConversionError

_NAME = re.compile(r"^[A-Za-z0-9][-A-Za-z0-9_./]*$")


class ResourceTextError(ValueError):
    """Annotation text that is neither a JSON object nor the `{name: quantity, ...}` shorthand."""


def resource_list_text(raw: object) -> dict[str, object]:
    """The name -> quantity mapping an annotation holds."""
    if not isinstance(raw, str):
        raise ResourceTextError(f"expected text, got {raw!r}")
    try:
        data = json.loads(raw)
    except ValueError:
        return _shorthand(raw)
    if not isinstance(data, dict):
        raise ResourceTextError(f"expected a map of quantities, got {raw!r}")
    return data


def _shorthand(raw: str) -> dict[str, object]:
    text = raw.strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise ResourceTextError(f"neither JSON nor the {{cpu: 4, memory: 8Gi}} shorthand: {raw!r}")
    out: dict[str, object] = {}
    body = text[1:-1].strip()
    for entry in body.split(",") if body else []:
        name, colon, value = entry.partition(":")
        name, value = name.strip().strip("'\""), value.strip().strip("'\"")
        if not colon or not _NAME.match(name) or not value:
            raise ResourceTextError(f"entry {entry.strip()!r} is not 'name: quantity' (in {raw!r})")
        if name in out:
            raise ResourceTextError(f"{name} is given twice (in {raw!r})")
        out[name] = value
    return out


def annotation_resource(annotations: Mapping[str, Any], key: str, where: str, shorthand: bool = False) -> Resource:
    """The resource list in annotation `key` (JSON, or also the shorthand); ConversionError naming
    `where`, the key and the value when it cannot be read."""
    raw = annotations[key]
    if shorthand:
        try:
            data: object = resource_list_text(raw)
        except ResourceTextError as err:
            raise ConversionError(f"{where} annotation {key}: {err}") from None
    else:
        try:
            data = json.loads(raw)
        except (TypeError, ValueError):
            raise ConversionError(f"{where} annotation {key}: not JSON: {raw!r}") from None
    if not isinstance(data, Mapping):
        raise ConversionError(f"{where} annotation {key}: expected a map of quantities, got {raw!r}")
    try:
        return resource_from_kubernetes(data, f"{where} annotation {key}")
    except QuantityError as err:
        raise ConversionError(f"{err} (value {raw!r})") from None
