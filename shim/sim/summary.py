"""The readable summary `herder simulate` prints without `--json`.

A newcomer should see in a dozen lines what happened: how many pods ran, finished, were
evicted or still wait; each queue's usage (now and at its peak) against its max; each elastic
quota's used against its runtime; why the waiting pods wait; and the events worth a look.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

# Counted under "Events worth a look".
NOTABLE = (
    "Evicted",
    "Preempted",
    "EvictionRefused",
    "ConfigRefused",
    "QuotaRefused",
    "BindRefused",
    "SettingsRefused",
    "NodeRefused",
    "PlaceholderTooSmall",
    "AnnotationIgnored",
    "ReservationEnded",
)
# What happened to applications as a whole (gangs reserving or failing, rejections), each
# shown with its time and message under "Applications and gangs".
APPLICATION_EVENTS = ("GangReserved", "ResourceReservationTimeout", "Failed", "Rejected")
SHOWN = 5
# Each of Herder's pods is in one of these states at the end, in this order in the summary.
POD_STATES = (
    ("running", "running"),
    ("finished", "finished"),
    ("failed", "failed (their activeDeadlineSeconds or their Hard gang's timeout)"),
    ("evicted", "evicted"),
    ("deleted", "deleted before they ran"),
    ("pending", "pending"),
)


def amount(resource: str, value: int) -> str:
    if resource == "vcore":
        return f"{value / 1000:g}"
    if resource == "memory":
        for suffix, factor in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20)):
            if value >= factor:
                return f"{value / factor:.3g}{suffix}"
        return str(value)
    return str(value)


def resources(res: Mapping[str, int] | None) -> str:
    """`vcore 2.5, memory 4Gi` (vcore in cores; pods left out: every pod counts one)."""
    if not res:
        return "-"
    first = [k for k in ("vcore", "memory") if k in res]
    order = first + sorted(k for k in res if k not in ("vcore", "memory", "pods"))
    parts = [f"{k} {amount(k, res[k])}" for k in order]
    return ", ".join(parts) if parts else "-"


def _queues(state: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []

    def walk(doc: Mapping[str, Any]) -> None:
        out.append(doc)
        for child in doc.get("children", []):
            walk(child)

    walk(state["queues"])
    return out


def _peaks(timeline: list[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    peaks: dict[str, dict[str, int]] = defaultdict(dict)
    for sample in timeline:
        for queue, usage in sample["queues"].items():
            for key, value in usage.items():
                peaks[queue][key] = max(peaks[queue].get(key, 0), value)
    return peaks


def _quotas(docs: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for doc in docs:
        out.append(doc)
        out.extend(_quotas(doc.get("children", [])))
    return out


def human_summary(report: Mapping[str, Any]) -> str:
    summary, pods = report["summary"], report["pods"]
    states = ", ".join(
        f"{summary.get(key, 0)} {label}"
        for key, label in POD_STATES
        if key != "failed" or summary.get("failed")  # shown only when a pod ran out its deadline
    )
    lines = [
        f"{report['name']}: {summary['sim_seconds']} s simulated in {summary['wall_seconds']:.2f} s",
        f"Herder's pods: {summary['pods']}: {states}; other schedulers' pods: {summary['foreign']}",
    ]
    if summary.get("reservations"):
        lines.append(
            f"Reservations: {summary['reservations']} made for pods at the front of their queue's line,"
            f" {summary['backfills']} backfill(s); reserved nodes sat idle"
            f" {summary['reserved_idle_core_seconds']:g} core-seconds while they drained"
        )
    peaks = _peaks(report["timeline"])
    current = {q["queuename"]: q for q in _queues(report["state"])}
    names = [name for name in current if name in peaks] + sorted(name for name in peaks if name not in current)
    if names:
        lines.append("Queues (used now | at peak | max; queues a rule created go when their work is done):")
        width = max(len(name) for name in names)
        for name in names:
            queue = current.get(name)
            now = resources(queue["allocatedResource"]) if queue else "(removed)"
            limit = resources(queue["maxResource"]) if queue else "-"
            lines.append(f"  {name:<{width}}  {now} | {resources(peaks.get(name))} | {limit}")
    quotas = [q for q in _quotas(report["state"].get("quotas", [])) if q["name"] not in ("system", "default")]
    if quotas:
        lines.append("Elastic quotas (used / runtime now; min, max):")
        width = max(len(q["name"]) for q in quotas)
        for quota in quotas:
            lines.append(
                f"  {quota['name']:<{width}}  {resources(quota['used'])} / {resources(quota['runtime'])};"
                f" min {resources(quota['min'])}, max {resources(quota['max'])}"
            )
    waiting: dict[str, list[str]] = defaultdict(list)
    for name, pod in pods.items():
        if pod["state"] == "Pending":
            waiting[pod["reason"] or "not tried yet"].append(name)
    if waiting:
        lines.append("Why pods still wait:")
        for reason, names in sorted(waiting.items(), key=lambda item: -len(item[1])):
            shown = ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
            lines.append(f"  {len(names)} pod(s): {reason}")
            lines.append(f"      {shown}")
    lines.extend(_waited(report))
    evicted = [(name, pod) for name, pod in pods.items() if pod["state"] == "Evicted"]
    if evicted:
        lines.append("Evicted:")
        for name, pod in evicted[:SHOWN]:
            lines.append(f"  {name} at {pod['evicted']} s: {pod['reason']}")
        if len(evicted) > SHOWN:
            lines.append(f"  ... and {len(evicted) - SHOWN} more")
    lines.extend(_deleted(pods))
    lines.extend(_applications(report))
    lines.extend(_autoscaler(report))
    notable = Counter(e["reason"] for e in report["events"] if e["reason"] in NOTABLE)
    if notable:
        lines.append("Events worth a look: " + ", ".join(f"{n} {reason}" for reason, n in sorted(notable.items())))
    scenario = [
        e for e in report["events"] if e["type"] == "SCENARIO" and e["reason"].endswith(("Refused", "NotFound"))
    ]
    for event in scenario[:SHOWN]:
        lines.append(f"  at {event['timestamp']:g} s {event['objectID']}: {event['reason']}: {event['message']}")
    warnings = [e for e in report["events"] if e["type"] == "SCENARIO" and e["reason"] == "ConfigWarning"]
    if warnings:
        lines.append("Configuration warnings (accepted, but read as Herder reads them):")
        lines.extend(f"  at {e['timestamp']:g} s: {e['message']}" for e in warnings)
    return "\n".join(lines)


def _waited(report: Mapping[str, Any]) -> list[str]:
    """Pods that ran only after waiting, grouped by why they first had to wait."""
    first_reason: dict[str, str] = {}
    for event in report["events"]:
        if event["reason"] == "Unschedulable" and "name" in event:
            first_reason.setdefault(event["name"], event["message"])
    groups: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for name, pod in report["pods"].items():
        if pod["bound"] is not None and pod["bound"] > pod["created"] and name in first_reason:
            groups[first_reason[name]].append((name, pod["bound"] - pod["created"]))
    if not groups:
        return []
    lines = ["Pods that ran after waiting:"]
    for reason, waits in sorted(groups.items(), key=lambda item: -len(item[1])):
        longest = max(wait for _, wait in waits)
        names = ", ".join(name for name, _ in waits[:SHOWN]) + (" ..." if len(waits) > SHOWN else "")
        lines.append(f"  {len(waits)} pod(s), up to {longest:g} s: {reason}")
        lines.append(f"      {names}")
    return lines


def _deleted(pods: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Pods deleted while they waited, grouped by why (they never ran, so they are not evicted)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for name, pod in pods.items():
        if pod["state"] == "Deleted":
            groups[pod["reason"] or "deleted"].append(name)
    if not groups:
        return []
    lines = ["Deleted before they ran:"]
    for reason, names in sorted(groups.items(), key=lambda item: -len(item[1])):
        shown = ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
        lines.append(f"  {len(names)} pod(s): {reason}")
        lines.append(f"      {shown}")
    return lines


def _applications(report: Mapping[str, Any]) -> list[str]:
    """Gangs reserving, timing out or failing, applications rejected; and where placeholders went."""
    happened = [e for e in report["events"] if e["type"] == "APP" and e["reason"] in APPLICATION_EVENTS]
    placeholders = Counter(pod["state"] for pod in report["pods"].values() if pod.get("placeholder"))
    if not happened and not placeholders:
        return []
    lines = ["Applications and gangs:"]
    for event in happened[: 2 * SHOWN]:
        lines.append(f"  at {event['timestamp']:g} s {event['objectID']}: {event['reason']}: {event['message']}")
    if len(happened) > 2 * SHOWN:
        lines.append(f"  ... and {len(happened) - 2 * SHOWN} more")
    if placeholders:
        fates = {"Replaced": "replaced by their pods", "Released": "released unused", "Running": "still holding room"}
        parts = [f"{placeholders[state]} {fates.get(state, state)}" for state in sorted(placeholders)]
        lines.append(f"  placeholders: {sum(placeholders.values())} placed: " + ", ".join(parts))
    return lines


def _autoscaler(report: Mapping[str, Any]) -> list[str]:
    """What the simulated cluster-autoscaler bought: nodes and node-hours per group."""
    autoscaler = report.get("autoscaler")
    if not autoscaler:
        return []
    lines = [
        f"Autoscaler ({autoscaler['nodeHours']:g} node-hours in all; {autoscaler['triggeredScaleUp']} pod(s)"
        " triggered a scale-up):"
    ]
    for name, group in autoscaler["groups"].items():
        cost = f", cost {group['cost']:g}" if "cost" in group else ""
        lines.append(
            f"  {name}: {group['nodes']} now, peak {group['peak']}, {group['added']} added, {group['removed']}"
            f" removed; {group['nodeHours']:g} node-hours{cost}"
        )
    lines.append(f"  static: {autoscaler['static']['nodes']} nodes; {autoscaler['static']['nodeHours']:g} node-hours")
    return lines
