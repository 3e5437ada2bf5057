"""A queue in the hierarchy: its limits, what it uses, what waits in it.

Quotas are enforced on consumed resources, at scheduling time, along the whole path (seed
004): an ask fits a queue when `allocated + ask <= max` holds for the queue and for every
ancestor that has a max. `root`'s max is the cluster's size and follows the nodes.

`managed` queues come from the configuration; the others were created by a placement rule
and disappear when they are empty. A managed queue removed from the configuration while it
still has applications is `draining`: it takes no new applications and goes when empty.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Iterator, Mapping
from operator import itemgetter
from typing import Any, ClassVar

from core.config.schema import APPLICATION_SORT_POLICY, APPLICATION_SORT_PRIORITY, ChildTemplate, Limit
from core.kept import KeptTable
from core.objects.application import Application
from core.objects.application_order import ApplicationOrder
from core.objects.leaf_waits import LeafWaits
from core.objects.sorted_blocks import BLOCK, SortedBlocks
from core.resources import Resource, add_into, format_amounts

FIFO = "fifo"
FAIR = "fair"


# A child's place in its parent's order: (share, name, child), or where queue priorities order
# siblings, (-priority, share, name, child).
_Entry = tuple[Any, ...]
_queue_of = itemgetter(-1)  # an entry's child
Rank = Callable[["Queue"], int]  # a child's priority now, for a parent ordering by priority


def _entry(child: Queue, cluster: Mapping[str, int], rank: Rank | None) -> _Entry:
    """The child's entry in its parent's order now (by priority first when `rank` is given)."""
    if rank is None:
        return (child.usage_share(cluster), child.name, child)
    return (-rank(child), child.usage_share(cluster), child.name, child)


class Queue:
    __slots__ = (
        "_bases",
        "_by_name",
        "_child_order",
        "_child_order_cluster",
        "_child_order_version",
        "_guaranteed",
        "_max",
        "_max_items",
        "_moved_children",
        "_order_key",
        "_properties",
        "_share",
        "_sort_rules",
        "_usage_doc",
        "admin_acl",
        "allocated",
        "apps",
        "child_template",
        "children",
        "draining",
        "is_leaf",
        "leaf_by_default",
        "limits",
        "managed",
        "max_applications",
        "name",
        "order",
        "order_version",
        "parent",
        "path",
        "pending",
        "pending_apps",
        "running_apps",
        "submit_acl",
        "waits",
    )

    def __init__(self, name: str, parent: Queue | None, *, leaf: bool, managed: bool) -> None:
        self.name = name
        self.parent = parent
        self.path: str = f"{parent.path}.{name}" if parent is not None else name
        self.is_leaf = leaf
        # A configured leaf with no children and no `parent` key: it may become a parent
        # (see Partition.become_parent) and turns back into a leaf when its last child goes.
        self.leaf_by_default = False
        self.managed = managed
        self.draining = False
        self.children: dict[str, Queue] = {}
        self._max: Resource | None = None
        self._max_items: tuple[tuple[str, int], ...] = ()  # the max's entries, read on every decision
        self._guaranteed: Resource | None = None
        self.max_applications = 0
        self._properties: dict[str, str] = {}
        # (properties generation, sort policy, sort by priority), read on every decision
        self._sort_rules: tuple[int, str, bool] = (-1, FIFO, True)
        self.submit_acl: str | None = None
        self.admin_acl: str | None = None
        self.limits: tuple[Limit, ...] = ()
        self.child_template: ChildTemplate | None = None
        self.allocated: dict[str, int] = {}
        self._usage_doc: dict[str, int] | None = None  # `allocated_doc()`, until `allocated` changes
        # usage_share with what it was computed from; queues are ordered on every decision
        # and most of them did not allocate since.
        # (valid while `_bases` was read with the cluster and limits of now)
        self._share: float | None = None
        # what each resource's share is taken of, for the cluster and the limits it was read with
        # (one tuple shared by every queue without guaranteed or max: `_cluster_bases`)
        self._bases: _Bases | None = None
        # Parent only: every child in fair order, sorted once and repaired for the children whose
        # share moved since (a placement moves one child per level).
        self._child_order: list[_Entry] | SortedBlocks | None = None
        self._by_name: list[Queue] | None = None
        self._child_order_cluster: Mapping[str, int] | None = None
        self._child_order_version: int | None = None  # ordered by priority: the counter it was sorted at
        self._moved_children: set[Queue] = set()
        self._order_key: _Entry | None = None  # this queue's entry in its parent's order
        self.pending: dict[str, int] = {}
        self.running_apps = 0
        self.apps: dict[str, Application] = {}
        # Leaf only: applications with asks, and their cached order (None: sort again).
        self.pending_apps: dict[str, Application] = {}
        self.order: ApplicationOrder | None = None
        self.order_version = -1  # the change counter the order was computed at
        self.waits = LeafWaits()

    # -- tree ----------------------------------------------------------------------------
    def child(self, name: str) -> Queue | None:
        return self.children.get(name.lower())

    # Bumped whenever a queue comes or goes anywhere, or a guarantee changes: what was derived
    # from the tree's shape and guarantees (preemption's kept searches) holds until then.
    structure_generation: ClassVar[int] = 0

    def add_child(self, queue: Queue) -> None:
        self.children[queue.name.lower()] = queue
        self._child_order = self._by_name = None
        Queue.structure_generation += 1

    def remove_child(self, queue: Queue) -> None:
        if self.children.get(queue.name.lower()) is queue:
            del self.children[queue.name.lower()]
        self._child_order = self._by_name = None
        Queue.structure_generation += 1

    def children_by_name(self) -> list[Queue]:
        """The children sorted by name, as documents list them (kept until a child comes or goes)."""
        if self._by_name is None:
            self._by_name = sorted(self.children.values(), key=lambda queue: queue.name)
        return self._by_name

    @property
    def max(self) -> Resource | None:
        return self._max

    @max.setter
    def max(self, value: Resource | None) -> None:
        self._max = value
        self._max_items = tuple(value.items()) if value is not None else ()
        self.share_moved()

    @property
    def guaranteed(self) -> Resource | None:
        return self._guaranteed

    @guaranteed.setter
    def guaranteed(self, value: Resource | None) -> None:
        self._guaranteed = value
        Queue.structure_generation += 1
        self.share_moved()

    def share_moved(self) -> None:
        """This queue's usage share may have changed (usage or limits): its parent repairs its order."""
        self._share = None
        self._usage_doc = None
        if self.parent is not None:
            self.parent._moved_children.add(self)

    def allocated_doc(self) -> dict[str, int]:
        """`allocated` sorted by resource, as documents print it; the same dict until the usage
        changes (the simulator samples every queue at every moment). Nobody may change it."""
        doc = self._usage_doc
        if doc is None:
            doc = self._usage_doc = {key: int(val) for key, val in sorted(self.allocated.items())}
        return doc

    def ordered_children(
        self, cluster: Mapping[str, int], rank: Rank | None = None, version: int | None = None
    ) -> Iterator[Queue]:
        """Every child with pending requests, the one using the smallest share of its due
        first, ties by name: the order `policies.order_queues` gives them, kept across decisions
        instead of sorted for each. Children with nothing pending are not in it, so a walk over
        a parent of 10,000 children where one has a new pod finds it first, and one where none
        has ends at once.

        A share moves only with the child's usage, guaranteed or max (each tells the parent:
        `share_moved`) or with the cluster's size (a new capacity map), and a child enters or
        leaves the order when it gets its first pending request or places or drops its last
        (which tells the parent too): the order is sorted again only for a new cluster size or
        a child come or gone, so a change elsewhere in the cluster (a node's labels, a pod of
        another queue) leaves it as it was.

        Where queue priorities order siblings, `rank` gives a child's priority now and the
        highest come first (`policies.order_queues` by priority at a change counter). A child's priority
        follows its applications' best asks that may run now, which move with the change counter
        (an ask parked before it may run again): `version` is the counter the ranks are read at,
        and a new one sorts again. At one counter (pods come and go without moving it), a
        priority moves only where a pod is placed (`share_moved`) or an ask comes, goes, is
        parked (and so held) or let go (`candidates_changed`)."""
        order = self._child_order
        if order is None or self._child_order_cluster is not cluster or self._child_order_version != version:
            order = self._sort_children(cluster, rank, version)
        elif self._moved_children:
            for child in self._moved_children:
                if not self._reposition(order, child, cluster, rank):
                    order = self._sort_children(cluster, rank, version)
                    break
        self._moved_children.clear()
        # Lazily: a decision usually stops at the first child; only this method changes `order`.
        return map(_queue_of, order)

    def heads_parent_order(self, cluster: Mapping[str, int]) -> bool:
        """Whether this queue comes first in its parent's `ordered_children(cluster)` (by fair
        share, without queue priorities) as it stands now, read without repairing the order: it
        heads the kept order, nothing else moved there since, and its share now stays below its
        next sibling's. False when only a repair could tell."""
        parent = self.parent
        if parent is None or not self.pending:
            return False
        order = parent._child_order
        if (
            type(order) is not list
            or not order
            or order[0][-1] is not self
            or parent._child_order_cluster is not cluster
            or parent._child_order_version is not None
        ):
            return False
        moved = parent._moved_children
        if moved and (len(moved) > 1 or self not in moved):
            return False
        return len(order) == 1 or (self.usage_share(cluster), self.name) < order[1][:2]

    def rank_in_parent(self) -> int | None:
        """This queue's priority as its parent's kept order ranks it (None when it is not in an
        order by priority)."""
        key = self._order_key
        return -key[0] if key is not None and len(key) == 4 else None

    def _sort_children(
        self, cluster: Mapping[str, int], rank: Rank | None, version: int | None
    ) -> list[_Entry] | SortedBlocks:
        children = self.children.values()
        for child in children:
            child._order_key = None
        entries = sorted(_entry(child, cluster, rank) for child in children if child.pending)
        for entry in entries:
            entry[-1]._order_key = entry
        # a plain list while moving one entry is cheap; blocks once shifting the list is not
        order = entries if len(children) <= BLOCK else SortedBlocks(entries)
        self._child_order, self._child_order_cluster, self._child_order_version = order, cluster, version
        return order

    def _reposition(
        self, order: list[_Entry] | SortedBlocks, child: Queue, cluster: Mapping[str, int], rank: Rank | None
    ) -> bool:
        """Move one child to its place for its current share, put it in (first pending request)
        or take it out (none left); False when it is not where its last key says (the caller
        sorts again)."""
        key = child._order_key
        if key is None:  # not in the order
            if not child.pending:
                return True
            if self.children.get(child.name.lower()) is not child:
                return False
            entry = _entry(child, cluster, rank)
            if isinstance(order, list):
                insort(order, entry)
            else:
                order.add(entry)
            child._order_key = entry
            return True
        # Siblings' names are unique, so entries compare without a key function and never reach
        # the queues themselves: the child's own entry is found by bisection. When what is found
        # is not the child (one removed from this parent since), the caller sorts every child again.
        if isinstance(order, list):
            index = bisect_left(order, key)
            if index == len(order) or order[index][-1] is not child:
                return False
            if not child.pending:
                del order[index]
                child._order_key = None
                return True
            entry = _entry(child, cluster, rank)
            if (index == 0 or order[index - 1] < entry) and (index + 1 == len(order) or entry < order[index + 1]):
                order[index] = entry  # still between its neighbours
            else:
                del order[index]
                insort(order, entry)
        else:
            found = order.remove_at(key)
            if found is None or found[-1] is not child:
                return False
            if not child.pending:
                child._order_key = None
                return True
            entry = _entry(child, cluster, rank)
            order.add(entry)
        child._order_key = entry
        return True

    def candidates_changed(self) -> None:
        """An ask of this leaf came, went, was parked or let go: its application's best ask that
        may run now, and so this queue's priority and each parent's, may have moved (see
        `ordered_children`)."""
        queue = self
        while queue.parent is not None:
            queue.parent._moved_children.add(queue)
            queue = queue.parent

    def ancestry(self) -> Iterator[Queue]:
        """This queue, then each parent up to root."""
        queue: Queue | None = self
        while queue is not None:
            yield queue
            queue = queue.parent

    def walk(self) -> Iterator[Queue]:
        yield self
        for child in self.children.values():
            yield from child.walk()

    def is_empty(self) -> bool:
        return not self.apps and not self.children and not self.allocated

    # -- properties ----------------------------------------------------------------------
    # Bumped whenever any queue's properties are replaced: a child inherits its parents', so
    # what a queue derived from them holds until the next change anywhere.
    properties_generation: ClassVar[int] = 0

    @property
    def properties(self) -> dict[str, str]:
        return self._properties

    @properties.setter
    def properties(self, values: dict[str, str]) -> None:
        self._properties = values
        Queue.properties_generation += 1

    def inherited_property(self, key: str) -> str | None:
        for queue in self.ancestry():
            if key in queue._properties:
                return queue._properties[key]
        return None

    def _sort(self) -> tuple[int, str, bool]:
        rules = self._sort_rules
        if rules[0] != Queue.properties_generation:
            value = (self.inherited_property(APPLICATION_SORT_POLICY) or FIFO).lower()
            by_priority = (self.inherited_property(APPLICATION_SORT_PRIORITY) or "enabled").lower() != "disabled"
            rules = self._sort_rules = (Queue.properties_generation, FAIR if value == FAIR else FIFO, by_priority)
        return rules

    @property
    def app_sort_policy(self) -> str:
        return self._sort()[1]

    @property
    def app_sort_priority(self) -> bool:
        return self._sort()[2]

    def reorder(self, app: Application) -> None:
        """The application's asks changed: its place in the cached order is repaired at the
        next walk (a new application is put in, one with no asks left taken out)."""
        order = self.order
        if order is not None:
            order.suspect(app)
            order.stale = True

    # -- accounting ----------------------------------------------------------------------
    def add_allocated(self, res: Mapping[str, int], sign: int = 1) -> None:
        for queue in self.ancestry():
            add_into(queue.allocated, res, sign)
            queue.share_moved()

    def add_pending(self, res: Mapping[str, int], sign: int = 1) -> None:
        for queue in self.ancestry():
            had = bool(queue.pending)
            add_into(queue.pending, res, sign)
            if had != bool(queue.pending) and queue.parent is not None:
                queue.parent._moved_children.add(queue)  # it enters or leaves its parent's order

    def start_pending(self, res: Mapping[str, int]) -> None:
        """A pending request of this leaf was placed: `add_pending(res, -1)` and
        `add_allocated(res)` in one walk up the path (this runs for every placement)."""
        items = res.items()
        queue: Queue | None = self
        while queue is not None:
            pending, allocated = queue.pending, queue.allocated
            for key, val in items:
                left = pending.get(key, 0) - val
                if left:
                    pending[key] = left
                else:
                    pending.pop(key, None)
                held = allocated.get(key, 0) + val
                if held:
                    allocated[key] = held
                else:
                    allocated.pop(key, None)
            # share_moved(), inline
            queue._share = None
            queue._usage_doc = None
            parent = queue.parent
            if parent is not None:
                parent._moved_children.add(queue)
            queue = parent

    def add_running_app(self, sign: int = 1) -> None:
        for queue in self.ancestry():
            queue.running_apps += sign

    def over_max(self, request: Resource) -> tuple[Queue, str] | None:
        """The first queue, from this one up to root, whose max `request` would pass, and the
        resource it would pass; None when every max along the path holds it."""
        amounts = request.amounts
        queue: Queue | None = self
        while queue is not None:  # ancestry() without the generator: this runs for every decision
            limits = queue._max_items
            if limits:
                allocated = queue.allocated
                for key, cap in limits:
                    amount = amounts.get(key, 0)
                    if amount > 0 and allocated.get(key, 0) + amount > cap:
                        return queue, key
            queue = queue.parent
        return None

    def max_message(self, key: str, amount: int) -> str:
        """Why `amount` more of `key` does not fit this queue's max (the cluster's size at root)."""
        assert self.max is not None
        what = "the cluster size" if self.parent is None else "max"
        held, asked, ceiling = format_amounts(key, self.allocated.get(key, 0), amount, self.max[key])
        return f"queue {self.path} would exceed {what} {key}: {held} allocated + {asked} asked > {ceiling}"

    def max_violation(self, request: Resource) -> str | None:
        """Why `request` does not fit this queue's max or an ancestor's, or None."""
        over = self.over_max(request)
        if over is None:
            return None
        queue, key = over
        return queue.max_message(key, request.get(key, 0))

    def app_limit_violation(self) -> str | None:
        """Why a new application cannot start here (maxapplications along the path), or None."""
        for queue in self.ancestry():
            if queue.max_applications and queue.running_apps >= queue.max_applications:
                return (
                    f"queue {queue.path} has reached maxapplications {queue.max_applications} "
                    f"({queue.running_apps} running)"
                )
        return None

    def usage_share(self, cluster: Mapping[str, int]) -> float:
        """How much of its due this queue uses: the dominant share over guaranteed (or max,
        or the cluster when neither is set). Used to order queues fairly."""
        bases = self._bases
        guaranteed, maximum = self._guaranteed, self._max
        if bases is None or bases[0] is not cluster or bases[1] is not guaranteed or bases[2] is not maximum:
            bases = self._bases = _bases_for(cluster, guaranteed, maximum)
        elif self._share is not None:
            return self._share
        per_key = bases[3]
        share = 0.0
        for key, used in self.allocated.items():
            base = per_key.get(key)
            if base and used > 0:
                ratio = used / base
                if ratio > share:
                    share = ratio
        self._share = share
        return share


# (cluster, guaranteed, max, what each resource's share is taken of)
_Bases = tuple[Mapping[str, int], "Resource | None", "Resource | None", dict[str, int]]
# by the cluster's id, for queues without guaranteed or max (the cluster's size changes as nodes
# come and go: the last few are kept)
_cluster_bases: KeptTable[int, _Bases] = KeptTable(8)


def _bases_for(cluster: Mapping[str, int], guaranteed: Resource | None, maximum: Resource | None) -> _Bases:
    """What each resource's share is taken of: guaranteed, else max, else the cluster (a
    resource the chosen one does not name, or names as zero, from the cluster). An empty
    guaranteed or max counts as none but gets a tuple of its own (its identity is checked)."""
    if guaranteed is None and maximum is None:
        shared = _cluster_bases.get(id(cluster))
        if shared is not None and shared[0] is cluster:
            return shared
    base_map: Mapping[str, int] = guaranteed or maximum or cluster
    per_key = {key: base_map.get(key) or cluster.get(key) or 0 for key in (*cluster, *base_map)}
    bases = (cluster, guaranteed, maximum, per_key)
    if guaranteed is None and maximum is None:
        _cluster_bases.keep(id(cluster), bases)  # holds the cluster: its id is not reused while here
    return bases
