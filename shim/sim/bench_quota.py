"""Elastic quota runtime benchmark: one full and one incremental recompute (`herder bench --quotas N`)."""

from __future__ import annotations

import time

from core.elastic.shares import QuotaTree
from core.elastic.spec import ElasticQuotaSpec
from core.resources import Resource

KEYS = ("vcore", "memory", "nvidia.com/gpu", "pods", "ephemeral-storage")


def _forest(quotas: int, resources: int) -> list[ElasticQuotaSpec]:
    keys = KEYS[: max(1, min(resources, len(KEYS)))]
    parents = max(1, quotas // 20)
    specs = [
        ElasticQuotaSpec(
            f"p{i}",
            min=Resource(dict.fromkeys(keys, 100)),
            max=Resource(dict.fromkeys(keys, 1000)),
            is_parent=True,
        )
        for i in range(parents)
    ]
    for i in range(quotas - parents):
        specs.append(
            ElasticQuotaSpec(
                f"q{i}",
                min=Resource(dict.fromkeys(keys, 5)),
                max=Resource(dict.fromkeys(keys, 200)),
                parent=f"p{i % parents}",
            )
        )
    return specs


def run_quota_bench(quotas: int, resources: int = 3) -> dict[str, float]:
    """Milliseconds for one full recompute and one incremental recompute (one pod joining a leaf)."""
    specs = _forest(quotas, resources)
    tree = QuotaTree()
    tree.rebuild(specs)
    keys = KEYS[: max(1, min(resources, len(KEYS)))]
    tree.set_pool(dict.fromkeys(keys, quotas * 50))
    leaves = [s.name for s in specs if not s.is_parent]
    for i, leaf in enumerate(leaves):
        tree.add_pod_request(leaf, Resource(dict.fromkeys(keys, 10 + i % 300)), 1)
    start = time.perf_counter()
    tree.recompute_all()
    full = (time.perf_counter() - start) * 1000
    pod = Resource(dict.fromkeys(keys, 7))
    start = time.perf_counter()
    tree.add_pod_request(leaves[len(leaves) // 2], pod, 1)
    incremental = (time.perf_counter() - start) * 1000
    return {
        "quotas": float(quotas),
        "resources": float(len(keys)),
        "full_ms": full,
        "incremental_ms": incremental,
    }
