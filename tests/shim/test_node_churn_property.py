"""A property over clusters whose nodes come and go between scheduling decisions.

Node churn is ordinary (an autoscaler's scale-down, a node relabelled by an operator, a cordon
before maintenance), and every rule kept per node must follow it: the node index's columns,
topology domains and spread eligibility, the placed pods counted per node, host ports, scores.
Pods of every rule kind arrive one by one: required anti-affinity and affinity, hard and soft
topology spread, preferred affinity, a host port, a node selector, and gangs of two kept inside
one zone (required or preferred, core/gang/topology.py); between two decisions a node is added,
removed, relabelled, cordoned or uncordoned, the zone a gang holds included. Every decision must
complete (no exception), and what Herder placed must fit its node.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.objects.node_info import NodeInfo
from core.objects.volumes import NO_PROVISIONER, SELECTED_NODE
from shim.convert.nodes import node_to_info
from shim.convert.pods import pod_to_ask
from shim.convert.storage import claim_from, storage_class_from, volume_from
from tests.shim.pod_rules_world import HOSTNAME, ZONE, Cluster, affinity, spread

RULES = (
    "none",
    "anti",
    "affinity",
    "spread",
    "soft-spread",
    "preferred",
    "port",
    "selector",
    "gang-required",
    "gang-preferred",
)
GANG_OF_TWO = json.dumps([{"name": "w", "minMember": 2, "minResource": {"cpu": "1"}}])
ZONES = ("z1", "z2", "z3", None)


@dataclass(frozen=True)
class NodeChange:
    kind: str  # add | remove | relabel | cordon | uncordon
    node: int
    zone: str | None


node_changes = st.builds(
    NodeChange,
    kind=st.sampled_from(("add", "remove", "relabel", "cordon", "uncordon")),
    node=st.integers(0, 7),
    zone=st.sampled_from(ZONES),
)


def gang_annotations(rule: str) -> dict[str, str]:
    """A gang of two pods of 1 core that must (or would like to) share a zone."""
    if not rule.startswith("gang"):
        return {}
    mode = "required" if rule == "gang-required" else "preferred"
    return {
        "yunikorn.apache.org/task-groups": GANG_OF_TWO,
        "yunikorn.apache.org/task-group-name": "w",
        f"kueue.x-k8s.io/podset-{mode}-topology": ZONE,
    }


def pod_spec(rule: str, app: str) -> tuple[dict[str, str], dict[str, Any]]:
    selector = {"matchLabels": {"app": app}}
    if rule == "anti":
        return {"app": app}, {"affinity": affinity(anti=({"topologyKey": HOSTNAME, "labelSelector": selector},))}
    if rule == "affinity":
        return {"app": app}, {"affinity": affinity({"topologyKey": ZONE, "labelSelector": selector})}
    if rule == "spread":
        hard = spread(ZONE, 1, labelSelector={"matchLabels": {"app": "s"}})
        return {"app": "s"}, {"topologySpreadConstraints": [hard]}
    if rule == "soft-spread":
        soft = spread(ZONE, 1, labelSelector=selector, whenUnsatisfiable="ScheduleAnyway")
        return {"app": app}, {"topologySpreadConstraints": [soft]}
    if rule == "preferred":
        term = {"weight": 10, "podAffinityTerm": {"topologyKey": ZONE, "labelSelector": selector}}
        return {"app": app}, {"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}}
    if rule == "port":
        container = {"name": "main", "resources": {"requests": {"cpu": "1"}}}
        return {"app": app}, {"containers": [{**container, "ports": [{"containerPort": 80, "hostPort": 8080}]}]}
    if rule == "selector":
        return {"app": app}, {"nodeSelector": {ZONE: "z1"}}
    return {"app": app}, {}


def node_info(name: str, zone: str | None, cordoned: bool) -> NodeInfo:
    labels = {HOSTNAME: name, **({ZONE: zone} if zone else {})}
    return node_to_info(
        {
            "metadata": {"name": name, "labels": labels},
            "spec": {"unschedulable": cordoned},
            "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
        }
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    zones=st.lists(st.sampled_from(ZONES), min_size=1, max_size=5),
    steps=st.lists(
        st.tuples(st.sampled_from(RULES), st.sampled_from(("a", "b")), st.lists(node_changes, max_size=2)),
        min_size=1,
        max_size=14,
    ),
)
def test_every_decision_completes_while_nodes_come_and_go(
    zones: list[str | None], steps: list[tuple[str, str, list[NodeChange]]]
) -> None:
    cluster = Cluster()
    sched = cluster.world.sched
    nodes: dict[str, tuple[str | None, bool]] = {}  # name -> (zone, cordoned)
    for i, zone in enumerate(zones):
        nodes[f"n{i}"] = (zone, False)
        sched.update_node(node_info(f"n{i}", zone, False))
    placed: dict[str, str] = {}
    for k, (rule, app, changes) in enumerate(steps):
        labels, spec = pod_spec(rule, app)
        spec.setdefault("containers", [{"name": "main", "resources": {"requests": {"cpu": "1"}}}])
        annotations = gang_annotations(rule)
        if annotations:  # both pods of a gang of its own, the first carrying the definition
            labels = {**labels, "applicationId": f"gang-{k}"}
            cluster.submit(f"h{k}", labels=labels, annotations=annotations, **spec)
            member = {key: value for key, value in annotations.items() if "task-groups" not in key}
            cluster.submit(f"h{k}b", labels=labels, annotations=member, **spec)
        else:
            cluster.submit(f"h{k}", labels=labels, **spec)
        placed.update(cluster.schedule())
        for change in changes:
            name = f"n{change.node}"
            if change.kind == "remove":
                if nodes.pop(name, None) is not None:
                    sched.remove_node(name)
                    placed = {pod: node for pod, node in placed.items() if node != name}
                continue
            zone, cordoned = nodes.get(name, (change.zone, False))
            if change.kind == "relabel":
                zone = change.zone
            elif change.kind in ("cordon", "uncordon"):
                cordoned = change.kind == "cordon"
            nodes[name] = (zone, cordoned)
            sched.update_node(node_info(name, zone, cordoned))
        placed.update(cluster.schedule())
    per_node: dict[str, int] = {}
    placed = {pod: node for pod, node in placed.items() if "/tg-" not in pod}  # placeholders come and go
    for pod, node in placed.items():
        assert node in nodes, f"{pod} placed on {node}, which had left"
        per_node[node] = per_node.get(node, 0) + 1
    assert all(count <= 4 for count in per_node.values()), per_node


# -- every index kept per node: volumes, preemption holds, gangs' placeholders ---------------------

PREEMPTING_QUEUES = """
partitions:
  - name: default
    placementrules: [{name: provided}]
    queues:
      - name: root
        submitacl: "*"
        properties: {preemption.delay: 1s}
        queues:
          - name: prod
            resources: {guaranteed: {vcore: 4}}
          - name: batch
