"""Random scenarios for `herder simulate`, written as a user would write them.

Each scenario is a plain dict in the simulator's public format (docs/simulation.md) that mixes
what a shared batch cluster sees at once: queues with maxes, guarantees, user limits and
preemption properties; namespaces with quota annotations; ElasticQuotas (a parent and its
children); PriorityClasses; storage classes, volumes and claims; gangs; pods with every kind of
rule between pods (affinity, anti-affinity, hard and soft topology spread, host ports, node
selectors, tolerations); and, during the run, nodes added, removed, cordoned and uncordoned,
pods resized and deleted, queues and quotas changed.

The choices come from a `Chooser`: `RandomChooser` (a seeded `random.Random`, for `herder bench
--fuzz`), or any other source of integers (the suite draws them from Hypothesis, which then
shrinks a failing scenario). Scenarios are small (a few nodes, a few dozen pods) so hundreds run
in a minute; `scenario_checks.py` says what each run must hold.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
ZONES = ("z1", "z2", "z3")
NAMESPACES = ("team-a", "team-b", "team-c")
USERS = ("alice", "bob", "carol")
QUOTA_LABELS = "quota.scheduling.koordinator.sh"
TASK_GROUPS = "yunikorn.apache.org/task-groups"
TASK_GROUP_NAME = "yunikorn.apache.org/task-group-name"
GANG_PARAMETERS = "yunikorn.apache.org/schedulingPolicyParameters"
# topology spread twice: its domains follow the nodes, which come and go during the run
RULES = ("none", "anti", "affinity", "spread", "spread", "soft-spread", "preferred", "port", "selector", "toleration")


class Chooser(Protocol):
    def integer(self, low: int, high: int) -> int:
        """A whole number from `low` to `high`, both included."""


class RandomChooser:
    """Choices from a seeded `random.Random`: the same seed, the same scenario."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def integer(self, low: int, high: int) -> int:
        return self._random.randint(low, high)


class _Draw:
    """Helpers over a Chooser."""

    def __init__(self, chooser: Chooser) -> None:
        self.chooser = chooser

    def number(self, low: int, high: int) -> int:
        return self.chooser.integer(low, high)

    def pick(self, options: Sequence[T]) -> T:
        return options[self.number(0, len(options) - 1)]

    def chance(self, percent: int) -> bool:
        return self.number(0, 99) < percent


def generate_scenario(chooser: Chooser) -> dict[str, Any]:
    """One random scenario (a plain dict, as YAML would load it)."""
    return _Scenario(_Draw(chooser)).build()


