"""The recycler takes lent capacity back through the Eviction API, and a PodDisruptionBudget's
refusal (429) is respected: the refused pod keeps running and the refusal is reported."""

from __future__ import annotations

from typing import Any

import pytest

from tests.kube.conftest import QUOTAS, Cluster, eventually, quota_body

pytestmark = pytest.mark.timeout(60)

FAST_RECYCLING = {"quota.recycle.delay": "1s", "quota.recycle.interval": "200ms"}
KOORD = "quota.scheduling.koordinator.sh/"


def create(cluster: Cluster, body: dict[str, Any]) -> None:
    namespace = body["metadata"]["namespace"]
    cluster.custom.create_namespaced_custom_object(QUOTAS[0], QUOTAS[1], namespace, QUOTAS[2], body)


def running(cluster: Cluster, namespace: str) -> set[str]:
    return {p.metadata.name for p in cluster.core.list_namespaced_pod(namespace).items if p.spec.node_name}


def test_borrowed_capacity_is_evicted_except_where_a_disruption_budget_refuses(cluster: Cluster) -> None:
    herder = cluster.start_herder(settings=FAST_RECYCLING)
    cluster.create_namespace("borrower")
    cluster.create_namespace("lender")
    create(cluster, quota_body("pool", "lender", {"cpu": "4"}, {"cpu": "4"}, **{KOORD + "is-parent": "true"}))
    create(cluster, quota_body("borrower", "borrower", {"cpu": "1"}, {"cpu": "4"}, **{KOORD + "parent": "pool"}))
    create(cluster, quota_body("lender", "lender", {"cpu": "3"}, {"cpu": "3"}, **{KOORD + "parent": "pool"}))
    eventually(lambda: len(herder.scheduler.quotas_document()) >= 3, "the quota tree")

    borrowed = cluster.create_pods("borrower", 4, cpu="1")
    cluster.all_bound("borrower")
    protected = set(borrowed[:2])
    for name in protected:
        cluster.server.protect("borrower", name)

    cluster.create_pods("lender", 3, cpu="1")
    eventually(lambda: running(cluster, "borrower") == protected, "the unprotected borrowers evicted")
    # The protected borrowers keep 2 of the pool's 4 cpus: the pool's max is a hard ceiling
    # (quota.checkParentQuota), so 2 lender pods run and the third waits, naming the pool.
    eventually(lambda: len(running(cluster, "lender")) == 2, "two lender pods running")

    def waiting_for_the_pool() -> list[str]:
        return [e.message for e in herder.scheduler.events.batch(0, 10_000) if "parent quota pool" in e.message]

    eventually(waiting_for_the_pool, "the third lender pod waiting for the pool's max")

    def refusals() -> list[str]:
        return [e.message for e in herder.scheduler.events.batch(0, 10_000) if e.reason == "EvictionRefused"]

    [reason, *_] = eventually(refusals, "the PodDisruptionBudget's refusal reported to the core")
    assert "429" in reason
    assert running(cluster, "borrower") == protected
