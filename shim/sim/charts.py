"""PNG charts of a simulation report: queue usage, quota used against runtime, pending pods, and
with node groups the nodes of each group over time with its node-hours.

matplotlib is an optional dependency (`pip install herder[charts]`); `ChartsUnavailable` says
so when it is missing, and the caller still writes the JSON report. Charts are drawn from the
report's `timeline` as steps (each sample holds until the next), in people's units: cores,
GiB, and plain counts for everything else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

QUEUE_CHART = "queue-usage.png"
QUOTA_CHART = "quota-usage.png"
PENDING_CHART = "pending-pods.png"
COMPARE_USAGE_CHART = "compare-usage.png"
COMPARE_WAIT_CHART = "compare-waits.png"
NODES_CHART = "nodes.png"
MAX_QUOTA_PANELS = 8
MAX_QUEUE_PANELS = 8


class ChartsUnavailable(RuntimeError):
    """matplotlib is not installed."""


def _unit(resource: str) -> tuple[float, str]:
    if resource == "vcore":
        return 1000.0, "cores"
    if resource == "memory":
        return float(2**30), "GiB"
    return 1.0, resource


def _resources(samples: Sequence[Mapping[str, Any]], section: str) -> list[str]:
    names: set[str] = set()
    for sample in samples:
        for usage in sample[section].values():
            names.update(usage if section == "queues" else usage["used"])
    names.discard("pods")
    first = [r for r in ("vcore", "memory") if r in names]
    return first + sorted(names - set(first))


def _series(
    samples: Sequence[Mapping[str, Any]], until: float, read: Callable[[Mapping[str, Any]], float]
) -> tuple[list[float], list[float]]:
    times = [float(s["time"]) for s in samples]
    values = [float(read(s)) for s in samples]
    if times and until > times[-1]:
        times.append(until)
        values.append(values[-1])
    return times, values


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise ChartsUnavailable("matplotlib is not installed (pip install 'herder[charts]')") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _queue_maxima(state: Mapping[str, Any], out: dict[str, Mapping[str, int]]) -> None:
    out[state["queuename"]] = state.get("maxResource") or {}
    for child in state.get("children", []):
        _queue_maxima(child, out)


def queue_chart(plt: Any, report: Mapping[str, Any], path: Path) -> None:
    """One panel per queue (root first): its usage of the first two resources, each max dotted."""
    samples, until = report["timeline"], float(report["until"])
    queues: list[str] = []
    for sample in samples:
        queues.extend(q for q in sample["queues"] if q not in queues and any(sample["queues"][q].values()))
    queues = ["root", *sorted(q for q in queues if q != "root")][:MAX_QUEUE_PANELS]
    maxima: dict[str, Mapping[str, int]] = {}
    _queue_maxima(report["state"]["queues"], maxima)
    resources = _resources(samples, "queues")[:2] or ["vcore"]
    fig, axes = plt.subplots(len(queues), 1, figsize=(10, 0.8 + 2.2 * len(queues)), squeeze=False, sharex=True)
    for ax, queue in zip((row[0] for row in axes), queues):
        for i, resource in enumerate(resources):
            target = ax if i == 0 else ax.twinx()
            color = f"C{i}"
            scale, unit = _unit(resource)

            def usage(s: Mapping[str, Any], q: str = queue, r: str = resource, k: float = scale) -> float:
                return float(s["queues"].get(q, {}).get(r, 0)) / k

            times, values = _series(samples, until, usage)
            target.step(times, values, where="post", color=color, linestyle="-" if i == 0 else "--")
            top = max(values, default=0.0)
            limit = maxima.get(queue, {}).get(resource)
            if limit:
                target.axhline(limit / scale, color=color, linestyle=":", linewidth=1)
                top = max(top, limit / scale)
            target.set_ylim(bottom=0, top=(top * 1.15) or 1)
            target.set_ylabel(f"{resource} ({unit})", color=color, fontsize="small")
        ax.set_title(queue, loc="left", fontsize="medium")
        ax.grid(alpha=0.3)
    fig.suptitle(f"{report['name']}: queue usage ({' solid, '.join(resources)} dashed; max dotted)")
    axes[-1][0].set_xlabel("simulated seconds")
    _save(plt, fig, path)


def quota_chart(plt: Any, report: Mapping[str, Any], path: Path) -> bool:
    samples, until = report["timeline"], float(report["until"])
    quotas: list[str] = []
    for sample in samples:
        quotas.extend(q for q in sample["quotas"] if q not in quotas)
    quotas = quotas[:MAX_QUOTA_PANELS]
    if not quotas:
        return False
    fig, axes = plt.subplots(len(quotas), 1, figsize=(10, 2.6 * len(quotas)), squeeze=False, sharex=True)
    for ax, quota in zip((row[0] for row in axes), quotas):
        keys: list[str] = []
        for sample in samples:
            entry = sample["quotas"].get(quota, {"used": {}, "runtime": {}})
            keys.extend(k for k in [*entry["runtime"], *entry["used"]] if k not in keys and k != "pods")
        for key in keys[:2]:
            scale, unit = _unit(key)

            def used(s: Mapping[str, Any], k: str = key, q: str = quota, f: float = scale) -> float:
                return float(s["quotas"].get(q, {}).get("used", {}).get(k, 0)) / f

            def runtime(s: Mapping[str, Any], k: str = key, q: str = quota, f: float = scale) -> float:
                return float(s["quotas"].get(q, {}).get("runtime", {}).get(k, 0)) / f

            times, values = _series(samples, until, runtime)
            (line,) = ax.step(times, values, where="post", linestyle="--", linewidth=2.5, alpha=0.5)
            line.set_label(f"{key} runtime ({unit})")
            times, values = _series(samples, until, used)
            ax.step(times, values, where="post", color=line.get_color(), label=f"{key} used")
        ax.set_title(f"quota {quota}", fontsize="medium", loc="left")
        ax.set_ylim(bottom=0)
        ax.legend(loc="upper right", fontsize="small")
        ax.grid(alpha=0.3)
    fig.suptitle(f"{report['name']}: elastic quota used (solid) vs runtime (dashed)")
    axes[-1][0].set_xlabel("simulated seconds")
    _save(plt, fig, path)
    return True


def _pod_counts(ax: Any, report: Mapping[str, Any]) -> None:
    """Herder's pending and running pods over time, as steps."""
    samples, until = report["timeline"], float(report["until"])
    for part in ("pending", "running"):

        def count(s: Mapping[str, Any], p: str = part) -> float:
            return float(s[p])

        times, values = _series(samples, until, count)
        ax.step(times, values, where="post", label=f"{part} pods")


