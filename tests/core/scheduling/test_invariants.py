"""Invariants that must hold whatever happens, checked on random worlds (Hypothesis).

Random clusters and queue trees with maxima, user limits and elastic quotas; pods arrive, binds
fail at random, pods finish or are withdrawn, nodes come and go, foreign pods take room, the
recycler takes borrowed capacity back. After every step:

- no node is overcommitted: allocated + foreign occupied <= capacity, per resource;
- no queue uses more than its max (root: the cluster), along every path;
- every queue's allocated is the sum of the allocations in it, every node's the sum of its pods,
  and user and quota usage are the sums of their pods';

and when every pod has ended, every tracker (queues, nodes, users, groups, quotas) is back to zero.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from core.config.settings import Settings
from core.objects.ask import Allocation
from tests.core.scheduling.world import World, res

NAMESPACES = ("ns0", "ns1", "free")  # ns0/ns1 may have an elastic quota; free uses the default one
USERS = (("u0", ("g0",)), ("u1", ("g0", "g1")), ("u2", ()))
SIZES = st.sampled_from([(0.5, "256Mi"), (1, "1Gi"), (2, "512Mi"), (3, "2Gi")])


@st.composite
def queue_trees(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A queues.yaml with maxima along the paths (children within their parent) and its leaves."""
    leaves: list[str] = []
    lines = [
        "partitions:",
        "  - name: default",
        "    placementrules: [{name: provided}]",
        "    queues:",
        "      - name: root",
        "        submitacl: '*'",
        "        queues:",
    ]
    for i in range(draw(st.integers(1, 3))):
        top_max = draw(st.none() | st.integers(1, 10))
        lines.append(f"          - name: q{i}")
        if top_max is not None:
            lines.append(f"            resources: {{max: {{vcore: {top_max}}}}}")
        if draw(st.booleans()):
            lines.append("            queues:")
            for j in range(draw(st.integers(1, 2))):
                child_max = draw(st.none() | st.integers(1, top_max or 10))
                lines.append(f"              - name: c{j}")
                if child_max is not None:
                    lines.append(f"                resources: {{max: {{vcore: {child_max}}}}}")
                leaves.append(f"root.q{i}.c{j}")
        else:
            apps = draw(st.integers(0, 3))
            if apps:
                lines.append(f"            maxapplications: {apps}")
            user_max = draw(st.none() | st.integers(1, top_max or 10))
            if user_max is not None:
                lines.append(f"            limits: [{{limit: u0, users: [u0], maxresources: {{vcore: {user_max}}}}}]")
            leaves.append(f"root.q{i}")
    return "\n".join(lines) + "\n", leaves


def _add(total: dict[str, int], res: Mapping[str, int]) -> None:
    for key, val in res.items():
        total[key] = total.get(key, 0) + val


def _nonzero(res: Mapping[str, int]) -> dict[str, int]:
    return {k: v for k, v in res.items() if v}


