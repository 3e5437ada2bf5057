"""A property over random clusters with volumes: whatever the claims, volumes and pods, after every
decision no two claims are given one volume, every placed pod runs where each of its claims'
volumes may be used, and a ReadWriteOncePod claim has at most one pod.

Static local volumes sit on random nodes (class `local`, WaitForFirstConsumer, no provisioner);
claims of that class, some ReadWriteOncePod, some already bound; pods mount one or two claims,
several pods may share a claim. The check reads the core's own plans (what the shim would write)
and keeps the volume each claim got, as the PersistentVolume controller would bind it.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.fit import node_view
from core.objects.ask import Allocation
from shim.convert.storage import claim_from, storage_class_from, volume_from
from tests.shim.pod_rules_world import Cluster


def _volume(name: str, node: str, size: int) -> dict[str, object]:
    term = {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}
    spec = {
        "storageClassName": "local",
        "capacity": {"storage": f"{size}Gi"},
        "accessModes": ["ReadWriteOnce", "ReadWriteOncePod"],
        "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
    }
    return {"metadata": {"name": name}, "spec": spec}


def _claim(name: str, size: int, once_pod: bool) -> dict[str, dict[str, object]]:
    mode = "ReadWriteOncePod" if once_pod else "ReadWriteOnce"
    spec = {"storageClassName": "local", "accessModes": [mode], "resources": {"requests": {"storage": f"{size}Gi"}}}
    return {"metadata": {"name": name, "namespace": "default"}, "spec": spec}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.integers(1, 4),
    volumes=st.lists(st.tuples(st.integers(0, 3), st.integers(1, 4)), max_size=6),
    claims=st.lists(st.tuples(st.integers(1, 4), st.booleans()), min_size=1, max_size=5),
    pods=st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=2, unique=True), min_size=1, max_size=8),
)
def test_claims_never_share_a_volume_and_pods_run_where_their_volumes_are(
    nodes: int,
    volumes: list[tuple[int, int]],
    claims: list[tuple[int, bool]],
    pods: list[list[int]],
) -> None:
    cluster = Cluster()
    sched = cluster.world.sched
    for n in range(nodes):
        cluster.node(f"n{n}", cpu="16")
    sched.update_storage_class(
        storage_class_from(
            {
                "metadata": {"name": "local"},
                "provisioner": "kubernetes.io/no-provisioner",
                "volumeBindingMode": "WaitForFirstConsumer",
            }
        )
    )
    volume_node: dict[str, str] = {}
    volume_size: dict[str, int] = {}
    for v, (node_no, size) in enumerate(volumes):
        name, node = f"pv{v}", f"n{node_no % nodes}"
        sched.update_volume(volume_from(_volume(name, node, size)))
        volume_node[name], volume_size[name] = node, size
    claim_names = [f"c{c}" for c in range(len(claims))]
    for name, (size, once_pod) in zip(claim_names, claims, strict=True):
        sched.update_claim(claim_from(_claim(name, size, once_pod)))

    given_volume: dict[str, str] = {}  # claim -> volume it was given
    users: dict[str, list[str]] = {}
    for p, wanted in enumerate(pods):
        mounts = [claim_names[i % len(claim_names)] for i in wanted]
        volumes_spec = [
            {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(dict.fromkeys(mounts))
        ]
        _fast_refusals_match_node_by_node(cluster)
        cluster.submit(f"p{p}", cpu="1", volumes=volumes_spec)
        cluster.schedule()
        for allocation in list(cluster.world.out.binds):
            _bind_claims(cluster, allocation, claims, given_volume)
        cluster.world.out.binds.clear()
        for name, node in _placed(cluster).items():
            for claim in _claims_of(cluster, name):
                users.setdefault(claim, [])
                if name not in users[claim]:
                    users[claim].append(name)
                volume = given_volume.get(claim)
                assert volume is not None, f"{name} placed with claim {claim} unresolved"
                assert volume_node[volume] == node, (
                    f"{name} on {node}, its claim's volume {volume} on {volume_node[volume]}"
                )
                assert volume_size[volume] >= claims[int(claim[1:])][0]
        taken = list(given_volume.values())
        assert len(taken) == len(set(taken)), f"one volume given to two claims: {given_volume}"
        for claim, names in users.items():
            if claims[int(claim[1:])][1]:
                assert len(names) <= 1, f"ReadWriteOncePod claim {claim} used by {names}"


def _bind_claims(
    cluster: Cluster, allocation: Allocation, claims: list[tuple[int, bool]], given: dict[str, str]
) -> None:
    """What the shim and the PersistentVolume controller do with a plan: the claim is bound."""
    for claim_key, volume in allocation.volume_plan.bind:
        name = claim_key.split("/", 1)[1]
        given[name] = volume
        bound = _claim(name, *claims[int(name[1:])])
        bound["spec"]["volumeName"] = volume
        cluster.world.sched.update_claim(claim_from(bound))
    assert not allocation.volume_plan.provision  # class `local` has no provisioner


def _placed(cluster: Cluster) -> dict[str, str]:
    return {
        a["allocationKey"]: a["nodeId"] for node in cluster.world.sched.nodes_document() for a in node["allocations"]
    }


def _claims_of(cluster: Cluster, key: str) -> tuple[str, ...]:
    allocation = cluster.world.sched.allocation(key)
    assert allocation is not None
    return tuple(c.split("/", 1)[1] for c in allocation.claims)


def _fast_refusals_match_node_by_node(cluster: Cluster) -> None:
    """A one-claim pod's refusals found once per claim (local volumes on their own nodes only)
    are what judging each node by itself gives."""
    partition = cluster.world.sched._state.partition
    catalog = partition.volumes
    views = [node_view(node) for node in partition.nodes.values()]
    for key in catalog.claims:
        if catalog.claim_refusal(key, "") is not None:
            continue
        node_by_node = {}
        for view in views:
            reason, _ = catalog.plan([key], view)
            if reason is not None:
                node_by_node[view.name] = reason
        assert catalog.node_refusals(key, views) == node_by_node
