"""PodDisruptionBudgets to the core: preemption (both kinds) prefers victims whose eviction no
budget would refuse, as kube-scheduler's DefaultPreemption does.

kopf delivers every budget (the initial listing and each change of its spec or status, where
the disruption controller keeps `status.disruptionsAllowed` current); each is converted
(shim/convert/budgets.py) and given to the core. A budget that cannot be read keeps the last good
one and is reported with a Kubernetes Event naming the field. The Eviction API still has the
last word: a refused eviction is reported back and the preemptor looks again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from core.scheduler import Scheduler
from shim.convert.budgets import budget_from, budget_key
from shim.convert.objects import ConversionError
from shim.kube.write.recorder import EventRecorder

log = logging.getLogger("herder.budgets")

REFUSED = "DisruptionBudgetRefused"


class BudgetSync:
    def __init__(self, scheduler: Scheduler, recorder: EventRecorder | None) -> None:
        self._scheduler = scheduler
        self._recorder = recorder

    def apply(self, obj: Mapping[str, Any]) -> None:
        try:
            budget = budget_from(obj)
        except ConversionError as err:
            log.warning("%s; the last readable state is kept", err)
            if self._recorder is not None:
                self._recorder.record(obj, "PodDisruptionBudget", "policy/v1", REFUSED, f"{err}; not used by Herder")
            return
        self._scheduler.update_disruption_budget(budget)

    def delete(self, obj: Mapping[str, Any]) -> None:
        self._scheduler.remove_disruption_budget(*budget_key(obj))