def _queues(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield doc
    for child in doc["children"]:
        yield from _queues(child)


class SchedulingMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.world: World
        self.leaves: list[str] = []
        self.pending: set[str] = set()
        self.running: set[str] = set()
        self.foreign: dict[str, str] = {}
        self.failures: list[bool] = []
        self.serial = 0
        self.reconfigured = False

    @initialize(
        tree=queue_trees(),
        nodes=st.lists(
            st.tuples(st.integers(1, 8), st.sampled_from(["2Gi", "8Gi"]), st.integers(2, 6)), min_size=1, max_size=3
        ),
        quotas=st.lists(st.tuples(st.integers(0, 3), st.integers(3, 8)), min_size=1, max_size=2),
    )
    def build(
        self, tree: tuple[str, list[str]], nodes: list[tuple[int, str, int]], quotas: list[tuple[int, int]]
    ) -> None:
        config, self.leaves = tree
        self.world = World(config, settings=Settings(recycle_delay=10.0))
        self.world.out.on_bind = self._bound
        for i, (cpu, memory, pods) in enumerate(nodes):
            self.world.node(f"n{i}", cpu=cpu, memory=memory, pods=pods)
        for i, (low, high) in enumerate(quotas):
            self.world.quota(f"ns{i}", min={"cpu": low}, max={"cpu": high})

    def _bound(self, allocation: Allocation) -> None:
        self.pending.discard(allocation.key)
        if self.failures and self.failures.pop():
            self.world.sched.release_allocation(allocation.key)  # the bind failed; the pod is gone
        else:
            self.running.add(allocation.key)

    # -- what happens --------------------------------------------------------------------
    @rule(
        leaf=st.integers(0, 5),
        namespace=st.sampled_from(NAMESPACES),
        who=st.sampled_from(USERS),
        app=st.integers(0, 3),
        size=SIZES,
        priority=st.integers(0, 3),
        preemptible=st.booleans(),
        count=st.integers(1, 4),
    )
    def submit(
        self,
        leaf: int,
        namespace: str,
        who: tuple[str, tuple[str, ...]],
        app: int,
        size: tuple[float, str],
        priority: int,
        preemptible: bool,
        count: int,
    ) -> None:
        for _ in range(count):
            self.serial += 1
            name = f"p{self.serial}"
            self.world.pod(
                name,
                queue=self.leaves[leaf % len(self.leaves)],
                namespace=namespace,
                user=who[0],
                groups=who[1],
                app=f"{namespace}-app{app}",
                cpu=size[0],
                memory=size[1],
                priority=priority,
                preemptible=preemptible or namespace == "free",
            )
            self.pending.add(name)

    @rule(failures=st.lists(st.booleans(), max_size=4), advance=st.sampled_from([0.0, 1.0, 31.0]))
    def schedule(self, failures: list[bool], advance: float) -> None:
        self.failures = failures
        self.world.schedule(advance=advance)
        self.failures = []

    @precondition(lambda self: self.running)
    @rule(pick=st.integers(0, 1000))
    def finish(self, pick: int) -> None:
        name = sorted(self.running)[pick % len(self.running)]
        self.running.discard(name)
        self.world.finish(name)

    @precondition(lambda self: self.pending)
    @rule(pick=st.integers(0, 1000))
    def withdraw(self, pick: int) -> None:
        name = sorted(self.pending)[pick % len(self.pending)]
        self.pending.discard(name)
        self.world.sched.remove_ask(name)

    @rule(cpu=st.integers(1, 8), pods=st.integers(2, 6))
    def add_node(self, cpu: int, pods: int) -> None:
        self.serial += 1
        self.world.node(f"added{self.serial}", cpu=cpu, memory="8Gi", pods=pods)

    @rule(pick=st.integers(0, 1000))
    def remove_node(self, pick: int) -> None:
        nodes = sorted(n["nodeID"] for n in self.world.sched.nodes_document())
        if not nodes:
            return
        name = nodes[pick % len(nodes)]
        gone = {a["allocationKey"] for a in self.world.node_doc(name)["allocations"]}
        self.world.sched.remove_node(name)
        self.running -= gone
        self.foreign = {k: n for k, n in self.foreign.items() if n != name}

    @rule(pick=st.integers(0, 1000), size=SIZES)
    def foreign_pod(self, pick: int, size: tuple[float, str]) -> None:
        docs = self.world.sched.nodes_document()
        request = res(size[0], size[1], 1)
        fitting = [d["nodeID"] for d in docs if request.fits_in(d["available"])]
        if not fitting:
            return
        self.serial += 1
        node = fitting[pick % len(fitting)]
        self.world.foreign(f"f{self.serial}", node, cpu=size[0], memory=size[1])
        self.foreign[f"f{self.serial}"] = node

    @precondition(lambda self: self.foreign)
    @rule(pick=st.integers(0, 1000))
    def foreign_ends(self, pick: int) -> None:
        name = sorted(self.foreign)[pick % len(self.foreign)]
        del self.foreign[name]
        self.world.finish(name)

    @rule(tree=queue_trees())
    def reconfigure(self, tree: tuple[str, list[str]]) -> None:
        config, self.leaves = tree
        self.world.configure(config)
        self.reconfigured = True  # a lowered max may now sit below what already runs

    @rule()
    def recycle(self) -> None:
        self.world.now += 11.0
        self.world.sched.recycle()

    @rule(refuse=st.lists(st.booleans(), max_size=4))
    def evictions_answered(self, refuse: list[bool]) -> None:
        """The shim evicts what was asked (recycling, preemption), or a PDB refuses some."""
        asked, self.world.out.evictions = self.world.out.evictions, []
        for allocation, _ in asked:
            if allocation.key not in self.running:
                continue
            if refuse and refuse.pop():
                self.world.sched.eviction_failed(allocation.key, "PodDisruptionBudget")
            else:
                self.running.discard(allocation.key)
                self.world.finish(allocation.key)

    # -- what must hold ------------------------------------------------------------------
    @invariant()
    def nodes_are_never_overcommitted(self) -> None:
        for node in self.world.sched.nodes_document():
            used: dict[str, int] = {}
            _add(used, node["allocated"])
            _add(used, node["occupied"])
            for key, amount in used.items():
                assert amount <= node["capacity"].get(key, 0), (node["nodeID"], key, used, node["capacity"])

    @invariant()
    def no_queue_exceeds_its_max(self) -> None:
        if self.reconfigured:
            return
        for queue in _queues(self.world.sched.queues_document()):
            for key, cap in queue["maxResource"].items():
                assert queue["allocatedResource"].get(key, 0) <= cap, (queue["queuename"], key)

    @invariant()
    def usage_is_the_sum_of_the_pods(self) -> None:
        dump = self.world.sched.state_dump()
        apps = [a for a in dump["applications"] if a["allocations"]]
        for queue in _queues(dump["queues"]):
            path = queue["queuename"]
            inside = [a for a in apps if a["queueName"] == path or a["queueName"].startswith(path + ".")]
            total: dict[str, int] = {}
            for app in inside:
                for allocation in app["allocations"]:
                    _add(total, allocation["resource"])
            assert queue["allocatedResource"] == _nonzero(total), path
            assert queue["runningApps"] == len(inside), path
        for node in dump["nodes"]:
            own: dict[str, int] = {}
            other: dict[str, int] = {}
            for allocation in node["allocations"]:
                _add(own, allocation["resource"])
            for allocation in node["foreignAllocations"]:
                _add(other, allocation["resource"])
            assert _nonzero(node["allocated"]) == _nonzero(own) and _nonzero(node["occupied"]) == _nonzero(other)
        by_user: dict[str, dict[str, int]] = {}
        by_quota: dict[str, dict[str, int]] = {}
        for app in apps:
            for allocation in app["allocations"]:
                _add(by_user.setdefault(app["user"], {}), allocation["resource"])
                quota = self.world.sched.quota_of(allocation["allocationKey"]) or "?"
                _add(by_quota.setdefault(quota, {}), allocation["resource"])
        users = {u["userName"]: _nonzero(u["queues"]["resourceUsage"]) for u in dump["usage"]["users"]}
        assert users == {name: _nonzero(used) for name, used in by_user.items()}
        for name, status in self.world.sched.quota_status().items():
            expected = _nonzero(by_quota.get(name, {}))
            if status.max:
                expected = {k: v for k, v in expected.items() if k in status.max}
            assert status.used.without_zeros().to_dict() == expected, name
        assert set(self.running) == {a["allocationKey"] for n in dump["nodes"] for a in n["allocations"]}

    def teardown(self) -> None:
        if not hasattr(self, "world"):
            return
        world = self.world
        for name in sorted(self.running):
            world.finish(name)
        for name in sorted(self.pending):
            world.sched.remove_ask(name)
        for name in sorted(self.foreign):
            world.finish(name)
        world.schedule(advance=60.0)  # completing applications complete
        snapshot = world.usage_snapshot()
        assert all(usage == ({}, 0) for usage in snapshot["queues"].values()), snapshot["queues"]
        assert all(node == ({}, {}) for node in snapshot["nodes"].values()), snapshot["nodes"]
        assert snapshot["users"] == [] and snapshot["groups"] == []
        assert all(used == {} for used in snapshot["quotas"].values()), snapshot["quotas"]
        for queue in _queues(world.sched.queues_document()):
            assert queue["pendingResource"] == {}, queue["queuename"]
        for status in world.sched.quota_status().values():
            assert status.request.without_zeros().to_dict() == {}
        assert world.sched.partitions_document()[0]["pendingRequests"] == 0


TestScheduling = SchedulingMachine.TestCase
TestScheduling.settings = settings(max_examples=80, stateful_step_count=25, deadline=None)
