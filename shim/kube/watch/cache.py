"""The shim's own view of pods, nodes, namespaces and PriorityClasses, filled from watch events.

kopf keeps no objects for us, and the binder, evictor and status writers need to find a pod
by the core's key (its uid), and a pod's ask needs its namespace's annotations.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from shim.convert.pods import pod_key

KubeObject = Mapping[str, Any]


def _meta(obj: KubeObject) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


class KubeCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pods: dict[str, KubeObject] = {}
        self._nodes: dict[str, KubeObject] = {}
        self._namespaces: dict[str, KubeObject] = {}
        self._priority_classes: dict[str, KubeObject] = {}

    def put_pod(self, pod: KubeObject, key: str = "") -> str:
        key = key or pod_key(pod)
        with self._lock:
            self._pods[key] = pod
        return key

    def drop_pod(self, pod: KubeObject) -> str:
        key = pod_key(pod)
        with self._lock:
            self._pods.pop(key, None)
        return key

    def pod(self, key: str) -> KubeObject | None:
        with self._lock:
            return self._pods.get(key)

    def locate(self, key: str) -> tuple[str, str] | None:
        """(namespace, name) of the pod with this key, or None once it is deleted."""
        pod = self.pod(key)
        if pod is None:
            return None
        meta = _meta(pod)
        return str(meta.get("namespace") or "default"), str(meta.get("name") or "")

    def pods(self) -> list[KubeObject]:
        with self._lock:
            return list(self._pods.values())

    def put_node(self, node: KubeObject) -> None:
        with self._lock:
            self._nodes[str(_meta(node).get("name"))] = node

    def drop_node(self, name: str) -> None:
        with self._lock:
            self._nodes.pop(name, None)

    def node_names(self) -> list[str]:
        with self._lock:
            return sorted(self._nodes)

    def put_namespace(self, namespace: KubeObject) -> None:
        with self._lock:
            self._namespaces[str(_meta(namespace).get("name"))] = namespace

    def drop_namespace(self, name: str) -> None:
        with self._lock:
            self._namespaces.pop(name, None)

    def namespace(self, name: str) -> KubeObject | None:
        with self._lock:
            return self._namespaces.get(name)

    def put_priority_class(self, priority_class: KubeObject) -> None:
        with self._lock:
            self._priority_classes[str(_meta(priority_class).get("name"))] = priority_class

    def drop_priority_class(self, name: str) -> None:
        with self._lock:
            self._priority_classes.pop(name, None)

    def priority_class(self, name: str) -> KubeObject | None:
        """The PriorityClass by name (the pod webhook copies its preemption opt-out), or None."""
        with self._lock:
            return self._priority_classes.get(name)

    def pods_in(self, namespace: str) -> list[KubeObject]:
        """Pods of one namespace, to re-derive their asks when its annotations change."""
        with self._lock:
            return [p for p in self._pods.values() if _meta(p).get("namespace") == namespace]
