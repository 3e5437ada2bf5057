"""Checks of placement rules: each rule on its own, then each rule chain against the queue tree.

On its own (YuniKorn's validator and rule constructors): a known rule name (`recovery` is
internal), a value for `tag` and `fixed`, a `fixed` value made of valid queue names and, when
fully qualified (`root.x`), no parent rule; a filter of type allow or deny whose single user
or group entry is a name or a regular expression (YuniKorn reads one entry as a regexp only
when it holds a character no name can, `TestUserName` / `TestGroupName`).

Against the tree, as YuniKorn's `checkPlacementRules`: a chain that starts with `fixed` rules
names a static path (`fixed root.users` then `user`: `root.users`, followed by a dynamic part).
That path must lead through parent queues; a path that ends the chain must end at a leaf, one
followed by a dynamic part at a parent; a queue on it that does not exist needs `create` on the
rule. A configured leaf cannot hold a queue, even one with no `parent` key: the path is known
now, so say `parent: true`. (A leaf that only a dynamic parent rule names may still become a
parent while empty, see notes.py.) Herder reads parent or leaf from the tree (a queue with
children is a parent); YuniKorn's check reads only the `parent` key.

A chain YuniKorn accepts but that can never place an application (a parent `fixed` rule whose
queue does not exist and whose own `create` is false) gets a warning.
"""

from __future__ import annotations

import re

from core.config.findings import Findings
from core.config.names import GROUP_NAME, RULE_NAME, SPECIAL, USER_NAME, queue_name_problem
from core.config.schema import ROOT, FilterConfig, PartitionConfig, PlacementRuleConfig, QueueConfig

RULES = frozenset({"provided", "user", "fixed", "tag"})


def check_rules(part: PartitionConfig, where: str, found: Findings) -> None:
    for i, rule in enumerate(part.placement_rules):
        at = f"{where}.placementrules[{i}]"
        before = len(found.problems)
        _rule(rule, at, found)
        if len(found.problems) == before:
            _against_tree(rule, at, part.root, found)


def is_qualified(value: str) -> bool:
    lowered = value.lower()
    return lowered == ROOT or lowered.startswith(ROOT + ".")


def _rule(rule: PlacementRuleConfig, where: str, found: Findings) -> None:
    if found.known(f"{where}.name"):
        if rule.name == "recovery":
            found.problems.append(f"{where}: the recovery rule is internal and may not be configured")
        elif not RULE_NAME.match(rule.name):
            found.problems.append(f"{where}: invalid rule name {rule.name!r} (letters, digits and _)")
        elif rule.name not in RULES:
            guess = found.guesser.did_you_mean(rule.name, RULES)
            found.problems.append(f"{where}: unknown rule {rule.name!r}{guess} (provided, user, fixed or tag)")
    if rule.name in ("tag", "fixed") and not rule.value and found.known(f"{where}.value"):
        found.problems.append(f"{where}: rule {rule.name!r} needs a value")
    if rule.name == "fixed" and rule.value:
        parts = rule.value.split(".")
        for part in parts[1:] if is_qualified(rule.value) else parts:
            problem = queue_name_problem(part, below_root=False)
            if problem is not None:
                found.problems.append(f"{where}.value: {problem}")
                break
        if is_qualified(rule.value) and rule.parent is not None:
            found.problems.append(
                f"{where}: a fixed rule with a fully qualified queue ({rule.value}) cannot have a parent rule "
                "(the parent would be ignored)"
            )
    if rule.filter is not None:
        _filter(rule.filter, f"{where}.filter", found)
    if rule.parent is not None:
        _rule(rule.parent, f"{where}.parent", found)


