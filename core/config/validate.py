"""Whole-configuration checks of a parsed `SchedulerConfig`: YuniKorn's validator, and a little more.

What YuniKorn's validator (`configvalidator.go`) refuses, Herder refuses, with the path and the
reason: queue names, duplicate names at one level, ACLs, resources (guaranteed within max,
max within every ancestor's max, children's guarantees within the parent's guarantee and
within the max in force there, however many levels up it was set), `maxapplications` (a
child's within its parent's, and set wherever its parent sets one), limits
(validate_limits.py) and placement rules (validate_rules.py). Herder also refuses what it
cannot run: a configuration without the `default` partition, the only one a Kubernetes
scheduler serves. Amounts in messages are in the units the file used.

`check_whole` returns problems and warnings; `validate_config` is its problems alone, for a
caller holding an already-parsed configuration (the scheduler applying one).
"""

from __future__ import annotations

from collections.abc import Mapping

from core.config.findings import Findings
from core.config.names import GROUP_NAME, QUEUE_NAME, USER_NAME, WILDCARD, queue_name_problem
from core.config.schema import (
    APPLICATION_SORT_POLICY,
    APPLICATION_SORT_PRIORITY,
    DEFAULT_PARTITION,
    PREEMPTION_DELAY,
    PREEMPTION_POLICY,
    PRIORITY_OFFSET,
    PRIORITY_POLICY,
    PartitionConfig,
    QueueConfig,
    SchedulerConfig,
)
from core.config.settings import parse_duration
from core.config.validate_limits import check_limits
from core.config.validate_rules import check_rules

__all__ = ["GROUP_NAME", "QUEUE_NAME", "USER_NAME", "WILDCARD", "check_whole", "validate_config"]

SORT_POLICIES = frozenset({"fifo", "fair", "stateaware"})
SORT_PRIORITIES = frozenset({"enabled", "disabled"})
PREEMPTION_POLICIES = frozenset({"default", "fence", "disabled"})
PRIORITY_POLICIES = frozenset({"default", "fence"})
NODE_SORT_POLICIES = frozenset({"binpacking", "fair"})
INT32 = (-(2**31), 2**31 - 1)

# key -> (value, the queue path that set it): the lowest max in force at a queue
_Ceiling = dict[str, tuple[int, str]]


def validate_config(cfg: SchedulerConfig) -> list[str]:
    """Every problem in the config, each naming its partition and queue path, rule index or limit."""
    return check_whole(cfg).problems


def check_whole(cfg: SchedulerConfig, unreadable: frozenset[str] = frozenset()) -> Findings:
    """The problems and warnings of the whole configuration; checks on `unreadable` paths are skipped."""
    found = Findings(unreadable=unreadable, written=cfg.written)
    seen: set[str] = set()
    for part in cfg.partitions:
        if part.name.lower() in seen:
            found.problems.append(f"partitions[{part.name}]: partition name is used twice")
        seen.add(part.name.lower())
        _partition(part, found)
    names = [part.name for part in cfg.partitions]
    if names and DEFAULT_PARTITION not in names:
        found.problems.append(
            f"partitions: Herder schedules the partition {DEFAULT_PARTITION!r} only (as YuniKorn's Kubernetes shim "
            f"does), and this configuration does not define it (it defines {', '.join(repr(n) for n in names)})"
        )
    else:
        for name in names:
            if name != DEFAULT_PARTITION:
                found.warnings.append(
                    f"partitions[{name}]: ignored; Herder schedules the partition {DEFAULT_PARTITION!r} only"
                )
    return found


