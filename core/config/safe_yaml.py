"""Reading a user's YAML with limits, so a small document can never cost unbounded time or memory.

PyYAML's `safe_load` refuses Python objects but not size: a 600-byte document of nested
aliases (`&a [*b, *b, ...]`) expands to billions of nodes for whoever walks it, and a
document nested a few thousand levels deep exhausts Python's recursion. Every place Herder
reads YAML a user wrote (queues.yaml from the ConfigMap, `POST /ws/v1/validate-conf`,
`herder validate`, `--config`, scenario files) goes through `load_yaml`, which refuses:

- text longer than `max_bytes` (the ConfigMap's own limit, 1 MiB, by default);
- nesting deeper than `max_depth` mappings and sequences;
- more than `max_nodes` nodes once every alias is expanded (an alias costs what it names);
- a mapping that repeats a key (PyYAML keeps the last value without a word; YuniKorn's YAML
  reader refuses it): a `YAMLDuplicateKeyError` naming both lines, or, for a caller that
  passes `duplicate_keys`, one `DuplicateKey` each while the rest is read as usual, so every
  other problem of the document can still be found.

A refusal is a `YAMLLimitError` (or `YAMLDuplicateKeyError`), a `yaml.MarkedYAMLError`, so
callers' existing YAML error handling names the line and column.

With libyaml (PyYAML's C extension, in its wheels) the limits are checked first on libyaml's event
stream (no node is built, nothing recurses), then the document is loaded by the C loader: 3-4
times less CPU than the pure-Python loader for a large scenario. Without it, the pure-Python
loader checks them while it composes. Both refuse exactly the same documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    MappingStartEvent,
    NodeEvent,
    ScalarEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_BYTES = 1024 * 1024
MAX_DEPTH = 100
MAX_NODES = 200_000


class YAMLLimitError(yaml.MarkedYAMLError):
    """The document is beyond one of `load_yaml`'s limits; `problem` says which."""


class YAMLDuplicateKeyError(yaml.MarkedYAMLError):
    """A mapping repeats a key; `problem` names the key and the line it was first given."""


@dataclass(frozen=True, slots=True)
class DuplicateKey:
    """A key given twice in one mapping: where the repeat is (1-based) and where it was first."""

    key: str
    line: int
    column: int
    first_line: int

    def __str__(self) -> str:
        return (
            f"line {self.line}, column {self.column}: key {self.key!r} is given again (first at line "
            f"{self.first_line}); the later value would silently replace the first"
        )


_RESOLVER = yaml.resolver.Resolver()
_MERGE = "tag:yaml.org,2002:merge"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"


@lru_cache(maxsize=4096)
def _implicit_tag(value: str, implicit: tuple[bool, bool]) -> str:
    """The tag PyYAML resolves an untagged scalar to (keys repeat: `name`, `queues`, ...)."""
    tag: str = _RESOLVER.resolve(ScalarNode, value, implicit)  # type: ignore[no-untyped-call]
    return tag


def _key_identity(tag: str | None, value: str, implicit: tuple[bool, bool]) -> tuple[str, str] | None:
    """What a scalar key loads as, near enough to tell two keys apart (None: never a duplicate)."""
    if tag is None or tag == "!":
        tag = _implicit_tag(value, implicit)
    if tag == _MERGE:
        return None
    if tag == _BOOL:
        return tag, str(value.lower() in ("yes", "true", "on"))
    if tag == _NULL:
        return tag, ""
    return tag, value


class _KeyTracker:
    """The scalar keys seen in one mapping, by what they load as, with their 1-based line."""

    __slots__ = ("children", "seen")

    def __init__(self) -> None:
        self.children = 0
        self.seen: dict[tuple[str, str], int] = {}

    def add(self, identity: tuple[str, str] | None, value: str, mark: Any, found: list[DuplicateKey]) -> None:
        if identity is None:
            return
        line = mark.line + 1 if mark is not None else 0
        first = self.seen.get(identity)
        if first is None:
            self.seen[identity] = line
        else:
            column = mark.column + 1 if mark is not None else 0
            found.append(DuplicateKey(value, line, column, first))


def _settle_duplicates(found: list[DuplicateKey], collect: list[DuplicateKey] | None) -> None:
    """Hand the repeats to the caller's list, or refuse the document at the first one."""
    found.sort(key=lambda d: (d.line, d.column))
    if collect is not None:
        collect.extend(found)
    elif found:
        first = found[0]
        mark = yaml.error.Mark("<document>", 0, first.line - 1, first.column - 1, None, 0)
        raise YAMLDuplicateKeyError(
            None, None, f"key {first.key!r} is given again (first at line {first.first_line})", mark
        )


