"""Topology-aware gangs: a gang's members kept inside one domain of a node label (a rack, a
block), as Kueue's `podset-required-topology` and `podset-preferred-topology` ask.

A domain is the set of nodes sharing one value of the label (`topology.example.com/rack: r2`);
a node without the label belongs to none. Before the gang's first placeholder lands, the whole
gang is packed on paper into each domain with what is free there now: each task group's
members (largest groups first) on the nodes its own node constraints allow, node after node.
The domains that hold every member qualify, and the tightest of them (the one with room for
the fewest members of the gang's largest group) is chosen, so large domains stay free for large
gangs.

- Required: when no domain qualifies, the placeholders wait with a reason naming the domain that
  came closest; a node outside the chosen domain (or without the label) is never used for any
  of the gang's pods.
- Preferred: one domain when one qualifies; else the fewest domains that together hold it (the
  largest first, the last the tightest that completes it); else anywhere. Nodes outside the
  chosen domains are used only when those have no room for a pod.

The choice is fixed once the first placeholder lands: later members, real pods placed normally
(too large for their placeholder, or after a Soft timeout) and recreated pods all land there.
It is dropped when the gang ends or fails. Rules between pods (a group's anti-affinity) are not
part of the paper packing; they are checked as each member is placed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from core.gang.admission import wake
from core.gang.gang import Gang
from core.gang.spec import GangTopology, TaskGroup
from core.objects.ask import Ask
from core.objects.node_index import NodeIndex
from core.resources import MEMORY, VCORE, Resource, format_amount
from core.state import CoreState

Mask = npt.NDArray[np.bool_]
_Ints = npt.NDArray[np.int64]
PODS = "pods"


@dataclass(frozen=True, slots=True)
class Packing:
    """The gang packed on paper into each domain of its label, domains by their code."""

    names: list[str]  # each domain's label value
    placed: _Ints  # members each domain holds
    room: _Ints  # members of the gang's largest group each domain has room for (how tight it is)
    free: _Ints  # per resource row, per domain: free on the nodes the gang's groups may use
    rows: dict[str, int]


def pack(index: NodeIndex, key: str, groups: Sequence[TaskGroup], whole: bool = False) -> Packing:
    """`whole`: into each domain's capacity, as if nothing ran there (could it ever hold it?)."""
    codes, known = index.domains(key)
    names = list(known)  # a value's code is its place in `known`
    count = len(names)
    runs = index.domain_runs(key)
    order = runs.order
    work, rows = index.room(whole)
    labelled = codes < count
    start = work.copy()
    usable = np.zeros(len(codes), dtype=np.bool_)
    placed = np.zeros(count, dtype=np.int64)
    room: _Ints | None = None
    for group in sorted(groups, key=_largest_first):
        if group.min_member <= 0:
            continue
        allowed = index.static_fit(group.constraints) & labelled
        usable |= allowed
        fits = _members_fitting(work, rows, group.min_resource, allowed, group.min_member)
        if room is None:
            room = runs.sums(fits)
        in_order = fits[order]
        before = np.cumsum(in_order) - in_order
        before -= before[runs.first]  # members the domain's earlier nodes took
        take = np.zeros_like(fits)
        take[order] = np.clip(group.min_member - before, 0, in_order)
        for name, amount in group.min_resource.items():
            row = rows.get(name)
            if amount > 0 and row is not None:
                work[row] -= take * amount
        placed += runs.sums(take)
    free = runs.sums(np.where(usable, np.maximum(start, 0), 0))
    return Packing(names, placed, room if room is not None else np.zeros(count, dtype=np.int64), free, rows)


def _largest_first(group: TaskGroup) -> tuple[int, int]:
    resource = group.min_resource
    return (-resource.get_value(VCORE), -resource.get_value(MEMORY))


