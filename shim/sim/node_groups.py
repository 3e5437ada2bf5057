"""The scenario's `nodeGroups`: node groups a simulated cluster-autoscaler grows and shrinks.

    nodeGroups:
      - name: workers              # its nodes are workers-0, workers-1, ...
        node: {allocatable: {cpu: "4", memory: 16Gi}, labels: {}, taints: []}   # the template
        min: 0                     # nodes it keeps (made at the start)
        max: 10                    # nodes it may have
        scaleUpDelay: 60           # seconds from the decision until the node is Ready
        scaleDownAfter: 600        # an empty node is removed after this long empty
        costPerHour: 0.19          # optional: the report prices its node-hours

Read as strictly as the rest of the scenario (every problem named with its entry and key);
shim/sim/autoscaler.py plays them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shim.sim.scenario import NodeEntry, _Reader

NODE_GROUP_KEYS = ("name", "node", "min", "max", "scaleUpDelay", "scaleDownAfter", "costPerHour")
TEMPLATE_KEYS = ("allocatable", "labels", "annotations", "taints")
DEFAULT_SCALE_UP_DELAY = 60.0
DEFAULT_SCALE_DOWN_AFTER = 600.0  # cluster-autoscaler's --scale-down-unneeded-time
MAX_GROUP_NODES = 10_000


@dataclass(frozen=True, slots=True)
class NodeGroup:
    name: str
    template: NodeEntry  # `name` is the group's; each node gets `<group>-<n>`
    max: int
    min: int = 0
    scale_up_delay: float = DEFAULT_SCALE_UP_DELAY
    scale_down_after: float = DEFAULT_SCALE_DOWN_AFTER
    cost_per_hour: float | None = None


def parse_node_groups(
    reader: _Reader, raw: object, node: Callable[[_Reader, object, str], NodeEntry | None]
) -> list[NodeGroup]:
    """The `nodeGroups` list; `node` reads a template like an entry of `nodes`."""
    groups: list[NodeGroup] = []
    for i, item in enumerate(reader.seq(raw, "nodeGroups")):
        where = f"nodeGroups[{i}]"
        entry = reader.mapping(item, where, NODE_GROUP_KEYS)
        if not isinstance(item, Mapping):
            continue
        name = reader.text(entry.get("name"), f"{where}.name")
        template_raw = entry.get("node")
        if not isinstance(template_raw, Mapping):
            reader.bad(f"{where}.node", "required: the template node, e.g. {allocatable: {cpu: '4', memory: 16Gi}}")
            continue
        reader.mapping(template_raw, f"{where}.node", TEMPLATE_KEYS)
        template = node(reader, {**_template_fields(template_raw), "name": name or "group"}, f"{where}.node")
        low = _whole(reader, entry.get("min"), f"{where}.min", 0, 0)
        high = _whole(reader, entry.get("max"), f"{where}.max", None, 1)
        if high is not None and low is not None and low > high:
            reader.bad(f"{where}.min", f"{low} is above max ({high})")
        delay = _seconds(reader, entry.get("scaleUpDelay"), f"{where}.scaleUpDelay", DEFAULT_SCALE_UP_DELAY, 0.0)
        after = _seconds(reader, entry.get("scaleDownAfter"), f"{where}.scaleDownAfter", DEFAULT_SCALE_DOWN_AFTER, 0.0)
        cost = _seconds(reader, entry.get("costPerHour"), f"{where}.costPerHour", None, 0.0)
        if template is not None and high is not None and low is not None and delay is not None and after is not None:
            groups.append(NodeGroup(name, replace(template, count=1), high, low, delay, after, cost))
    seen: dict[str, int] = {}
    for i, group in enumerate(groups):
        if group.name in seen:
            reader.bad(f"nodeGroups[{i}].name", f"node group {group.name} is already defined")
        seen.setdefault(group.name, i)
    return groups


def _template_fields(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in raw.items() if key in TEMPLATE_KEYS}


def _whole(reader: _Reader, value: object, where: str, default: int | None, least: int) -> int | None:
    if value is None:
        if default is None:
            reader.bad(where, "required: a whole number of nodes")
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MAX_GROUP_NODES:
        reader.bad(where, f"must be a whole number from {least} to {MAX_GROUP_NODES}, got {value!r}")
        return default
    return value


def _seconds(reader: _Reader, value: object, where: str, default: float | None, least: float) -> float | None:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not least <= value <= 10 * 365 * 86400:
        reader.bad(where, f"must be a number from {least:g}, got {value!r}")
        return default
    return float(value)
