"""Conditions autoscalers can trust, through the whole operator against the API emulator: a pod
held back by a queue max, a user limit or a quota says SchedulingSkipped; a pod lacking only a
node says Unschedulable, never more of a queue's pods than its headroom could hold; the
condition follows a quota that grows and a node that joins."""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import pytest
import yaml

from core.resources import quantity_milli
from tests.kube.conftest import QUOTAS, Cluster, eventually, herder_pod, quota_body
from tests.kube.emulator import node_body

pytestmark = pytest.mark.timeout(90)

CONFIG = {
    "partitions": [
        {
            "name": "default",
            "placementrules": [
                {"name": "provided", "create": False},
                {"name": "tag", "value": "namespace", "create": True},
            ],
            "queues": [
                {
                    "name": "root",
                    "submitacl": "*",
                    "queues": [
                        {"name": "capped", "resources": {"max": {"vcore": "2"}}},
                        {"name": "open"},
                        {
                            "name": "limited",
                            "limits": [{"limit": "ann", "users": ["ann"], "maxresources": {"vcore": "2"}}],
                        },
                    ],
                }
            ],
        }
    ]
}
FAST = {"status.interval": "0.2s"}


def configure(cluster: Cluster) -> None:
    cluster.set_config({"queues.yaml": yaml.safe_dump(CONFIG)})


def submit(cluster: Cluster, namespace: str, name: str, cpu: str = "1", queue: str = "", user: str = "") -> None:
    labels = {"applicationId": f"{namespace}-{name.rsplit('-', 1)[0]}"}  # one application per name prefix
    if queue:
        labels["queue"] = queue
    annotations = {"yunikorn.apache.org/user.info": json.dumps({"user": user})} if user else {}
    cluster.core.create_namespaced_pod(namespace, herder_pod(name, cpu=cpu, labels=labels, annotations=annotations))


def fill(cluster: Cluster) -> None:
    """Take every core of the three 4-CPU nodes."""
    cluster.create_namespace("busy")
    for index in range(3):
        submit(cluster, "busy", f"filler-{index}", cpu="4", queue="root.open")
    cluster.all_bound("busy")


def condition(cluster: Cluster, namespace: str, name: str) -> tuple[str, str] | None:
    pod = cluster.core.read_namespaced_pod(name, namespace)
    for found in pod.status.conditions or [] if pod.status else []:
        if found.type == "PodScheduled" and found.status == "False":
            return str(found.reason), str(found.message)
    return None


def reasons(cluster: Cluster, namespace: str, names: list[str]) -> list[str | None]:
    shown = [condition(cluster, namespace, name) for name in names]
    return [item[0] if item else None for item in shown]


def wait_reasons(cluster: Cluster, namespace: str, names: list[str], wanted: list[str], what: str) -> None:
    eventually(lambda: reasons(cluster, namespace, names) == wanted, what)


def wait_counts(cluster: Cluster, namespace: str, names: list[str], wanted: dict[str, int], what: str) -> None:
    """Pods created in one second are in line by uid: which ones are marked is the core's to say."""
    eventually(lambda: Counter(reasons(cluster, namespace, names)) == Counter(wanted), what)


def test_pods_over_a_queue_max_say_skipped_and_pods_lacking_only_nodes_unschedulable(cluster: Cluster) -> None:
    configure(cluster)
    cluster.start_herder(settings=FAST)
    fill(cluster)
    cluster.create_namespace("work")
    capped = [f"capped-{i}" for i in range(4)]
    for name in capped:
        submit(cluster, "work", name, queue="root.capped")
    opened = [f"open-{i}" for i in range(4)]
    for name in opened:
        submit(cluster, "work", name, queue="root.open")
    U, S = "Unschedulable", "SchedulingSkipped"
    wait_counts(cluster, "work", capped, {U: 2, S: 2}, "two capped pods Unschedulable, two SchedulingSkipped")
    wait_counts(cluster, "work", opened, {U: 4}, "every pod of the open queue Unschedulable")
    for name in capped:
        shown = condition(cluster, "work", name)
        assert shown is not None
        assert (shown[0] == S) == ("queue root.capped has no headroom left for it" in shown[1]), shown


