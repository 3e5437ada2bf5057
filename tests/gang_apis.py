"""The four PodGroup APIs as a test writes them: a group object with a minimum of pods, and
what a pod carries to join it. Shared by the simulator's and the emulator's gang tests, so
each behaviour is checked for every API the same way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GangApi:
    name: str
    api_version: str  # group/version the object is served as
    kind: str
    plural: str
    group: Callable[[str, str, int], dict[str, Any]]  # (namespace, name, minimum) -> the object
    member: Callable[[str], dict[str, Any]]  # group name -> {"labels", "annotations", "spec"} of a member pod
    application: Callable[[str, str], str]  # (namespace, name) -> Herder's application id

    @property
    def api_group(self) -> str:
        return self.api_version.split("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.split("/")[1]


def _object(api_version: str, kind: str, namespace: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace}, "spec": spec}


COSCHEDULING = GangApi(
    "scheduler-plugins",
    "scheduling.x-k8s.io/v1alpha1",
    "PodGroup",
    "podgroups",
    lambda ns, name, n: _object("scheduling.x-k8s.io/v1alpha1", "PodGroup", ns, name, {"minMember": n}),
    lambda name: {"labels": {"scheduling.x-k8s.io/pod-group": name}},
    lambda ns, name: f"{ns}-{name}",
)
VOLCANO = GangApi(
    "volcano",
    "scheduling.volcano.sh/v1beta1",
    "PodGroup",
    "podgroups",
    lambda ns, name, n: _object("scheduling.volcano.sh/v1beta1", "PodGroup", ns, name, {"minMember": n}),
    lambda name: {"annotations": {"scheduling.k8s.io/group-name": name}},
    lambda ns, name: f"{ns}-{name}",
)
KUBERNETES_POD_GROUP = GangApi(
    "kubernetes-podgroup",
    "scheduling.k8s.io/v1alpha2",
    "PodGroup",
    "podgroups",
    lambda ns, name, n: _object(
        "scheduling.k8s.io/v1alpha2", "PodGroup", ns, name, {"schedulingPolicy": {"gang": {"minCount": n}}}
    ),
    lambda name: {"spec": {"schedulingGroup": {"podGroupName": name}}},
    lambda ns, name: f"{ns}-{name}",
)
KUBERNETES_WORKLOAD = GangApi(
    "kubernetes-workload",
    "scheduling.k8s.io/v1alpha1",
    "Workload",
    "workloads",
    lambda ns, name, n: _object(
        "scheduling.k8s.io/v1alpha1",
        "Workload",
        ns,
        name,
        {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": n}}}]},
    ),
    lambda name: {"spec": {"workloadRef": {"name": name, "podGroup": "workers"}}},
    lambda ns, name: f"{ns}-{name}-workers",
)
APIS = (COSCHEDULING, VOLCANO, KUBERNETES_POD_GROUP, KUBERNETES_WORKLOAD)
