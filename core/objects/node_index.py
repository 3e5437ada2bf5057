"""Finding the node for an ask: fit and score over all nodes at once.

Scanning nodes one by one in Python costs a few microseconds a node, which at 5,000 nodes is
milliseconds a decision. The index keeps every node's available resources in one NumPy
array (a row per resource, a column per node, nodes in name order), so the fit test for an
ask is a handful of vector comparisons and the choice one argmax, whatever the node count.

Static rules (schedulable and ready, node selector, required affinity, taints) do not depend
on usage, so each distinct set of constraints gets a mask computed once and kept until a node
is added, removed or changed. Allocations change one column in place.

Scores follow YuniKorn's node sort policies: a node's usage share is the weighted mean over
the weighted resources of `(capacity - available) / capacity`; `binpacking` picks the fitting
node with the highest share (fill nodes before using new ones), `fair` the lowest (spread).
Ties go to the node with the fewest PreferNoSchedule taints the pod does not tolerate (as
kube-scheduler's TaintToleration score), then to the node whose name sorts first; a pod with
preferences of its own breaks them with its scores first (`objects/pod_scores.py`). Columns are
ordered for the common pod that tolerates none of those taints (fewest such taints, then name);
a pod that tolerates some gets its own order of the columns (`TieOrder`), kept per set of
constraints like a mask.

Between two pods of the same shape only a few nodes change, so the index remembers the best
few nodes per shape and looks again only at the nodes changed since (`objects/node_choice.py`):
the answer is the full pass's, at a cost that barely grows with the node count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from core.objects.constraints import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, NodeConstraints, Taint
from core.objects.node import Node
from core.objects.node_choice import Choice, Needs, TieOrder, choose, confirm
from core.objects.node_info import NodeInfo
from core.resources import MEMORY, VCORE, Resource

BINPACKING = "binpacking"
FAIR = "fair"
DEFAULT_WEIGHTS: Mapping[str, float] = {VCORE: 1.0, MEMORY: 1.0}
_HARD_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)
TieBreak = Callable[[npt.NDArray[np.intp]], npt.NDArray[np.float64]]
# A cordoned node takes the pods that tolerate this taint (NodeUnschedulable), as DaemonSets do.
_CORDONED = Taint("node.kubernetes.io/unschedulable", "", NO_SCHEDULE)
_LOG_LIMIT = 100_000  # changed columns remembered before every remembered choice is dropped
_CHOICE_LIMIT = 4096  # remembered shapes before they are all dropped (pods of unique sizes)
RESERVED_FOR_OTHERS = "reserved for another pod"  # the room is there, kept for someone else


def untolerated_taint(node_taints: tuple[Taint, ...], constraints: NodeConstraints) -> Taint | None:
    """The first NoSchedule/NoExecute taint the pod does not tolerate, if any."""
    for taint in node_taints:
        if taint.effect not in _HARD_EFFECTS:
            continue
        if not any(tol.tolerates(taint) for tol in constraints.tolerations):
            return taint
    return None


def static_mismatch(node: Node, constraints: NodeConstraints) -> str | None:
    """Why a node can never take a pod with these constraints (usage aside), or None."""
    info = node.info
    if not info.ready:
        return "node not ready"
    if not info.schedulable and not any(tol.tolerates(_CORDONED) for tol in constraints.tolerations):
        return "node unschedulable"
    taint = untolerated_taint(info.taints, constraints)
    if taint is not None:
        return f"taint {taint.key}={taint.value}" if taint.value else f"taint {taint.key}"
    return node_affinity_mismatch(info, constraints)


def node_affinity_mismatch(info: NodeInfo, constraints: NodeConstraints) -> str | None:
    """Why the node's labels do not suit the pod's node selector and required affinity, or None."""
    labels = info.labels
    for key, value in constraints.node_selector:
        if labels.get(key) != value:
            return "node selector mismatch"
    if constraints.required_terms and not any(
        term.matches(labels, info.node_id) for term in constraints.required_terms
    ):
        return "node affinity mismatch"
    return None


def prefer_no_schedule_count(taints: tuple[Taint, ...], constraints: NodeConstraints | None = None) -> int:
    """The PreferNoSchedule taints (those the pod with `constraints` does not tolerate, if given)."""
    tolerations = constraints.tolerations if constraints is not None else ()
    return sum(
        1
        for taint in taints
        if taint.effect == PREFER_NO_SCHEDULE and not any(tol.tolerates(taint) for tol in tolerations)
    )


@dataclass(frozen=True, slots=True)
class DomainRuns:
    """The labelled columns by domain: `order` lists them domain after domain (by code, column
    order within one), `starts[code]` is where a domain's run begins in it and `first[i]` where
    the run holding `order[i]` begins. Every domain has at least one column."""

    order: npt.NDArray[np.intp]
    starts: npt.NDArray[np.intp]
    first: npt.NDArray[np.intp]

    def sums(self, values: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Per domain (by code), the sum of `values` over its columns (along the last axis);
        exact integers."""
        if not len(self.starts):
            return np.zeros((*values.shape[:-1], 0), dtype=np.int64)
        return np.add.reduceat(values[..., self.order], self.starts, axis=-1)


