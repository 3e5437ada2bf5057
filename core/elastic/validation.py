"""The rules an ElasticQuota change, a deletion and a pod's quota labels must obey (pure; the webhook
calls these too). Each problem names the quota and the rule."""

from __future__ import annotations

from collections.abc import Mapping

from core.elastic.spec import DEFAULT_QUOTA, ROOT_QUOTA, SYSTEM_QUOTA, ElasticQuotaSpec
from core.resources import Resource, format_amount, format_amounts

RESERVED = (SYSTEM_QUOTA, DEFAULT_QUOTA, ROOT_QUOTA)
GROUPS = (SYSTEM_QUOTA, DEFAULT_QUOTA)  # quota groups outside the tree that an object may stand for


def _children(current: Mapping[str, ElasticQuotaSpec], name: str) -> list[ElasticQuotaSpec]:
    return [s for s in current.values() if s.parent == name and s.name != name]


MAX_QUOTA_DEPTH = 32  # parent quotas above a quota; real trees have a handful


def validate_quota_change(
    current: Mapping[str, ElasticQuotaSpec],
    new: ElasticQuotaSpec,
    previous: ElasticQuotaSpec | None = None,
) -> list[str]:
    """Every problem with creating or replacing `new` in the tree `current` (empty: accepted).
    `previous` is the object being replaced as its writer last saw it (an admission request's
    old object), when it may differ from the tree's own view."""
    where = f"quota {new.name}"
    problems: list[str] = []
    if new.name in GROUPS:
        return _group_problems(new)
    if new.name in RESERVED:
        problems.append(f"{where}: the name {new.name!r} is reserved")
    weights = new.shared_weight if new.shared_weight is not None else Resource()
    for label, values in (("min", new.min), ("max", new.max), ("shared-weight", weights)):
        for key, value in sorted(values.items()):
            if value < 0:
                problems.append(f"{where}: {label} {key} is negative ({format_amount(key, value)})")
    for key, value in sorted(new.min.items()):
        if key not in new.max:
            problems.append(f"{where}: min names {key} which max does not")
        elif value > new.max[key]:
            problems.append("{}: min {} {} > max {}".format(where, key, *format_amounts(key, value, new.max[key])))
    old = current.get(new.name)
    tree = {**current, new.name: new}
    if new.parent:
        parent = tree.get(new.parent)
        if parent is None:
            problems.append(f"{where}: parent {new.parent} does not exist")
        elif not parent.is_parent:
            problems.append(f"{where}: parent {new.parent} is not a parent quota (is-parent is false)")
    seen = {new.name}
    step = new.parent
    while step and step in tree:
        if step in seen:
            problems.append(f"{where}: parent chain forms a cycle through {step}")
            break
        seen.add(step)
        step = tree[step].parent
    else:
        if len(seen) - 1 > MAX_QUOTA_DEPTH:
            problems.append(f"{where}: {len(seen) - 1} parent quotas above it, more than the {MAX_QUOTA_DEPTH} allowed")
    was = previous if previous is not None else old
    if was is not None and was.is_parent != new.is_parent:
        # Seed 002, configuration limit 5: a quota group is never converted between parent and child.
        before, after = ("true", "false") if was.is_parent else ("false", "true")
        problems.append(
            f"{where}: is-parent cannot change from {before} to {after}: a quota stays a parent or a child "
            "for its whole life (delete it and create it again to change it)"
        )
    parent_spec = tree.get(new.parent) if new.parent else None
    if parent_spec is not None:
        siblings = [s for s in _children(tree, new.parent)]
        problems += _mins_within(parent_spec, siblings)
        problems += _keys_within(parent_spec, [new])
    if new.is_parent:
        problems += _mins_within(new, _children(tree, new.name))
        problems += _keys_within(new, _children(tree, new.name))
    return problems


def _group_problems(new: ElasticQuotaSpec) -> list[str]:
    """The default group's min and max may be set by an object named `default` (seed 002: "users
    can modify them on demand"); the system group's object only shows it: its min and max stay
    unlimited. Neither sits in the tree, so neither has a parent nor children."""
    where = f"quota {new.name}"
    problems = []
    if new.parent or new.is_parent:
        problems.append(f"{where}: the {new.name} quota group sits outside the tree (no parent, not a parent)")
    if new.name == SYSTEM_QUOTA and (new.min or new.max):
        problems.append(f"{where}: the system quota's min and max are unlimited and cannot be set")
    for label, values in (("min", new.min), ("max", new.max)):
        for key, value in sorted(values.items()):
            if value < 0:
                problems.append(f"{where}: {label} {key} is negative ({format_amount(key, value)})")
    for key, value in sorted(new.min.items()):
        if key in new.max and value > new.max[key]:
            problems.append("{}: min {} {} > max {}".format(where, key, *format_amounts(key, value, new.max[key])))
    return problems


def _keys_within(parent: ElasticQuotaSpec, children: list[ElasticQuotaSpec]) -> list[str]:
    """A child limits only resources its parent limits: the parent's runtime is the child's pool,
    and a key the parent does not limit would leave the child unbounded (Koordinator requires
    the same, as a subset since its ElasticQuotaEnableUpdateResourceKey gate)."""
    problems = []
    for child in sorted(children, key=lambda c: c.name):
        extra = sorted(key for key in child.max if key not in parent.max)
        if extra:
            problems.append(
                f"quota {child.name}: max names {', '.join(extra)} which its parent {parent.name}'s max does not"
            )
    return problems


def _mins_within(parent: ElasticQuotaSpec, children: list[ElasticQuotaSpec]) -> list[str]:
    """Below the first level (under any parent but the root, seed 002's configuration limit 1),
    children's mins sum to at most their parent's min."""
    problems = []
    keys = sorted({k for c in children for k in c.min})
    for key in keys:
        total = sum(c.min.get_value(key) for c in children)
        if total > parent.min.get_value(key):
            summed, least = format_amounts(key, total, parent.min.get_value(key))
            problems.append(f"quota {parent.name}: children's min {key} sum {summed} > its min {least}")
    return problems


def validate_quota_deletion(
    current: Mapping[str, ElasticQuotaSpec], name: str, pods_by_quota: Mapping[str, int]
) -> list[str]:
    """Every reason `name` cannot be deleted (empty: it can); as in Koordinator, the system and
    default groups' objects stay."""
    if name in RESERVED:
        return [f"quota {name}: the {name} quota cannot be deleted"]
    problems = []
    children = _children(current, name)
    if children:
        names = ", ".join(sorted(c.name for c in children))
        problems.append(f"quota {name}: cannot be deleted while it has children ({names})")
    if pods_by_quota.get(name, 0) > 0:
        problems.append(f"quota {name}: cannot be deleted while {pods_by_quota[name]} pod(s) use it")
    return problems


def validate_pod_labels(
    current: Mapping[str, ElasticQuotaSpec],
    quota_label: str | None,
    old_preemptible: bool | None,
    new_preemptible: bool,
) -> list[str]:
    """A pod may not name a parent quota, nor change its preemptible label (old None: a new pod)."""
    problems = []
    if quota_label and quota_label in current and current[quota_label].is_parent:
        problems.append(f"pod names quota {quota_label}, which is a parent quota; pods belong to leaves")
    if old_preemptible is not None and old_preemptible != new_preemptible:
        problems.append("pod's preemptible label cannot change")
    return problems
