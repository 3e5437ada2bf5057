"""What one pod says about its gang, whichever API it was read from (core/gang/spec.py), and the
two shapes the PodGroup APIs share: the object a pod names (`GroupRef`) and what that object
defines (`GroupDefinition`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from core.gang.spec import GangSpec
from core.resources import QuantityError, Resource, resource_from_kubernetes
from shim.convert.objects import ConversionError, meta_of


@dataclass(frozen=True, slots=True)
class PodGang:
    """The task group the pod belongs to, the gang it defines (if any), whether it is a
    placeholder Herder made, and what of its gang's definition was ignored for a default
    (each said as a warning Event on the pod; never a reason to wait)."""

    task_group: str = ""
    spec: GangSpec | None = None
    placeholder: bool = False
    notices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GroupRef:
    """The object a pod names as its gang: a PodGroup of scheduler-plugins, Volcano or
    Kubernetes, or one pod group of a Kubernetes Workload (and one replica of it).

    The pods naming one group are one application: `application_id` is made from the names,
    so every pod of the group (and every placeholder Herder cuts from them) lands in it.
    """

    api: str  # "scheduler-plugins", "Volcano", "Kubernetes"
    kind: str  # "PodGroup" or "Workload"
    namespace: str
    name: str
    part: str = ""  # a Workload's pod group (the pod's spec.workloadRef.podGroup)
    replica: str = ""  # the Workload replica (spec.workloadRef.podGroupReplicaKey): a gang of its own
    task: str = ""  # the pod's task in the group (Volcano's volcano.sh/task-spec)

    @property
    def key(self) -> tuple[str, str, str, str]:
        """The object's key among the watched groups (api, kind, namespace, name)."""
        return (self.api, self.kind, self.namespace, self.name)

    @property
    def application_id(self) -> str:
        return "-".join(part for part in (self.namespace, self.name, self.part, self.replica) if part)

    @property
    def task_group(self) -> str:
        """The pod's task group in the core: its task, else the pod group it names."""
        return self.task or self.part or self.name

    @property
    def display(self) -> str:
        where = f"{self.api} {self.kind} {self.namespace}/{self.name}"
        if self.part:
            where += f" pod group {self.part}"
        if self.replica:
            where += f" replica {self.replica}"
        return where


@dataclass(frozen=True, slots=True)
class GroupDefinition:
    """What a group object says, read once per version of the object: the gang of each of its
    pod groups ("" for a PodGroup, which is one), None for one that asks for no gang (a basic
    policy, a minimum of 0), or the problem that makes its pods wait (naming the field); and
    what of it Herder does not read (a warning Event on each of its pods, never a wait)."""

    gangs: Mapping[str, GangSpec | None] = field(default_factory=lambda: MappingProxyType({}))
    problem: str = ""
    notices: tuple[str, ...] = ()


def whole_number(value: Any, where: str, least: int = 0) -> int:
    """A count from an object (minMember, minCount): an integer of at least `least`."""
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise ConversionError(f"{where}: must be a whole number >= {least}, got {value!r}")
    return value


def min_resources(value: Any, where: str) -> Resource | None:
    """A group's minimum resources (a Kubernetes resource list), None when unset."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ConversionError(f"{where}: must be a map of quantities, got {value!r}")
    try:
        return resource_from_kubernetes(value, where)
    except QuantityError as err:
        raise ConversionError(str(err)) from None


def object_display(api: str, kind: str, obj: Mapping[str, Any]) -> str:
    meta = meta_of(obj)
    return f"{api} {kind} {meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


def string_field(value: Any, where: str) -> str:
    """A name a pod gives (a label, an annotation, a spec field): a string, "" when unset."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise ConversionError(f"{where}: must be a string, got {value!r}")
    return value


def gang_policy_minimum(policy: Mapping[str, Any], where: str) -> int | None:
    """A Kubernetes scheduling policy's `gang.minCount`, or None for the `basic` policy;
    exactly one of the two must be set (the Workload's and the PodGroup's policies alike)."""
    gang, basic = policy.get("gang"), policy.get("basic")
    if (gang is None) == (basic is None):
        raise ConversionError(f"{where}: exactly one of basic or gang must be set")
    if gang is None:
        return None
    if not isinstance(gang, Mapping):
        raise ConversionError(f"{where}.gang: must be an object with minCount, got {gang!r}")
    return whole_number(gang.get("minCount"), f"{where}.gang.minCount", least=1)