class NodeIndex:
    """Vectorised fit and score over the nodes of a partition."""

    def __init__(self, policy: str = BINPACKING, weights: Mapping[str, float] | None = None) -> None:
        self._nodes: dict[str, Node] = {}
        self._policy = policy
        self._weights: dict[str, float] = dict(weights or DEFAULT_WEIGHTS)
        self._dirty = True
        self._names: list[str] = []
        self._pos: dict[str, int] = {}
        self._columns: dict[str, int] = {}
        self._avail: npt.NDArray[np.int64] = np.zeros((0, 0), dtype=np.int64)
        self._capacity: npt.NDArray[np.int64] = np.zeros((0, 0), dtype=np.int64)
        # A node's rank is its score for binpacking and minus its score for fair: the best
        # fitting node is always the highest rank, ties to the lowest column.
        self._rank: npt.NDArray[np.float64] = np.zeros(0, dtype=np.float64)
        self._masks: dict[NodeConstraints, npt.NDArray[np.bool_]] = {}
        self._log: list[int] = []  # columns changed since the last rebuild, in order
        # per pod shape (request, constraints[, label key, domains]): its best nodes, remembered
        self._choices: dict[tuple[object, ...], Choice] = {}
        # per topology key: each column's domain code (len(values) when the node lacks the key)
        self._domains: dict[str, tuple[npt.NDArray[np.int64], dict[str, int]]] = {}
        self._domain_masks: dict[tuple[str, frozenset[str]], npt.NDArray[np.bool_]] = {}
        self._domain_runs: dict[str, DomainRuns] = {}
        self._eligible: dict[tuple[NodeConstraints, tuple[str, ...], bool, bool], npt.NDArray[np.bool_]] = {}
        self._prefer_no: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)  # PreferNoSchedule taints
        self._ties: dict[NodeConstraints, TieOrder | None] = {}

    def set_policy(self, policy: str, weights: Mapping[str, float] | None) -> None:
        self._policy = policy
        self._weights = dict(weights) if weights else dict(DEFAULT_WEIGHTS)
        self._dirty = True

    @property
    def policy(self) -> str:
        return self._policy

    def put(self, node: Node) -> None:
        """A node was added or its info (capacity, labels, taints, state) changed."""
        self._nodes[node.node_id] = node
        self._dirty = True

    def remove(self, node_id: str) -> None:
        if self._nodes.pop(node_id, None) is not None:
            self._dirty = True

    def refresh(self, node: Node, keys: Iterable[str] | None = None) -> None:
        """The node's allocations changed (only in `keys`, when given): update its column and
        score in place."""
        if self._dirty:
            return
        pos = self._pos.get(node.node_id)
        if pos is None:
            return
        cap = node.info.capacity
        alloc = node.allocated
        occ = node.occupied
        kept = node.kept
        avail = self._avail
        columns = self._columns
        others = occ or kept  # most nodes run only Herder's pods and keep nothing
        for key in columns if keys is None else keys:
            row = columns.get(key)
            if row is not None:
                if others:
                    avail[row, pos] = cap.get(key, 0) - alloc.get(key, 0) - occ.get(key, 0) - kept.get(key, 0)
                else:
                    avail[row, pos] = cap.get(key, 0) - alloc.get(key, 0)
        # _node_rank(node), inline: this runs for every placement
        total = weight_sum = 0.0
        for key, weight in self._weights.items():
            capacity = cap.get(key, 0)
            if capacity <= 0 or weight <= 0:
                continue
            used = alloc.get(key, 0) + occ.get(key, 0) + kept.get(key, 0) if others else alloc.get(key, 0)
            total += weight * (used / capacity)
            weight_sum += weight
        score = total / weight_sum if weight_sum else 0.0
        self._rank[pos] = -score if self._policy == FAIR else score
        if len(self._log) >= _LOG_LIMIT:
            self._log.clear()
            self._choices.clear()
        self._log.append(pos)

    def _node_rank(self, node: Node) -> float:
        score = self._node_score(node)
        return -score if self._policy == FAIR else score

    def _node_score(self, node: Node) -> float:
        total = 0.0
        weight_sum = 0.0
        cap = node.info.capacity
        for key, weight in self._weights.items():
            capacity = cap.get(key, 0)
            if capacity <= 0 or weight <= 0:
                continue
            used = node.allocated.get(key, 0) + node.occupied.get(key, 0) + node.kept.get(key, 0)
            total += weight * (used / capacity)
            weight_sum += weight
        return total / weight_sum if weight_sum else 0.0

    def _rebuild(self) -> None:
        prefer_no = {name: prefer_no_schedule_count(node.info.taints) for name, node in self._nodes.items()}
        names = sorted(self._nodes, key=lambda name: (prefer_no[name], name))
        keys: set[str] = set()
        for node in self._nodes.values():
            keys.update(node.info.capacity)
        columns = {key: row for row, key in enumerate(sorted(keys))}
        avail = np.zeros((len(columns), len(names)), dtype=np.int64)
        capacity = np.zeros((len(columns), len(names)), dtype=np.int64)
        rank = np.zeros(len(names), dtype=np.float64)
        for pos, name in enumerate(names):
            node = self._nodes[name]
            cap = node.info.capacity
            for key, row in columns.items():
                capacity[row, pos] = cap.get(key, 0)
                avail[row, pos] = (
                    cap.get(key, 0) - node.allocated.get(key, 0) - node.occupied.get(key, 0) - node.kept.get(key, 0)
                )
            rank[pos] = self._node_rank(node)
        self._names = names
        self._pos = {name: pos for pos, name in enumerate(names)}
        self._columns = columns
        self._avail = avail
        self._capacity = capacity
        self._rank = rank
        self._masks = {}
        self._domains = {}
        self._domain_masks = {}
        self._domain_runs = {}
        self._eligible = {}
        self._prefer_no = np.fromiter((prefer_no[name] for name in names), dtype=np.int64, count=len(names))
        self._ties = {}
        self._log = []
        self._choices = {}
        self._dirty = False

    def _mask(self, constraints: NodeConstraints) -> npt.NDArray[np.bool_]:
        mask = self._masks.get(constraints)
        if mask is None:
            mask = np.fromiter(
                (static_mismatch(self._nodes[name], constraints) is None for name in self._names),
                dtype=np.bool_,
                count=len(self._names),
            )
            self._masks[constraints] = mask
        return mask

    def _tie_order(self, constraints: NodeConstraints) -> TieOrder | None:
        """The pod's own order for ties when its tolerations make the column order wrong: by the
        PreferNoSchedule taints it does not tolerate, then by name. None: the columns' order."""
        if not constraints.tolerations:
            return None
        if constraints in self._ties:
            return self._ties[constraints]
        if len(self._ties) >= _CHOICE_LIMIT:
            self._ties.clear()
        ties = None
        counts = self._prefer_no
        if counts.any():
            untolerated = counts.copy()
            for pos in np.flatnonzero(counts):
                untolerated[pos] = prefer_no_schedule_count(self._nodes[self._names[pos]].info.taints, constraints)
            if not np.array_equal(untolerated, counts):
                by_name = np.empty(len(self._names), dtype=np.int64)
                by_name[sorted(range(len(self._names)), key=self._names.__getitem__)] = np.arange(len(self._names))
                column = np.lexsort((by_name, untolerated)).astype(np.int64)
                place = np.empty_like(column)
                place[column] = np.arange(len(column))
                ties = TieOrder(place, column)
        self._ties[constraints] = ties
        return ties

    # -- topology domains, for rules between pods (objects/pod_topology.py) ----------------
    @property
    def size(self) -> int:
        if self._dirty:
            self._rebuild()
        return len(self._names)

    def position(self, node_id: str) -> int | None:
        if self._dirty:
            self._rebuild()
        return self._pos.get(node_id)

    def domains(self, key: str) -> tuple[npt.NDArray[np.int64], dict[str, int]]:
        """Each column's code for its value of label `key` (`len(values)` when it has none)."""
        if self._dirty:
            self._rebuild()
        found = self._domains.get(key)
        if found is None:
            values: dict[str, int] = {}
            raw = [self._nodes[name].info.labels.get(key) for name in self._names]
            for value in raw:
                if value is not None and value not in values:
                    values[value] = len(values)
            missing = len(values)
            codes = np.fromiter(
                (missing if value is None else values[value] for value in raw), dtype=np.int64, count=len(raw)
            )
            found = self._domains[key] = (codes, values)
        return found

    def in_domains(self, key: str, values: Iterable[str]) -> npt.NDArray[np.bool_]:
        """The columns whose label `key` has one of `values`."""
        codes, known = self.domains(key)
        wanted = np.zeros(len(known) + 1, dtype=np.bool_)  # by code; the last: no such label
        for value in values:
            code = known.get(value)
            if code is not None:
                wanted[code] = True
        return wanted[codes]

    def domain_runs(self, key: str) -> DomainRuns:
        """The columns of label `key`'s domains grouped by domain (kept until the nodes change)."""
        if self._dirty:
            self._rebuild()
        runs = self._domain_runs.get(key)
        if runs is None:
            codes, known = self.domains(key)
            order = np.argsort(codes, kind="stable")  # by domain, columns in order within one
            order = order[: int(np.count_nonzero(codes < len(known)))]  # the unlabelled sort last
            counts = np.bincount(codes[order], minlength=len(known))
            starts = np.zeros(len(known), dtype=np.intp)
            np.cumsum(counts[:-1], out=starts[1:])
            runs = self._domain_runs[key] = DomainRuns(order, starts, np.repeat(starts, counts))
        return runs

    def domain_mask(self, key: str, values: frozenset[str]) -> npt.NDArray[np.bool_]:
        """`in_domains`, kept until the nodes change (read only): the domains a gang with a
        topology is confined to stay the same for all its pods (core/gang/topology.py)."""
        if self._dirty:
            self._rebuild()
        mask = self._domain_masks.get((key, values))
        if mask is None:
            if len(self._domain_masks) >= _CHOICE_LIMIT:
                self._domain_masks.clear()
            mask = self.in_domains(key, values)
            mask.flags.writeable = False
            self._domain_masks[(key, values)] = mask
        return mask

    def room(self, whole: bool = False) -> tuple[npt.NDArray[np.int64], dict[str, int]]:
        """A copy of every column's available resources (`whole`: its capacity, as if nothing ran
        there) with a row per resource, by the row numbers returned beside it: what a plan of
        several pods at once may use up on paper (a gang packed into a domain,
        core/gang/topology.py)."""
        if self._dirty:
            self._rebuild()
        if not whole:
            return self._avail.copy(), self._columns
        capacity = np.zeros_like(self._avail)
        for pos, name in enumerate(self._names):
            for key, amount in self._nodes[name].info.capacity.items():
                row = self._columns.get(key)
                if row is not None:
                    capacity[row, pos] = amount
        return capacity, self._columns

    def static_fit(self, constraints: NodeConstraints) -> npt.NDArray[np.bool_]:
        """The columns these constraints allow, usage aside (read only: it is kept)."""
        if self._dirty:
            self._rebuild()
        return self._mask(constraints)

    def has_labels(self, keys: tuple[str, ...]) -> npt.NDArray[np.bool_]:
        mask = np.ones(self.size, dtype=np.bool_)
        for key in keys:
            codes, values = self.domains(key)
            mask &= codes < len(values)
        return mask

    def spread_eligible(
        self, constraints: NodeConstraints, keys: tuple[str, ...], honor_affinity: bool, honor_taints: bool
    ) -> npt.NDArray[np.bool_]:
        """The nodes whose domains count for a topology spread: they hold every key of the pod's
        constraints, match its node affinity (policy Honor) and carry no taint it does not
        tolerate (policy Honor)."""
        if self._dirty:
            self._rebuild()  # the kept masks have the old node count until then
        cache_key = (constraints, keys, honor_affinity, honor_taints)
        mask = self._eligible.get(cache_key)
        if mask is None:
            if len(self._eligible) >= _CHOICE_LIMIT:
                self._eligible.clear()
            mask = self.has_labels(keys)
            for pos, name in enumerate(self._names):
                info = self._nodes[name].info
                if (honor_affinity and node_affinity_mismatch(info, constraints) is not None) or (
                    honor_taints and untolerated_taint(info.taints, constraints) is not None
                ):
                    mask[pos] = False
            self._eligible[cache_key] = mask
        return mask

    # -- choosing ------------------------------------------------------------------------
    def name(self, pos: int) -> str:
        if self._dirty:
            self._rebuild()
        return self._names[pos]

    def select(
        self,
        request: Resource,
        constraints: NodeConstraints,
        allowed: npt.NDArray[np.bool_] | None = None,
        tiebreak: TieBreak | None = None,
    ) -> str | None:
        """The best node that fits `request` under `constraints` (and among `allowed`, the
        columns rules between pods leave), or None; `tiebreak` scores the columns the policy
        ranks equally best (higher wins)."""
        if self._dirty:
            self._rebuild()
        if not self._names:
            return None
        if allowed is not None or tiebreak is not None:
            return self._select_full(request, constraints, allowed, tiebreak)
        return self._remembered((request, constraints), request, constraints, None)

    def select_within(
        self, request: Resource, constraints: NodeConstraints, key: str, values: frozenset[str]
    ) -> str | None:
        """`select` among the nodes whose label `key` has one of `values` (`allowed` as
        `domain_mask`): the same node, its best nodes remembered per shape and domains."""
        if self._dirty:
            self._rebuild()
        if not self._names:
            return None
        return self._remembered((request, constraints, key, values), request, constraints, (key, values))

    def _remembered(
        self,
        shape: tuple[object, ...],
        request: Resource,
        constraints: NodeConstraints,
        within: tuple[str, frozenset[str]] | None,
    ) -> str | None:
        choice = self._choices.get(shape)
        # Past this many changes a full pass is cheaper: a full pass costs about as much as
        # reading 64 changed columns on a small cluster (numpy's fixed cost per call), more with
        # every column on a large one. With a floor of 8, a cluster of 200 nodes made a full
        # pass for nearly every pod (some 20 changes between two pods of one shape).
        limit = min(256, max(64, len(self._names) // 16))
        pos = confirm(choice, self._avail, self._rank, self._log, limit) if choice is not None else None
        if pos is None:
            needs = self._needs(request)
            if needs is None:
                return None
            if len(self._choices) >= _CHOICE_LIMIT:
                self._choices.clear()
            mask = self._mask(constraints)
            if within is not None:
                mask = mask & self.domain_mask(*within)
            choice = choose(self._avail, self._rank, mask, needs, len(self._log), self._tie_order(constraints))
            self._choices[shape] = choice
            pos = choice.first()
        return self._names[pos] if pos >= 0 else None

    def _select_full(
        self,
        request: Resource,
        constraints: NodeConstraints,
        allowed: npt.NDArray[np.bool_] | None,
        tiebreak: TieBreak | None,
    ) -> str | None:
        """A full pass for a pod whose rules or preferences are its own (nothing to remember)."""
        needs = self._needs(request)
        if needs is None:
            return None
        fit = self._mask(constraints) if allowed is None else self._mask(constraints) & allowed
        for row, amount in needs:
            fit = fit & (self._avail[row] >= amount)
        fitting = np.flatnonzero(fit)
        if not len(fitting):
            return None
        ranks = self._rank[fitting]
        best = fitting[ranks == ranks.max()]
        if len(best) > 1 and tiebreak is not None:
            scores = tiebreak(best)
            best = best[scores == scores.max()]
        if len(best) > 1:
            ties = self._tie_order(constraints)
            if ties is not None:
                return self._names[int(best[np.argmin(ties.place[best])])]
        return self._names[int(best[0])]

    def could_hold(self, request: Resource, constraints: NodeConstraints) -> list[str]:
        """The nodes whose constraints allow the pod and whose capacity holds `request` once
        their pods are gone, in column order (usage aside: the nodes a reservation may choose)."""
        if self._dirty:
            self._rebuild()
        needs = self._needs(request)
        if needs is None or not self._names:
            return []
        fit = self._mask(constraints)
        for row, amount in needs:
            fit = fit & (self._capacity[row] >= amount)
        return [self._names[pos] for pos in np.flatnonzero(fit)]

    def shortfalls(self, request: Resource, constraints: NodeConstraints) -> tuple[list[str], list[float]]:
        """`could_hold`'s nodes, each with how much of it must still free for `request`: the
        largest share of its capacity over the resources asked (0 when it fits now), as
        `reservations.timing.shortfall` reads a node with nothing kept for the pod's own."""
        names = self.could_hold(request, constraints)
        if not names:
            return names, []
        positions = np.fromiter((self._pos[name] for name in names), dtype=np.intp, count=len(names))
        worst = np.zeros(len(names), dtype=np.float64)
        for key, amount in request.items():
            row = self._columns.get(key)
            if row is None:
                continue
            room = self._avail[row, positions]
            total = self._capacity[row, positions]
            short = (amount > room) & (total > 0)
            if short.any():
                share = np.zeros(len(names), dtype=np.float64)
                np.divide(amount - room, total, out=share, where=short)
                np.maximum(worst, share, out=worst)
        return names, worst.tolist()

    def _needs(self, request: Resource) -> Needs | None:
        """(row, amount) per resource asked; None when a resource asked is on no node at all."""
        needs = []
        for key, amount in request.items():
            if amount <= 0:
                continue
            row = self._columns.get(key)
            if row is None:
                return None
            needs.append((row, amount))
        return tuple(needs)

    def explain(
        self,
        request: Resource,
        constraints: NodeConstraints,
        rules: Sequence[tuple[str, npt.NDArray[np.bool_]]] = (),
    ) -> str:
        """Why no node fits, counted by reason: "no node fits: 3 insufficient memory, 2 taint ...";
        `rules` are the masks of rules between pods, each with its reason."""
        if not self._nodes:
            return "no node fits: the cluster has no nodes"
        if self._dirty:
            self._rebuild()
        # Counted over the columns, as `select` reads them: a node's reason is its first of
        # static mismatch, a rule's mask, room kept for others, then each resource it lacks.
        counts: dict[str, int] = {}
        names, nodes = self._names, self._nodes
        left = self._mask(constraints).copy()
        for pos in np.flatnonzero(~left):
            reason = static_mismatch(nodes[names[pos]], constraints)
            if reason is not None:
                counts[reason] = counts.get(reason, 0) + 1
        for why, mask in rules:
            refused = int(np.count_nonzero(left & ~mask))
            if refused:
                counts[why] = counts.get(why, 0) + refused
                left &= mask
        for name, node in nodes.items():
            if node.held and left[self._pos[name]] and request.fits_in(node.free()):
                counts[RESERVED_FOR_OTHERS] = counts.get(RESERVED_FOR_OTHERS, 0) + 1
                left[self._pos[name]] = False
        for key, amount in request.items():
            if amount <= 0:
                continue
            row = self._columns.get(key)
            short = int(np.count_nonzero(left if row is None else left & (self._avail[row] < amount)))
            if short:
                counts[f"insufficient {key}"] = counts.get(f"insufficient {key}", 0) + short
        parts = [f"{n} {reason}" for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        return "no node fits: " + (", ".join(parts) if parts else "every node is busy")
