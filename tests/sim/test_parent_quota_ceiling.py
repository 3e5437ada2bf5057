"""A parent ElasticQuota's max is a hard ceiling at admission (`quota.checkParentQuota`, on by default).

Its children's runtimes are shares of the parent's, but a child's own runtime check alone let a
lender reclaim its min while a sibling still held what it had borrowed: the parent then used
more than its max until the recycler's delay passed (or for ever with recycling off).
"""

from __future__ import annotations

from typing import Any

from tests.sim.scenarios import node, pod, quota_doc, simulate

LABELS = "quota.scheduling.koordinator.sh"


def scenario(**settings: str) -> dict[str, Any]:
    parent = {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "org", "namespace": "org", "labels": {f"{LABELS}/is-parent": "true"}},
        "spec": {"min": {"cpu": "4"}, "max": {"cpu": "4"}},
    }

    def child(name: str) -> dict[str, Any]:
        return {
            "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {"name": name, "namespace": name, "labels": {f"{LABELS}/parent": "org"}},
            "spec": {"min": {"cpu": "2"}, "max": {"cpu": "4"}},
        }

    return {
        "settings": {"quota.recycle.delay": "30s", **settings},
        "nodes": [node(cpu="16")],
        "quotas": [parent, child("borrower"), child("lender")],
        "workload": [
            pod("b", namespace="borrower", count=3),
            pod("l", namespace="lender", at=10, count=2),
        ],
        "snapshots": [15],
        "until": 120,
    }


def used_cpu(state: dict[str, Any], name: str) -> int:
    return int(quota_doc(state, name)["used"].get("vcore", 0))


def test_a_lender_waits_for_its_sibling_instead_of_pushing_the_parent_past_its_max() -> None:
    report = simulate(scenario())
    before_recycling = report["snapshots"]["15"]
    assert used_cpu(before_recycling, "org") == 4000  # never 5000
    lender = [p["state"] for key, p in report["pods"].items() if key.startswith("lender/")]
    assert lender == ["Running", "Running"]  # by the end: the recycler took back what the borrower held
    evicted = [key for key, p in report["pods"].items() if key.startswith("borrower/") and p["evicted"] is not None]
    assert len(evicted) == 1
    assert used_cpu(report["state"], "org") <= 4000
    refusals = [e for e in report["events"] if "parent quota org would exceed its" in e.get("message", "")]
    assert refusals, "the waiting lender pod's reason names the parent"


def test_check_parent_quota_false_keeps_koordinators_default() -> None:
    report = simulate(scenario(**{"quota.checkParentQuota": "false"}))
    assert used_cpu(report["snapshots"]["15"], "org") == 5000
