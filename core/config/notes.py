"""Notes on a valid configuration: things Herder accepts but reads in a way worth telling.

Parsing already notes what it reads differently from how it is written (`cpu` read as
`vcore`, `stateaware` read as `fifo`, plain numbers that only made sense in YuniKorn's old
units); this module adds notes that need the whole partition, such as configured leaves that
a placement rule may turn into parents. Every path that validates a configuration shows them:
`herder validate`, `POST /ws/v1/validate-conf`, the ConfigMap reload's event and the
simulator's summary.
"""

from __future__ import annotations

from core.config.schema import PartitionConfig, PlacementRuleConfig, QueueConfig, SchedulerConfig


def config_notes(cfg: SchedulerConfig) -> list[str]:
    """Warnings about a configuration that passed validation, each naming where it applies."""
    notes: list[str] = []
    for part in cfg.partitions:
        notes.extend(_implicit_parents(part))
    return notes


def _parent_rules(rules: tuple[PlacementRuleConfig, ...]) -> list[tuple[int, PlacementRuleConfig]]:
    out: list[tuple[int, PlacementRuleConfig]] = []
    for index, rule in enumerate(rules):
        parent = rule.parent
        while parent is not None:
            out.append((index, parent))
            parent = parent.parent
    return out


def _implicit_parents(part: PartitionConfig) -> list[str]:
    parent_rules = _parent_rules(part.placement_rules)
    if not parent_rules:
        return []
    notes: list[str] = []

    def walk(queue: QueueConfig, path: str) -> None:
        for child in queue.queues:
            child_path = f"{path}.{child.name}"
            if child.may_become_parent:
                # a fixed parent rule names its queue now: validate_rules.py wants `parent: true` there
                naming = [index for index, rule in parent_rules if rule.name != "fixed"]
                if naming:
                    which = ", ".join(str(index) for index in sorted(set(naming)))
                    notes.append(
                        f"partitions[{part.name}].queues.{child_path}: a leaf with no children and no "
                        f"'parent' key; it becomes a parent when the parent rule of placementrules[{which}] "
                        "names it while it holds no applications (set 'parent: true' or 'parent: false' "
                        "to decide)"
                    )
            walk(child, child_path)

    walk(part.root, part.root.name)
    return notes
