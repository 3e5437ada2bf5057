"""Where a pod may run: node selector, required node affinity and tolerations.

These are the rules about nodes alone; rules between pods (affinity, spread, host ports) are
in `pod_rules.py`. `unsupported_required` lists rules a shim knows the core cannot honour: a
pod with any of them stays pending with a reason instead of being placed wrongly;
`unsupported_preferred` lists soft rules that are ignored, which an event says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = NO_SCHEDULE

    def describe(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""  # empty with operator Exists: tolerates every taint
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: str = ""  # empty: every effect

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if not self.key:
            return self.operator == "Exists"
        if self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist | Gt | Lt
    values: tuple[str, ...] = ()
    field: bool = False  # a matchFields requirement (only metadata.name exists)

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if self.field:
            present, value = (True, node_name) if self.key == "metadata.name" else (False, "")
        else:
            present = self.key in labels
            value = labels.get(self.key, "")
        op = self.operator
        if op == "In":
            return present and value in self.values
        if op == "NotIn":
            return not present or value not in self.values
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return not present
        if op in ("Gt", "Lt"):
            if not present or len(self.values) != 1:
                return False
            try:
                have, want = int(value), int(self.values[0])
            except ValueError:
                return False
            return have > want if op == "Gt" else have < want
        return False


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """All requirements of a term must match (AND); an empty term matches no node, as in Kubernetes."""

    requirements: tuple[NodeSelectorRequirement, ...]

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        return bool(self.requirements) and all(req.matches(labels, node_name) for req in self.requirements)


@dataclass(frozen=True, slots=True)
class NodeConstraints:
    node_selector: tuple[tuple[str, str], ...] = ()
    required_terms: tuple[NodeSelectorTerm, ...] = ()  # any term may match (OR); empty: no rule
    tolerations: tuple[Toleration, ...] = ()
    unsupported_required: tuple[str, ...] = ()
    unsupported_preferred: tuple[str, ...] = ()
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        # kept, like a Resource's: (request, constraints) is the key of every remembered node choice
        value = self._hash
        if not value:
            value = hash(
                (
                    self.node_selector,
                    self.required_terms,
                    self.tolerations,
                    self.unsupported_required,
                    self.unsupported_preferred,
                )
            )
            object.__setattr__(self, "_hash", value or 1)
        return value or 1

    def is_trivial(self) -> bool:
        return not (self.node_selector or self.required_terms or self.tolerations)


NO_CONSTRAINTS = NodeConstraints()
