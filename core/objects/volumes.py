"""Persistent volumes as kube-scheduler's VolumeBinding, VolumeZone and VolumeRestrictions see them.

The shim (or the simulator) tells the core the StorageClasses, PersistentVolumes and
PersistentVolumeClaims it sees; a pod names its claims (`Ask.claims`). For each claim of a pod,
on each node:

- a claim that does not exist, whose class does not exist, or that is unbound with a class that
  binds at creation (`Immediate`, or no class) makes the pod wait, naming the claim;
- a claim bound to a volume (or promised one by an earlier placement) allows the nodes the
  volume's `nodeAffinity` and zone/region labels allow;
- an unbound claim of a `WaitForFirstConsumer` class is resolved at placement: the smallest
  available static volume of its class, big enough, with the access modes, whose node
  affinity allows the node; otherwise, if the class has a provisioner and the node is inside
  its `allowedTopologies`, the provisioner is asked to make one on that node (the claim's
  `volume.kubernetes.io/selected-node` annotation);
- a `ReadWriteOncePod` claim admits one pod.

The choice travels with the placement (`VolumePlan`) so the shim writes it before it binds the
pod; until the claim shows bound the volume (or node) is *promised* to it, so two pods placed
in one cycle never take the same volume.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from core.objects.constraints import NodeSelectorTerm

_T = TypeVar("_T")
HOSTNAME = "kubernetes.io/hostname"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
# The node labels a volume's own labels pin it to (VolumeZone), current and legacy names.
ZONE_LABELS = (
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
)


@dataclass(frozen=True, slots=True)
class StorageClass:
    name: str
    provisioner: str = ""
    wait_for_first_consumer: bool = False
    allowed_topologies: tuple[NodeSelectorTerm, ...] = ()  # any term matches; () = every node
    default: bool = False  # `storageclass.kubernetes.io/is-default-class: "true"`


@dataclass(frozen=True, slots=True)
class PersistentVolume:
    name: str
    storage_class: str = ""
    capacity: int = 0  # bytes
    access_modes: frozenset[str] = frozenset()
    node_affinity: tuple[NodeSelectorTerm, ...] = ()  # required terms, any matches; () = every node
    labels: Mapping[str, str] = field(default_factory=dict)
    claim: str = ""  # "<namespace>/<name>" of its claimRef, "" when available
    released: bool = False  # phase Released/Failed: not bindable again


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    key: str  # "<namespace>/<name>"
    storage_class: str | None = None  # None: not set (the default class applies)
    volume_name: str = ""
    request: int = 0  # bytes
    access_modes: frozenset[str] = frozenset()
    selected_node: str = ""
    problem: str = ""  # what the shim could not read: pods using it wait with this


@dataclass(frozen=True, slots=True)
class VolumePlan:
    """What the shim writes before binding the pod: volumes to bind to claims (as
    kube-scheduler's binder does, the volume's claimRef), and claims to provision on the node."""

    bind: tuple[tuple[str, str], ...] = ()  # (claim key, volume name)
    provision: tuple[str, ...] = ()  # claim keys; the node is the placement's

    def __bool__(self) -> bool:
        return bool(self.bind or self.provision)


NO_PLAN = VolumePlan()


@dataclass(frozen=True, slots=True)
class NodeView:
    """What the volume filters read of a node."""

    name: str
    labels: Mapping[str, str]


def _any_term(terms: tuple[NodeSelectorTerm, ...], node: NodeView) -> bool:
    return not terms or any(term.matches(node.labels, node.name) for term in terms)


def _hostnames(volume: PersistentVolume) -> frozenset[str] | None:
    """The hostnames a volume's node affinity pins it to, when that is all it says (one term,
    `kubernetes.io/hostname In [...]`); None for any other affinity."""
    if len(volume.node_affinity) != 1 or len(volume.node_affinity[0].requirements) != 1:
        return None
    requirement = volume.node_affinity[0].requirements[0]
    if requirement.field or requirement.key != HOSTNAME or requirement.operator != "In":
        return None
    return frozenset(requirement.values)


def volume_node_conflict(volume: PersistentVolume, node: NodeView) -> str | None:
    """Why the volume cannot be used from this node (node affinity, then zone labels), or None."""
    if not _any_term(volume.node_affinity, node):
        return f"volume node affinity conflict (volume {volume.name})"
    if not any(key in node.labels for key in ZONE_LABELS):
        return None  # as kube-scheduler: a node with no zone or region labels (one-zone cluster) passes
    for key in ZONE_LABELS:
        wanted = volume.labels.get(key)
        if wanted is not None and node.labels.get(key) not in set(wanted.split("__")):
            return f"volume zone conflict (volume {volume.name} in {key}={wanted})"
    return None


class VolumeCatalog:
    """The storage objects the core knows, the pods using each claim, and the promises made."""

    def __init__(self) -> None:
        self.classes: dict[str, StorageClass] = {}
        self.volumes: dict[str, PersistentVolume] = {}
        self.claims: dict[str, PersistentVolumeClaim] = {}
        self._users: dict[str, dict[str, str]] = {}  # claim key -> placed pod key -> its name
        self._plans: dict[str, VolumePlan] = {}  # placed pod key -> its plan, until the claims show it
        self._promised_volume: dict[str, str] = {}  # claim key -> volume name
        self._promised_node: dict[str, str] = {}  # claim key -> node asked to provision it
        self._volume_taken: dict[str, str] = {}  # volume name -> claim key promised it
        # volume name -> the claim naming it in volumeName: the claim's watch event may come
        # before the volume's own (with its claimRef), and the volume is taken all the same
        self._named_by_claim: dict[str, str] = {}

    # -- objects -------------------------------------------------------------------------
    def put_class(self, storage_class: StorageClass) -> bool:
        return self._put(self.classes, storage_class.name, storage_class)

    def put_volume(self, volume: PersistentVolume) -> bool:
        return self._put(self.volumes, volume.name, volume)

    def put_claim(self, claim: PersistentVolumeClaim) -> bool:
        self._forget_volume_name(claim.key)
        if claim.volume_name:  # bound: what was promised to it is now the claim's own word
            self._named_by_claim[claim.volume_name] = claim.key
            self._promised_node.pop(claim.key, None)
            promised = self._promised_volume.pop(claim.key, None)
            if promised is not None:
                self._volume_taken.pop(promised, None)
        return self._put(self.claims, claim.key, claim)

    def _forget_volume_name(self, key: str) -> None:
        old = self.claims.get(key)
        if old is not None and old.volume_name and self._named_by_claim.get(old.volume_name) == key:
            del self._named_by_claim[old.volume_name]

    @staticmethod
    def _put(table: dict[str, _T], key: str, value: _T) -> bool:
        if table.get(key) == value:
            return False
        table[key] = value
        return True

    def remove_class(self, name: str) -> bool:
        return self.classes.pop(name, None) is not None

    def remove_volume(self, name: str) -> bool:
        return self.volumes.pop(name, None) is not None

    def remove_claim(self, key: str) -> bool:
        self._forget_volume_name(key)
        return self.claims.pop(key, None) is not None

    def class_of(self, claim: PersistentVolumeClaim) -> StorageClass | None:
        if claim.storage_class is None:  # as the DefaultStorageClass admission plugin fills it in
            return next((c for c in sorted(self.classes.values(), key=lambda c: c.name) if c.default), None)
        return self.classes.get(claim.storage_class)

    # -- pods using claims -----------------------------------------------------------------
    def placed(self, pod_key: str, name: str, node: str, claims: Iterable[str], plan: VolumePlan) -> None:
        for claim in claims:
            self._users.setdefault(claim, {})[pod_key] = name
        if plan:
            self._plans[pod_key] = plan
            for claim, volume in plan.bind:
                self._promised_volume[claim] = volume
                self._volume_taken[volume] = claim
            for claim in plan.provision:
                self._promised_node[claim] = node

    def released(self, pod_key: str, claims: Iterable[str]) -> None:
        """The pod is gone (or its binding failed): its claims lose a user, its promises go."""
        for claim in claims:
            users = self._users.get(claim)
            if users is not None:
                users.pop(pod_key, None)
                if not users:
                    del self._users[claim]
        plan = self._plans.pop(pod_key, None)
        if plan is not None:
            for claim, volume in plan.bind:
                if self._promised_volume.get(claim) == volume:
                    del self._promised_volume[claim]
                    self._volume_taken.pop(volume, None)
            for claim in plan.provision:
                self._promised_node.pop(claim, None)

    # -- the filter ------------------------------------------------------------------------
    def claim_refusal(self, key: str, pod_key: str) -> str | None:
        """Why the claim keeps the pod off every node, whatever the node, or None."""
        claim = self.claims.get(key)
        if claim is None:
            return f'persistentvolumeclaim "{key}" not found'
        if claim.problem:
            return claim.problem
        if READ_WRITE_ONCE_POD in claim.access_modes:
            others = sorted(name for user, name in self._users.get(key, {}).items() if user != pod_key)
            if others:
                return f"claim {key} is ReadWriteOncePod and in use by pod {others[0]}"
        if claim.volume_name or key in self._promised_volume:
            return None
        storage_class = self.class_of(claim)
        if storage_class is None:
            if claim.storage_class:
                return f'storageclass "{claim.storage_class}" of claim {key} not found'
            return f"unbound immediate PersistentVolumeClaim {key} (no StorageClass: waiting for it to be bound)"
        if not storage_class.wait_for_first_consumer:
            return f"unbound immediate PersistentVolumeClaim {key} (StorageClass {storage_class.name} binds it)"
        return None

    def on_node(self, key: str, node: NodeView, taken: set[str]) -> tuple[str | None, tuple[str, str] | None]:
        """For a claim `claim_refusal` lets through: why it refuses this node (or None), and
        what placing there would do: ("bind", volume), ("provision", node) or None (bound).
        `taken`: volumes the pod's other claims chose on this node."""
        claim = self.claims[key]
        volume_name = claim.volume_name or self._promised_volume.get(key, "")
        if volume_name:
            volume = self.volumes.get(volume_name)
            if volume is None:
                return f'persistentvolume "{volume_name}" of claim {key} not found', None
            return volume_node_conflict(volume, node), None
        promised = claim.selected_node or self._promised_node.get(key, "")
        if promised:
            if promised != node.name:
                return f"claim {key} is being provisioned for node {promised}", None
            return None, None
        storage_class = self.class_of(claim)
        assert storage_class is not None  # claim_refusal said so
        volume = self._static_volume(claim, storage_class.name, node, taken)
        if volume is not None:
            return None, ("bind", volume.name)
        if storage_class.provisioner and storage_class.provisioner != NO_PROVISIONER:
            if _any_term(storage_class.allowed_topologies, node):
                return None, ("provision", node.name)
            return f"claim {key}: node outside the allowedTopologies of StorageClass {storage_class.name}", None
        return f"no available PersistentVolume for claim {key} on this node", None

    def _static_volume(
        self, claim: PersistentVolumeClaim, class_name: str, node: NodeView, taken: set[str]
    ) -> PersistentVolume | None:
        """The smallest available volume of the class that fits the claim and the node."""
        best: PersistentVolume | None = None
        for volume in self._candidates(claim, class_name):
            if volume.name in taken or volume_node_conflict(volume, node) is not None:
                continue
            if best is None or (volume.capacity, volume.name) < (best.capacity, best.name):
                best = volume
        return best

    def node_refusals(self, key: str, nodes: Sequence[NodeView]) -> dict[str, str]:
        """For a pod with this one claim (past `claim_refusal`): why each refused node refuses,
        exactly as `on_node` says node by node, without looking at every volume for every node:
        the candidate volumes are found once, and a volume pinned to hostnames (a local volume's
        usual node affinity) is checked on its own nodes only."""
        claim = self.claims[key]
        by_name = {node.name: node for node in nodes}
        volume_name = claim.volume_name or self._promised_volume.get(key, "")
        if volume_name:
            volume = self.volumes.get(volume_name)
            if volume is None:
                missing = f'persistentvolume "{volume_name}" of claim {key} not found'
                return dict.fromkeys(by_name, missing)
            refused: dict[str, str] = {}
            hosts = _hostnames(volume)
            for node in nodes:
                if hosts is not None and node.name not in hosts:
                    refused[node.name] = f"volume node affinity conflict (volume {volume.name})"
                    continue
                conflict = volume_node_conflict(volume, node)
                if conflict is not None:
                    refused[node.name] = conflict
            return refused
        promised = claim.selected_node or self._promised_node.get(key, "")
        if promised:
            message = f"claim {key} is being provisioned for node {promised}"
            return {name: message for name in by_name if name != promised}
        storage_class = self.class_of(claim)
        assert storage_class is not None  # claim_refusal said so
        covered: set[str] = set()
        for volume in self._candidates(claim, storage_class.name):
            hosts = _hostnames(volume)
            on = [by_name[h] for h in hosts if h in by_name] if hosts is not None else nodes
            covered.update(node.name for node in on if volume_node_conflict(volume, node) is None)
        left = [node for node in nodes if node.name not in covered]
        if storage_class.provisioner and storage_class.provisioner != NO_PROVISIONER:
            outside = f"claim {key}: node outside the allowedTopologies of StorageClass {storage_class.name}"
            return {node.name: outside for node in left if not _any_term(storage_class.allowed_topologies, node)}
        none_here = f"no available PersistentVolume for claim {key} on this node"
        return {node.name: none_here for node in left}

    def _candidates(self, claim: PersistentVolumeClaim, class_name: str) -> list[PersistentVolume]:
        """The available volumes of the class that fit the claim, on whichever node they are."""
        return [
            volume
            for volume in self.volumes.values()
            if volume.storage_class == class_name
            and not volume.released
            and not (volume.claim and volume.claim != claim.key)
            and self._volume_taken.get(volume.name, claim.key) == claim.key
            and self._named_by_claim.get(volume.name, claim.key) == claim.key
            and volume.capacity >= claim.request
            and claim.access_modes <= volume.access_modes
        ]

    def plan(self, claims: Iterable[str], node: NodeView) -> tuple[str | None, VolumePlan]:
        """Why the claims refuse the node, or None and what to write when the pod goes there."""
        taken: set[str] = set()
        bind: list[tuple[str, str]] = []
        provision: list[str] = []
        for key in claims:
            reason, action = self.on_node(key, node, taken)
            if reason is not None:
                return reason, NO_PLAN
            if action is not None and action[0] == "bind":
                taken.add(action[1])
                bind.append((key, action[1]))
            elif action is not None:
                provision.append(key)
        return None, VolumePlan(tuple(bind), tuple(provision))