class _Scenario:
    def __init__(self, draw: _Draw) -> None:
        self.draw = draw
        self.node_names: list[str] = []
        self.pod_names: list[tuple[str, str]] = []  # (namespace, name) of Herder's pods
        self.claims: list[tuple[str, str]] = []  # (namespace, claim name)
        self.queues: list[str] = []
        self.quotas: list[str] = []
        # One scenario in three is a churning one: deployments spread over zones while nodes come
        # and go (the rules kept per node must follow every change).
        self.churn = draw.chance(35)

    def build(self) -> dict[str, Any]:
        draw = self.draw
        scenario: dict[str, Any] = {
            "name": "fuzz",
            "settings": {"quota.recycle.delay": f"{draw.pick((5, 20, 60))}s"},
            "config": self.config(),
            "nodes": [self.node(f"n{i}") for i in range(draw.number(1, 4))],
            "namespaces": [self.namespace(name) for name in NAMESPACES if draw.chance(40)],
            "quotas": self.elastic_quotas(),
            "priorityclasses": [
                {"metadata": {"name": "high"}, "value": 1000},
                {
                    "metadata": {"name": "keep", "annotations": {"yunikorn.apache.org/allow-preemption": "false"}},
                    "value": 10,
                },
            ],
            "objects": self.storage(),
            "workload": [self.workload(i) for i in range(draw.number(1, 8))],
        }
        events = draw.number(3, 12) if self.churn else draw.number(0, 8)
        scenario["events"] = sorted((self.event() for _ in range(events)), key=lambda e: e["at"])
        scenario["until"] = draw.pick((120, 300, 600))
        if draw.chance(30):
            scenario["snapshots"] = [draw.number(0, 100)]
        return scenario

    # -- the configuration ---------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        """queues.yaml: up to three leaves under root, each maybe with a max, a guarantee, user
        or group limits within the max, and preemption and ordering properties."""
        draw = self.draw
        leaves = []
        for name in ("batch", "prod", "dev")[: draw.number(1, 3)]:
            if f"root.{name}" not in self.queues:
                self.queues.append(f"root.{name}")
            leaf: dict[str, Any] = {"name": name}
            high = draw.number(2, 24)
            resources: dict[str, Any] = {}
            if draw.chance(50):
                resources["max"] = {"vcore": high, "memory": f"{draw.number(4, 64)}Gi"}
            if draw.chance(40):
                resources["guaranteed"] = {"vcore": draw.number(1, high)}
            if resources:
                leaf["resources"] = resources
            properties: dict[str, str] = {}
            if draw.chance(40):
                properties["preemption.delay"] = f"{draw.pick((1, 5, 30))}s"
            if draw.chance(20):
                properties["preemption.policy"] = draw.pick(("fence", "disabled"))
            if draw.chance(20):
                properties["priority.offset"] = str(draw.number(-100, 100))
            if draw.chance(20):
                properties["application.sort.policy"] = draw.pick(("fifo", "fair"))
            if properties:
                leaf["properties"] = properties
            apps = draw.number(1, 4) if draw.chance(30) else 0
            if apps:
                leaf["maxapplications"] = apps
            if draw.chance(40):
                leaf["limits"] = [self.limit(high if "max" in resources else 12, apps or 3)]
            leaves.append(leaf)
        root: dict[str, Any] = {"name": "root", "submitacl": "*", "queues": leaves}
        if draw.chance(30):
            root["limits"] = [self.limit(40, 6, lowest=24)]
        partition: dict[str, Any] = {
            "name": "default",
            "placementrules": [
                {"name": "provided", "create": False},
                {"name": "tag", "value": "namespace", "create": True},
            ],
            "queues": [root],
        }
        if draw.chance(30):
            partition["nodesortpolicy"] = {"type": draw.pick(("binpacking", "fair"))}
        return {"partitions": [partition]}

    def limit(self, most_vcore: int, most_apps: int, lowest: int = 1) -> dict[str, Any]:
        """A user or group limit of at most `most_vcore` cores and `most_apps` applications (root's
        are at least `lowest`, so a leaf's own limits stay within them)."""
        draw = self.draw
        limit: dict[str, Any] = {"limit": "fuzz"}
        if draw.chance(50):
            limit["users"] = [draw.pick((*USERS, "*"))]
        else:
            limit["groups"] = ["ml"]
        # both, always: a leaf's limit without one would be "unlimited" below root's, which is refused
        limit["maxresources"] = {"vcore": draw.number(min(lowest, most_vcore), most_vcore)}
        limit["maxapplications"] = draw.number(min(lowest // 4 + 1, most_apps), most_apps)
        return limit

    # -- nodes, namespaces, quotas -----------------------------------------------------------
    def node(self, name: str) -> dict[str, Any]:
        draw = self.draw
        count = draw.number(1, 3)
        self.node_names.extend([name] if count == 1 else [f"{name}-{i}" for i in range(count)])
        entry: dict[str, Any] = {
            "name": name,
            "count": count,
            "allocatable": {"cpu": str(draw.pick((2, 4, 8, 16))), "memory": f"{draw.pick((8, 16, 64))}Gi"},
        }
        if draw.chance(85):
            entry["labels"] = {ZONE: draw.pick(ZONES)}
        if draw.chance(15):
            entry["allocatable"]["pods"] = str(draw.number(1, 4))
        if draw.chance(15):
            entry["taints"] = [
                {"key": "dedicated", "value": "gpu", "effect": draw.pick(("NoSchedule", "PreferNoSchedule"))}
            ]
        if draw.chance(10):
            entry["unschedulable"] = True
        return entry

    def namespace(self, name: str) -> dict[str, Any]:
        draw = self.draw
        annotations: dict[str, str] = {}
        if draw.chance(40):
            annotations["yunikorn.apache.org/namespace.quota"] = json.dumps({"cpu": str(draw.number(1, 12))})
        if draw.chance(20):
            annotations["yunikorn.apache.org/namespace.maxApps"] = str(draw.number(1, 3))
        return {
            "metadata": {"name": name, "labels": {"tier": draw.pick(("gold", "bronze"))}, "annotations": annotations}
        }

    def elastic_quotas(self) -> list[dict[str, Any]]:
        draw = self.draw
        if not draw.chance(50):
            return []
        quotas = [self.quota("org", "default", is_parent=True, parent=None, lo=8, hi=32)]
        for namespace in NAMESPACES[: draw.number(1, 3)]:
            quotas.append(self.quota(namespace, namespace, is_parent=False, parent="org", lo=1, hi=12))
        return quotas

    def quota(
        self, name: str, namespace: str, *, is_parent: bool, parent: str | None, lo: int, hi: int
    ) -> dict[str, Any]:
        draw = self.draw
        if name not in self.quotas:
            self.quotas.append(name)
        labels = {f"{QUOTA_LABELS}/is-parent": "true" if is_parent else "false"}
        if parent is not None:
            labels[f"{QUOTA_LABELS}/parent"] = parent
        if draw.chance(15):
            labels[f"{QUOTA_LABELS}/allow-lent-resource"] = "false"
        high = draw.number(lo, hi)
        return {
            "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"min": {"cpu": str(draw.number(0, high) if not is_parent else high)}, "max": {"cpu": str(high)}},
        }

    # -- storage ---------------------------------------------------------------------------------
    def storage(self) -> list[dict[str, Any]]:
        draw = self.draw
        if not draw.chance(40):
            return []
        objects: list[dict[str, Any]] = [
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {
                    "name": "standard",
                    "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
                },
                "provisioner": "rancher.io/local-path",
                "volumeBindingMode": "WaitForFirstConsumer",
            },
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": "local"},
                "provisioner": "kubernetes.io/no-provisioner",
                "volumeBindingMode": "WaitForFirstConsumer",
            },
        ]
        for i in range(draw.number(0, 2)):
            objects.append(
                {
                    "kind": "PersistentVolume",
                    "metadata": {"name": f"local-{i}"},
                    "spec": {
                        "storageClassName": "local",
                        "capacity": {"storage": "100Gi"},
                        "accessModes": ["ReadWriteOnce"],
                        "nodeAffinity": {
                            "required": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {"key": ZONE, "operator": "In", "values": [draw.pick(ZONES)]}
                                        ]
                                    }
                                ]
                            }
                        },
                    },
                }
            )
        for i in range(draw.number(1, 3)):
            namespace = draw.pick(NAMESPACES)
            self.claims.append((namespace, f"data-{i}"))
            spec: dict[str, Any] = {
                "accessModes": [draw.pick(("ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"))],
                "resources": {"requests": {"storage": f"{draw.number(1, 50)}Gi"}},
            }
            if draw.chance(40):
                spec["storageClassName"] = "local"
            objects.append(
                {
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": f"data-{i}", "namespace": namespace},
                    "spec": spec,
                }
            )
        return objects

    # -- pods --------------------------------------------------------------------------------------
    def workload(self, index: int) -> dict[str, Any]:
        draw = self.draw
        namespace = draw.pick(NAMESPACES)
        name = f"w{index}"
        count = draw.number(1, 6 if self.churn else 4)
        gang = draw.chance(15)
        pod = self.pod(namespace, name, gang_members=count if gang else 0)
        self.pod_names.extend((namespace, n) for n in ([name] if count == 1 else [f"{name}-{i}" for i in range(count)]))
        entry: dict[str, Any] = {"at": draw.number(0, 90), "count": count, "pod": pod}
        if draw.chance(75):
            entry["duration"] = draw.number(5, 120)
        return entry

    def pod(self, namespace: str, name: str, gang_members: int = 0) -> dict[str, Any]:
        draw = self.draw
        app = f"{namespace}-{name}" if gang_members or draw.chance(50) else f"{namespace}-app{draw.number(0, 2)}"
        labels: dict[str, str] = {"yunikorn.apache.org/app-id": app, "app": draw.pick(("web", "train", "db"))}
        annotations = {"yunikorn.apache.org/user.info": json.dumps({"user": draw.pick(USERS), "groups": ["ml"]})}
        if self.queues and draw.chance(60):
            labels["yunikorn.apache.org/queue"] = draw.pick(self.queues)
        if self.quotas and draw.chance(30):
            labels[f"{QUOTA_LABELS}/name"] = draw.pick(self.quotas)
        if draw.chance(30):
            labels[f"{QUOTA_LABELS}/preemptible"] = draw.pick(("true", "false"))
        cpu = draw.pick(("250m", "500m", "1", "2", "3"))
        container: dict[str, Any] = {
            "name": "main",
            "resources": {"requests": {"cpu": cpu, "memory": f"{draw.number(1, 8)}Gi"}},
        }
        spec: dict[str, Any] = {
            "schedulerName": "herder" if draw.chance(90) else "default-scheduler",
            "containers": [container],
        }
        if draw.chance(30):
            spec["priorityClassName"] = draw.pick(("high", "keep", "missing"))
        elif draw.chance(30):
            spec["priority"] = draw.number(-10, 100)
        for _ in range(draw.number(0, 2)):
            self.rule(draw.pick(RULES), spec, labels, container)
        if draw.chance(75 if self.churn else 25):  # a deployment spread over zones: the commonest rule
            self.rule("spread", spec, labels, container)
        if self.claims and draw.chance(20):
            namespace_claims = [c for c in self.claims if c[0] == namespace]
            if namespace_claims:
                claim = draw.pick(namespace_claims)[1]
                spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
        elif draw.chance(10):
            template = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
            spec["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": template}}]
        if gang_members:
            group = {
                "name": "workers",
                "minMember": draw.number(1, gang_members),
                "minResource": {"cpu": cpu, "memory": "1Gi"},
            }
            annotations[TASK_GROUPS] = json.dumps([group])
            annotations[TASK_GROUP_NAME] = "workers"
            style = draw.pick(("Soft", "Hard"))
            annotations[GANG_PARAMETERS] = (
                f"placeholderTimeoutInSeconds={draw.pick((10, 30, 90))} gangSchedulingStyle={style}"
            )
        metadata = {"name": name, "namespace": namespace, "labels": labels, "annotations": annotations}
        return {"metadata": metadata, "spec": spec}

    def rule(self, rule: str, spec: dict[str, Any], labels: dict[str, str], container: dict[str, Any]) -> None:
        draw = self.draw
        app = labels["app"]
        selector = {"matchLabels": {"app": app}}
        topology = draw.pick((ZONE, HOSTNAME))
        if rule == "anti":
            term = {"topologyKey": topology, "labelSelector": selector}
            spec.setdefault("affinity", {})["podAntiAffinity"] = {
                "requiredDuringSchedulingIgnoredDuringExecution": [term]
            }
        elif rule == "affinity":
            term = {"topologyKey": ZONE, "labelSelector": selector}
            spec.setdefault("affinity", {})["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        elif rule in ("spread", "soft-spread"):
            constraint: dict[str, Any] = {
                "maxSkew": draw.number(1, 2),
                "topologyKey": topology,
                "whenUnsatisfiable": "DoNotSchedule" if rule == "spread" else "ScheduleAnyway",
                "labelSelector": selector,
            }
            if draw.chance(20):
                constraint["minDomains"] = draw.number(1, 3)
            spec.setdefault("topologySpreadConstraints", []).append(constraint)
        elif rule == "preferred":
            weighted = {
                "weight": draw.number(1, 100),
                "podAffinityTerm": {"topologyKey": ZONE, "labelSelector": selector},
            }
            kind = draw.pick(("podAffinity", "podAntiAffinity"))
            spec.setdefault("affinity", {})[kind] = {"preferredDuringSchedulingIgnoredDuringExecution": [weighted]}
        elif rule == "port":
            container["ports"] = [{"containerPort": 80, "hostPort": draw.pick((8080, 9090))}]
        elif rule == "selector":
            spec["nodeSelector"] = {ZONE: draw.pick(ZONES)}
        elif rule == "toleration":
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]

    # -- events ------------------------------------------------------------------------------------
    def event(self) -> dict[str, Any]:
        draw = self.draw
        at = draw.number(0, 90)
        kinds = (
            "add",
            "add",
            "remove",
            "remove",
            "cordon",
            "uncordon",
            "resize",
            "delete",
            "config",
            "quota",
            "settings",
        )
        kind = draw.pick(kinds[:6] if self.churn and draw.chance(70) else kinds)
        if kind == "add":
            name = f"late{len(self.node_names)}"
            return {"at": at, "action": "add-node", "node": self.node(name)}
        if kind in ("remove", "cordon", "uncordon") and self.node_names:
            action = {"remove": "remove-node", "cordon": "cordon-node", "uncordon": "uncordon-node"}[kind]
            return {"at": at, "action": action, "name": draw.pick(self.node_names)}
        if kind == "resize" and self.pod_names:
            namespace, name = draw.pick(self.pod_names)
            cpu = draw.pick(("250m", "1", "2", "6"))
            return {"at": at, "action": "resize", "namespace": namespace, "name": name, "requests": {"cpu": cpu}}
        if kind == "delete" and self.pod_names:
            namespace, _ = draw.pick(self.pod_names)
            return {
                "at": at,
                "action": "delete",
                "kind": "Pod",
                "namespace": namespace,
                "selector": {"app": draw.pick(("web", "train", "db"))},
            }
        if kind == "config":
            return {"at": at, "action": "apply", "object": {"config": self.config()}}
        if kind == "quota" and self.quotas:
            name = draw.pick(self.quotas)
            if name == "org":
                quota = self.quota("org", "default", is_parent=True, parent=None, lo=4, hi=32)
            else:
                quota = self.quota(name, name, is_parent=False, parent="org", lo=1, hi=12)
            return {"at": at, "action": "apply", "object": quota}
        return {"at": at, "action": "apply", "object": {"settings": {"quota.recycle.delay": f"{draw.pick((5, 30))}s"}}}