def _count_axes(ax: Any, title: str, unit: str) -> None:
    """A panel of whole counts over simulated time."""
    ax.set_title(title)
    ax.set_xlabel("simulated seconds")
    ax.set_ylabel(unit)
    ax.set_ylim(bottom=0)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize="small")


def pending_chart(plt: Any, report: Mapping[str, Any], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(10, 3.2))
    _pod_counts(ax, report)
    _count_axes(ax, f"{report['name']}: Herder's pods pending and running", "pods")
    _save(plt, fig, path)


def nodes_chart(plt: Any, report: Mapping[str, Any], path: Path) -> bool:
    """Nodes per node group (booting ones included) and the scenario's own, with node-hours."""
    autoscaler = report.get("autoscaler")
    samples, until = report["timeline"], float(report["until"])
    if not autoscaler or not any("nodes" in s for s in samples):
        return False
    hours = {name: entry["nodeHours"] for name, entry in autoscaler["groups"].items()}
    hours["static"] = autoscaler["static"]["nodeHours"]
    fig, ax = plt.subplots(figsize=(10, 3.4))
    for name in [*autoscaler["groups"], "static"]:

        def count(s: Mapping[str, Any], n: str = name) -> float:
            return float(s.get("nodes", {}).get(n, 0))

        times, values = _series(samples, until, count)
        ax.step(times, values, where="post", label=f"{name}: {hours[name]:g} node-hours")
    _count_axes(ax, f"{report['name']}: nodes ({autoscaler['nodeHours']:g} node-hours in all)", "nodes")
    _save(plt, fig, path)
    return True