def _partition(part: PartitionConfig, found: Findings) -> None:
    where = f"partitions[{part.name}]"
    root = part.root
    if root.guaranteed or root.max:
        found.problems.append(f"{where}.queues.root: root may not set resources")
    if part.limits and root.limits and part.limits != root.limits:
        found.problems.append(f"{where}.limits: partition limits differ from root limits")
    _queue(root, f"{where}.queues.root", None, {}, found)
    from_partition = bool(part.limits) and root.limits is part.limits
    check_limits(root, f"{where}.queues.root", found, f"{where}.limits" if from_partition else "")
    check_rules(part, where, found)
    policy = part.node_sort_policy
    if policy.type not in NODE_SORT_POLICIES and found.known(f"{where}.nodesortpolicy.type"):
        found.problems.append(f"{where}.nodesortpolicy.type: unknown policy {policy.type!r} (binpacking or fair)")
    for key, weight in policy.resource_weights.items():
        if weight < 0:
            found.problems.append(f"{where}.nodesortpolicy.resourceweights.{key}: negative weight {weight}")


def _queue_path(path: str) -> str:
    """`partitions[default].queues.root.a` -> `root.a`."""
    return path.split(".queues.", 1)[-1]


def _queue(
    queue: QueueConfig, path: str, parent: QueueConfig | None, above: _Ceiling, found: Findings
) -> dict[str, int]:
    """Check one queue and those below it; returns the guarantee it stands for (its own, or its
    children's sum when it sets none), which its parent compares with its own guarantee and max."""
    parent_path = path.rsplit(".", 1)[0]
    if parent is not None and found.known(f"{path}.name"):
        problem = queue_name_problem(queue.name)
        if problem is not None:
            found.problems.append(f"{path}: {problem}")
    ceiling = _resources(queue, path, parent_path, above, found)
    if parent is not None:
        _max_applications(queue, path, parent, parent_path, found)
    _properties(queue.properties, f"{path}.properties", found)
    _acls(queue, path, found)
    names: set[str] = set()
    below: dict[str, int] = {}
    for child in queue.queues:
        if child.name.lower() in names:
            found.problems.append(f"{path}.{child.name}: queue name is used twice at this level")
        names.add(child.name.lower())
        for key, value in _queue(child, f"{path}.{child.name}", queue, ceiling, found).items():
            below[key] = below.get(key, 0) + value
    own: Mapping[str, int] = queue.guaranteed or {}
    for key, value in below.items():
        if key in own and value > own[key]:
            found.problems.append(
                f"{path}: children's guaranteed {key} {found.amount(key, value)} exceeds guaranteed "
                f"{found.amount(key, own[key])}"
            )
        if key in ceiling and value > ceiling[key][0]:
            limit, source = ceiling[key]
            whose = "" if source == path else f" of {_queue_path(source)}, which holds for everything below it"
            found.problems.append(
                f"{path}: children's guaranteed {key} {found.amount(key, value)} exceeds max "
                f"{found.amount(key, limit)}{whose}"
            )
    return dict(own) if any(own.values()) else below


def _resources(queue: QueueConfig, path: str, parent_path: str, above: _Ceiling, found: Findings) -> _Ceiling:
    """Guaranteed within the queue's own max, max within the max in force above; returns the max
    in force here (per resource, the lowest of the queue's and every ancestor's)."""
    if queue.guaranteed is not None and queue.max is not None:
        for key, value in queue.guaranteed.items():
            if key in queue.max and value > queue.max[key]:
                found.problems.append(
                    f"{path}: guaranteed {key} {found.amount(key, value)} exceeds max "
                    f"{found.amount(key, queue.max[key])}"
                )
    ceiling = dict(above)
    for key, value in (queue.max or {}).items():
        upper = above.get(key)
        if upper is not None and value > upper[0]:
            limit, source = upper
            shown, allowed = found.amount(key, value), found.amount(key, limit)
            if source == parent_path:
                message = f"max {key} {shown} exceeds parent max {allowed}"
            else:
                source_queue = _queue_path(source)
                message = f"max {key} {shown} exceeds {allowed}, the max of {source_queue}, which holds below it"
            found.problems.append(f"{path}: {message}")
        if upper is None or value < upper[0]:
            ceiling[key] = (value, path)
    return ceiling


