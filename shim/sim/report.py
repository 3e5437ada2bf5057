"""The simulation report: one JSON document, in the public shape DESIGN's simulation contract gives.

    {"name", "until",
     "pods":      {"<ns>/<name>": {"state", "node", "created", "bound", "finished", "evicted",
                                   "reason", "queue", "quota", "user", "placeholder" (gangs' only)}},
     "state":     the full state dump at the end (GET /ws/v1/fullstatedump),
     "snapshots": {"<t>": the full state dump at t},
     "summary":   {"pods", "bound", "pending", "running", "evicted", "finished", "failed", "deleted",
                   "foreign", "placeholders", "reservations", "backfills", "reserved_idle_core_seconds",
                   "sim_seconds", "wall_seconds"},
                  (pods = pending + running + finished + failed + evicted + deleted: each pod in one state)
     "events":    the core's scheduling events and the simulator's own (type SCENARIO), in order,
     "timeline":  samples of queue usage, quota used/runtime and pod counts (see timeline.py),
     "autoscaler": with `nodeGroups` only: per group its nodes, peak, nodes added and removed and
                   node-hours (and cost), the scenario's own nodes as `static`, the pods that
                   triggered a scale-up and the gangs' ProvisioningRequests (see autoscaler.py)}

A pending pod's entry also says what it tells autoscalers: `condition` is `Unschedulable` or
`SchedulingSkipped` (shim/autoscaling.py), once Herder has tried it.

Every figure in it comes from the run; only `summary.wall_seconds` differs between two runs
of the same scenario.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.scale_up import PendingCondition
from shim.autoscaling import condition_reason
from shim.sim.cluster import DELETED, EVICTED, FAILED, FOREIGN, PENDING, RUNNING, SUCCEEDED, SimPod
from shim.sim.engine import Simulation


def seconds(value: float | None) -> float | int | None:
    """Whole seconds as integers in the report, so `30` reads as 30, not 30.0."""
    if value is None:
        return None
    return int(value) if float(value).is_integer() else value


def _pending_queues(state: dict[str, Any]) -> dict[str, str]:
    return {
        request["allocationKey"]: app["queueName"]
        for app in state["applications"]
        for request in app.get("requests", [])
    }


def pod_entry(
    sim: Simulation, pod: SimPod, pending_queue: dict[str, str], conditions: Mapping[str, PendingCondition]
) -> dict[str, Any]:
    reason, queue, quota = pod.reason, pod.queue, pod.quota
    if pod.state == PENDING:
        reason = sim.scheduler.pending_reason(pod.key) or reason
        queue = pending_queue.get(pod.key)
    if pod.state in (PENDING, RUNNING):  # a running pod moves when its namespace's quota appears
        quota = sim.scheduler.quota_of(pod.key) or quota
    entry = {
        "state": pod.state,
        "node": pod.node,
        "created": seconds(pod.created),
        "bound": seconds(pod.bound),
        "finished": seconds(pod.finished),
        "evicted": seconds(pod.evicted),
        "reason": reason,
        "queue": queue,
        "quota": quota,
        "user": pod.user,
    }
    if pod.placeholder:
        entry["placeholder"] = True
    condition = conditions.get(pod.key) if pod.state == PENDING else None
    if condition is not None:
        entry["condition"] = condition_reason(condition.category)
    return entry


def build_report(sim: Simulation) -> dict[str, Any]:
    state = sim.scheduler.state_dump()
    pending_queue = _pending_queues(state)
    conditions = sim.scheduler.scale_up_view().conditions
    pods = {name: pod_entry(sim, pod, pending_queue, conditions) for name, pod in sim.cluster.pods.items()}
    herder = [pod for pod in sim.cluster.pods.values() if pod.herder and not pod.placeholder]
    by_state = dict.fromkeys((PENDING, RUNNING, SUCCEEDED, FAILED, EVICTED, DELETED), 0)
    for pod in herder:
        by_state[pod.state] = by_state.get(pod.state, 0) + 1
    reservations = sim.scheduler.reservation_counts()
    summary = {
        "pods": len(herder),
        "bound": sum(1 for pod in herder if pod.bound is not None),
        "pending": by_state[PENDING],
        "running": by_state[RUNNING],
        "evicted": by_state[EVICTED],
        "finished": by_state[SUCCEEDED],
        "failed": by_state[FAILED],
        "deleted": by_state[DELETED],
        "foreign": sum(1 for pod in sim.cluster.pods.values() if pod.state == FOREIGN),
        "placeholders": sum(1 for pod in sim.cluster.pods.values() if pod.placeholder),
        "reservations": reservations["made"],
        "backfills": reservations["backfills"],
        # cores left idle on reserved nodes while they drained, over the run
        "reserved_idle_core_seconds": round(sim.reserved_idle.get("vcore", 0.0) / 1000, 3),
        "sim_seconds": seconds(sim.now),
        "wall_seconds": round(sim.wall_seconds, 3),
    }
    report = {
        "name": sim.scenario.name,
        "until": seconds(sim.now),
        "pods": pods,
        "state": state,
        "snapshots": sim.snapshots,
        "summary": summary,
        "events": sim.callbacks.journal,
        "timeline": sim.timeline.samples,
    }
    if sim.autoscaler is not None:
        report["autoscaler"] = sim.autoscaler.report()
    return report