def _save(plt: Any, fig: Any, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_charts(report: Mapping[str, Any], directory: Path) -> list[Path]:
    """Draw every chart that has something to show; the paths written."""
    plt = _pyplot()
    written = [directory / QUEUE_CHART, directory / PENDING_CHART]
    queue_chart(plt, report, written[0])
    pending_chart(plt, report, written[1])
    if quota_chart(plt, report, directory / QUOTA_CHART):
        written.append(directory / QUOTA_CHART)
    if nodes_chart(plt, report, directory / NODES_CHART):
        written.append(directory / NODES_CHART)
    return written


def _leaf_queues(report: Mapping[str, Any]) -> list[str]:
    queues: list[str] = []
    for sample in report["timeline"]:
        used = (q for q, usage in sample["queues"].items() if q != "root" and any(usage.values()))
        queues.extend(q for q in used if q not in queues)
    return sorted(queues)[: MAX_QUEUE_PANELS * 2]


def compare_usage_chart(plt: Any, baseline: Mapping[str, Any], candidate: Mapping[str, Any], path: Path) -> None:
    """Side by side: each queue's cores over time, then pending and running pods, in both runs."""
    queues = sorted(set(_leaf_queues(baseline)) | set(_leaf_queues(candidate)))
    fig, axes = plt.subplots(2, 2, figsize=(14, 7), sharex=True, sharey="row", squeeze=False)
    for column, (title, report) in enumerate((("baseline", baseline), ("candidate", candidate))):
        samples, until = report["timeline"], float(report["until"])
        top = axes[0][column]
        for i, queue in enumerate(queues):

            def cores(s: Mapping[str, Any], q: str = queue) -> float:
                return float(s["queues"].get(q, {}).get("vcore", 0)) / 1000.0

            times, values = _series(samples, until, cores)
            top.step(times, values, where="post", color=f"C{i % 10}", label=queue)
        top.set_title(f"{title}: queue usage (cores)", loc="left", fontsize="medium")
        top.grid(alpha=0.3)
        bottom = axes[1][column]
        _pod_counts(bottom, report)
        bottom.set_title(f"{title}: Herder's pods", loc="left", fontsize="medium")
        bottom.set_xlabel("simulated seconds")
        bottom.grid(alpha=0.3)
    if queues:
        axes[0][1].legend(loc="upper right", fontsize="small")
    axes[1][1].legend(loc="upper right", fontsize="small")
    axes[0][0].set_ylim(bottom=0)
    axes[1][0].set_ylim(bottom=0)
    fig.suptitle(f"{baseline['name']}: baseline and candidate side by side")
    _save(plt, fig, path)


def compare_wait_chart(plt: Any, comparison: Mapping[str, Any], path: Path) -> None:
    """Per queue, mean and p95 wait in both runs, as grouped bars."""
    old, new = comparison["baseline"]["queues"], comparison["candidate"]["queues"]
    queues = sorted(set(old) | set(new))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(queues) + 2), 4))
    width = 0.2
    for offset, (label, side, key) in enumerate(
        (
            ("baseline mean", old, "wait_mean"),
            ("candidate mean", new, "wait_mean"),
            ("baseline p95", old, "wait_p95"),
            ("candidate p95", new, "wait_p95"),
        )
    ):
        values = [float(side.get(queue, {}).get(key, 0.0)) for queue in queues]
        ax.bar([i + (offset - 1.5) * width for i in range(len(queues))], values, width, label=label)
    ax.set_xticks(range(len(queues)))
    ax.set_xticklabels(queues, rotation=20, ha="right", fontsize="small")
    ax.set_ylabel("wait (s)")
    ax.set_title(f"{comparison['baseline']['name']}: wait per queue, baseline and candidate")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize="small")
    _save(plt, fig, path)


def write_comparison_charts(
    baseline: Mapping[str, Any], candidate: Mapping[str, Any], comparison: Mapping[str, Any], directory: Path
) -> list[Path]:
    """The two side-by-side charts of a comparison; the paths written."""
    plt = _pyplot()
    written = [directory / COMPARE_USAGE_CHART, directory / COMPARE_WAIT_CHART]
    compare_usage_chart(plt, baseline, candidate, written[0])
    compare_wait_chart(plt, comparison, written[1])
    return written
