"""PodDisruptionBudgets reach the core through the real operator: each budget's selector and
`status.disruptionsAllowed` as the disruption controller updates it (preemption prefers victims
no budget protects); a budget Herder cannot read is refused with an Event and the last good one
kept."""

from __future__ import annotations

from typing import Any

import pytest

from core.objects.pod_rules import LabelRequirement
from tests.kube.conftest import Cluster, eventually

pytestmark = pytest.mark.timeout(60)

POLICY = ("policy", "v1", "poddisruptionbudgets")


def budget_body(selector: dict[str, Any], allowed: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "keep-db", "namespace": "team"},
        "spec": {"selector": selector, "maxUnavailable": 1},
        "status": {"disruptionsAllowed": allowed},
    }


def test_the_core_follows_each_budget_and_how_many_it_allows(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.create_namespace("team")
    cluster.custom.create_namespaced_custom_object(
        *POLICY[:2], "team", POLICY[2], budget_body({"matchLabels": {"app": "db"}}, 0)
    )

    def allowed() -> int | None:
        budget = herder.scheduler.disruption_budget("team", "keep-db")
        return None if budget is None else budget.allowed

    eventually(lambda: allowed() == 0, "the budget in the core")
    budget = herder.scheduler.disruption_budget("team", "keep-db")
    assert budget is not None and budget.selector.requirements == (LabelRequirement("app", "In", frozenset({"db"})),)

    # the disruption controller counts a pod more that may go
    cluster.custom.patch_namespaced_custom_object_status(
        *POLICY[:2], "team", POLICY[2], "keep-db", {"status": {"disruptionsAllowed": 1}}
    )
    eventually(lambda: allowed() == 1, "the new count in the core")

    bad = {"matchExpressions": [{"key": "app", "operator": "Near", "values": ["db"]}]}
    cluster.custom.patch_namespaced_custom_object(
        *POLICY[:2], "team", POLICY[2], "keep-db", {"spec": {"selector": bad}}
    )

    def refusals() -> list[str]:
        return [
            e["message"]
            for e in cluster.events_about("PodDisruptionBudget", "keep-db")
            if e["reason"] == "DisruptionBudgetRefused"
        ]

    [message] = eventually(refusals, "the refusal said as an Event")
    assert "spec.selector.matchExpressions[0]: unknown operator 'Near'" in message
    assert allowed() == 1  # the last good budget stays

    cluster.custom.delete_namespaced_custom_object(*POLICY[:2], "team", POLICY[2], "keep-db")
    eventually(lambda: herder.scheduler.disruption_budget("team", "keep-db") is None, "the budget gone")
