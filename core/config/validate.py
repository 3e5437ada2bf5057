"""Whole-config checks of a parsed `SchedulerConfig` (YuniKorn's config validation, limits included)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from core.config.schema import (
    APPLICATION_SORT_POLICY,
    APPLICATION_SORT_PRIORITY,
    PREEMPTION_DELAY,
    PREEMPTION_POLICY,
    PRIORITY_OFFSET,
    PRIORITY_POLICY,
    Limit,
    PartitionConfig,
    PlacementRuleConfig,
    QueueConfig,
    SchedulerConfig,
)
from core.config.settings import parse_duration
from core.resources import Resource

QUEUE_NAME = re.compile(r"^[a-zA-Z0-9_:#/@-]{1,64}$")
USER_NAME = re.compile(r"^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$")
GROUP_NAME = re.compile(r"^[_a-zA-Z][a-zA-Z0-9:_.-]*$")
RULE_NAME = re.compile(r"^[_a-zA-Z][a-zA-Z0-9_]*$")
RULES = frozenset({"provided", "user", "fixed", "tag"})
SORT_POLICIES = frozenset({"fifo", "fair", "stateaware"})
SORT_PRIORITIES = frozenset({"enabled", "disabled"})
PREEMPTION_POLICIES = frozenset({"default", "fence", "disabled"})
PRIORITY_POLICIES = frozenset({"default", "fence"})
INT32 = (-(2**31), 2**31 - 1)
WILDCARD = "*"


def validate_config(cfg: SchedulerConfig) -> list[str]:
    """Every problem in the config, each naming its partition and queue path, rule index or limit."""
    problems: list[str] = []
    seen: set[str] = set()
    for part in cfg.partitions:
        if part.name.lower() in seen:
            problems.append(f"partitions[{part.name}]: partition name is used twice")
        seen.add(part.name.lower())
        problems.extend(_partition(part))
    return problems


def _partition(part: PartitionConfig) -> list[str]:
    where = f"partitions[{part.name}]"
    problems: list[str] = []
    root = part.root
    if root.guaranteed or root.max:
        problems.append(f"{where}.queues.root: root may not set resources")
    if part.limits and root.limits and part.limits != root.limits:
        problems.append(f"{where}.limits: partition limits differ from root limits")
    _queue(root, f"{where}.queues.root", None, [], problems)
    static = _static_paths(root)
    for i, rule in enumerate(part.placement_rules):
        _rule(rule, f"{where}.placementrules[{i}]", static, problems)
    policy = part.node_sort_policy
    if policy.type not in ("binpacking", "fair"):
        problems.append(f"{where}.nodesortpolicy.type: unknown policy {policy.type!r} (binpacking or fair)")
    for key, weight in policy.resource_weights.items():
        if weight < 0:
            problems.append(f"{where}.nodesortpolicy.resourceweights.{key}: negative weight {weight}")
    return problems


def _exceeds(small: Mapping[str, int], large: Mapping[str, int]) -> list[str]:
    return [key for key, value in small.items() if key in large and value > large[key]]


def _queue(
    queue: QueueConfig,
    path: str,
    parent: QueueConfig | None,
    ancestors: list[QueueConfig],
    problems: list[str],
) -> None:
    if not QUEUE_NAME.match(queue.name):
        problems.append(f"{path}: invalid queue name {queue.name!r} (1-64 of a-zA-Z0-9_:#/@-)")
    if queue.guaranteed is not None and queue.max is not None:
        for key in _exceeds(queue.guaranteed, queue.max):
            problems.append(f"{path}: guaranteed {key} {queue.guaranteed[key]} exceeds max {queue.max[key]}")
    if parent is not None and queue.max is not None and parent.max is not None:
        for key in _exceeds(queue.max, parent.max):
            problems.append(f"{path}: max {key} {queue.max[key]} exceeds parent max {parent.max[key]}")
    if parent is not None and parent.max_applications and queue.max_applications > parent.max_applications:
        problems.append(f"{path}: maxapplications {queue.max_applications} exceeds parent's {parent.max_applications}")
    _properties(queue.properties, f"{path}.properties", problems)
    for acl_name, acl in (("submitacl", queue.submit_acl), ("adminacl", queue.admin_acl)):
        if acl is not None and len(acl.strip().split()) > 2:
            problems.append(f"{path}.{acl_name}: ACL {acl!r} has more than two space-separated fields")
    names: set[str] = set()
    total: dict[str, int] = {}
    for child in queue.queues:
        if child.name.lower() in names:
            problems.append(f"{path}.{child.name}: queue name is used twice at this level")
        names.add(child.name.lower())
        for key, value in (child.guaranteed or Resource()).items():
            total[key] = total.get(key, 0) + value
    for key, value in total.items():
        if queue.guaranteed is not None and key in queue.guaranteed and value > queue.guaranteed[key]:
            problems.append(f"{path}: children's guaranteed {key} {value} exceeds guaranteed {queue.guaranteed[key]}")
        if queue.max is not None and key in queue.max and value > queue.max[key]:
            problems.append(f"{path}: children's guaranteed {key} {value} exceeds max {queue.max[key]}")
    _limits(queue, path, ancestors, problems)
    for child in queue.queues:
        _queue(child, f"{path}.{child.name}", queue, [*ancestors, queue], problems)


def _properties(props: Mapping[str, str], path: str, problems: list[str]) -> None:
    policy = props.get(APPLICATION_SORT_POLICY)
    if policy is not None and policy.lower() not in SORT_POLICIES:
        problems.append(f"{path}.{APPLICATION_SORT_POLICY}: unknown policy {policy!r} (fifo or fair)")
    priority = props.get(APPLICATION_SORT_PRIORITY)
    if priority is not None and priority.lower() not in SORT_PRIORITIES:
        problems.append(f"{path}.{APPLICATION_SORT_PRIORITY}: unknown value {priority!r} (enabled or disabled)")
    preemption = props.get(PREEMPTION_POLICY)
    if preemption is not None and preemption.lower() not in PREEMPTION_POLICIES:
        problems.append(f"{path}.{PREEMPTION_POLICY}: unknown policy {preemption!r} (default, fence or disabled)")
    delay = props.get(PREEMPTION_DELAY)
    if delay is not None:
        try:
            seconds = parse_duration(delay)
        except ValueError as err:
            problems.append(f"{path}.{PREEMPTION_DELAY}: {err}")
        else:
            if seconds <= 0:
                problems.append(f"{path}.{PREEMPTION_DELAY}: must be above zero, got {delay!r}")
    priority_policy = props.get(PRIORITY_POLICY)
    if priority_policy is not None and priority_policy.lower() not in PRIORITY_POLICIES:
        problems.append(f"{path}.{PRIORITY_POLICY}: unknown policy {priority_policy!r} (default or fence)")
    offset = props.get(PRIORITY_OFFSET)
    if offset is not None:
        try:
            number = int(offset)
        except ValueError:
            problems.append(f"{path}.{PRIORITY_OFFSET}: not an integer: {offset!r}")
        else:
            if not INT32[0] <= number <= INT32[1]:
                problems.append(f"{path}.{PRIORITY_OFFSET}: {number} is outside the int32 range")


def _limits(queue: QueueConfig, path: str, ancestors: list[QueueConfig], problems: list[str]) -> None:
    is_root = not ancestors
    users: set[str] = set()
    groups: set[str] = set()
    user_wildcard = group_wildcard = False
    for i, limit in enumerate(queue.limits):
        where = f"{path}.limits[{i}]" + (f" ({limit.limit})" if limit.limit else "")
        if not limit.users and not limit.groups:
            problems.append(f"{where}: names no users and no groups")
        for user in limit.users:
            if user != WILDCARD and not USER_NAME.match(user):
                problems.append(f"{where}: invalid user name {user!r}")
            if user in users:
                problems.append(f"{where}: user {user!r} has more than one limit in this queue")
            elif user != WILDCARD and user_wildcard:
                problems.append(f"{where}: user {user!r} comes after the '*' user limit")
            users.add(user)
            user_wildcard = user_wildcard or user == WILDCARD
        for group in limit.groups:
            if group != WILDCARD and not GROUP_NAME.match(group):
                problems.append(f"{where}: invalid group name {group!r}")
            if group in groups:
                problems.append(f"{where}: group {group!r} has more than one limit in this queue")
            elif group != WILDCARD and group_wildcard:
                problems.append(f"{where}: group {group!r} comes after the '*' group limit")
            groups.add(group)
            group_wildcard = group_wildcard or group == WILDCARD
        res = limit.max_resources
        if res is not None and res and not any(v > 0 for v in res.values()):
            problems.append(f"{where}: maxresources has no value above zero")
        if (res is None or not any(v > 0 for v in res.values())) and limit.max_applications == 0:
            problems.append(f"{where}: sets neither maxresources nor maxapplications")
        if queue.max_applications and limit.max_applications > queue.max_applications:
            problems.append(
                f"{where}: maxapplications {limit.max_applications} exceeds the queue's {queue.max_applications}"
            )
        if not is_root and res is not None and queue.max is not None:
            for key in _exceeds(res, queue.max):
                problems.append(f"{where}: maxresources {key} {res[key]} exceeds the queue max {queue.max[key]}")
        _against_ancestors(limit, where, ancestors, problems)
    if group_wildcard and groups == {WILDCARD}:
        problems.append(f"{path}.limits: the '*' group limit may not be the only group limit")


def _ancestor_limit(ancestor: QueueConfig, kind: str, name: str) -> Limit | None:
    wildcard: Limit | None = None
    for limit in ancestor.limits:
        names = limit.users if kind == "user" else limit.groups
        if name in names:
            return limit
        if WILDCARD in names:
            wildcard = limit
    return wildcard


def _against_ancestors(limit: Limit, where: str, ancestors: list[QueueConfig], problems: list[str]) -> None:
    for kind, names in (("user", limit.users), ("group", limit.groups)):
        for name in names:
            if name == WILDCARD:
                continue
            for ancestor in ancestors:
                upper = _ancestor_limit(ancestor, kind, name)
                if upper is None:
                    continue
                label = f"{kind} {name!r}: ancestor queue {ancestor.name!r}"
                if limit.max_resources is not None and upper.max_resources is not None:
                    for key in _exceeds(limit.max_resources, upper.max_resources):
                        problems.append(
                            f"{where}: {label} limits {key} to {upper.max_resources[key]}, "
                            f"child asks {limit.max_resources[key]}"
                        )
                if upper.max_applications and (
                    limit.max_applications == 0 or limit.max_applications > upper.max_applications
                ):
                    problems.append(
                        f"{where}: {label} limits maxapplications to {upper.max_applications}, "
                        f"child asks {limit.max_applications or 'unlimited'}"
                    )


def _static_paths(root: QueueConfig) -> set[str]:
    out: set[str] = set()

    def walk(queue: QueueConfig, prefix: str) -> None:
        full = f"{prefix}.{queue.name}".lower() if prefix else queue.name.lower()
        out.add(full)
        for child in queue.queues:
            walk(child, full)

    walk(root, "")
    return out


def _rule(rule: PlacementRuleConfig, where: str, static: set[str], problems: list[str]) -> None:
    if rule.name == "recovery":
        problems.append(f"{where}: the recovery rule may not be configured")
    elif not RULE_NAME.match(rule.name):
        problems.append(f"{where}: invalid rule name {rule.name!r}")
    elif rule.name not in RULES:
        problems.append(f"{where}: unknown rule {rule.name!r} (provided, user, fixed or tag)")
    if rule.name in ("tag", "fixed") and not rule.value:
        problems.append(f"{where}: rule {rule.name!r} needs a value")
    if rule.name == "fixed" and rule.value and not rule.create and rule.parent is None:
        full = rule.value.lower() if rule.value.lower().startswith("root.") else f"root.{rule.value.lower()}"
        if full not in static:
            problems.append(f"{where}: fixed queue {rule.value!r} does not exist and create is false")
    if rule.filter is not None:
        flt = rule.filter
        if flt.type not in ("", "allow", "deny"):
            problems.append(f"{where}.filter.type: unknown type {flt.type!r} (allow or deny)")
        for kind, entries, pattern in (("user", flt.users, USER_NAME), ("group", flt.groups, GROUP_NAME)):
            for entry in entries:
                if pattern.match(entry):
                    continue
                try:
                    re.compile(entry)
                except re.error as err:
                    problems.append(f"{where}.filter: {kind} entry {entry!r} is neither a name nor a regexp: {err}")
    if rule.parent is not None:
        _rule(rule.parent, f"{where}.parent", static, problems)
