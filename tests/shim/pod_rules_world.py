"""A cluster written as Kubernetes objects, for the rules between pods: nodes, running pods
(of any scheduler) and an incoming pod, all read by the shim's conversion and judged by the
core, as in kube-scheduler's filter tables ("which nodes may take this pod?").

    cluster = Cluster()
    cluster.node("node-a", zone="z1")
    cluster.running("web-1", "node-a", labels={"app": "web"})
    assert cluster.fits(labels={"app": "web"}, affinity=anti("app", "web", "zone")) == {...}
"""

from __future__ import annotations

from typing import Any

from core.objects.node_info import NodeInfo
from shim.convert.nodes import node_to_info
from shim.convert.pods import pod_to_allocation, pod_to_ask
from tests.core.scheduling.world import World

HOSTNAME = "kubernetes.io/hostname"
ZONE = "zone"
REGION = "region"


def selector(**labels: str) -> dict[str, Any]:
    return {"matchLabels": labels}


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def term(topology: str, *expressions: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A pod affinity term over `matchExpressions` (a `labelSelector` in `extra` replaces them)."""
    out: dict[str, Any] = {"topologyKey": topology, "labelSelector": {"matchExpressions": list(expressions)}}
    out.update(extra)
    return out


def affinity(*terms: dict[str, Any], anti: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if terms:
        out["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}
    if anti:
        out["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(anti)}
    return out


def spread(topology: str, max_skew: int = 1, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "maxSkew": max_skew,
        "topologyKey": topology,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchExpressions": [expr("foo", "Exists")]},
    }
    out.update(extra)
    return out


class Cluster:
    def __init__(self, config: str | None = None, **namespace_labels: dict[str, str]) -> None:
        self.world = World(config)
        self.namespaces: dict[str, dict[str, Any]] = {}
        for name in ("default", *namespace_labels):
            labels = namespace_labels.get(name, {})
            self.namespaces[name] = {"metadata": {"name": name, "labels": labels, "annotations": {}}}
        self._count = 0

    def node(
        self,
        name: str,
        *,
        hostname: bool = True,
        taints: tuple[dict[str, str], ...] = (),
        cpu: str = "8",
        **labels: str,
    ) -> NodeInfo:
        if hostname:
            labels = {HOSTNAME: name, **labels}
        info = node_to_info(
            {
                "metadata": {"name": name, "labels": labels},
                "spec": {"taints": list(taints)},
                "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}},
            }
        )
        self.world.sched.update_node(info)
        return info

    def nodes(self, **labels_by_node: dict[str, str]) -> Cluster:
        """Several nodes at once: `nodes(a={"zone": "z1"}, b={})`."""
        for name, labels in labels_by_node.items():
            self.node(name, **labels)
        return self

    def manifest(
        self,
        name: str,
        *,
        labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
        ns: str = "default",
        herder: bool = True,
        **spec: Any,
    ) -> dict[str, Any]:
        spec.setdefault("containers", [{"name": "main", "resources": {"requests": {"cpu": "100m"}}}])
        spec["schedulerName"] = "herder" if herder else "default-scheduler"
        return {
            "metadata": {
                "name": name,
                "namespace": ns,
                "uid": name,
                "labels": labels or {},
                "annotations": annotations or {},
                "creationTimestamp": "2026-01-01T00:00:00Z",
            },
            "spec": spec,
        }

    def running(self, name: str, node: str, *, herder: bool = False, **kw: Any) -> None:
        """A pod already on `node` (by default another scheduler's: foreign pods count alike)."""
        pod = self.manifest(name, herder=herder, nodeName=node, **kw)
        ns = self.namespaces.get(pod["metadata"]["namespace"])
        self.world.sched.add_allocation(pod_to_allocation(pod, ns))

    def ask(self, name: str = "", **kw: Any) -> Any:
        if not name:
            self._count += 1
            name = f"incoming-{self._count}"
        pod = self.manifest(name, **kw)
        return pod_to_ask(pod, self.namespaces.get(pod["metadata"]["namespace"]))

    def verdicts(self, **kw: Any) -> dict[str, str | None]:
        return self.world.sched.node_verdicts(self.ask(**kw))

    def fits(self, **kw: Any) -> set[str]:
        """The nodes that may take the pod now."""
        return {node for node, why in self.verdicts(**kw).items() if why is None}

    def submit(self, name: str, **kw: Any) -> None:
        self.world.sched.add_ask(self.ask(name, **kw))

    def schedule(self) -> dict[str, str]:
        return self.world.schedule()

    def reason(self, name: str) -> str | None:
        return self.world.reason(name)
