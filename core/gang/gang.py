"""What the core keeps per gang, and the decision for each of a gang's asks.

A gang goes through these phases:

    Reserving --every placeholder allocated--> Reserved --real pods replace placeholders-->
    Reserving --timeout, Soft--> Resumed (placeholders released, normal scheduling)
    Reserving --timeout, Hard--> Failed (ResourceReservationTimeout)
    Reserved --timeout--> unused placeholders released, real pods placed normally

While a gang is Reserving its real pods are held, so no real pod runs before the whole gang
fits. Placeholder asks are made by the core itself (`placeholder_ask`), one per member of each
task group, and placed like any pod: they count in every tracker exactly like the pods they
stand for. In a leaf queue gangs reserve one at a time, in arrival order, so two gangs never
each hold half of what both need.

A gang of a PodGroup API (`GangSpec.from_pods`) is Reserving from its first pod, but `short`
(no placeholder made, nothing held, no gang behind it kept back) until its minimum of pods
exists; then each placeholder is cut from one of those pods (`stand_ins`) and that pod takes
its place once all are allocated.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container, Mapping
from dataclasses import dataclass, field, replace

from core.gang.spec import GangSpec, TaskGroup
from core.objects.ask import Allocation, Ask

RESERVING = "Reserving"
RESERVED = "Reserved"
RESUMED = "Resumed"
FAILED = "Failed"

_ENDED_KEPT = 1000
_NOT_DNS = re.compile(r"[^a-z0-9-]+")


@dataclass(slots=True)
class GroupProgress:
    """One task group: its pending placeholder asks, its placeholders on nodes, what became of them."""

    asked: set[str] = field(default_factory=set)
    placed: set[str] = field(default_factory=set)
    replaced: int = 0
    timed_out: int = 0


class Gang:
    __slots__ = (
        "app_id",
        "choice_stamp",
        "cut",
        "domains",
        "domains_fixed",
        "first_allocated",
        "groups",
        "made",
        "most_held",
        "phase",
        "seen_real",
        "short",
        "spec",
        "stand_ins",
        "target",
        "template",
        "topology_need",
        "topology_wait",
        "waiting",
    )

    def __init__(self, app_id: str, spec: GangSpec, template: Ask) -> None:
        self.app_id = app_id
        self.spec = spec
        self.template = template  # the ask placeholders are cut from (namespace, user, priority, quota)
        self.made = 0  # placeholder asks made so far (their names' seed)
        self.phase = RESERVING
        self.groups: dict[str, GroupProgress] = {group.name: GroupProgress() for group in spec.groups}
        self.first_allocated: float | None = None  # when its timeout began (or it was found too large)
        self.seen_real = False  # a real pod of the gang was seen (recovered placeholders may come first)
        self.waiting = ""  # why none of its placeholders is placed yet (the gang is larger than the cluster)
        # Topology (core/gang/topology.py): the domains chosen (None: not yet, or anywhere),
        # fixed once a member landed; why no domain can hold the gang now; when that was judged.
        self.domains: frozenset[str] | None = None
        self.domains_fixed = False
        self.topology_wait = ""
        self.topology_need = ""  # the part of that reason that stays while it waits (its pods' words)
        self.most_held: frozenset[str] | None = None  # the domain holding the most of it, when none holds all
        self.target: frozenset[str] | None = None  # where it waits for room then (could hold it whole)
        self.choice_stamp: tuple[int, int] | None = None
        # From pods (a PodGroup API's gang): why no placeholder is made yet (too few pods); each
        # member pod's placeholder; the members as task groups of one shape each (what is packed).
        self.short = ""
        self.stand_ins: dict[str, str] = {}  # real pod key -> the placeholder cut from it
        self.cut: tuple[TaskGroup, ...] = ()

    @property
    def reserving(self) -> bool:
        return self.phase == RESERVING

    def hold_reason(self) -> str:
        """Why the gang's real pods wait while it reserves: the same words until that changes
        (one event per pod, not one per placeholder or per change of free room)."""
        if self.short:
            return self.short
        if self.waiting:
            return self.waiting
        words = f"waiting for all {self.spec.members} placeholders of its gang to be allocated"
        if self.topology_need:
            words += f": {self.topology_need}"
        return words

    @property
    def shape(self) -> tuple[TaskGroup, ...]:
        """The placeholders the gang makes, as task groups: its own, or (from pods) its members'."""
        return self.cut if self.spec.from_pods else self.spec.groups

    def member_placed(self, node_labels: Mapping[str, str] | None) -> None:
        """A placeholder landed on a node with these labels (or was found on one after a
        restart): a topology gang's domain is fixed from then on (core/gang/topology.py)."""
        topology = self.spec.topology
        if topology is None or node_labels is None:
            return  # no topology, or the node is not known yet (recovery before its node)
        value = node_labels.get(topology.key)
        if not self.domains_fixed:
            if value is None and topology.required:
                return  # not a domain of the label: nothing to fix the gang to
            self.domains_fixed = True
            self.topology_wait = self.topology_need = ""
            if value is not None and (topology.required or self.domains is None):
                self.domains = frozenset({value})
        elif value is not None and self.domains is not None and not topology.required:
            self.domains = self.domains | {value}  # a preferred gang that had to spill over

    def progress(self, group: str) -> GroupProgress | None:
        """The group's progress; a from-pods gang keeps one for every task its pods name."""
        found = self.groups.get(group)
        if found is None and self.spec.from_pods:
            found = self.groups[group] = GroupProgress()
        return found

    def placeholders(self) -> set[str]:
        """Every placeholder on a node, unused so far."""
        return {key for progress in self.groups.values() for key in progress.placed}

    def pending_placeholders(self) -> set[str]:
        return {key for progress in self.groups.values() for key in progress.asked}

    def forget(self, key: str) -> str | None:
        """A placeholder (pending or placed) or a real pod is gone; the name of a placeholder's
        group, or None. A placeholder whose pod left stands in for nobody until it is given to
        another pod or released."""
        if self.stand_ins:
            self.stand_ins.pop(key, None)
            for member in [member for member, placeholder in self.stand_ins.items() if placeholder == key]:
                del self.stand_ins[member]
        for name, progress in self.groups.items():
            if key in progress.asked or key in progress.placed:
                progress.asked.discard(key)
                progress.placed.discard(key)
                return name
        return None


