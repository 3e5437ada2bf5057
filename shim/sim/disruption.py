"""PodDisruptionBudgets in the simulated cluster: the Eviction API's refusal, as on a cluster.

Herder evicts through the Eviction API (the recycler and both preemptions), so a budget that
allows no more disruptions refuses the eviction (HTTP 429 on a cluster) and Herder moves on to
other victims. The simulator answers the same way: a budget's healthy pods are the running pods
its selector matches in its namespace, the expected ones are those plus its pending pods plus
the pods it let go (on a cluster their controllers would make them again); `minAvailable` or
`maxUnavailable` (a number or a percentage of the expected pods, rounded up as the disruption
controller rounds) decide how many may go. The core is told each budget's count before every
scheduling cycle (`statuses`), as the disruption controller keeps `status.disruptionsAllowed`
current on a cluster, so preemption prefers victims no budget protects.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from core.objects.disruption_budget import DisruptionBudget
from core.objects.pod_rules import LabelSelector
from shim.convert.objects import ConversionError, map_at, meta_of
from shim.convert.rules import label_selector, string_labels


def _amount(value: object, total: int, where: str) -> int:
    if isinstance(value, bool):
        raise ConversionError(f"{where}: expected a number or a percentage, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        return math.ceil(total * int(value[:-1]) / 100)
    raise ConversionError(f"{where}: expected a number or a percentage, got {value!r}")


class DisruptionBudgets:
    def __init__(self) -> None:
        self._budgets: dict[tuple[str, str], tuple[LabelSelector, Mapping[str, Any]]] = {}
        self._disrupted: dict[tuple[str, str], int] = {}

    def apply(self, manifest: Mapping[str, Any]) -> None:
        meta = meta_of(manifest)
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        spec = map_at(manifest, "spec")
        where = f"PodDisruptionBudget {namespace}/{name} spec"
        selector = label_selector(spec.get("selector"), f"{where}.selector")
        for field in ("minAvailable", "maxUnavailable"):
            if field in spec:
                _amount(spec[field], 1, f"{where}.{field}")  # refused now, not at the first eviction
        self._budgets[(namespace, name)] = (selector, spec)

    def delete(self, namespace: str | None, name: str) -> bool:
        self._disrupted.pop((namespace or "default", name), None)
        return self._budgets.pop((namespace or "default", name), None) is not None

    def evict(
        self, namespace: str, labels: Mapping[str, str], live: Iterable[tuple[str, Mapping[str, Any], bool]]
    ) -> str | None:
        """Evict a running pod (its namespace and labels) if every budget matching it allows:
        None, and the budgets count it; else why not. `live`: (namespace, manifest, running)
        of every pod not yet ended."""
        matching = sorted(
            key for key, (selector, _) in self._budgets.items() if key[0] == namespace and selector.matches(labels)
        )
        pods = list(live) if matching else []  # the live pods are counted only for a budget that covers this one
        for key in matching:
            if self._allowed(key, pods) <= 0:
                return f"Cannot evict pod as it would violate the pod's disruption budget {key[0]}/{key[1]}"
        for key in matching:
            self._disrupted[key] = self._disrupted.get(key, 0) + 1
        return None

    def statuses(self, live: Iterable[tuple[str, Mapping[str, Any], bool]]) -> dict[tuple[str, str], DisruptionBudget]:
        """Every budget as the core weighs it, with how many of its pods may go now (what the
        disruption controller writes to `status.disruptionsAllowed` on a cluster)."""
        pods = list(live) if self._budgets else []
        return {
            key: DisruptionBudget(key[0], key[1], selector, max(0, self._allowed(key, pods)))
            for key, (selector, _) in self._budgets.items()
        }

    def _allowed(self, key: tuple[str, str], pods: list[tuple[str, Mapping[str, Any], bool]]) -> int:
        selector, spec = self._budgets[key]
        mine = [running for ns, pod, running in pods if ns == key[0] and selector.matches(string_labels(pod))]
        healthy = sum(mine)
        expected = len(mine) + self._disrupted.get(key, 0)
        where = f"PodDisruptionBudget {key[0]}/{key[1]} spec"
        if "minAvailable" in spec:
            return healthy - _amount(spec["minAvailable"], expected, f"{where}.minAvailable")
        most = _amount(spec.get("maxUnavailable", 0), expected, f"{where}.maxUnavailable")
        return most - (expected - healthy)
