"""What the shim tells the core: an ask (a pending pod), an allocation (a placed pod) and
the identity of the user who submitted it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple

from core.gang.spec import GangSpec
from core.objects.constraints import NO_CONSTRAINTS, NodeConstraints
from core.objects.pod_rules import NO_RULES, PodRules
from core.objects.volumes import NO_PLAN, VolumePlan
from core.resources import Resource

DEFAULT_USER = "nobody"
NO_TAGS: Mapping[str, str] = MappingProxyType({})  # shared by every ask without tags: nobody may change it

# Application tags the shim derives from a pod's namespace (YuniKorn's names).
TAG_NAMESPACE = "namespace"
TAG_PARENT_QUEUE = "namespace.parentqueue"
TAG_QUOTA = "namespace.resourcequota"
TAG_GUARANTEED = "namespace.resourceguaranteed"
TAG_MAX_APPS = "namespace.resourcemaxapps"

# Allocation tags.
TAG_FOREIGN = "foreign"
FOREIGN_STATIC = "static"
FOREIGN_DEFAULT = "default"


@dataclass(frozen=True, slots=True)
class UserGroup:
    user: str = DEFAULT_USER
    groups: tuple[str, ...] = ()


NO_USER = UserGroup()  # the user of a pod that names none


class Ask(NamedTuple):
    """A pod Herder is asked to place.

    `tags` carries what the namespace says (see TAG_*); `queue` is the queue the pod names, if
    any; `quota` is the elastic quota the pod names with its label, if any (the core resolves
    namespace and default quotas itself). A gang's pods name their `task_group`; the pod that
    defines the gang carries its `gang` spec; `placeholder` asks are the core's own (see
    core/gang/).

    A named tuple, like `Allocation`: one is made for every pod the shim reads, and a frozen
    dataclass set its 20 fields one `object.__setattr__` call each (about 5 µs a pod of the
    50,000 a restart reads). Copies with changes use `_replace`.
    """

    key: str
    application_id: str
    resource: Resource
    name: str = ""  # "<namespace>/<pod>" for people
    namespace: str = ""
    queue: str | None = None
    tags: Mapping[str, str] = NO_TAGS
    user: UserGroup = NO_USER
    priority: int = 0
    constraints: NodeConstraints = NO_CONSTRAINTS
    pod: PodRules = NO_RULES  # labels and rules between pods (affinity, spread, host ports)
    quota: str | None = None
    preemptible: bool = True
    allow_preemption: bool = True  # False: the pod asked not to be preempted across queues (chosen last)
    created: float = 0.0
    problems: tuple[str, ...] = ()  # input the shim could not read (kept pending with this reason)
    task_group: str = ""
    gang: GangSpec | None = None
    placeholder: bool = False
    claims: tuple[str, ...] = ()  # its PersistentVolumeClaims, "<namespace>/<name>"
    notices: tuple[str, ...] = ()  # input read past with a default: said once as a warning event, never waited on
    active_deadline: float | None = None  # spec.activeDeadlineSeconds: the kubelet ends it then

    @property
    def display_name(self) -> str:
        return self.name or self.key

    def copy_as(self, key: str, name: str, created: float) -> Ask:
        """The same ask for another pod (a replica): `_replace` of those three fields, without
        its per-call field lookups (the simulator makes one per replica)."""
        return Ask(
            key,
            self.application_id,
            self.resource,
            name,
            self.namespace,
            self.queue,
            self.tags,
            self.user,
            self.priority,
            self.constraints,
            self.pod,
            self.quota,
            self.preemptible,
            self.allow_preemption,
            created,
            self.problems,
            self.task_group,
            self.gang,
            self.placeholder,
            self.claims,
            self.notices,
            self.active_deadline,
        )


class Allocation(NamedTuple):
    """A pod on a node.

    Herder's own allocations carry their `ask`; foreign ones (pods of other schedulers) carry
    `foreign` = "static" (owned by a Node: never preempted) or "default" and count on their
    node only. `queue_path` is set by the core when it places or recovers an allocation.
    `allocation_time` and `request_time` are Unix time (the pod's start and creation).
    `replaces` names the gang placeholder this pod takes the place of: the shim deletes that
    placeholder, then binds this pod to the same node. `volume_plan` is what the shim writes
    to the pod's claims before it binds the pod (core/objects/volumes.py).

    A named tuple rather than a frozen dataclass: one is made for every placement, and a
    frozen dataclass sets each of its 15 fields through `object.__setattr__` (1.9 µs against
    0.35 µs, a twentieth of a decision). Copies with changes use `_replace`.
    """

    key: str
    node_id: str
    resource: Resource
    priority: int = 0
    allocation_time: float = 0.0
    request_time: float = 0.0
    application_id: str = ""
    name: str = ""
    foreign: str | None = None
    ask: Ask | None = None
    queue_path: str = ""
    pod: PodRules | None = None  # a foreign pod's labels and rules (Herder's are its ask's)
    replaces: str = ""
    volume_plan: VolumePlan = NO_PLAN
    foreign_claims: tuple[str, ...] = ()  # a foreign pod's claims (Herder's are its ask's)
    foreign_deadline: float | None = None  # a foreign pod's activeDeadlineSeconds (Herder's are its ask's)

    @property
    def rules(self) -> PodRules:
        if self.ask is not None:
            return self.ask.pod
        return self.pod or NO_RULES

    @property
    def claims(self) -> tuple[str, ...]:
        return self.ask.claims if self.ask is not None else self.foreign_claims

    @property
    def active_deadline(self) -> float | None:
        """Seconds after its start at which the kubelet ends the pod (None: no deadline)."""
        return self.ask.active_deadline if self.ask is not None else self.foreign_deadline

    @property
    def placeholder(self) -> bool:
        return self.ask is not None and self.ask.placeholder

    @property
    def tags(self) -> dict[str, str]:
        return {TAG_FOREIGN: self.foreign} if self.foreign else {}

    @property
    def display_name(self) -> str:
        return self.name or self.key

    def recovered(self, application_id: str, ask: Ask, queue_path: str) -> Allocation:
        """This allocation as the core keeps it once recovered into an application and a queue
        (`_replace` of those three fields, without its per-call field lookups)."""
        return Allocation(
            self.key,
            self.node_id,
            self.resource,
            self.priority,
            self.allocation_time,
            self.request_time,
            application_id,
            self.name,
            self.foreign,
            ask,
            queue_path,
            self.pod,
            self.replaces,
            self.volume_plan,
            self.foreign_claims,
            self.foreign_deadline,
        )

    @staticmethod
    def for_ask(ask: Ask, node_id: str, allocation_time: float, queue_path: str = "") -> Allocation:
        """A placed (or recovered, already bound) Herder pod."""
        # by position: this runs for every placement
        return Allocation(
            ask.key,
            node_id,
            ask.resource,
            ask.priority,
            allocation_time,
            ask.created,
            ask.application_id,
            ask.name,
            None,
            ask,
            queue_path,
        )
