"""Writing what Herder did with a gang back onto its group object, where the API has a status.

- scheduler-plugins PodGroup: `status.phase` as its coscheduling controller words it (Pending,
  PreScheduling, Scheduling, Scheduled, Running, Finished, Failed) and the counts `scheduled`,
  `running`, `succeeded`, `failed` of its pods;
- Volcano PodGroup: `status.phase` (Inqueue once Herder has it: Volcano's job controller creates
  a job's pods only then; Running once the minimum runs; Completed when every pod succeeded)
  and the counts `running`, `succeeded`, `failed`;
- Kubernetes PodGroup: the condition `PodGroupScheduled` (`PodGroupInitiallyScheduled` from
  v1alpha3 on): True once the minimum is placed (and not made False again), False with reason
  `Unschedulable` and the gang's reason while it waits.

The figures come from the pods that name the group (their states, kept by the pod watch) and,
for a waiting gang, the core's reason for its oldest waiting pod. The writer runs with the other
status writers, never on the cycle's thread: one pass per `status.interval`, at most `per_pass`
patches a pass, and a group is patched only when what it shows differs from what Herder would
write, so a restart or a failover rewrites nothing already right. Patches go to the status
subresource as merge patches.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from shim.convert.gangs import coscheduling, kubernetes_pod_group, volcano
from shim.convert.objects import list_at, map_at, meta_of
from shim.kube.write.event_body import wall_timestamp

log = logging.getLogger("herder.status")

PENDING, BOUND, RUNNING, SUCCEEDED, FAILED = "Pending", "Bound", "Running", "Succeeded", "Failed"
SCHEDULED_CONDITION = "PodGroupScheduled"  # scheduling.k8s.io/v1alpha2
INITIALLY_SCHEDULED_CONDITION = "PodGroupInitiallyScheduled"  # v1alpha3 and v1beta1


class GroupStatusApi(Protocol):
    def patch_group_status(
        self, group: str, version: str, plural: str, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> None: ...


@dataclass(frozen=True, slots=True)
class GroupState:
    """One group object as the watch last saw it, with what its pods are doing."""

    api: str  # the gang source (coscheduling.API, volcano.API, kubernetes_pod_group.API)
    group: str
    version: str
    plural: str
    obj: Mapping[str, Any]
    minimum: int  # the gang's minimum of pods (0: no gang: nothing is written)
    members: Mapping[str, str]  # pod key -> PENDING, BOUND, RUNNING, SUCCEEDED or FAILED

    @property
    def name(self) -> tuple[str, str]:
        meta = meta_of(self.obj)
        return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def coscheduling_status(minimum: int, states: Counter[str]) -> dict[str, Any]:
    """The status scheduler-plugins' PodGroup controller would show for these pods."""
    scheduled = states[BOUND] + states[RUNNING] + states[SUCCEEDED] + states[FAILED]
    if states[FAILED]:
        phase = "Failed"
    elif states[SUCCEEDED] >= minimum:
        phase = "Finished"
    elif states[RUNNING] + states[SUCCEEDED] >= minimum:
        phase = "Running"
    elif scheduled >= minimum:
        phase = "Scheduled"
    elif scheduled:
        phase = "Scheduling"
    elif states[PENDING] >= minimum:
        phase = "PreScheduling"
    else:
        phase = "Pending"
    return {
        "phase": phase,
        "scheduled": scheduled,
        "running": states[RUNNING],
        "succeeded": states[SUCCEEDED],
        "failed": states[FAILED],
    }


def volcano_status(minimum: int, states: Counter[str]) -> dict[str, Any]:
    """Volcano's phase: Inqueue (its pods may be created), Running, Completed."""
    members = sum(states.values())
    if members and states[SUCCEEDED] == members and members >= minimum:
        phase = "Completed"
    elif states[RUNNING] + states[SUCCEEDED] >= minimum:
        phase = "Running"
    else:
        phase = "Inqueue"
    return {"phase": phase, "running": states[RUNNING], "succeeded": states[SUCCEEDED], "failed": states[FAILED]}