class _LimitedLoader(yaml.SafeLoader):
    max_depth = MAX_DEPTH
    max_nodes = MAX_NODES

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._weights: dict[int, int] = {}  # id(node) -> nodes it stands for, aliases expanded
        self.duplicates: list[DuplicateKey] = []

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
                self._check_keys(node)
            elif isinstance(node, SequenceNode):
                weight += sum(self._weights.get(id(item), 1) for item in node.value)
            if weight > self.max_nodes:
                raise YAMLLimitError(
                    None, None, f"more than {self.max_nodes} values once its aliases are expanded", node.start_mark
                )
            self._weights[id(node)] = weight
        return node

    def _check_keys(self, node: MappingNode) -> None:
        keys = _KeyTracker()
        for key, _ in node.value:
            if isinstance(key, ScalarNode):
                # the composer has resolved the tag already; a plain scalar resolves alike
                keys.add(_key_identity(key.tag, key.value, (True, False)), key.value, key.start_mark, self.duplicates)


_C_LOADER: Any = getattr(yaml, "CSafeLoader", None)


def _mark(event: NodeEvent) -> yaml.error.Mark | None:
    """libyaml's mark as PyYAML's own (the line and column a refusal names)."""
    found = event.start_mark
    if found is None:
        return None
    return yaml.error.Mark(str(found.name), found.index, found.line, found.column, None, 0)


def _next_event(parser: Any, max_depth: int) -> Any:
    try:
        return parser.get_event()
    except yaml.MarkedYAMLError as err:
        # the libyaml in PyYAML 6.0.4 scans ahead and stops at its own depth of 1,000
        # before the events reach ours
        if "maximum nesting depth" not in str(err.problem):
            raise
        raise YAMLLimitError(None, None, f"nested deeper than {max_depth} levels", err.problem_mark) from None


def _check_events(text: str, max_depth: int, max_nodes: int) -> list[DuplicateKey]:
    """The limits `_LimitedLoader` checks, on libyaml's events: a node's weight is 1 plus its
    children's, an alias weighs what it names, every node counts for the depth. Returns the
    repeated keys: a mapping's even-numbered children are its keys."""
    parser = _C_LOADER(text)
    duplicates: list[DuplicateKey] = []
    try:
        open_collections: list[list[Any]] = []  # [weight so far, anchor, _KeyTracker or None]
        weights: dict[str, int] = {}
        while (event := _next_event(parser, max_depth)) is not None:
            if isinstance(event, CollectionEndEvent):
                weight, anchor, _ = open_collections.pop()
                if anchor is not None:
                    weights[anchor] = weight
            elif isinstance(event, NodeEvent):
                if len(open_collections) >= max_depth:
                    raise YAMLLimitError(None, None, f"nested deeper than {max_depth} levels", _mark(event))
                keys = open_collections[-1][2] if open_collections else None
                if keys is not None:
                    if keys.children % 2 == 0 and isinstance(event, ScalarEvent):
                        identity = _key_identity(event.tag, event.value, event.implicit)
                        keys.add(identity, event.value, event.start_mark, duplicates)
                    keys.children += 1
                if isinstance(event, CollectionStartEvent):
                    tracker = _KeyTracker() if isinstance(event, MappingStartEvent) else None
                    open_collections.append([1, event.anchor, tracker])
                    continue
                if isinstance(event, AliasEvent):
                    if any(entry[1] == event.anchor for entry in open_collections):
                        raise YAMLLimitError(None, None, "an alias refers to a value that contains it", _mark(event))
                    weight = weights.get(str(event.anchor), 1)  # an undefined one: the loader says so
                else:
                    assert isinstance(event, ScalarEvent)
                    weight = 1
                    if event.anchor is not None:
                        weights[event.anchor] = 1
            else:
                continue  # stream and document start and end
            if open_collections:
                open_collections[-1][0] += weight
                weight = open_collections[-1][0]
            if weight > max_nodes:
                raise YAMLLimitError(
                    None, None, f"more than {max_nodes} values once its aliases are expanded", _mark(event)
                )
    finally:
        parser.dispose()
    return duplicates


def load_yaml(
    text: str,
    *,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    max_nodes: int = MAX_NODES,
    libyaml: bool = True,
    duplicate_keys: list[DuplicateKey] | None = None,
) -> Any:
    """The one document in `text`, as plain data; raises yaml.YAMLError (YAMLLimitError past a
    limit, YAMLDuplicateKeyError on a repeated key unless `duplicate_keys` collects them, the
    last value kept). `libyaml=False` takes the pure-Python path even where the C extension
    exists."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise YAMLLimitError(None, None, f"{size} bytes is more than the {max_bytes} allowed", None)
    if libyaml and _C_LOADER is not None:
        _settle_duplicates(_check_events(text, max_depth, max_nodes), duplicate_keys)
        c_loader = _C_LOADER(text)
        try:
            return c_loader.get_single_data()
        finally:
            c_loader.dispose()
    loader = _LimitedLoader(text)
    loader.max_depth = max_depth
    loader.max_nodes = max_nodes
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    _settle_duplicates(loader.duplicates, duplicate_keys)
    return data


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
