"""Elastic quota runtime benchmark: one full and one incremental recompute (`herder bench --quotas N`)."""

from __future__ import annotations

import statistics
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


def run_quota_bench(quotas: int, resources: int = 3, repeats: int = 9) -> dict[str, float]:
    """Milliseconds (median and best of `repeats`): a full recompute, and an incremental one (a pod joins a leaf)."""
    specs = _forest(quotas, resources)
    tree = QuotaTree()
    tree.rebuild(specs)
    keys = KEYS[: max(1, min(resources, len(KEYS)))]
    tree.set_pool(dict.fromkeys(keys, quotas * 50))
    leaves = [s.name for s in specs if not s.is_parent]
    for i, leaf in enumerate(leaves):
        tree.add_pod_request(leaf, Resource(dict.fromkeys(keys, 10 + i % 300)), 1)
    fulls: list[float] = []
    incrementals: list[float] = []
    pod = Resource(dict.fromkeys(keys, 7))
    middle = leaves[len(leaves) // 2]
    for _ in range(repeats):
        start = time.perf_counter()
        tree.recompute_all()
        fulls.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        tree.add_pod_request(middle, pod, 1)
        incrementals.append((time.perf_counter() - start) * 1000)
        tree.add_pod_request(middle, pod, -1)
    return {
        "quotas": float(quotas),
        "resources": float(len(keys)),
        "full_ms": statistics.median(fulls),
        "full_ms_best": min(fulls),
        "incremental_ms": statistics.median(incrementals),
        "incremental_ms_best": min(incrementals),
    }