def _members_fitting(work: _Ints, rows: dict[str, int], request: Resource, allowed: Mask, members: int) -> _Ints:
    """Per column, how many members of this size fit there (at most `members`)."""
    fits = np.where(allowed, members, 0).astype(np.int64)
    for name, amount in request.items():
        if amount <= 0:
            continue
        row = rows.get(name)
        if row is None:
            return np.zeros_like(fits)  # a resource no node has
        np.minimum(fits, np.maximum(work[row], 0) // amount, out=fits)
    return fits


@dataclass(frozen=True, slots=True)
class Choice:
    """Where a gang goes: `domains` (None: anywhere, or no domain holds a required gang); when a
    required gang fits no domain, why it waits: `need` (what it needs, which stays the same while
    it waits) and `closest` (what came closest, which moves with the free room); and `most`,
    the domain that holds the most of its members (for its pods placed without placeholders)."""

    domains: frozenset[str] | None
    need: str = ""
    closest: str = ""
    most: frozenset[str] | None = None

    @property
    def wait(self) -> str:
        return f"{self.need}: {self.closest}" if self.closest else self.need


def choose(packing: Packing, topology: GangTopology, groups: Sequence[TaskGroup]) -> Choice:
    members = sum(group.min_member for group in groups)
    names, placed, room = packing.names, packing.placed, packing.room
    holding = [i for i in range(len(names)) if placed[i] >= members]
    if holding:
        return Choice(frozenset({names[min(holding, key=lambda i: (room[i], names[i]))]}))
    if topology.required:
        need, closest = _no_domain(packing, topology, groups)
        most = min(range(len(names)), key=lambda i: (-placed[i], -room[i], names[i])) if names else None
        return Choice(None, need, closest, frozenset({names[most]}) if most is not None else None)
    # Preferred: the largest domains first, the last the tightest that completes the gang.
    left = members
    chosen: list[str] = []
    others = sorted((i for i in range(len(names)) if placed[i] > 0), key=lambda i: (-placed[i], names[i]))
    while others:
        completing = [i for i in others if placed[i] >= left]
        if completing:
            chosen.append(names[min(completing, key=lambda i: (room[i], names[i]))])
            return Choice(frozenset(chosen))
        largest = others.pop(0)
        chosen.append(names[largest])
        left -= int(placed[largest])
    return Choice(None)


def _no_domain(
    packing: Packing, topology: GangTopology, groups: Sequence[TaskGroup], ever: bool = False
) -> tuple[str, str]:
    """Why no domain holds the gang: what it needs, and what came closest. `ever`: the packing
    is of the domains' capacity (no domain could hold it even with nothing else running)."""
    level, key = topology.level, topology.key
    names = packing.names
    if not names:
        return f"no node has the label {key} the gang's required topology names", ""
    lead = f"no {level} (label {key}) {'could ever' if ever else 'can'} hold the gang's"
    total = Resource()
    for group in groups:
        total = total + group.total
    for name in _in_reading_order(total):
        row = packing.rows.get(name)
        free = packing.free[row] if row is not None else np.zeros(len(names), dtype=np.int64)
        best = min(range(len(names)), key=lambda i: (-free[i], names[i]))
        if free[best] < total.get_value(name):
            largest = _amount(name, int(free[best]))
            if ever:
                return f"{lead} {_members(groups, name)}", f"the largest, {level} {names[best]}, has {largest} in all"
            return f"{lead} {_members(groups, name)}", f"largest free {largest} in {level} {names[best]}"
    best = min(range(len(names)), key=lambda i: (-packing.placed[i], -packing.room[i], names[i]))
    members = sum(group.min_member for group in groups)
    where = "its nodes are too small" if ever else "whose free room is split across nodes"
    return (
        f"{lead} {_members(groups, _main_resource(total))}",
        f"at most {int(packing.placed[best])} of its {members} members fit in {level} {names[best]}, {where}",
    )


def _in_reading_order(total: Resource) -> list[str]:
    rest = sorted(name for name in total if name not in (VCORE, MEMORY, PODS))
    return [name for name in (VCORE, MEMORY, *rest, PODS) if total.get_value(name) > 0]


def _main_resource(total: Resource) -> str:
    ordered = _in_reading_order(total)
    return ordered[0] if ordered else PODS


def _members(groups: Sequence[TaskGroup], name: str) -> str:
    parts = [
        f"{group.min_member} x {_amount(name, group.min_resource.get_value(name))}"
        for group in groups
        if group.min_member > 0 and group.min_resource.get_value(name) > 0
    ]
    return " + ".join(parts)


def _amount(name: str, value: int) -> str:
    """An amount as a person reads it: `4 cores`, `16Gi memory`, `3 pods`, `2 nvidia.com/gpu`."""
    if name == VCORE:
        cores = f"{value / 1000:.3f}".rstrip("0").rstrip(".")
        return f"{cores} core" if value == 1000 else f"{cores} cores"
    if name == PODS:
        return "1 pod" if value == 1 else f"{value} pods"
    return f"{format_amount(name, value)} {name}"


# -- what the cycle and node fit ask ---------------------------------------------------------


def _judge(state: CoreState, gang: Gang, topology: GangTopology) -> None:
    """Choose the gang's domains again when anything changed since the last choice."""
    stamp = state.usage_stamp()
    if gang.choice_stamp == stamp:
        return
    gang.choice_stamp = stamp
    needed = gang.topology_need
    index = state.partition.node_index
    packing = pack(index, topology.key, gang.shape)
    choice = choose(packing, topology, gang.shape)
    gang.domains, gang.topology_need, gang.topology_wait = choice.domains, choice.need, choice.wait
    gang.most_held = choice.most
    gang.target = None
    if choice.domains is None and topology.required and packing.names:
        gang.target = _target(packing, pack(index, topology.key, gang.shape, whole=True), gang)
    if gang.topology_need != needed:
        wake(state, gang.app_id)  # its held pods take the new words


def _target(now: Packing, whole: Packing, gang: Gang) -> frozenset[str] | None:
    """Where a required gang no domain holds now waits for room (reserves nodes, lets preemption
    free room): of the domains that could hold it whole, the one holding the most of it now;
    None when none could (its reason then says so)."""
    members = gang.spec.members
    names = now.names
    able = [i for i in range(len(names)) if whole.placed[i] >= members]
    if not able:
        topology = gang.spec.topology
        assert topology is not None
        need, closest = _no_domain(whole, topology, gang.shape, ever=True)
        gang.topology_need, gang.topology_wait = need, f"{need}: {closest}"
        return None
    return frozenset({names[min(able, key=lambda i: (-now.placed[i], -now.room[i], names[i]))]})


def placeholder_wait(state: CoreState, ask: Ask) -> str:
    """Why a placeholder waits before any node is tried (""; go on): its gang needs more than the
    whole cluster has, or its gang has a topology and no domain of it can hold the gang (the
    domain is chosen here while no member has landed)."""
    gang = state.gangs.gangs.get(ask.application_id)
    if gang is None:
        return ""
    if gang.waiting:
        return gang.waiting
    topology = gang.spec.topology
    if topology is None or gang.domains_fixed:
        return ""
    _judge(state, gang, topology)
    return gang.topology_wait


def gang_rules(state: CoreState, ask: Ask) -> list[tuple[str, Mask]]:
    """The node masks a gang's pod carries, each with the reason a node it excludes refuses the
    pod: none for a placeholder of a gang larger than the cluster (so no preemption starts for
    it either); the chosen domain for a pod of a gang with a required topology (`confining`).
    While no domain holds the gang and it has none to wait for, a mask of no node with the
    reason it waits."""
    gangs = state.gangs
    if ask.placeholder and ask.application_id in gangs.too_large:
        waiting = gangs.gangs[ask.application_id].waiting
        return [(waiting, np.zeros(state.partition.node_index.size, dtype=np.bool_))]
    gang = gangs.confined.get(ask.application_id)
    if gang is None:
        return []
    topology = gang.spec.topology
    assert topology is not None
    if not topology.required:
        return []
    index = state.partition.node_index
    within = confining(state, ask)
    if within is not None:
        return [(_outside(topology, within[1]), index.domain_mask(*within))]
    if gang.topology_wait:
        return [(gang.topology_wait, np.zeros(index.size, dtype=np.bool_))]
    return []


@lru_cache(maxsize=1024)
def _outside(topology: GangTopology, domains: frozenset[str]) -> str:
    """Why a node refuses a pod of a gang confined to `domains` (asked for every such pod)."""
    return f"outside the gang's {topology.level} {', '.join(sorted(domains))} (label {topology.key})"


def confining(state: CoreState, ask: Ask) -> tuple[str, frozenset[str]] | None:
    """The label and its values (domains) a pod of a gang with a required topology must land
    in; None when its gang has none, or none yet. While no domain holds the gang, its
    placeholders wait with the domain they will take when room comes (reservations and
    preemption look there only); a pod placed without a placeholder (its gang resumed after a
    Soft timeout) before any member landed goes to the domain that holds the most of the gang."""
    gang = state.gangs.confined.get(ask.application_id)
    if gang is None or (ask.placeholder and ask.application_id in state.gangs.too_large):
        return None
    topology = gang.spec.topology
    assert topology is not None
    if not topology.required:
        return None
    if not gang.domains_fixed:
        _judge(state, gang, topology)
    domains = gang.domains
    if domains is None:
        domains = gang.target if gang.reserving else gang.most_held
    return None if domains is None else (topology.key, domains)


def preferred_domains(state: CoreState, ask: Ask) -> tuple[str, frozenset[str]] | None:
    """The label and its values (domains) a preferred gang's pod tries first (None: no
    preference)."""
    gang = state.gangs.confined.get(ask.application_id)
    if gang is None or gang.domains is None:
        return None
    topology = gang.spec.topology
    assert topology is not None
    if topology.required:
        return None
    return topology.key, gang.domains