def kubernetes_conditions(
    state: GroupState, states: Counter[str], waiting: str | None, now: Callable[[], str]
) -> list[dict[str, Any]] | None:
    """The PodGroup's conditions with Herder's scheduling condition set; None when unchanged."""
    kind = SCHEDULED_CONDITION if state.version == "v1alpha2" else INITIALLY_SCHEDULED_CONDITION
    conditions = [c for c in list_at(state.obj, "status", "conditions") if isinstance(c, Mapping)]
    current = next((c for c in conditions if c.get("type") == kind), None)
    scheduled = states[BOUND] + states[RUNNING] + states[SUCCEEDED] + states[FAILED]
    if current is not None and current.get("status") == "True":
        return None  # scheduled once: the condition stays True
    if scheduled >= state.minimum:
        status, reason = "True", "Scheduled"
        message = f"{scheduled} of its pods are placed (minCount {state.minimum})"
    elif waiting:
        status, reason, message = "False", "Unschedulable", waiting
    else:
        return None
    if current is not None and (current.get("status"), current.get("reason"), current.get("message")) == (
        status,
        reason,
        message,
    ):
        return None
    changed = current is None or current.get("status") != status
    condition: dict[str, Any] = {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": now() if changed or current is None else current.get("lastTransitionTime") or now(),
    }
    generation = meta_of(state.obj).get("generation")
    if isinstance(generation, int):
        condition["observedGeneration"] = generation
    return [*(dict(c) for c in conditions if c.get("type") != kind), condition]


def wanted_status(
    state: GroupState, waiting: Callable[[], str | None], now: Callable[[], str]
) -> dict[str, Any] | None:
    """The status patch for one group, or None when it shows what Herder would write."""
    if state.minimum <= 0:
        return None
    states = Counter(state.members.values())
    shown = map_at(state.obj, "status")
    if state.api == coscheduling.API:
        wanted = coscheduling_status(state.minimum, states)
    elif state.api == volcano.API:
        wanted = volcano_status(state.minimum, states)
    elif state.api == kubernetes_pod_group.API:
        conditions = kubernetes_conditions(state, states, waiting(), now)
        return None if conditions is None else {"status": {"conditions": conditions}}
    else:
        return None
    if all(shown.get(key, 0 if key != "phase" else None) == value for key, value in wanted.items()):
        return None
    return {"status": wanted}


class GroupStatusWriter:
    def __init__(
        self,
        api: GroupStatusApi,
        groups: Callable[[], list[GroupState]],
        pending_reason: Callable[[str], str | None],
        interval: Callable[[], float],
        per_pass: int = 100,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], str] = wall_timestamp,
    ) -> None:
        """`groups()` gives every group whose status Herder writes (GroupSync.states),
        `pending_reason(key)` the core's reason a pod waits (Scheduler.pending_reason)."""
        self._api = api
        self._groups = groups
        self._pending_reason = pending_reason
        self._interval = interval
        self._per_pass = per_pass
        self._clock = clock
        self._wall = wall
        self._last: float | None = None
        self._written: dict[tuple[str, str, str, str], dict[str, Any]] = {}  # what Herder last wrote, by object
        self.writes = 0

    def tick(self, now: float | None = None) -> int:
        now = self._clock() if now is None else now
        if self._last is not None and now - self._last < self._interval():
            return 0
        self._last = now
        made = 0
        for state in self._groups():
            if made >= self._per_pass:
                break
            made += self._write(state)
        self.writes += made
        return made

    def _write(self, state: GroupState) -> int:
        namespace, name = state.name
        key = (state.group, state.plural, namespace, name)

        def waiting() -> str | None:
            pending = sorted(pod for pod, member in state.members.items() if member == PENDING)
            return self._pending_reason(pending[0]) if pending else None

        patch = wanted_status(state, waiting, self._wall)
        if patch is None or self._written.get(key) == _signature(patch):
            return 0  # right already, or written and the watch has not shown it yet
        try:
            self._api.patch_group_status(state.group, state.version, state.plural, namespace, name, patch)
        except Exception as error:
            self._written.pop(key, None)
            if getattr(error, "status", None) != 404:  # 404: the group is being deleted
                log.warning("could not write the status of %s %s/%s: %s", state.plural, namespace, name, error)
            return 0
        self._written[key] = _signature(patch)
        return 1


def _signature(patch: Mapping[str, Any]) -> dict[str, Any]:
    """The patch without the transition times it stamps, to tell a repeat from a change."""
    status = dict(map_at(patch, "status"))
    if "conditions" in status:
        status["conditions"] = [{k: v for k, v in c.items() if k != "lastTransitionTime"} for c in status["conditions"]]
    return status
