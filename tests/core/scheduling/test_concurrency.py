"""Inputs arrive from many threads while the cycle runs (the operator's watch threads, the
binder's workers, the recycler): nothing is lost, double-counted or deadlocked."""

from __future__ import annotations

import queue
import threading

from core.config.settings import Settings
from core.objects.ask import Allocation
from tests.core.scheduling.world import World

CONFIG = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: a
            resources: {max: {vcore: 6}}
            limits: [{limit: per user, users: ['*'], maxresources: {vcore: 4}}]
          - name: b
"""

PODS_PER_SUBMITTER = 60


def test_concurrent_inputs_and_cycles_keep_every_tracker_exact() -> None:
    world = World(CONFIG, settings=Settings(recycle_delay=0.0))
    for i in range(3):
        world.node(f"n{i}", cpu=4, memory="16Gi", pods=20)
    world.quota("team", namespace="team", min={"cpu": 2}, max={"cpu": 5})
    bound: queue.Queue[Allocation] = queue.Queue()
    world.out.on_bind = bound.put
    stop = threading.Event()
    errors: list[BaseException] = []

    def guarded(work: object) -> threading.Thread:
        def run() -> None:
            try:
                work()  # type: ignore[operator]
            except BaseException as err:  # surfaced by the assertion below
                errors.append(err)

        return threading.Thread(target=run)

    def submit(prefix: str, queue_path: str, namespace: str) -> None:
        for i in range(PODS_PER_SUBMITTER):
            ask = world.ask(
                f"{prefix}{i}",
                queue=queue_path,
                namespace=namespace,
                user=f"user{i % 3}",
                app=f"{prefix}{i % 5}-user{i % 3}",  # an application is one user's
            )
            world.sched.add_ask(ask)

    def cycles() -> None:
        while not stop.is_set():
            world.sched.schedule(now=0.0)
            world.sched.recycle(now=1.0)
            world.sched.wait_for_work(0.001)

    def finisher() -> None:
        done = 0
        while done < 3 * PODS_PER_SUBMITTER:
            allocation = bound.get(timeout=30)
            world.sched.release_allocation(allocation.key)  # the pod ended (or its bind failed)
            done += 1

    threads = [
        guarded(lambda: submit("a", "root.a", "team")),
        guarded(lambda: submit("b", "root.b", "free")),
        guarded(lambda: submit("c", "root.b", "team")),
        guarded(cycles),
        guarded(finisher),
    ]
    for thread in threads:
        thread.start()
    threads[-1].join(timeout=120)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
        assert not thread.is_alive(), "a thread is stuck: deadlock?"
    assert errors == []
    assert len(world.out.binds) == 3 * PODS_PER_SUBMITTER  # every pod placed exactly once
    assert len({a.key for a in world.out.binds}) == 3 * PODS_PER_SUBMITTER
    world.schedule(advance=60.0)
    snapshot = world.usage_snapshot()
    assert all(usage == ({}, 0) for usage in snapshot["queues"].values()), snapshot["queues"]
    assert all(node == ({}, {}) for node in snapshot["nodes"].values())
    assert snapshot["users"] == [] and snapshot["groups"] == []
    assert all(used == {} for used in snapshot["quotas"].values())
