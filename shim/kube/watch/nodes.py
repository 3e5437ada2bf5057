"""Nodes to the core: capacity, labels, taints, readiness; a node that cannot be read is refused.

Idempotent like pods: the core ignores a node whose information did not change, so listings
and replays cost nothing. A Node with an unreadable allocatable is left out with a Kubernetes
Event saying which quantity is wrong (nothing is scheduled onto what Herder cannot measure).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from core.scheduler import Scheduler
from shim.convert.nodes import node_to_info
from shim.convert.objects import ConversionError
from shim.kube.watch.cache import KubeCache
from shim.kube.write.recorder import EventRecorder

log = logging.getLogger("herder.nodes")

REFUSED = "NodeRefused"


def node_name(node: Mapping[str, Any]) -> str:
    return str((node.get("metadata") or {}).get("name") or "")


class NodeSync:
    def __init__(self, scheduler: Scheduler, cache: KubeCache, recorder: EventRecorder | None) -> None:
        self._scheduler = scheduler
        self._cache = cache
        self._recorder = recorder

    def apply(self, node: Mapping[str, Any]) -> None:
        try:
            info = node_to_info(node)
        except ConversionError as error:
            message = f"Node {node_name(node)} refused, Herder keeps the last state it could read (if any): {error}"
            log.warning("%s", message)
            if self._recorder is not None:
                self._recorder.record(node, "Node", "v1", REFUSED, message)
            return
        self._cache.put_node(node)
        self._scheduler.update_node(info)

    def delete(self, node: Mapping[str, Any]) -> None:
        name = node_name(node)
        self._cache.drop_node(name)
        self._scheduler.remove_node(name)
        log.info("node %s removed", name)

    def reconcile(self, listed: Iterable[Mapping[str, Any]]) -> int:
        """Remove nodes a fresh listing no longer has (deleted while no watch was running)."""
        present = {node_name(node) for node in listed}
        gone = [name for name in self._cache.node_names() if name not in present]
        for name in gone:
            self.delete({"metadata": {"name": name}})
        return len(gone)
