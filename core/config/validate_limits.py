"""Checks of user and group `limits`: each entry, and entries against the queues above.

Per entry, as YuniKorn's validator: users or groups named, each a valid name or `*`, no name
twice in one queue, no named entry after a `*` one, not only a `*` group limit, `maxresources`
with a value above zero, something limited, `maxapplications` within the queue's.

Against the tree (seed 001: a limit "must be smaller than the maximum allowed at that level"):
`maxresources` within the max in force at the queue, its own or an ancestor's, and a user's or
group's limit within the limit an ancestor sets for the same name, or for `*` when it names
them not (the same holds between `*` limits). An unlimited `maxapplications` under an
ancestor that limits it is refused, as YuniKorn does.

One rule is the seed's and YuniKorn's documentation's, not YuniKorn's validator's: `*` is the
only entry of its list (`users: [sue, "*"]` is refused; give sue a limit of her own first).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.config.findings import Findings
from core.config.names import GROUP_NAME, USER_NAME, WILDCARD
from core.config.schema import Limit, QueueConfig

_KINDS = ("user", "group")


@dataclass(slots=True)
class _LimitIndex:
    """One queue's limits by name, per kind; `*` is found under WILDCARD."""

    path: str
    by_name: dict[str, dict[str, Limit]] = field(default_factory=lambda: {kind: {} for kind in _KINDS})

    def find(self, kind: str, name: str) -> tuple[Limit, bool] | None:
        """The limit that applies here to `name` and whether it is the `*` one."""
        named = self.by_name[kind]
        if name != WILDCARD and name in named:
            return named[name], False
        wildcard = named.get(WILDCARD)
        return (wildcard, True) if wildcard is not None else None


def _names(limit: Limit, kind: str) -> tuple[str, ...]:
    return limit.users if kind == "user" else limit.groups


def check_limits(root: QueueConfig, root_path: str, found: Findings, root_limits_path: str = "") -> None:
    """Check every queue's limits, top down, each against the queues above it. `root_limits_path`
    is where the root's limits were written when that is not the root (the partition's)."""
    stack: list[tuple[QueueConfig, str, list[_LimitIndex], dict[str, tuple[int, str]]]] = [(root, root_path, [], {})]
    while stack:
        queue, path, above, ceiling = stack.pop()
        here = dict(ceiling)
        for key, value in (queue.max or {}).items():
            if key not in here or value < here[key][0]:
                here[key] = (value, path)
        limits_path = root_limits_path if queue is root and root_limits_path else f"{path}.limits"
        index = _entries(queue, path, limits_path, above, here, found)
        for child in reversed(queue.queues):
            stack.append((child, f"{path}.{child.name}", [*above, index], here))


def _entries(
    queue: QueueConfig,
    path: str,
    limits_path: str,
    above: list[_LimitIndex],
    ceiling: dict[str, tuple[int, str]],
    found: Findings,
) -> _LimitIndex:
    index = _LimitIndex(path)
    wildcard_seen = dict.fromkeys(_KINDS, False)
    for i, limit in enumerate(queue.limits):
        at = f"{limits_path}[{i}]"
        where = at + (f" ({limit.limit})" if limit.limit else "")
        if not limit.users and not limit.groups and found.known(f"{at}.users") and found.known(f"{at}.groups"):
            found.problems.append(f"{where}: names no users and no groups")
        for kind in _KINDS:
            if not found.known(f"{at}.{kind}s"):
                continue
            names = _names(limit, kind)
            if WILDCARD in names and len(names) > 1:
                found.problems.append(
                    f"{where}: '*' must be the only entry of {kind}s (give the named {kind}s a limit of their own, "
                    "before the '*' one)"
                )
            pattern = USER_NAME if kind == "user" else GROUP_NAME
            for name in names:
                if name != WILDCARD and not pattern.match(name):
                    found.problems.append(f"{where}: invalid {kind} name {name!r}")
                if name in index.by_name[kind]:
                    found.problems.append(f"{where}: {kind} {name!r} has more than one limit in this queue")
                    continue
                if name != WILDCARD and wildcard_seen[kind]:
                    found.problems.append(f"{where}: {kind} {name!r} comes after the '*' {kind} limit")
                index.by_name[kind][name] = limit
            wildcard_seen[kind] = wildcard_seen[kind] or WILDCARD in names
        _amounts(queue, path, limit, at, where, ceiling, found)
        _against_above(limit, at, where, above, found)
    groups = index.by_name["group"]
    if WILDCARD in groups and len(groups) == 1:
        found.problems.append(
            f"{limits_path}: the '*' group limit may not be the only group limit (it would equal the queue's own "
            "limit; name at least one group)"
        )
    return index


def _amounts(
    queue: QueueConfig,
    path: str,
    limit: Limit,
    at: str,
    where: str,
    ceiling: dict[str, tuple[int, str]],
    found: Findings,
) -> None:
    res = limit.max_resources
    resources_read = found.known(f"{at}.maxresources")
    apps_read = found.known(f"{at}.maxapplications")
    if res is not None and res and not any(v > 0 for v in res.values()):
        found.problems.append(f"{where}: maxresources has no value above zero")
    elif res is None and limit.max_applications == 0 and resources_read and apps_read:
        found.problems.append(f"{where}: sets neither maxresources nor maxapplications")
    if queue.max_applications and limit.max_applications > queue.max_applications:
        found.problems.append(
            f"{where}: maxapplications {limit.max_applications} exceeds the queue's {queue.max_applications}"
        )
    for key, value in (res or {}).items():
        upper = ceiling.get(key)
        if upper is None or value <= upper[0]:
            continue
        allowed, source = upper
        shown, most = found.amount(key, value), found.amount(key, allowed)
        if source == path:
            found.problems.append(f"{where}: maxresources {key} {shown} exceeds the queue max {most}")
        else:
            queue_path = source.split(".queues.", 1)[-1]
            found.problems.append(
                f"{where}: maxresources {key} {shown} exceeds {most}, the max of {queue_path}, which holds here"
            )


def _against_above(limit: Limit, at: str, where: str, above: list[_LimitIndex], found: Findings) -> None:
    """A name's limit here fits the limit each queue above sets for it (or for `*`)."""
    for kind in _KINDS:
        if not found.known(f"{at}.{kind}s"):
            continue
        for name in _names(limit, kind):
            for ancestor in above:
                applying = ancestor.find(kind, name)
                if applying is None:
                    continue
                upper, via_wildcard = applying
                queue_path = ancestor.path.split(".queues.", 1)[-1]
                label = f"{kind} {name!r}: ancestor queue {queue_path!r}" + (
                    " ('*' limit)" if via_wildcard and name != WILDCARD else ""
                )
                if limit.max_resources is not None and upper.max_resources is not None:
                    for key, value in limit.max_resources.items():
                        top = upper.max_resources.get(key)
                        if top is not None and value > top:
                            found.problems.append(
                                f"{where}: {label} limits {key} to {found.amount(key, top)}, "
                                f"this limit asks {found.amount(key, value)}"
                            )
                if (
                    upper.max_applications
                    and found.known(f"{at}.maxapplications")
                    and (limit.max_applications == 0 or limit.max_applications > upper.max_applications)
                ):
                    found.problems.append(
                        f"{where}: {label} limits maxapplications to {upper.max_applications}, "
                        f"this limit asks {limit.max_applications or 'unlimited'}"
                    )
