"""The core's outputs: the one interface the shim (or the simulator) implements.

Callbacks are called after the core released its lock, from the thread that made the
decision (the scheduling cycle, the recycler, or an input call). They must not block: queue
the work and return. A bind that fails later is reported back with
`Scheduler.release_allocation(key)`, which rolls back every tracker.

Gang placeholders (core/gang/) use the same three calls, no new one:
- `bind(a)` with `a.placeholder`: create the placeholder pod `a.key` (`<namespace>/<name>`)
  already bound to `a.node_id`, sized by `a.resource`, from the task group `a.ask.task_group`
  of the gang `a.ask.gang` (its originator pod is `a.ask.gang.originator`);
- `bind(a)` with `a.replaces`: delete the placeholder pod `a.replaces`, then bind `a.key` to
  `a.node_id` (the placeholder's node); the core has already moved the usage over;
- `evict(a, reason)` with `a.placeholder`: delete the placeholder pod. The core has already
  released it, so the pod's deletion coming back as `release_allocation` changes nothing.

Volumes (core/objects/volumes.py) too: `bind(a)` with a non-empty `a.volume_plan` asks first for
its writes, as kube-scheduler's binder makes them (each `(claim, volume)` of `plan.bind`: the
volume's claimRef names the claim; each claim of `plan.provision`: its
`volume.kubernetes.io/selected-node` annotation names `a.node_id`), and for the pod to be bound
only once those claims show bound; if they do not, `release_allocation(a.key)` as for any bind
that failed.
"""

from __future__ import annotations

from typing import Protocol

from core.events import SchedulingEvent
from core.objects.ask import Allocation


class Callbacks(Protocol):
    def bind(self, allocation: Allocation) -> None:
        """Bind the pod `allocation.key` to `allocation.node_id` (for placeholders see above)."""

    def evict(self, allocation: Allocation, reason: str) -> None:
        """Evict the pod (Eviction API; a placeholder is deleted); report a refusal with `eviction_failed`."""

    def report(self, event: SchedulingEvent) -> None:
        """A scheduling event happened (for Kubernetes Events, logs, reports)."""