"""
KINDS = ("batch", "prod", "gang", "wait-claim", "local-claim", "spread", "anti")
STANDARD = {
    "metadata": {"name": "standard"},
    "provisioner": "rancher.io/local-path",
    "volumeBindingMode": "WaitForFirstConsumer",
}
LOCAL = {"metadata": {"name": "local"}, "provisioner": NO_PROVISIONER, "volumeBindingMode": "WaitForFirstConsumer"}


def local_volume(node: str) -> dict[str, Any]:
    """A local volume pinned to one node by hostname, as local-path and local PVs are."""
    expression = {"key": HOSTNAME, "operator": "In", "values": [node]}
    return {
        "metadata": {"name": f"pv-{node}"},
        "spec": {
            "storageClassName": "local",
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce"],
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [expression]}]}},
        },
    }


def kept_kind_pod(kind: str, k: int) -> tuple[str, dict[str, Any], dict[str, str], dict[str, Any]]:
    """(queue, labels, annotations, spec) of the k-th pod of a kind."""
    container = {"name": "main", "resources": {"requests": {"cpu": "2" if kind in ("batch", "prod") else "1"}}}
    spec: dict[str, Any] = {"containers": [container]}
    labels = {"yunikorn.apache.org/app-id": f"{kind}-{k}", "app": kind}
    annotations: dict[str, str] = {}
    queue = "root.prod" if kind in ("prod", "gang") else "root.batch"
    if kind == "gang":
        labels["yunikorn.apache.org/app-id"] = f"gang-{k // 3}"
        group = {"name": "w", "minMember": 3, "minResource": {"cpu": "1"}}  # two pods come: one stays
        annotations = {
            "yunikorn.apache.org/task-groups": json.dumps([group]),
            "yunikorn.apache.org/task-group-name": "w",
            "yunikorn.apache.org/schedulingPolicyParameters": "placeholderTimeoutInSeconds=5",
        }
    elif kind in ("wait-claim", "local-claim"):
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": f"claim-{k}"}}]
    elif kind == "spread":
        spec["topologySpreadConstraints"] = [spread(ZONE, 1, labelSelector={"matchLabels": {"app": kind}})]
    elif kind == "anti":
        term = {"topologyKey": HOSTNAME, "labelSelector": {"matchLabels": {"app": kind}}}
        spec["affinity"] = affinity(anti=(term,))
    return queue, labels, annotations, spec


# changes to the nodes there are (a full cluster of a few nodes: pods on each, room held)
busy_node_changes = st.builds(
    NodeChange,
    kind=st.sampled_from(("add", "remove", "remove", "relabel", "cordon", "uncordon")),
    node=st.integers(0, 3),
    zone=st.sampled_from(ZONES),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    zones=st.lists(st.sampled_from(ZONES), min_size=1, max_size=4),
    steps=st.lists(
        st.tuples(st.sampled_from(KINDS), st.integers(1, 3), st.lists(busy_node_changes, max_size=2), st.booleans()),
        min_size=1,
        max_size=16,
    ),
)
# Found by this property: a gang reserved a node for its placeholder that preemption already held
# room for there; the hold's end took the reservation's room too, and a full node took the pod.
@example(
    zones=["z1"],
    steps=[
        ("batch", 1, [], False),
        ("batch", 1, [], False),
        ("batch", 1, [NodeChange("add", 2, "z1")], False),
        ("batch", 1, [NodeChange("cordon", 1, "z1")], False),
        ("gang", 1, [NodeChange("remove", 0, "z1")], True),
        ("batch", 1, [], False),
    ],
)
def test_volumes_holds_and_placeholders_follow_nodes_that_come_and_go(
    zones: list[str | None], steps: list[tuple[str, int, list[NodeChange], bool]]
) -> None:
    """Pods with claims (provisioned for the node chosen, or a local volume pinned to one node),
    preemptors and the room held for them, gangs and their placeholders, spread and anti-affinity,
    while nodes are added, removed (with the placeholders, victims and held room on them),
    relabelled and cordoned between decisions; the shim's part is played (evictions confirmed, a
    claim shows the node it was provisioned for). No decision, and no read of the REST API's
    documents or a pod's node verdicts, may raise; nothing stays on a node that left, and no node
    holds more than its allocatable."""
    cluster = Cluster(PREEMPTING_QUEUES)
    world, sched = cluster.world, cluster.world.sched
    sched.update_storage_class(storage_class_from(STANDARD))
    sched.update_storage_class(storage_class_from(LOCAL))
    claims: dict[str, dict[str, Any]] = {}

    def on_bind(allocation: Any) -> None:  # the provisioner: the claim shows its node
        for key in allocation.volume_plan.provision if allocation.volume_plan else ():
            claim = claims[key]
            claim["metadata"]["annotations"] = {SELECTED_NODE: allocation.node_id}
            sched.update_claim(claim_from(claim))

    world.out.on_bind = on_bind
    evicted: list[str] = []  # confirmed gone at the next step: the held room outlives a node change
    world.out.on_evict = lambda allocation, _reason: evicted.append(allocation.key)
    nodes: dict[str, tuple[str | None, bool]] = {}

    def put_node(name: str, zone: str | None, cordoned: bool) -> None:
        nodes[name] = (zone, cordoned)
        sched.update_node(node_info(name, zone, cordoned))
        sched.update_volume(volume_from(local_volume(name)))

    for i, zone in enumerate(zones):
        put_node(f"n{i}", zone, False)
    for step, (kind, count, changes, tick) in enumerate(steps):
        for key in evicted:
            sched.release_allocation(key)
        evicted.clear()
        for k in range(step * 3, step * 3 + (2 if kind == "gang" else count)):
            queue, labels, annotations, spec = kept_kind_pod(kind, k)
            if kind in ("wait-claim", "local-claim"):
                storage = {"storageClassName": "standard" if kind == "wait-claim" else "local"}
                requests = {"requests": {"storage": "1Gi"}}
                claims[f"default/claim-{k}"] = claim = {
                    "metadata": {"name": f"claim-{k}", "namespace": "default"},
                    "spec": {**storage, "accessModes": ["ReadWriteOnce"], "resources": requests},
                }
                sched.update_claim(claim_from(claim))
            pod = cluster.manifest(f"p{k}", labels={**labels, "yunikorn.apache.org/queue": queue}, **spec)
            pod["metadata"]["annotations"] = annotations
            ask = pod_to_ask(pod, cluster.namespaces["default"])
            sched.add_ask(ask)
        world.schedule(advance=2 if tick else 0.5)
        for change in changes:
            name = f"n{change.node}"
            if change.kind == "remove":
                if nodes.pop(name, None) is not None:
                    sched.remove_node(name)
                    sched.remove_volume(f"pv-{name}")
                continue
            zone, cordoned = nodes.get(name, (change.zone, False))
            if change.kind == "relabel":
                zone = change.zone
            elif change.kind in ("cordon", "uncordon"):
                cordoned = change.kind == "cordon"
            put_node(name, zone, cordoned)
        sched.node_verdicts(ask)
        sched.explain(ask.key)
        dump = sched.state_dump()
        world.schedule(advance=1)
        for node in dump["nodes"]:
            assert node["nodeID"] in nodes, f"{node['nodeID']} is still in the dump after it left"
            pods = node["allocations"] + node["foreignAllocations"]  # the held room aside: it is no pod
            taken = {key: sum(pod["resource"].get(key, 0) for pod in pods) for key in node["capacity"]}
            assert all(taken[key] <= node["capacity"][key] for key in taken), node
        for allocation in list(world.out.binds):
            placed = sched.allocation(allocation.key)
            assert placed is None or placed.node_id in nodes, f"{allocation.key} is on {placed.node_id}, which left"