def _max_applications(queue: QueueConfig, path: str, parent: QueueConfig, parent_path: str, found: Findings) -> None:
    limit = parent.max_applications
    if not limit or not found.known(f"{parent_path}.maxapplications") or not found.known(f"{path}.maxapplications"):
        return
    if queue.max_applications > limit:
        found.problems.append(f"{path}: maxapplications {queue.max_applications} exceeds parent's {limit}")
    elif queue.max_applications == 0:
        found.problems.append(
            f"{path}: maxapplications is not set, but its parent sets {limit}: a child of a queue with "
            f"maxapplications must set its own, 1 to {limit} (YuniKorn refuses it too)"
        )


def _properties(props: Mapping[str, str], path: str, found: Findings) -> None:
    def value(key: str) -> str | None:
        text = props.get(key)
        return text if text is not None and found.known(f"{path}.{key}") else None

    policy = value(APPLICATION_SORT_POLICY)
    if policy is not None and policy.lower() not in SORT_POLICIES:
        found.problems.append(f"{path}.{APPLICATION_SORT_POLICY}: unknown policy {policy!r} (fifo or fair)")
    priority = value(APPLICATION_SORT_PRIORITY)
    if priority is not None and priority.lower() not in SORT_PRIORITIES:
        found.problems.append(f"{path}.{APPLICATION_SORT_PRIORITY}: unknown value {priority!r} (enabled or disabled)")
    preemption = value(PREEMPTION_POLICY)
    if preemption is not None and preemption.lower() not in PREEMPTION_POLICIES:
        found.problems.append(f"{path}.{PREEMPTION_POLICY}: unknown policy {preemption!r} (default, fence or disabled)")
    delay = value(PREEMPTION_DELAY)
    if delay is not None:
        try:
            seconds = parse_duration(delay)
        except ValueError as err:
            found.problems.append(f"{path}.{PREEMPTION_DELAY}: {err}")
        else:
            if seconds <= 0:
                found.problems.append(f"{path}.{PREEMPTION_DELAY}: must be above zero, got {delay!r}")
    priority_policy = value(PRIORITY_POLICY)
    if priority_policy is not None and priority_policy.lower() not in PRIORITY_POLICIES:
        found.problems.append(f"{path}.{PRIORITY_POLICY}: unknown policy {priority_policy!r} (default or fence)")
    offset = value(PRIORITY_OFFSET)
    if offset is not None:
        try:
            number = int(offset)
        except ValueError:
            found.problems.append(f"{path}.{PRIORITY_OFFSET}: not an integer: {offset!r}")
        else:
            if not INT32[0] <= number <= INT32[1]:
                found.problems.append(f"{path}.{PRIORITY_OFFSET}: {number} is outside the int32 range")


def _acls(queue: QueueConfig, path: str, found: Findings) -> None:
    """An ACL is `*` or `users groups`, one space between, names comma-separated. A name
    YuniKorn would not take as a user or group is kept (Herder matches it exactly) but warned
    about: YuniKorn ignores it, so the ACL does not mean the same there."""
    for field, acl in (("submitacl", queue.submit_acl), ("adminacl", queue.admin_acl)):
        where = f"{path}.{field}"
        if acl is None or acl.strip() == WILDCARD or not found.known(where):
            continue
        parts = acl.rstrip().split(" ")
        if len(parts) > 2:
            found.problems.append(
                f"{where}: ACL {acl!r} has more than one space: write 'user1,user2 group1,group2' (one space "
                "between users and groups, names separated by commas)"
            )
            continue
        lists = (("user", parts[0], USER_NAME), ("group", parts[1] if len(parts) == 2 else "", GROUP_NAME))
        for kind, names, pattern in lists:
            for name in (n.strip() for n in names.split(",")):
                if name and name != WILDCARD and not pattern.match(name):
                    found.warnings.append(
                        f"{where}: {name!r} is not a valid {kind} name; YuniKorn ignores such an entry, Herder "
                        f"matches it only to that exact {kind} name"
                    )
