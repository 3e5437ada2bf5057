"""Placement rules: which leaf queue a new application goes to, and which queues to create.

Rules (`provided`, `user`, `fixed`, `tag`) are tried in order and the first match wins; each may
carry a filter on users and groups, a nested `parent` rule and `create`. After the last rule the
application goes to `root.default` when that is an existing leaf it may submit to; otherwise it
is rejected with a reason that lists why each rule did not match.

Generated names follow YuniKorn: a short (not `root.`-qualified) name taken from the user, a tag
or the pod's queue has its dots replaced by `_dot_`, and every path is lower-cased, as YuniKorn
did up to 1.5 (1.6 made names case-sensitive); Herder's partition keys queues case-insensitively,
so `Alice` and `alice` share one queue. Each name must match `[a-zA-Z0-9_:#/@-]{1,64}`.

A configured queue with no children and no `parent` key is a leaf, unless a rule's parent rule
names it while it holds no applications: it then becomes a parent (listed in `to_create`, so
the partition turns it into one), and a leaf again when its last child is gone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.config.schema import FilterConfig, PlacementRuleConfig
from core.objects.ask import TAG_PARENT_QUEUE, UserGroup
from core.placement_acl import Acl, AclSummary, ImplicitParents, QueueView, ancestors, submit_denial

__all__ = [
    "Acl",
    "AclSummary",
    "ImplicitParents",
    "PlacementManager",
    "PlacementRequest",
    "PlacementResult",
    "QueueView",
]

ROOT = "root"
DEFAULT_QUEUE = "root.default"
DOT = "_dot_"
_QUEUE_NAME = re.compile(r"[a-zA-Z0-9_:#/@-]{1,64}")
_REGEXP_SPECIALS = re.compile(r"[\^$.|?*+()\[\]{}\\]")


@dataclass(frozen=True, slots=True)
class PlacementRequest:
    application_id: str
    queue: str | None
    user: UserGroup
    tags: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class PlacementResult:
    """queue_path is the leaf (None on rejection); to_create lists new queues, parents first."""

    queue_path: str | None
    to_create: tuple[str, ...] = ()
    rule: str = ""
    reason: str = ""

    @property
    def placed(self) -> bool:
        return self.queue_path is not None


@dataclass(frozen=True, slots=True)
class _Miss:
    reason: str


@dataclass(frozen=True, slots=True)
class _Found:
    path: str
    to_create: tuple[str, ...]


def is_fully_qualified(name: str) -> bool:
    return name.lower().startswith(ROOT + ".")


def _matches(entry: str, name: str) -> bool:
    if _REGEXP_SPECIALS.search(entry) is None:
        return entry == name
    try:
        return re.fullmatch(entry, name) is not None
    except re.error:
        return entry == name


def filter_allows(flt: FilterConfig | None, user: UserGroup) -> bool:
    """Allow: only the listed users/groups. Deny: everyone but those listed. A filter that lists
    nobody answers with its type alone, as YuniKorn's does: `allow` admits everyone, `deny` no one."""
    if flt is None:
        return True
    if not (flt.users or flt.groups):
        return flt.type != "deny"
    listed = any(_matches(entry, user.user) for entry in flt.users) or any(
        _matches(entry, group) for entry in flt.groups for group in user.groups
    )
    if flt.type == "deny":
        return not listed
    return listed


def describe(rule: PlacementRuleConfig) -> str:
    return f"{rule.name} {rule.value}" if rule.value else rule.name


def _short_name(raw: str) -> str:
    return raw.replace(".", DOT).lower()


def _invalid_part(path: str) -> str | None:
    for part in path.split(".")[1:]:
        if _QUEUE_NAME.fullmatch(part) is None:
            return part
    return None


