"""`herder bench --decode`: what reading one pod costs the watch, in CPU microseconds.

Every pod event the operator sees goes through `PodSync.apply` (shim/kube/watch/pods.py): a
pending Herder pod is converted to an ask (`pod_to_ask`) and given to the core, a bound one (a
restart's listing) to an allocation. The pods here are shaped as the API server returns a Job's
pod: managed fields, owner reference, the admission-added tolerations and service account
volume, two containers with requests and limits, a node selector and a preferred node affinity
(the bench emulator's pods carry one container and one label). Each figure is CPU time
(`time.process_time`) over `pods` distinct pod dicts, the median of `rounds` rounds:

- `pod_to_ask_us`: the conversion alone, a pending pod to an ask;
- `apply_pending_us`: `PodSync.apply` of pending pods into a real Scheduler (the ask added);
- `apply_bound_us`: `PodSync.apply` of running pods, as after a restart (allocations recovered).
"""

from __future__ import annotations

import copy
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

from core.config import load_config
from core.scheduler import Scheduler
from shim.bench.callbacks import CountingCallbacks
from shim.convert.nodes import node_to_info
from shim.convert.pods import pod_to_ask
from shim.kube.watch.cache import KubeCache
from shim.kube.watch.pods import PodSync

NAMESPACE = "ml-team"
NODES = 200
DECODE_PODS = 5_000
ROUNDS = 5

CONFIG = """
partitions:
  - name: default
    placementrules:
      - {name: tag, value: namespace, create: true}
    queues:
      - name: root
        submitacl: "*"
"""


def namespace_object() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": NAMESPACE,
            "uid": "ns-uid",
            "labels": {"kubernetes.io/metadata.name": NAMESPACE, "team": "ml"},
            "annotations": {"yunikorn.apache.org/namespace.quota": '{"cpu": "2000", "memory": "8Ti"}'},
        },
    }


def _node(index: int) -> dict[str, Any]:
    return {
        "metadata": {"name": f"node-{index}", "labels": {"pool": "batch", "topology.kubernetes.io/zone": "z1"}},
        "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}},
    }


def realistic_pod(index: int, node: str | None = None) -> dict[str, Any]:
    """A Job's pod as the API server returns it (pending, or running on `node`)."""
    job = f"train-{index // 20}"
    created = "2026-11-27T10:00:00Z"
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job}-{index % 20}-x7k2p",
            "generateName": f"{job}-{index % 20}-",
            "namespace": NAMESPACE,
            "uid": f"0b6f2f1e-{index:08d}-4c1d-9a57-5e3f0d2c9b11",
            "resourceVersion": str(100_000 + index),
            "creationTimestamp": created,
            "labels": {
                "app.kubernetes.io/name": "trainer",
                "batch.kubernetes.io/controller-uid": f"job-uid-{index // 20}",
                "batch.kubernetes.io/job-name": job,
                "controller-uid": f"job-uid-{index // 20}",
                "job-name": job,
                "applicationId": job,
                "queue": "root.ml-team",
            },
            "annotations": {"batch.kubernetes.io/job-completion-index": str(index % 20)},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": job,
                    "uid": f"job-uid-{index // 20}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": [
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": created,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:job-name": {}}}, "f:spec": {}},
                }
            ],
        },
        "spec": {
            "schedulerName": "herder",
            "restartPolicy": "Never",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "securityContext": {},
            "nodeSelector": {"pool": "batch"},
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 50,
                            "preference": {
                                "matchExpressions": [
                                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1"]}
                                ]
                            },
                        }
                    ]
                }
            },
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
            ],
            "containers": [
                {
                    "name": "trainer",
                    "image": "registry.example/trainer:1.4",
                    "args": ["--epochs", "10"],
                    "env": [{"name": "RANK", "value": str(index % 20)}],
                    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                    "resources": {
                        "requests": {"cpu": "2", "memory": "4Gi"},
                        "limits": {"cpu": "2", "memory": "4Gi"},
                    },
                    "volumeMounts": [
                        {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
                    ],
                },
                {
                    "name": "metrics",
                    "image": "registry.example/exporter:0.9",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                },
            ],
            "volumes": [
                {
                    "name": "kube-api-access",
                    "projected": {
                        "sources": [{"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}}],
                        "defaultMode": 420,
                    },
                },
                {"name": "scratch", "emptyDir": {}},
            ],
        },
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }
    if node is not None:
        pod["spec"]["nodeName"] = node
        pod["status"] = {
            "phase": "Running",
            "qosClass": "Burstable",
            "startTime": created,
            "hostIP": "10.0.0.1",
            "podIP": f"10.1.{index // 250 % 250}.{index % 250}",
            "conditions": [
                {"type": kind, "status": "True", "lastTransitionTime": created}
                for kind in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "containerStatuses": [
                {"name": name, "ready": True, "restartCount": 0, "started": True, "state": {"running": {}}}
                for name in ("trainer", "metrics")
            ],
        }
    return pod


def _world() -> tuple[Scheduler, PodSync]:
    scheduler = Scheduler(CountingCallbacks(), load_config(CONFIG))
    for index in range(NODES):
        scheduler.update_node(node_to_info(_node(index)))
    cache = KubeCache()
    sync = PodSync(scheduler, cache, lambda key: None)
    sync.namespace_changed(namespace_object())
    return scheduler, sync


def _per_pod_us(pods: list[dict[str, Any]], work: Callable[[dict[str, Any]], object]) -> float:
    gc.collect()
    began = time.process_time()
    for pod in pods:
        work(pod)
    return (time.process_time() - began) / len(pods) * 1e6


def _check(sync: PodSync, kind: str, pods: int) -> None:
    """Every pod reached the core as `kind`: a pod left waiting (say, for its namespace) would
    time a shortcut, not a conversion."""
    got = sync.counts()[kind]
    if got != pods:
        raise RuntimeError(f"decode bench: {got} of {pods} pods reached the core as {kind}")


def run_decode_bench(pods: int = DECODE_PODS, rounds: int = ROUNDS) -> dict[str, Any]:
    template_pending = [realistic_pod(index) for index in range(pods)]
    template_bound = [realistic_pod(index, f"node-{index % NODES}") for index in range(pods)]
    namespace = namespace_object()
    figures: dict[str, list[float]] = {"pod_to_ask_us": [], "apply_pending_us": [], "apply_bound_us": []}
    for _ in range(rounds):
        batch = copy.deepcopy(template_pending)  # fresh dicts: nothing remembered by identity
        figures["pod_to_ask_us"].append(_per_pod_us(batch, lambda pod: pod_to_ask(pod, namespace)))
        _, sync = _world()
        batch = copy.deepcopy(template_pending)
        figures["apply_pending_us"].append(_per_pod_us(batch, sync.apply))
        _check(sync, "ask", pods)
        _, sync = _world()
        batch = copy.deepcopy(template_bound)
        figures["apply_bound_us"].append(_per_pod_us(batch, sync.apply))
        _check(sync, "own", pods)
    report: dict[str, Any] = {"pods": pods, "rounds": rounds}
    for name, values in figures.items():
        report[name] = round(statistics.median(values), 2)
        report[name.replace("_us", "_best_us")] = round(min(values), 2)
    return report


if __name__ == "__main__":
    import json

    print(json.dumps(run_decode_bench()))