def test_pods_held_by_a_queue_max_a_user_limit_or_a_quota_say_scheduling_skipped(cluster: Cluster) -> None:
    configure(cluster)
    herder = cluster.start_herder(settings=FAST)
    cluster.create_namespace("team")
    cluster.custom.create_namespaced_custom_object(
        *QUOTAS[:2], "team", QUOTAS[2], quota_body("team", "team", {"cpu": "1"}, {"cpu": "2"})
    )
    eventually(
        lambda: herder.scheduler.quota_of("x") is None and "team" in herder.scheduler.quota_status(), "quota team"
    )
    cluster.create_namespace("work")
    for i in range(3):
        submit(cluster, "work", f"capped-{i}", queue="root.capped")
        submit(cluster, "work", f"ann-{i}", queue="root.limited", user="ann")
        submit(cluster, "team", f"team-{i}", queue="root.open")
    for namespace, prefix, words in (
        ("work", "capped", "queue root.capped would exceed max vcore"),
        ("work", "ann", "user ann would exceed maxresources at root.limited"),
        ("team", "team", "quota team would exceed its runtime"),
    ):
        names = [f"{prefix}-{i}" for i in range(3)]

        def held(names: list[str] = names, namespace: str = namespace) -> list[str] | None:
            waiting = [name for name in names if not cluster.node_of(namespace, name)]
            return waiting if len(waiting) == 1 else None

        [waiting] = eventually(held, f"two {prefix} pods bound, one held")
        shown = eventually(
            lambda n=namespace, w=waiting: condition(cluster, n, w),  # type: ignore[misc]
            f"the held {prefix} pod's condition",
        )
        assert shown[0] == "SchedulingSkipped" and words in shown[1], shown


def _cpu(pod: Any) -> float:
    return quantity_milli(pod.spec.containers[0].resources.requests["cpu"]) / 1000


def test_a_queue_never_has_more_unschedulable_pods_than_its_headroom_holds(cluster: Cluster) -> None:
    configure(cluster)
    cluster.start_herder(settings=FAST)
    fill(cluster)
    cluster.create_namespace("work")
    sizes = ["1", "500m", "1", "500m", "1", "2", "500m", "1"]
    names = [f"mixed-{i}" for i in range(len(sizes))]
    for name, cpu in zip(names, sizes):
        submit(cluster, "work", name, cpu=cpu, queue="root.capped")
    eventually(lambda: all(reasons(cluster, "work", names)), "a condition on every capped pod")
    pods = {p.metadata.name: p for p in cluster.core.list_namespaced_pod("work").items}
    shown = dict(zip(names, reasons(cluster, "work", names)))
    marked = sum(_cpu(pods[name]) for name, reason in shown.items() if reason == "Unschedulable")
    assert marked <= 2.0  # root.capped's max
    skipped = [_cpu(pods[name]) for name, reason in shown.items() if reason == "SchedulingSkipped"]
    assert skipped and all(cpu > 2.0 - marked for cpu in skipped)  # none of them fits the headroom left


def test_a_quota_that_grows_turns_a_skipped_pod_unschedulable(cluster: Cluster) -> None:
    configure(cluster)
    herder = cluster.start_herder(settings=FAST)
    fill(cluster)
    cluster.create_namespace("team")
    body = quota_body("team", "team", {"cpu": "1"}, {"cpu": "1"})
    cluster.custom.create_namespaced_custom_object(*QUOTAS[:2], "team", QUOTAS[2], body)
    eventually(lambda: "team" in herder.scheduler.quota_status(), "quota team")
    names = ["team-0", "team-1"]
    for name in names:
        submit(cluster, "team", name, queue="root.open")
    U, S = "Unschedulable", "SchedulingSkipped"
    wait_counts(cluster, "team", names, {U: 1, S: 1}, "one pod within the quota's max, one over it")
    patch = {"spec": {"min": {"cpu": "2"}, "max": {"cpu": "2"}}}
    cluster.custom.patch_namespaced_custom_object(*QUOTAS[:2], "team", QUOTAS[2], "team", patch)
    wait_counts(cluster, "team", names, {U: 2}, "both pods Unschedulable once the quota's max is 2")


def test_a_node_that_joins_turns_an_unschedulable_pod_skipped_when_its_queue_fills(cluster: Cluster) -> None:
    configure(cluster)
    cluster.start_herder(settings=FAST)
    fill(cluster)
    cluster.create_namespace("work")
    submit(cluster, "work", "big", cpu="2", queue="root.capped")
    eventually(lambda: condition(cluster, "work", "big"), "a condition on the big pod")
    time.sleep(1.1)  # creation times are in seconds: the big pod comes first in line
    submit(cluster, "work", "small", cpu="1", queue="root.capped")
    U, S = "Unschedulable", "SchedulingSkipped"
    wait_reasons(cluster, "work", ["big", "small"], [U, S], "the big pod takes the queue's headroom")
    cluster.core.create_node(node_body("node-3", cpu="1", memory="4Gi"))
    assert cluster.bound("work", "small") == "node-3"
    shown = eventually(lambda: (found := condition(cluster, "work", "big")) and found[0] == S and found, "big skipped")
    assert "queue root.capped would exceed max vcore" in shown[1]