class PlacementManager:
    """The partition's ordered placement rules; `place` is pure and asks the view about queues."""

    def __init__(self, rules: Sequence[PlacementRuleConfig]) -> None:
        self.rules: tuple[PlacementRuleConfig, ...] = tuple(rules)

    def place(self, request: PlacementRequest, view: QueueView) -> PlacementResult:
        if not self.rules:
            return self._place_without_rules(request, view)
        misses: list[str] = []
        for number, rule in enumerate(self.rules, start=1):
            outcome = self._resolve(rule, request, view, leaf=True)
            if isinstance(outcome, _Found):
                denial = submit_denial(outcome.path, request.user, view)
                if denial is None:
                    return PlacementResult(outcome.path, outcome.to_create, rule.name, "")
                outcome = _Miss(denial)
            misses.append(f"rule {number} ({describe(rule)}): {outcome.reason}")
        problem = self._existing_leaf(DEFAULT_QUEUE, request, view)
        if problem is None:
            return PlacementResult(DEFAULT_QUEUE, (), "default", "")
        misses.append(problem)
        return PlacementResult(None, (), "", "no placement rule matched: " + "; ".join(misses))

    def _place_without_rules(self, request: PlacementRequest, view: QueueView) -> PlacementResult:
        if request.queue:
            path = (request.queue if is_fully_qualified(request.queue) else f"{ROOT}.{request.queue}").lower()
            problem = self._existing_leaf(path, request, view)
            if problem is None:
                return PlacementResult(path, (), "provided", "")
            return PlacementResult(None, (), "", f"no placement rules are configured and {problem}")
        problem = self._existing_leaf(DEFAULT_QUEUE, request, view)
        if problem is None:
            return PlacementResult(DEFAULT_QUEUE, (), "default", "")
        return PlacementResult(
            None, (), "", f"no placement rules are configured, the application names no queue, and {problem}"
        )

    @staticmethod
    def _existing_leaf(path: str, request: PlacementRequest, view: QueueView) -> str | None:
        """None when `path` is an existing leaf the user may submit to, else why not."""
        if not view.exists(path):
            return f"{path} does not exist"
        if not view.is_leaf(path):
            return f"{path} is a parent queue, not a leaf"
        return submit_denial(path, request.user, view)

    # -- one rule ----------------------------------------------------------------------------
    def _resolve(
        self, rule: PlacementRuleConfig, request: PlacementRequest, view: QueueView, *, leaf: bool
    ) -> _Found | _Miss:
        if not filter_allows(rule.filter, request.user):
            if rule.filter is not None and not (rule.filter.users or rule.filter.groups):
                return _Miss("its deny filter lists no users or groups, so it admits no one")
            return _Miss(f"the filter does not admit user {request.user.user}")
        named = self._name(rule, request)
        if isinstance(named, _Miss):
            return named
        name, qualified = named
        pending: tuple[str, ...] = ()
        if qualified:
            path = name
        else:
            base = ROOT
            if rule.parent is not None:
                parent = self._resolve(rule.parent, request, view, leaf=False)
                if isinstance(parent, _Miss):
                    return _Miss(f"parent rule ({describe(rule.parent)}): {parent.reason}")
                base, pending = parent.path, parent.to_create
            path = f"{base}.{name}"
        bad = _invalid_part(path)
        if bad is not None:
            return _Miss(f"{bad!r} is not a valid queue name (letters, digits and _ : # / @ -, 1 to 64 characters)")
        return self._check_path(rule, path, pending, view, leaf=leaf)

    @staticmethod
    def _name(rule: PlacementRuleConfig, request: PlacementRequest) -> tuple[str, bool] | _Miss:
        """The queue name a rule produces and whether it is already a full path."""
        if rule.name == "provided":
            raw = request.queue or ""
            if not raw:
                return _Miss("the application names no queue")
        elif rule.name == "user":
            raw = request.user.user
            if not raw:
                return _Miss("the application has no user")
        elif rule.name == "fixed":
            return rule.value.lower(), is_fully_qualified(rule.value)
        elif rule.name == "tag":
            raw = request.tags.get(rule.value, "")
            if not raw:
                return _Miss(f"the application has no {rule.value} tag")
        else:
            return _Miss(f"unknown rule {rule.name!r}")
        if rule.name != "user" and is_fully_qualified(raw):
            return raw.lower(), True
        if rule.name == "tag" and rule.value == TAG_PARENT_QUEUE:
            # A parent-queue annotation names a queue; its `root.` prefix is optional (seed 004).
            return (raw if raw.lower() == ROOT else f"{ROOT}.{raw}").lower(), True
        return _short_name(raw), False

    @staticmethod
    def _check_path(
        rule: PlacementRuleConfig, path: str, pending: tuple[str, ...], view: QueueView, *, leaf: bool
    ) -> _Found | _Miss:
        kind = "leaf" if leaf else "parent"
        source = _source(rule)
        if view.exists(path):
            if not leaf and view.is_leaf(path) and _may_become_parent(view, path):
                return _Found(path, (*pending, path))
            if view.is_leaf(path) != leaf:
                other = "leaf" if view.is_leaf(path) else "parent"
                return _Miss(f"{source} names {path}, which is a {other} queue, not a {kind}")
            return _Found(path, pending)
        if not rule.create:
            return _Miss(f"{source} names {path}, which does not exist and create is false")
        missing: list[str] = []
        for ancestor in reversed(ancestors(path)[1:]):
            if ancestor in pending:
                continue
            if view.exists(ancestor):
                if view.is_leaf(ancestor) and _may_become_parent(view, ancestor):
                    missing.append(ancestor)
                elif view.is_leaf(ancestor):
                    return _Miss(f"{source} names {path}, but {ancestor} is a leaf queue and cannot hold it")
                continue
            missing.append(ancestor)
        return _Found(path, pending + tuple(missing) + (path,))


def _may_become_parent(view: QueueView, path: str) -> bool:
    """A configured leaf with no children and no `parent` key, holding no applications, becomes
    the parent a rule names (seed 004 lists `production` without children as a parent)."""
    return isinstance(view, ImplicitParents) and view.can_become_parent(path)


def _source(rule: PlacementRuleConfig) -> str:
    if rule.name == "provided":
        return "the application's queue"
    if rule.name == "user":
        return "the user name"
    if rule.name == "fixed":
        return "the fixed value"
    if rule.value == TAG_PARENT_QUEUE:
        return "namespace annotation parentqueue"
    return f"tag {rule.value}"