class GangRegistry:
    """Every live gang by application id; the reserving ones in arrival order."""

    def __init__(self) -> None:
        self.gangs: dict[str, Gang] = {}
        self.reserving: dict[str, str] = {}  # app id -> leaf queue path, arrival order
        self.touched: set[str] = set()  # gangs whose placeholders may need making or releasing
        self.failed: dict[str, str] = {}  # app id -> why (Hard timeout): its pods stay out
        self.ended: dict[str, Gang] = {}  # the last gangs that ended, for the REST API
        self.confined: dict[str, Gang] = {}  # gangs with a topology, by app id (their pods' node masks)
        self.too_large: set[str] = set()  # gangs larger than the cluster: looked at again when nodes change
        self.placing: str | None = None  # a gang with a topology placing its placeholders back to back

    def start(self, queue_path: str, spec: GangSpec, template: Ask) -> Gang:
        app_id = template.application_id
        gang = Gang(app_id, spec, template)
        self.gangs[app_id] = gang
        self.reserving[app_id] = queue_path
        self.touched.add(app_id)
        if spec.topology is not None:
            self.confined[app_id] = gang
        return gang

    def end(self, app_id: str) -> None:
        gang = self.gangs.pop(app_id, None)
        if gang is not None:
            self.ended[app_id] = gang
            while len(self.ended) > _ENDED_KEPT:
                del self.ended[next(iter(self.ended))]
        self.reserving.pop(app_id, None)
        self.touched.discard(app_id)
        self.confined.pop(app_id, None)  # its domain is free for other gangs' choices
        self.too_large.discard(app_id)

    def nodes_changed(self) -> None:
        """The cluster's size changed: gangs too large for it before are looked at again."""
        self.touched.update(self.too_large)

    def too_large_due(self) -> float | None:
        """The earliest timeout among the gangs too large for the cluster."""
        due = [
            gang.first_allocated + gang.spec.timeout
            for app_id in self.too_large
            if (gang := self.gangs.get(app_id)) is not None and gang.first_allocated is not None
        ]
        return min(due, default=None)

    def leave_reserving(self, gang: Gang, phase: str) -> None:
        gang.phase = phase
        gang.waiting = ""
        self.reserving.pop(gang.app_id, None)
        self.too_large.discard(gang.app_id)

    def ahead_of(self, app_id: str, queue_path: str) -> str | None:
        """The gang that arrived first and still reserves in this leaf, when it is another one.
        A gang waiting for its pods holds nothing and keeps no gang back."""
        for other, path in self.reserving.items():
            if path == queue_path:
                if other == app_id:
                    return None
                gang = self.gangs.get(other)
                if gang is None or not gang.short:
                    return other
        return None

    def to_back(self, gang: Gang) -> None:
        """The gang reserves again after the gangs of its leaf that reserve now (it was waiting
        for its pods, or its placeholders timed out)."""
        path = self.reserving.pop(gang.app_id, None)
        if path is not None:
            self.reserving[gang.app_id] = path


