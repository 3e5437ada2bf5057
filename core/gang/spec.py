"""What a gang's pods tell the core: task groups, the scheduling policy parameters and the
topology the gang must (or would like to) stay inside.

The shim reads a gang source into these typed objects; the core never sees JSON. YuniKorn's
annotations (`yunikorn.apache.org/task-groups`, `task-group-name`, `schedulingPolicyParameters`)
give task groups with templates: a task group asks for `min_member` placeholders, each of
`min_resource` (one pod's request, `pods` included), placed by the group's own rules. Kueue's
`podset-required-topology` and `podset-preferred-topology` (and a Kubernetes PodGroup's
scheduling constraints) give the `topology`, whatever API defines the gang.

The PodGroup APIs (scheduler-plugins, Volcano, Kubernetes' Workload and PodGroup) have no
templates: their gangs are `from_pods`. Such a gang waits, holding nothing, until `min_members`
of its pods exist (and each task's minimum of `groups`, Volcano's `minTaskMember`), then cuts
one placeholder from each of those pods, so every placeholder is exactly the pod it stands
for. On timeout its style is `RETRY`: the placeholders are released and the gang reserves
again behind the gangs that waited in its queue; its pods never run one by one.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.objects.constraints import NO_CONSTRAINTS, NodeConstraints
from core.objects.pod_rules import NO_RULES, PodRules
from core.resources import Resource

SOFT = "Soft"
HARD = "Hard"
STYLES = (SOFT, HARD)  # what YuniKorn's gangSchedulingStyle may say
RETRY = "Retry"  # a PodGroup API's gang: on timeout, release and reserve again later
DEFAULT_TIMEOUT = 15 * 60.0  # seconds from the first placeholder allocated (YuniKorn's default)
TIMEOUT_REASON = "ResourceReservationTimeout"


@dataclass(frozen=True, slots=True)
class GangTopology:
    """Keep the gang's members inside one domain of a node label (`key`, e.g.
    `topology.example.com/rack`: the nodes sharing one value of it are one rack).

    `required`: every member (placeholders and real pods) in one domain or none placed, as
    Kueue's `podset-required-topology` and a Kubernetes PodGroup's
    `spec.schedulingConstraints.topology[].key`; otherwise preferred: one domain when one can
    hold the gang, else as few as can (Kueue's `podset-preferred-topology`).
    See core/gang/topology.py.
    """

    key: str
    required: bool = True

    @property
    def mode(self) -> str:
        return "Required" if self.required else "Preferred"

    @property
    def level(self) -> str:
        """What one domain is called in reasons: `rack` for `topology.example.com/rack` or
        `cloud.provider.com/topology-rack`, `node` for `kubernetes.io/hostname`."""
        name = self.key.rpartition("/")[2]
        if name == "hostname":
            return "node"
        return name.removeprefix("topology-") or "domain"


@dataclass(frozen=True, slots=True)
class TaskGroup:
    name: str
    min_member: int
    min_resource: Resource  # one member's request, `pods: 1` included
    constraints: NodeConstraints = NO_CONSTRAINTS
    pod: PodRules = NO_RULES  # the placeholders' labels and rules between pods (affinity, spread)

    @property
    def total(self) -> Resource:
        return self.min_resource.scaled(self.min_member)


@dataclass(frozen=True, slots=True)
class GangSpec:
    """An application's gang, as the pod carrying the task-groups annotation defines it.

    `originator` is the key of that pod: placeholders borrow its namespace, priority, user,
    queue and quota, and the shim its owner reference, priority class and pull secrets.
    """

    groups: tuple[TaskGroup, ...]
    timeout: float = DEFAULT_TIMEOUT
    style: str = SOFT
    originator: str = ""
    topology: GangTopology | None = None
    # A PodGroup API's gang (see above): at least `min_members` pods, placeholders cut from them.
    min_members: int = 0
    min_resources: Resource | None = None  # the API's minimum resources, checked like the placeholders' total
    from_pods: bool = False
    source: str = ""  # the object that defines the gang, for reasons: "scheduler-plugins PodGroup ml/train"

    def group(self, name: str) -> TaskGroup | None:
        for group in self.groups:
            if group.name == name:
                return group
        return None

    @property
    def total(self) -> Resource:
        """What all placeholders together take, at least (with the API's minimum resources)."""
        total = Resource()
        for group in self.groups:
            total = total + group.total
        if self.min_resources is not None:
            total = total.component_max(self.min_resources)
        return total

    @property
    def members(self) -> int:
        return max(self.min_members, sum(group.min_member for group in self.groups))
