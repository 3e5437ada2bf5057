"""Reading a user's YAML with limits, so a small document can never cost unbounded time or memory.

PyYAML's `safe_load` refuses Python objects but not size: a 600-byte document of nested
aliases (`&a [*b, *b, ...]`) expands to billions of nodes for whoever walks it, and a
document nested a few thousand levels deep exhausts Python's recursion. Every place Herder
reads YAML a user wrote (queues.yaml from the ConfigMap, `POST /ws/v1/validate-conf`,
`herder validate`, `--config`, scenario files) goes through `load_yaml`, which refuses:

- text longer than `max_bytes` (the ConfigMap's own limit, 1 MiB, by default);
- nesting deeper than `max_depth` mappings and sequences;
- more than `max_nodes` nodes once every alias is expanded (an alias costs what it names).

A refusal is a `YAMLLimitError`, a `yaml.MarkedYAMLError`, so callers' existing YAML error
handling names the line and column.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, SequenceNode

MAX_BYTES = 1024 * 1024
MAX_DEPTH = 100
MAX_NODES = 200_000


class YAMLLimitError(yaml.MarkedYAMLError):
    """The document is beyond one of `load_yaml`'s limits; `problem` says which."""


class _LimitedLoader(yaml.SafeLoader):
    max_depth = MAX_DEPTH
    max_nodes = MAX_NODES

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._weights: dict[int, int] = {}  # id(node) -> nodes it stands for, aliases expanded

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        self._depth += 1
        try:
            if self._depth > self.max_depth:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise YAMLLimitError(None, None, f"nested deeper than {self.max_depth} levels", mark)
            alias = self.check_event(AliasEvent)
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if node is None:
            return None
        if alias:
            if id(node) not in self._weights:
                raise YAMLLimitError(None, None, "an alias refers to a value that contains it", node.start_mark)
        else:
            weight = 1
            if isinstance(node, MappingNode):
                weight += sum(self._weights.get(id(k), 1) + self._weights.get(id(v), 1) for k, v in node.value)
            elif isinstance(node, SequenceNode):
                weight += sum(self._weights.get(id(item), 1) for item in node.value)
            if weight > self.max_nodes:
                raise YAMLLimitError(
                    None, None, f"more than {self.max_nodes} values once its aliases are expanded", node.start_mark
                )
            self._weights[id(node)] = weight
        return node


def load_yaml(text: str, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> Any:
    """The one document in `text`, as plain data; raises yaml.YAMLError (YAMLLimitError past a limit)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise YAMLLimitError(None, None, f"{size} bytes is more than the {max_bytes} allowed", None)
    loader = _LimitedLoader(text)
    loader.max_depth = max_depth
    loader.max_nodes = max_nodes
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def check_nesting(value: object, max_depth: int = MAX_DEPTH) -> None:
    """Refuse already-loaded data nested deeper than `max_depth` (walked without recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: list[object] = [*item.keys(), *item.values()]
        elif isinstance(item, (list, tuple)):
            children = list(item)
        else:
            continue
        if depth > max_depth:
            raise YAMLLimitError(None, None, f"nested deeper than {max_depth} levels", None)
        stack.extend((child, depth + 1) for child in children)
