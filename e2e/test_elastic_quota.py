"""Idle quota is lent and taken back: a borrower's pods are recycled when the lender needs its min."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client

from e2e.backends import Cluster
from e2e.workloads import bound, create_quota, eventually, herder_pod, set_settings

RECYCLE_DELAY = "5s"
PARENT = "quota.scheduling.koordinator.sh/parent"
IS_PARENT = "quota.scheduling.koordinator.sh/is-parent"


@pytest.fixture
def fast_recycling(cluster: Cluster) -> Iterator[None]:
    previous = set_settings(cluster, {"quota.recycle.delay": RECYCLE_DELAY, "quota.recycle.interval": "1s"})
    yield
    set_settings(cluster, previous)


@pytest.fixture
def lender(cluster: Cluster) -> Iterator[str]:
    name = f"e2e-lender-{uuid.uuid4().hex[:5]}"
    cluster.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    cluster.core.delete_namespace(name, grace_period_seconds=0)


def _running(cluster: Cluster, namespace: str) -> list[str]:
    pods = cluster.core.list_namespaced_pod(namespace).items
    return [p.metadata.name for p in pods if p.spec.node_name and not p.metadata.deletion_timestamp]


def test_borrower_uses_idle_min_then_gives_it_back(
    cluster: Cluster, namespace: str, lender: str, fast_recycling: None
) -> None:
    # Borrower and lender share a parent that holds exactly their mins (400m): the cluster is far
    # larger, so only quota arithmetic decides. Alone, the borrower may use the lender's idle min;
    # once the lender asks for its min, the borrower's runtime falls back to its own 100m. (Two
    # top-level quotas would both be satisfied by the whole cluster pool and nothing would be lent.)
    pool = f"e2e-pool-{uuid.uuid4().hex[:5]}"
    create_quota(cluster, lender, {"cpu": "400m"}, {"cpu": "400m"}, name=pool, labels={IS_PARENT: "true"})
    create_quota(cluster, namespace, {"cpu": "100m"}, {"cpu": "400m"}, labels={PARENT: pool})
    create_quota(cluster, lender, {"cpu": "300m"}, {"cpu": "300m"}, labels={PARENT: pool})
    for index in range(4):
        cluster.core.create_namespaced_pod(namespace, herder_pod(f"borrow-{index}", cpu="100m"))
    for index in range(4):
        bound(cluster, namespace, f"borrow-{index}")

    for index in range(3):
        cluster.core.create_namespaced_pod(lender, herder_pod(f"reclaim-{index}", cpu="100m"))
    for index in range(3):
        bound(cluster, lender, f"reclaim-{index}", timeout=90)
    eventually(
        lambda: len(_running(cluster, namespace)) <= 1 or None, "the borrower's pods to be recycled", 90
    )