def _filter(flt: FilterConfig, where: str, found: Findings) -> None:
    if flt.type not in ("allow", "deny") and found.known(f"{where}.type"):
        found.problems.append(f"{where}.type: unknown type {flt.type!r} (allow or deny)")
    for kind, entries, pattern in (("user", flt.users, USER_NAME), ("group", flt.groups, GROUP_NAME)):
        if not found.known(f"{where}.{kind}s"):
            continue
        if len(entries) == 1:
            [entry] = entries
            if pattern.match(entry):
                continue
            reason = _not_a_regexp(entry)
            if reason is not None:
                found.problems.append(
                    f"{where}.{kind}s: {entry!r} is neither a valid {kind} name nor a regular expression ({reason})"
                )
            continue
        for j, entry in enumerate(entries):
            if not pattern.match(entry):
                found.warnings.append(
                    f"{where}.{kind}s[{j}]: {entry!r} is not a valid {kind} name; in a list of more than one, "
                    "YuniKorn ignores it (only a single entry may be a regular expression)"
                )


def _not_a_regexp(entry: str) -> str | None:
    """Why a single filter entry that is no name is not taken as a regexp either, or None."""
    if not SPECIAL.search(entry):
        return "it has no character a name cannot hold, such as * + ? ( ) [ { } | ^ $"
    try:
        re.compile(entry)
    except re.error as err:
        return f"it does not compile: {err}"
    return None


def _chain(rule: PlacementRuleConfig) -> list[PlacementRuleConfig]:
    """The rules in the order they build a path: the outermost parent first, `rule` last."""
    chain: list[PlacementRuleConfig] = []
    step: PlacementRuleConfig | None = rule
    while step is not None:
        chain.append(step)
        step = step.parent
    return chain[::-1]


def _child(queue: QueueConfig, name: str) -> QueueConfig | None:
    lowered = name.lower()
    return next((child for child in queue.queues if child.name.lower() == lowered), None)


def _against_tree(rule: PlacementRuleConfig, where: str, root: QueueConfig, found: Findings) -> None:
    chain = _chain(rule)
    if chain[0].name != "fixed":
        return  # the path starts with a name only an application gives
    parts: list[str] = [ROOT]
    fixed: list[tuple[PlacementRuleConfig, int]] = []  # each fixed rule and where its part of the path ends
    dynamic = False
    for step in chain:
        if step.name != "fixed":
            dynamic = True
            break
        values = step.value.lower().split(".")
        parts.extend(values[1:] if is_qualified(step.value) else values)
        fixed.append((step, len(parts)))
    path = ".".join(parts)
    queue = root
    for depth, name in enumerate(parts[1:], start=1):
        child = _child(queue, name)
        if child is None:
            if not queue.is_parent:
                found.problems.append(
                    f"{where}: {path} cannot be created: {'.'.join(parts[:depth])} is a leaf queue and cannot hold "
                    "queues (set 'parent: true' on it to make it a parent)"
                )
            elif not rule.create:
                found.problems.append(f"{where}: {path} does not exist and create is false")
            else:
                _dead_parents(chain, fixed, parts, depth, where, found)
            return
        queue = child
    if dynamic and not queue.is_parent:
        found.problems.append(
            f"{where}: {path} is a leaf queue, but the rules after the fixed one place applications in queues below "
            "it (set 'parent: true' on it, or name a parent queue)"
        )
    elif not dynamic and queue.is_parent:
        found.problems.append(f"{where}: {path} is a parent queue; applications can only go to leaf queues")


def _dead_parents(
    chain: list[PlacementRuleConfig],
    fixed: list[tuple[PlacementRuleConfig, int]],
    parts: list[str],
    missing_from: int,
    where: str,
    found: Findings,
) -> None:
    """Warn about a parent fixed rule whose queue is missing and that may not create it: the
    rule it serves then never places an application (YuniKorn accepts it and fails alike)."""
    for index, (step, end) in enumerate(fixed):
        if step is chain[-1]:
            break  # the rule itself, whose create the path check used
        if end > missing_from and not step.create:
            depth = len(chain) - 1 - index
            found.warnings.append(
                f"{where}{'.parent' * depth}: {'.'.join(parts[:end])} does not exist and this parent rule's create "
                "is false, so the rule never places an application"
            )
            return
