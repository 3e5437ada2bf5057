"""What every simulated scenario must hold, checked while it runs and after.

`check_scenario(document)` runs a scenario through the whole simulator (reading, cluster, core,
report) twice and returns the problems found, each a sentence naming the moment and the object:

- no traceback: the scenario is read or refused (`ScenarioError`), and a valid one runs to its end;
- the report is the same on the second run (only `summary.wall_seconds` may differ);
- a placement never takes anything above its bound: after each moment at which pods were placed,
  the nodes, queues (max and maxapplications), elastic quotas (max and runtime, the parents' too)
  and users' and groups' limits (maxresources, maxapplications) that took a pod are within their
  bounds. A quota's runtime is not checked for a pod placed before a pod of the default or system
  quota in the same moment: the tree shares what those quotas leave, so the later pod lowered it.
  Usage may stand above a bound a later change lowered (a smaller queue max or quota, a pod
  resized in place as kube-scheduler counts it: docs/simulation.md), but no pod is placed there;
  likewise more applications may run than a lowered maxapplications allows, but no application
  that had not run yet starts there (one already running may still place its pods, as in YuniKorn);
- the simulated API server never refuses one of Herder's binds for a reason that means the core
  was wrong (the pod was not pending, the node is gone or has no room), and a moment always settles;
- at the end Herder's view is the cluster's: each node's allocated resources are what Herder's
  pods on it hold, its occupied at least what the other pods hold (nodes with a pod resized in
  place aside); every pending pod says why, and none still waits for preempted pods to end.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from core.elastic.spec import DEFAULT_QUOTA, SYSTEM_QUOTA
from shim.sim.cluster import PENDING, SimCluster
from shim.sim.engine import Simulation
from shim.sim.report import build_report
from shim.sim.scenario import ScenarioError, parse_scenario

# Bind refusals that are the cluster's say, not the core's mistake: a volume controller's step.
_VOLUME_REFUSALS = ("claim ", "persistentvolume ")
_RESIZES = ("Resized", "ResizeDeferred", "ResizeInfeasible")


class Hang(Exception):
    """An example ran past its time limit."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise Hang in the main thread once `seconds` have passed (a hang fails, never stalls)."""

    def expire(_signum: int, _frame: object) -> None:
        raise Hang(f"still running after {seconds}s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Outcome:
    """What one scenario did: refused (with the problems), or ran (with the report)."""

    problems: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    report: dict[str, Any] | None = None


def check_scenario(document: Any) -> Outcome:
    """Run the scenario twice and return every invariant it broke."""
    outcome = Outcome()
    try:
        scenario = parse_scenario(document, "fuzz")
    except ScenarioError as err:
        outcome.refused = err.problems
        return outcome
    first, watch = _run(scenario)
    outcome.report = first
    outcome.problems.extend(watch.problems)
    second, _ = _run(parse_scenario(document, "fuzz"))
    if _comparable(first) != _comparable(second):
        outcome.problems.append("the second run's report differs from the first's")
    return outcome


def _run(scenario: Any) -> tuple[dict[str, Any], _Watch]:
    watch = _Watch()
    simulation = Simulation(scenario, watch)
    watch.simulation = simulation
    simulation.run()
    watch(simulation.now, simulation.cluster)
    watch.finish()
    return build_report(simulation), watch


def _comparable(report: Mapping[str, Any]) -> str:
    summary = {k: v for k, v in report["summary"].items() if k != "wall_seconds"}
    return json.dumps({**report, "summary": summary}, sort_keys=True, default=str)


class _Watch:
    """The simulator's progress hook: checks the bounds after every moment pods were placed at."""

    def __init__(self) -> None:
        self.simulation: Simulation | None = None
        self.problems: list[str] = []
        self._read = 0  # journal entries seen
        self._resized: set[str] = set()  # pods resized in place (their node may count more)
        self._started: set[str] = set()  # applications placed at an earlier moment

    def __call__(self, now: float, cluster: SimCluster) -> None:
        journal = cluster.callbacks.journal
        fresh, self._read = journal[self._read :], len(journal)
        placed: list[str] = []
        for entry in fresh:
            reason, message, what = entry.get("reason"), str(entry.get("message") or ""), entry.get("objectID")
            if reason == "Scheduled":
                placed.append(str(what))
            elif reason == "BindRefused" and not message.startswith(_VOLUME_REFUSALS):
                self.problems.append(f"t={now:g}: the cluster refused Herder's bind of {what}: {message}")
            elif reason in ("TooManyRounds", "PlaceholderRefused") and "originator" not in message:
                self.problems.append(f"t={now:g}: {reason} {what}: {message}")
            elif reason in _RESIZES:
                pod = cluster.pods.get(str(what))
                if pod is not None:
                    self._resized.add(pod.key)
        if placed:
            self._check_bounds(now, placed)

    # -- bounds ------------------------------------------------------------------------------
    def _check_bounds(self, now: float, placed: list[str]) -> None:
        assert self.simulation is not None
        scheduler = self.simulation.scheduler
        dump = scheduler.state_dump()
        nodes = {node["nodeID"]: node for node in dump["nodes"]}
        queues = dict(_tree(dump["queues"], "queuename"))
        quotas = {q["name"]: q for top in dump["quotas"] for q in _walk(top)}
        users = {u["userName"]: u for u in dump["usage"]["users"]}
        groups = {g["groupName"]: g for g in dump["usage"]["groups"]}
        resized_nodes = {alloc.node_id for key in self._resized if (alloc := scheduler.allocation(key)) is not None}
        started = set(self._started)
        outside = [scheduler.quota_of(key) in (DEFAULT_QUOTA, SYSTEM_QUOTA) for key in placed]
        for index, key in enumerate(placed):
            allocation = scheduler.allocation(key)
            if allocation is None:
                continue  # placed and gone again at the same moment (its bind was refused)
            self._started.add(allocation.application_id)
            new_app = allocation.application_id not in started  # counts toward maxapplications now
            where = f"t={now:g}: after placing {allocation.display_name}"
            node = nodes.get(allocation.node_id)
            if node is not None and allocation.node_id not in resized_nodes:
                used = _sum(node["allocated"], node["occupied"])
                self._within(where, f"node {allocation.node_id}", used, node["capacity"], every_key=True)
            path = allocation.queue_path
            while path:
                queue = queues.get(path)
                if queue is not None:
                    self._within(where, f"queue {path}", queue["allocatedResource"], queue["maxResource"])
                    limit = queue["maxRunningApps"]
                    if limit and queue["runningApps"] > limit and new_app:
                        self.problems.append(f"{where}: queue {path} runs {queue['runningApps']} apps > max {limit}")
                path = path.rpartition(".")[0]
            quota = scheduler.quota_of(key)
            # A pod of the default or system quota placed later in this moment shrinks the tree's
            # pool, and so the runtimes this pod was admitted under: only the max still bounds it.
            runtime_bounds = not any(outside[index + 1 :])
            while quota and quota not in (DEFAULT_QUOTA, SYSTEM_QUOTA) and quota in quotas:
                doc = quotas[quota]
                self._within(where, f"quota {quota}", doc["used"], doc["max"])
                if runtime_bounds:
                    self._within(where, f"quota {quota} (runtime)", doc["used"], doc["runtime"])
                quota = doc["parent"]
            app = allocation.application_id
            user = users.get(allocation.ask.user.user) if allocation.ask is not None else None
            if user is not None:
                self._tracker(where, f"user {user['userName']}", user["queues"], allocation.queue_path, new_app)
                group = groups.get(user.get("groups", {}).get(app, ""))
                if group is not None:
                    self._tracker(where, f"group {group['groupName']}", group["queues"], allocation.queue_path, new_app)

    def _tracker(self, where: str, who: str, tree: Mapping[str, Any], queue_path: str, new_app: bool) -> None:
        for path, tracker in _tree(tree, "queuePath"):
            if not (queue_path == path or queue_path.startswith(path + ".")):
                continue
            self._within(where, f"{who} in {path}", tracker["resourceUsage"], tracker["maxResources"])
            limit = tracker["maxApplications"]
            running = len(tracker["runningApplications"])
            if limit and running > limit and new_app:
                self.problems.append(f"{where}: {who} in {path} runs {running} apps > max {limit}")

    def _within(
        self, where: str, what: str, used: Mapping[str, int], bound: Mapping[str, int], every_key: bool = False
    ) -> None:
        keys = set(used) if every_key else set(bound)
        over = {k: (used.get(k, 0), bound.get(k, 0)) for k in sorted(keys) if used.get(k, 0) > bound.get(k, 0)}
        if over:
            detail = ", ".join(f"{k} {u} > {b}" for k, (u, b) in over.items())
            self.problems.append(f"{where}: {what} above its bound: {detail}")

    # -- the end ------------------------------------------------------------------------------
    def finish(self) -> None:
        """Herder's view of each node is what the cluster's pods hold; every pending pod says why,
        and none still waits for preempted pods (the simulated cluster evicts at once)."""
        assert self.simulation is not None
        simulation = self.simulation
        scheduler, cluster = simulation.scheduler, simulation.cluster
        held: dict[str, dict[str, dict[str, int]]] = {}  # node -> herder | foreign -> resources
        for pod in cluster.by_key.values():
            if pod.live and pod.node is not None and pod.resource is not None:
                side = held.setdefault(pod.node, {}).setdefault("herder" if pod.herder else "foreign", {})
                for key, value in pod.resource.items():
                    side[key] = side.get(key, 0) + value
        resized = {pod.node for pod in cluster.by_key.values() if pod.key in self._resized}
        for node in simulation.scheduler.state_dump()["nodes"]:
            name = node["nodeID"]
            if name in resized or name not in cluster.used:
                continue
            pods = held.get(name, {})
            allocated = {k: v for k, v in node["allocated"].items() if v}
            if allocated != pods.get("herder", {}):
                self.problems.append(f"end: node {name}: Herder counts {allocated} placed, its pods hold {pods}")
            foreign = pods.get("foreign", {})
            if any(node["occupied"].get(k, 0) < v for k, v in foreign.items()):  # room held for preemptors aside
                self.problems.append(
                    f"end: node {name}: Herder counts {node['occupied']} occupied, its pods hold {pods}"
                )
        for pod in cluster.by_key.values():
            if not (pod.herder and pod.state == PENDING):
                continue
            reason = scheduler.pending_reason(pod.key) or pod.reason
            if not reason:
                self.problems.append(f"end: pending pod {pod.full_name} has no reason")
            elif "preempted pod" in reason:
                self.problems.append(f"end: pending pod {pod.full_name} waits for victims long gone: {reason}")


def _sum(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in set(a) | set(b)}


def _walk(doc: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    stack = [doc]
    while stack:
        item = stack.pop()
        yield item
        stack.extend(item.get("children") or ())


def _tree(doc: Mapping[str, Any], key: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for item in _walk(doc):
        yield str(item[key]), item