@dataclass(frozen=True, slots=True)
class Step:
    """What the cycle does with one ask of a gang application."""

    hold: str = ""  # wait, with this reason
    replace: Allocation | None = None  # take this placeholder's place on its node
    release: Allocation | None = None  # release this placeholder (the pod is larger), then place normally


PROCEED = Step()


def step_for(registry: GangRegistry, allocations: dict[str, Allocation], queue_path: str, ask: Ask) -> Step:
    """Hold, replace or proceed: the gang's say before the ordinary checks."""
    gang = registry.gangs.get(ask.application_id)
    if ask.placeholder:
        if gang is None or not gang.reserving:
            return Step(hold="its gang no longer reserves")
        ahead = registry.ahead_of(ask.application_id, queue_path)
        if ahead is not None:
            return Step(hold=f"waiting for gang {ahead}, which arrived earlier in queue {queue_path}, to reserve")
        return PROCEED
    if gang is None:
        if ask.task_group:
            return Step(
                hold=f"names task group {ask.task_group!r}, but application {ask.application_id} has no"
                " task-groups definition (yunikorn.apache.org/task-groups) yet"
            )
        return PROCEED
    if gang.spec.from_pods:
        return _from_pods_step(gang, allocations, ask)
    if ask.task_group and ask.task_group not in gang.groups:
        defined = ", ".join(repr(name) for name in gang.groups)
        return Step(
            hold=f"names task group {ask.task_group!r}, which application {ask.application_id} does not define"
            f" (it defines {defined})"
        )
    if gang.reserving:
        return Step(hold=gang.hold_reason())
    progress = gang.groups.get(ask.task_group)
    if progress is None or not progress.placed:
        return PROCEED
    key = min(progress.placed)
    placeholder = allocations[key]
    if ask.resource.fits_in(placeholder.resource):
        return Step(replace=placeholder)
    return Step(release=placeholder)


def _from_pods_step(gang: Gang, allocations: dict[str, Allocation], ask: Ask) -> Step:
    """A real pod of a from-pods gang: held while the gang reserves; then it takes the
    placeholder cut from it, or (a pod made again in its place) one cut from a pod of its
    shape that left; else it is placed as any pod."""
    if gang.reserving:
        return Step(hold=gang.hold_reason())
    own = gang.stand_ins.get(ask.key)
    placeholder = allocations.get(own) if own is not None else None
    if placeholder is None:
        claimed = set(gang.stand_ins.values())
        for key in sorted(gang.placeholders() - claimed):
            candidate = allocations.get(key)
            if candidate is not None and _same_shape(candidate, ask):
                placeholder = candidate
                break
    return PROCEED if placeholder is None else Step(replace=placeholder)


def _same_shape(placeholder: Allocation, ask: Ask) -> bool:
    stand_in = placeholder.ask
    return (
        stand_in is not None
        and ask.resource.fits_in(placeholder.resource)
        and stand_in.constraints == ask.constraints
        and stand_in.task_group == ask.task_group
    )


def stand_in_ask(member: Ask, spec: GangSpec, taken: Container[str], index: int) -> Ask:
    """The placeholder of a from-pods gang standing in for `member`: the pod itself (its size,
    node rules and rules between pods), with the gang's placeholder name and key."""
    key, name = _placeholder_name(member, member.task_group or "member", taken, index)
    return member._replace(
        key=key,
        name=name,
        gang=replace(spec, originator=member.key),
        placeholder=True,
        problems=(),
        notices=(),
        claims=(),
    )


def placeholder_ask(originator: Ask, spec: GangSpec, group: TaskGroup, taken: Container[str], index: int) -> Ask:
    """A placeholder for one member of `group`, with YuniKorn's name shape
    `tg-<application>-<group>-<nonce>`; the key is `<namespace>/<name>`, unique among `taken`."""
    key, name = _placeholder_name(originator, group.name, taken, index)
    return originator._replace(
        key=key,
        name=name,
        resource=group.min_resource,
        constraints=group.constraints,
        pod=group.pod,
        task_group=group.name,
        gang=spec,
        placeholder=True,
        problems=(),
    )


def _placeholder_name(originator: Ask, group: str, taken: Container[str], index: int) -> tuple[str, str]:
    app = _dns(originator.application_id)[:28].strip("-") or "app"
    name_part = _dns(group)[:20].strip("-") or "group"
    while True:
        seed = f"{originator.application_id}/{group}/{index}".encode()
        nonce = hashlib.sha256(seed).hexdigest()[:10]
        name = f"tg-{app}-{name_part}-{nonce}"
        key = f"{originator.namespace}/{name}" if originator.namespace else name
        if key not in taken:
            return key, key
        index += 1


def _dns(text: str) -> str:
    return _NOT_DNS.sub("-", text.lower())
