"""Runtime of elastic quotas: the DESIGN.md algorithm over a quota tree, per resource key.

Bottom-up a quota's request is its pods' requests (a parent's: the sum of its children's requests
capped at their max; a non-lending quota requests at least its min). Top-down each parent's runtime
is shared among its children: first min(request, min), then the rest by shared weight with exact
largest-remainder integer shares, capped at request, surplus re-shared.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise

from core.elastic.spec import ROOT_QUOTA, ElasticQuotaSpec
from core.resources import Resource


@dataclass(slots=True)
class QuotaNode:
    """One quota in the tree with its computed request and runtime (mutable bookkeeping).

    `max`, `min` and `weights` are the spec's vectors as plain dicts, read once: the runtime
    calculation touches them for every child and key, and plain lookups keep a full recompute of
    thousands of quotas within milliseconds.
    """

    spec: ElasticQuotaSpec
    children: list[str] = field(default_factory=list)
    pods: dict[str, int] = field(default_factory=dict)  # own pods' summed request per key
    request: dict[str, int] = field(default_factory=dict)
    runtime: dict[str, int] = field(default_factory=dict)
    max: dict[str, int] = field(init=False)
    min: dict[str, int] = field(init=False)
    weights: dict[str, int] = field(init=False)
    # Per key, the children that limit it with their fixed mins and weights (set by the tree).
    members: dict[str, list[QuotaNode]] = field(default_factory=dict)
    member_mins: dict[str, dict[str, int]] = field(default_factory=dict)
    member_weights: dict[str, dict[str, int]] = field(default_factory=dict)
    # Kept as children's requests change, so one pod's request is not a walk over every sibling:
    # the children's requests summed per key (each capped at the child's max); for the keys some
    # child does not limit (`partial`), the same sum over the members only (for the others it is
    # `child_sum`); the members' mins summed; whether the last sharing of each key gave every
    # member its request ("enough": no water-filling).
    child_sum: dict[str, int] = field(default_factory=dict)
    partial: frozenset[str] = frozenset()
    member_sum: dict[str, int] = field(default_factory=dict)
    total_min: dict[str, int] = field(default_factory=dict)
    enough: dict[str, bool] = field(default_factory=dict)

    def members_request(self, key: str) -> int:
        return self.member_sum.get(key, 0) if key in self.partial else self.child_sum.get(key, 0)

    def __post_init__(self) -> None:
        spec = self.spec
        self.max = dict(spec.max)
        self.min = dict(spec.min)
        source = spec.shared_weight if spec.shared_weight is not None else spec.max
        self.weights = {key: max(value, 0) for key, value in source.items()}

    def weight(self, key: str) -> int:
        return self.weights.get(key, 0)


def weighted_shares(amount: int, weights: Mapping[str, int]) -> dict[str, int]:
    """Split `amount` units by weight into integers summing to `amount`: largest remainder, ties by name."""
    total = sum(weights.values())
    if amount <= 0 or total <= 0:
        return dict.fromkeys(weights, 0)
    shares: dict[str, int] = {}
    by_remainder: list[tuple[int, str]] = []
    left = amount
    for name, weight in weights.items():
        share, remainder = divmod(amount * weight, total)
        shares[name] = share
        left -= share
        by_remainder.append((-remainder, name))
    if left:
        by_remainder.sort()
        for _, name in by_remainder[:left]:
            shares[name] += 1
    return shares


def distribute(
    pool: int,
    mins: Mapping[str, int],
    requests: Mapping[str, int],
    weights: Mapping[str, int],
    min_scaling: bool,
) -> dict[str, int]:
    """One resource key of one parent: the runtime of each child out of `pool`."""
    total_min = sum(mins.values())
    if min_scaling and total_min > pool:
        mins = {n: (max(pool, 0) * m // total_min) for n, m in mins.items()}
    elif pool >= sum(requests.values()):
        # Enough for every request: borrowers get theirs, a zero weight only up to its min.
        return {n: r if weights.get(n, 0) > 0 else min(r, mins[n]) for n, r in requests.items()}
    given: dict[str, int] = {}
    hungry: list[tuple[float, str, int, int]] = []  # (room per unit of weight, name, room, weight)
    left = pool
    for name, wanted in requests.items():
        floor = mins[name]
        granted = wanted if wanted < floor else floor
        given[name] = granted
        left -= granted
        if granted < wanted:
            weight = weights.get(name, 0)
            if weight > 0:
                room = wanted - granted
                hungry.append((room / weight, name, room, weight))
    if left <= 0 or not hungry:
        return given
    # Water-filling in one pass: a child whose proportional share of what is left would exceed
    # its room is capped at its room, and what it leaves is shared again among the rest. Taking
    # children by room per unit of weight, smallest first, caps exactly those the repeated
    # re-sharing would cap; the rest share what is left once, by largest remainder.
    hungry.sort()
    total = sum(entry[3] for entry in hungry)
    for index, (_, name, room, weight) in enumerate(hungry):
        if room * total > left * weight:
            rest = {entry[1]: entry[3] for entry in hungry[index:]}
            for other, share in weighted_shares(left, rest).items():
                given[other] += share
            return given
        given[name] += room
        left -= room
        total -= weight
    return given


# Shared by the quotas whose sum is never written (leaves; a parent's member sum when every child
# limits every key it shares): one empty dict instead of thousands per full recompute.
_NEVER_WRITTEN: dict[str, int] = {}


class QuotaTree:
    """The quota forest under the root with requests and runtimes kept current."""

    def __init__(self, min_scaling: bool = True) -> None:
        self.min_scaling = min_scaling
        self.nodes: dict[str, QuotaNode] = {ROOT_QUOTA: QuotaNode(ElasticQuotaSpec(ROOT_QUOTA, is_parent=True))}
        self.pool: dict[str, int] = {}
        self._bottom_up: list[str] = [ROOT_QUOTA]  # every quota after all of its children

    # -- structure ----------------------------------------------------------------------
    def rebuild(self, specs: Iterable[ElasticQuotaSpec]) -> None:
        """Replace the quota set (pods' requests kept by quota name) and recompute everything."""
        old = self.nodes
        root = QuotaNode(ElasticQuotaSpec(ROOT_QUOTA, is_parent=True))
        self.nodes = {ROOT_QUOTA: root}
        for spec in specs:
            before = old.get(spec.name)
            if before is not None and before.spec == spec:
                # the same quota: keep its node (and its spec's vectors, read once), not its links
                before.children, before.members, before.member_mins, before.member_weights = [], {}, {}, {}
                before.total_min, before.enough, before.partial = {}, {}, frozenset()
                self.nodes[spec.name] = before
            else:
                self.nodes[spec.name] = QuotaNode(spec, pods=before.pods if before is not None else {})
        for name in sorted(self.nodes):
            if name != ROOT_QUOTA:
                parent = self.nodes[name].spec.parent or ROOT_QUOTA
                self.nodes.get(parent, root).children.append(name)
        for node in self.nodes.values():
            for child in node.children:
                member = self.nodes[child]
                for key in member.max:
                    node.members.setdefault(key, []).append(member)
                    node.member_mins.setdefault(key, {})[child] = member.min.get(key, 0)
                    node.member_weights.setdefault(key, {})[child] = member.weights.get(key, 0)
            node.total_min = {key: sum(mins.values()) for key, mins in node.member_mins.items()}
            node.partial = frozenset(key for key, members in node.members.items() if len(members) < len(node.children))
        self._bottom_up = self._post_order()
        self.recompute_all()

    def _post_order(self) -> list[str]:
        order: list[str] = []
        stack: list[tuple[str, bool]] = [(ROOT_QUOTA, False)]
        while stack:
            name, expanded = stack.pop()
            if expanded:
                order.append(name)
                continue
            stack.append((name, True))
            stack.extend((child, False) for child in reversed(self.nodes[name].children))
        return order

    def parent_of(self, name: str) -> str | None:
        if name == ROOT_QUOTA:
            return None
        parent = self.nodes[name].spec.parent or ROOT_QUOTA
        return parent if parent in self.nodes else ROOT_QUOTA

    def limited_keys(self, name: str) -> list[str]:
        node = self.nodes[name]
        if name == ROOT_QUOTA:
            return sorted(self.pool)
        return sorted(node.spec.max)

    # -- requests -----------------------------------------------------------------------
    def _own_request(self, name: str) -> dict[str, int]:
        node = self.nodes[name]
        if node.children:
            request = dict(node.child_sum)
        else:
            request = dict(node.pods)
        if not node.spec.allow_lent_resource:  # it requests at least its min
            for key, value in node.min.items():
                request[key] = max(request.get(key, 0), value)
        return request

    def _set_request(self, name: str, request: dict[str, int]) -> None:
        """The quota's request is now `request`: its parent's sums follow by the difference."""
        node = self.nodes[name]
        old = node.request
        node.request = request
        parent_name = self.parent_of(name)
        if parent_name is None or old == request:
            return
        parent = self.nodes[parent_name]
        cap, partial = node.max, parent.partial
        child_sum, member_sum = parent.child_sum, parent.member_sum
        for value_of, sign in ((old, -1), (request, 1)):
            for key, value in value_of.items():
                limit = cap.get(key)
                capped = value if limit is None or value <= limit else limit
                child_sum[key] = child_sum.get(key, 0) + sign * capped
                if limit is not None and key in partial:
                    member_sum[key] = member_sum.get(key, 0) + sign * capped
        for key in old:
            # a key no child's request names any more leaves the parent's (a zero sum alone
            # does not say so: a request may name a key at zero)
            if (
                key not in request
                and child_sum.get(key) == 0
                and not any(key in self.nodes[child].request for child in parent.children)
            ):
                del child_sum[key]

    def _requests_bottom_up(self) -> None:
        """Every request and every parent's sums from scratch, children before parents."""
        nodes = self.nodes
        for name in self._bottom_up:
            node = nodes[name]
            partial = node.partial
            if not node.children:
                node.child_sum = node.member_sum = _NEVER_WRITTEN  # only a parent's sums are written
                node.request = self._own_request(name)
                continue
            child_sum: dict[str, int] = {}
            member_sum: dict[str, int] = {} if partial else _NEVER_WRITTEN
            for child_name in node.children:
                child = nodes[child_name]
                cap = child.max
                for key, value in child.request.items():
                    limit = cap.get(key)
                    if limit is not None and value > limit:
                        value = limit
                    child_sum[key] = child_sum.get(key, 0) + value
                    if partial and limit is not None and key in partial:
                        member_sum[key] = member_sum.get(key, 0) + value
            node.child_sum, node.member_sum = child_sum, member_sum
            node.request = self._own_request(name)

    # -- runtime ------------------------------------------------------------------------
    def _share_children(self, name: str) -> list[str]:
        """Set the runtime of `name`'s children; return those whose runtime changed."""
        node = self.nodes[name]
        pool = self.pool if name == ROOT_QUOTA else node.runtime
        changed: list[str] = []
        fresh: dict[str, dict[str, int]] = {child: {} for child in node.children}
        for key, members in node.members.items():
            requests: dict[str, int] = {}
            for member in members:
                cap = member.max[key]
                wanted = member.request.get(key, 0)
                requests[member.spec.name] = wanted if wanted < cap else cap
            requested = node.members_request(key)  # the sum of `requests`, kept as requests change
            available = pool.get(key, 0) if name == ROOT_QUOTA or key in pool else requested
            node.enough[key] = self._enough(node, key, available, requested)
            for child, value in distribute(
                available, node.member_mins[key], requests, node.member_weights[key], self.min_scaling
            ).items():
                fresh[child][key] = value
        for child, runtime in fresh.items():
            if self.nodes[child].runtime != runtime:
                self.nodes[child].runtime = runtime
                changed.append(child)
        return changed

    def _share_down(self, name: str, dirty: set[str]) -> None:
        # Top-down with an explicit stack: parent chains are as long as users make them.
        stack = [name]
        while stack:
            current = stack.pop()
            changed = set(self._share_children(current))
            for child in reversed(self.nodes[current].children):
                if self.nodes[child].children and (child in changed or child in dirty):
                    stack.append(child)

    def recompute_all(self) -> None:
        """Full recompute: every request bottom-up, every runtime top-down."""
        self._requests_bottom_up()
        everything = set(self.nodes)
        self._share_down(ROOT_QUOTA, everything)

    def set_pool(self, pool: Mapping[str, int]) -> None:
        if dict(pool) != self.pool:
            self.pool = dict(pool)
            self._share_down(ROOT_QUOTA, set())

    def _enough(self, node: QuotaNode, key: str, available: int, requested: int) -> bool:
        """Whether `distribute` gives every member of `key` its (capped) request, as it does when
        the pool holds every request and the mins need no scaling."""
        return not (self.min_scaling and node.total_min.get(key, 0) > available) and available >= requested

    def add_pod_request(self, name: str, resource: Resource, sign: int) -> None:
        """A pod's request joins (sign 1) or leaves (sign -1) a leaf: recompute its path only.

        Requests go up the path by difference. Runtimes come down it: where a parent's pool held
        every member's request before and still does, only the path child's runtime changes (its
        capped request, a zero weight only up to its min), as `distribute` would give; otherwise
        the parent's children are shared again in full."""
        node = self.nodes[name]
        for key, value in resource.items():
            node.pods[key] = node.pods.get(key, 0) + sign * value
            if node.pods[key] == 0:
                del node.pods[key]
        path: list[str] = []
        current: str | None = name
        while current is not None:
            path.append(current)
            self._set_request(current, self._own_request(current))
            current = self.parent_of(current)
        path.reverse()  # root first
        for parent_name, child_name in pairwise(path):
            for changed in self._share_one_child(parent_name, child_name):
                if changed != child_name and self.nodes[changed].children:
                    self._share_down(changed, set())
        if self.nodes[name].children:
            self._share_down(name, set())

    def _share_one_child(self, name: str, child_name: str) -> list[str]:
        """Share `name`'s pool again after only `child_name`'s request changed; the children
        whose runtime changed."""
        node, child = self.nodes[name], self.nodes[child_name]
        pool = self.pool if name == ROOT_QUOTA else node.runtime
        runtime = dict(child.runtime)
        for key in node.members:
            # every key: the parent's own pool may have moved with its request (through its
            # parent's sharing), which matters wherever a key was short
            requested = node.members_request(key)
            available = pool.get(key, 0) if name == ROOT_QUOTA or key in pool else requested
            now_enough = self._enough(node, key, available, requested)
            if not (now_enough and node.enough.get(key, False)):
                return self._share_children(name)
            if key not in child.max:
                continue  # the child is not a member for this key: nothing of it changes
            cap = child.max[key]
            wanted = child.request.get(key, 0)
            wanted = wanted if wanted < cap else cap
            runtime[key] = wanted if child.weights.get(key, 0) > 0 else min(wanted, child.min.get(key, 0))
        if runtime == child.runtime:
            return []
        child.runtime = runtime
        return [child_name]

    def runtimes(self) -> dict[str, Resource]:
        return {name: Resource(node.runtime) for name, node in self.nodes.items() if name != ROOT_QUOTA}


def runtime_resource(tree: QuotaTree, name: str) -> Resource:
    return Resource(tree.nodes[name].runtime) if name in tree.nodes else Resource()
