"""What a candidate configuration changes: one scenario run twice, then the two reports compared.

`herder simulate SCENARIO --compare CANDIDATE` runs the scenario as it is (the *baseline*) and
again with the candidate applied, and reports what differs. Each of Herder's pods (placeholders
and other schedulers' pods left out) has a *fate* in each run:

    ran          bound and never evicted (Running or Succeeded at the end)
    waits        never bound: still Pending at the end
    preempted    evicted by preemption (across queues, or inside an elastic quota)
    recycled     evicted by the recycler (its quota above its runtime)
    removed      gone another way: its node left, or the scenario deleted it

A pod whose fate differs is listed, and no other: a pod that ran in both runs, earlier in one,
is not a change of fate; its wait shows in the per-queue and per-user figures instead. Those
are, over Herder's pods: how many, mean and 95th percentile of the wait (from creation to
binding; a pod never bound waits until the end of its run), evictions, and usage (each queue's
time-weighted mean and peak of what it held, from the report's timeline).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

RAN, WAITS, PREEMPTED, RECYCLED, REMOVED = "ran", "waits", "preempted", "recycled", "removed"
FATES = (RAN, WAITS, PREEMPTED, RECYCLED, REMOVED)
_EVICTION_FATES = {"Preempted": PREEMPTED, "Evicted": RECYCLED}


def _herder_pods(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {
        name: pod for name, pod in report["pods"].items() if pod["state"] != "Foreign" and not pod.get("placeholder")
    }


def _eviction_causes(report: Mapping[str, Any]) -> dict[str, str]:
    """Each evicted pod's last eviction event: Preempted or Evicted (the recycler)."""
    causes: dict[str, str] = {}
    for event in report["events"]:
        fate = _EVICTION_FATES.get(event["reason"])
        if fate is not None and "name" in event:
            causes[event["name"]] = fate
    return causes


def fates(report: Mapping[str, Any]) -> dict[str, str]:
    """Each of Herder's pods' fate in one run (see the module's docstring)."""
    causes = _eviction_causes(report)
    out: dict[str, str] = {}
    for name, pod in _herder_pods(report).items():
        if pod["state"] == "Evicted":
            out[name] = causes.get(name, REMOVED)
        elif pod["bound"] is None:
            out[name] = WAITS
        else:
            out[name] = RAN
    return out


def _percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


def _wait(pod: Mapping[str, Any], end: float) -> float:
    until = pod["bound"] if pod["bound"] is not None else pod["evicted"] if pod["evicted"] is not None else end
    return max(0.0, float(until) - float(pod["created"]))


def _group_figures(
    pods: Mapping[str, Mapping[str, Any]], fate: Mapping[str, str], end: float, key: str
) -> dict[str, dict[str, Any]]:
    waits: dict[str, list[float]] = defaultdict(list)
    counts: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(FATES, 0))
    for name, pod in pods.items():
        group = pod.get(key) or "-"
        waits[group].append(_wait(pod, end))
        counts[group][fate[name]] += 1
    return {
        group: {
            "pods": len(values),
            "wait_mean": round(sum(values) / len(values), 3),
            "wait_p95": round(_percentile(values, 0.95), 3),
            **counts[group],
        }
        for group, values in sorted(waits.items())
    }


