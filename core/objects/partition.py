"""A partition: the queue tree, the applications in it and the nodes under it.

The partition owns the structure (building the queue tree from configuration, creating and
pruning dynamic queues, placing applications); the scheduler owns the lock and decides what
to allocate. It is not thread-safe on its own: every call happens under the scheduler's lock.

A configuration change builds a new tree and moves every application and its usage over to
it, so queues the new configuration keeps carry their usage on, removed queues with work in
them stay as draining queues until they are empty, and nothing is counted twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

from core.config.schema import PartitionConfig, QueueConfig
from core.objects import queue_priority
from core.objects.application import Application
from core.objects.ask import TAG_GUARANTEED, TAG_MAX_APPS, TAG_QUOTA, Allocation, Ask
from core.objects.node import Node
from core.objects.node_index import NodeIndex
from core.objects.node_journal import NodeJournal
from core.objects.pod_topology import PodTopology
from core.objects.queue import Queue
from core.objects.volumes import VolumeCatalog
from core.placement import PlacementManager, PlacementRequest, PlacementResult
from core.resources import Resource

ROOT = "root"


def _resource_tag(tags: dict[str, str], key: str) -> Resource | None:
    raw = tags.get(key)
    if not raw:
        return None
    try:
        values = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(values, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and v >= 0 for k, v in values.items()
    ):
        return None
    return Resource(values)


class Partition:
    def __init__(self, config: PartitionConfig) -> None:
        self.name = config.name
        self.config = config
        self.nodes: dict[str, Node] = {}
        self.node_journal = NodeJournal()  # which nodes changed, in order (nodes come and go through it too)
        self.node_index = NodeIndex(config.node_sort_policy.type, config.node_sort_policy.resource_weights)
        self.topology = PodTopology()
        self.volumes = VolumeCatalog()
        self.cluster_capacity: dict[str, int] = {}
        self._capacity_nodes: dict[str, int] = {}  # per resource, how many nodes name it
        self.applications: dict[str, Application] = {}
        # pods put on or taken off nodes so far: answers that depend on usage hold while it stands
        self.usage_changes = 0
        self.placement = PlacementManager(config.placement_rules)
        self.root = self._build_tree(config.root)

    # -- queue tree ----------------------------------------------------------------------
    def _build_tree(self, root_cfg: QueueConfig) -> Queue:
        root = Queue(ROOT, None, leaf=False, managed=True)
        self._configure(root, root_cfg)
        self._add_children(root, root_cfg)
        root.max = Resource(self.cluster_capacity)
        self.queue_priorities = queue_priority.configured(root)
        return root

    def _add_children(self, parent: Queue, cfg: QueueConfig) -> None:
        for child_cfg in cfg.queues:
            child = Queue(child_cfg.name, parent, leaf=not child_cfg.is_parent, managed=True)
            child.leaf_by_default = child_cfg.may_become_parent
            self._configure(child, child_cfg)
            parent.add_child(child)
            self._add_children(child, child_cfg)

    @staticmethod
    def _configure(queue: Queue, cfg: QueueConfig) -> None:
        queue.max = cfg.max if cfg.max else None
        queue.guaranteed = cfg.guaranteed if cfg.guaranteed else None
        queue.max_applications = cfg.max_applications
        queue.properties = dict(cfg.properties)
        queue.submit_acl = cfg.submit_acl
        queue.admin_acl = cfg.admin_acl
        queue.limits = cfg.limits
        queue.child_template = cfg.child_template

    def apply_config(self, config: PartitionConfig) -> None:
        """Swap in a new (validated) configuration, carrying every application over."""
        old_root = self.root
        self.config = config
        self.placement = PlacementManager(config.placement_rules)
        policy = config.node_sort_policy
        self.node_index.set_policy(policy.type, policy.resource_weights)
        self.root = self._build_tree(config.root)
        # Dynamic queues that still have work are recreated with their settings.
        for old in old_root.walk():
            if old.is_leaf and old.apps:
                self._carry_queue(old)
        for app in self.applications.values():
            queue = self.find_queue(app.queue_path)
            if queue is None or not queue.is_leaf:
                queue = self._recreate_path(app.queue_path, draining=True)
            app.queue_path = queue.path
            queue.apps[app.app_id] = app
            queue.add_allocated(app.used)
            queue.add_pending(app.pending_resource)
            for ask in app.asks.values():
                queue.waits.joined(app, ask)
            if app.asks:
                queue.pending_apps[app.app_id] = app
            if app.is_running:
                queue.add_running_app()

    def _carry_queue(self, old: Queue) -> None:
        existing = self.find_queue(old.path)
        if existing is not None:
            return
        queue = self._recreate_path(old.path, draining=old.managed)
        if not old.managed:
            queue.max, queue.guaranteed, queue.max_applications = old.max, old.guaranteed, old.max_applications
            queue.properties = dict(old.properties)

    def _recreate_path(self, path: str, *, draining: bool) -> Queue:
        parts = path.split(".")
        queue = self.root
        for depth, name in enumerate(parts[1:], start=1):
            last = depth == len(parts) - 1
            child = queue.child(name)
            if child is not None and not last and self.may_become_parent(child):
                child.is_leaf = False  # it was an implicit parent before the change and is again
            if child is not None and child.is_leaf != last:
                # The new tree has a queue of the other kind here: the old work drains beside it
                # (one such queue for all applications that were there).
                name = f"{name}-draining"
                child = queue.child(name)
            if child is None:
                child = Queue(name, queue, leaf=last, managed=False)
                child.draining = draining
                queue.add_child(child)
            queue = child
        return queue

    def find_queue(self, path: str) -> Queue | None:
        parts = path.split(".")
        if not parts or parts[0].lower() != ROOT:
            return None
        queue: Queue | None = self.root
        for name in parts[1:]:
            if queue is None:
                return None
            queue = queue.child(name)
        return queue

    def queues(self) -> Iterator[Queue]:
        return self.root.walk()

    # QueueView for placement
    def exists(self, path: str) -> bool:
        queue = self.find_queue(path)
        return queue is not None and not queue.draining

    def is_leaf(self, path: str) -> bool:
        queue = self.find_queue(path)
        return queue is not None and queue.is_leaf

    def submit_acl(self, path: str) -> str | None:
        queue = self.find_queue(path)
        return queue.submit_acl if queue is not None else None

    def can_become_parent(self, path: str) -> bool:
        queue = self.find_queue(path)
        return queue is not None and self.may_become_parent(queue)

    @staticmethod
    def may_become_parent(queue: Queue) -> bool:
        """A configured leaf by default only, with no applications and nothing allocated."""
        return (
            queue.is_leaf
            and queue.leaf_by_default
            and not queue.draining
            and not queue.apps
            and not queue.allocated
            and not queue.pending
        )

    def _create_dynamic(self, path: str) -> Queue:
        parts = path.split(".")
        parent = self.find_queue(".".join(parts[:-1]))
        if parent is None or parent.is_leaf:
            raise ValueError(f"cannot create queue {path}: its parent is missing or a leaf")
        return self._create_child(parent, parts[-1], leaf=True)

    def _create_child(self, parent: Queue, name: str, *, leaf: bool) -> Queue:
        queue = Queue(name, parent, leaf=leaf, managed=False)
        template = parent.child_template
        if template is not None and leaf:
            queue.max = template.max
            queue.guaranteed = template.guaranteed
            queue.max_applications = template.max_applications
            queue.properties = dict(template.properties)
        parent.add_child(queue)
        return queue

    def create_path(self, result: PlacementResult) -> Queue:
        for path in result.to_create:
            parts = path.split(".")
            parent = self.find_queue(".".join(parts[:-1]))
            if parent is None or parent.is_leaf:
                raise ValueError(f"cannot create queue {path}: its parent is missing or a leaf")
            existing = parent.child(parts[-1])
            if existing is None:
                self._create_child(parent, parts[-1], leaf=path == result.queue_path)
            elif path != result.queue_path and self.may_become_parent(existing):
                existing.is_leaf = False
        queue = self.find_queue(result.queue_path or "")
        if queue is None:
            raise ValueError(f"queue {result.queue_path} does not exist after placement")
        return queue

    @staticmethod
    def apply_namespace_limits(queue: Queue, tags: dict[str, str]) -> None:
        """Namespace annotations shape the limits of queues a rule created, never static ones."""
        if queue.managed:
            return
        quota = _resource_tag(tags, TAG_QUOTA)
        if quota is not None and quota != queue.max:
            queue.max = quota  # its parent's order moves it (Queue.max tells it)
        guaranteed = _resource_tag(tags, TAG_GUARANTEED)
        if guaranteed is not None and guaranteed != queue.guaranteed:
            queue.guaranteed = guaranteed
        max_apps = tags.get(TAG_MAX_APPS)
        if max_apps is not None and max_apps.isdigit():
            queue.max_applications = int(max_apps)

    def prune(self, queue: Queue) -> None:
        """Remove dynamic (or draining) queues that became empty, walking up."""
        current: Queue | None = queue
        while current is not None and current.parent is not None:
            if (current.managed and not current.draining) or not current.is_empty():
                return
            parent = current.parent
            parent.remove_child(current)
            if parent.leaf_by_default and not parent.children:
                parent.is_leaf = True  # an implicit parent is a leaf again once its last child went
            current = parent

    # -- applications --------------------------------------------------------------------
    def place(self, ask: Ask) -> tuple[Queue | None, str]:
        """The leaf queue a new application goes to (created when a rule says so), or a reason."""
        result = self.placement.place(
            PlacementRequest(application_id=ask.application_id, queue=ask.queue, user=ask.user, tags=dict(ask.tags)),
            self,
        )
        if result.queue_path is None:
            return None, result.reason or "no placement rule matched"
        try:
            queue = self.create_path(result)
        except ValueError as err:
            return None, str(err)
        if not queue.is_leaf:
            return None, f"queue {queue.path} is a parent queue; applications go to leaf queues"
        self.apply_namespace_limits(queue, dict(ask.tags))
        return queue, ""

    # -- nodes ---------------------------------------------------------------------------
    def put_on_node(self, node: Node, allocation: Allocation) -> None:
        """A pod is on the node now: its room, the node's score and the pods' topology follow."""
        node.add(allocation)
        self.usage_changes += 1
        self.node_index.refresh(node, allocation.resource.keys())
        self.topology.add(allocation.key, node.node_id, allocation.rules)
        if allocation.claims:
            self.volumes.placed(
                allocation.key, allocation.display_name, node.node_id, allocation.claims, allocation.volume_plan
            )

    def take_off_node(self, node: Node, key: str) -> None:
        allocation = node.remove(key)
        self.usage_changes += 1
        self.node_index.refresh(node, None if allocation is None else allocation.resource.keys())
        self.topology.remove(key)
        if allocation is not None and allocation.claims:
            self.volumes.released(key, allocation.claims)

    def node_capacity_changed(self, old: Mapping[str, int] | None, new: Mapping[str, int] | None) -> None:
        """A node came (`old` None), went (`new` None) or changed size: the cluster's size follows
        by the difference, so loading thousands of nodes stays linear. A resource is named while
        any node names it, as a fresh sum over the nodes would."""
        total = dict(self.cluster_capacity)
        for capacity, sign in ((old, -1), (new, 1)):
            for key, val in (capacity or {}).items():
                count = self._capacity_nodes.get(key, 0) + sign
                if count:
                    self._capacity_nodes[key] = count
                    total[key] = total.get(key, 0) + sign * val
                else:
                    del self._capacity_nodes[key]
                    del total[key]
        self.cluster_capacity = total
        self.root.max = Resource(total)