def queue_usage(report: Mapping[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    """Per queue, per resource: the time-weighted mean and the peak of what it held over the run."""
    samples = report["timeline"]
    end = float(report["until"])
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    peaks: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for sample, following in zip(samples, [*samples[1:], None]):
        start = float(sample["time"])
        stop = float(following["time"]) if following is not None else end
        for queue, usage in sample["queues"].items():
            for resource, value in usage.items():
                totals[queue][resource] += value * max(0.0, stop - start)
                peaks[queue][resource] = max(peaks[queue][resource], value)
    span = end or 1.0
    return {
        queue: {
            resource: {"mean": round(totals[queue][resource] / span, 3), "peak": peaks[queue][resource]}
            for resource in sorted(peaks[queue])
        }
        for queue in sorted(peaks)
    }


def _side(report: Mapping[str, Any], fate: Mapping[str, str]) -> dict[str, Any]:
    pods = _herder_pods(report)
    end = float(report["until"])
    evictions = {PREEMPTED: 0, RECYCLED: 0, REMOVED: 0}
    for value in fate.values():
        if value in evictions:
            evictions[value] += 1
    return {
        "name": report["name"],
        "summary": report["summary"],
        "evictions": evictions,
        "queues": _group_figures(pods, fate, end, "queue"),
        "users": _group_figures(pods, fate, end, "user"),
        "usage": queue_usage(report),
    }


def compare_reports(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> dict[str, Any]:
    """The comparison document: each run's figures, and the pods whose fate changes."""
    before, after = fates(baseline), fates(candidate)
    changed: dict[str, dict[str, Any]] = {}
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name, "absent"), after.get(name, "absent")
        if old != new:
            changed[name] = {
                "baseline": old,
                "candidate": new,
                "reason": _reason(candidate["pods"].get(name) if new != RAN else baseline["pods"].get(name)),
            }
    moves: dict[str, int] = defaultdict(int)
    for change in changed.values():
        moves[f"{change['baseline']} -> {change['candidate']}"] += 1
    return {
        "baseline": _side(baseline, before),
        "candidate": _side(candidate, after),
        "changed": changed,
        "moves": dict(sorted(moves.items())),
    }


def _reason(pod: Mapping[str, Any] | None) -> str | None:
    return None if pod is None else pod.get("reason")


def _delta(old: float, new: float) -> str:
    if old == new:
        return f"{new:g}"
    return f"{old:g} -> {new:g}"


def _table(title: str, old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]]) -> list[str]:
    rows = sorted(set(old) | set(new))
    if not rows:
        return []
    width = max(len(row) for row in rows)
    lines = [f"{title} (pods; mean and p95 wait in s; ran / waits / evicted, baseline -> candidate):"]
    empty = {"pods": 0, "wait_mean": 0.0, "wait_p95": 0.0, **dict.fromkeys(FATES, 0)}
    for row in rows:
        a, b = old.get(row, empty), new.get(row, empty)
        evicted_a = a[PREEMPTED] + a[RECYCLED] + a[REMOVED]
        evicted_b = b[PREEMPTED] + b[RECYCLED] + b[REMOVED]
        lines.append(
            f"  {row:<{width}}  {a['pods']} pods; wait mean {_delta(a['wait_mean'], b['wait_mean'])},"
            f" p95 {_delta(a['wait_p95'], b['wait_p95'])}; ran {_delta(a[RAN], b[RAN])},"
            f" waits {_delta(a[WAITS], b[WAITS])}, evicted {_delta(evicted_a, evicted_b)}"
        )
    return lines


def comparison_summary(document: Mapping[str, Any], shown: int = 20) -> str:
    """The readable comparison `herder simulate --compare` prints."""
    old, new = document["baseline"], document["candidate"]
    changed = document["changed"]
    lines = [f"{old['name']}: the baseline against the candidate"]
    if changed:
        moves = ", ".join(f"{count} {move}" for move, count in document["moves"].items())
        lines.append(f"Pods whose fate changes: {len(changed)} ({moves})")
        for name, change in list(changed.items())[:shown]:
            why = f": {change['reason']}" if change["reason"] else ""
            lines.append(f"  {name}: {change['baseline']} -> {change['candidate']}{why}")
        if len(changed) > shown:
            lines.append(f"  ... and {len(changed) - shown} more (--json lists every one)")
    else:
        lines.append("Pods whose fate changes: none")
    before, after = old["evictions"], new["evictions"]
    evictions = ", ".join(f"{kind} {_delta(before[kind], after[kind])}" for kind in before)
    lines.append(f"Evictions: {evictions}")
    lines.extend(_table("Queues", old["queues"], new["queues"]))
    lines.extend(_table("Users", old["users"], new["users"]))
    lines.extend(_usage_lines(old["usage"], new["usage"]))
    return "\n".join(lines)


def _usage_lines(old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterable[str]:
    queues = sorted(set(old) | set(new))
    if not queues:
        return []
    lines = ["Queue usage over the run (vcore in cores; mean, peak; baseline -> candidate):"]
    width = max(len(queue) for queue in queues)
    for queue in queues:
        a = old.get(queue, {}).get("vcore", {"mean": 0.0, "peak": 0.0})
        b = new.get(queue, {}).get("vcore", {"mean": 0.0, "peak": 0.0})
        lines.append(
            f"  {queue:<{width}}  mean {_delta(round(a['mean'] / 1000, 2), round(b['mean'] / 1000, 2))},"
            f" peak {_delta(a['peak'] / 1000, b['peak'] / 1000)}"
        )
    return lines
