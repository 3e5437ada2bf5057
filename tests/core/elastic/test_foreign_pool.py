"""Foreign pods take their room out of the elastic quota pool while they run and give it back when
they go, so a quota never borrows what another scheduler's pods occupy."""

from __future__ import annotations

from tests.core.scheduling.world import World


def _runtime_cpu(world: World, name: str) -> int:
    docs = {doc["name"]: doc for doc in world.sched.quotas_document()}
    return int(docs[name]["runtime"].get("vcore", 0))


def test_foreign_pods_shrink_the_pool_and_give_it_back_when_they_go() -> None:
    world = World()
    world.node("n1", cpu=8, memory="64Gi")
    world.quota("team", min={"cpu": 0}, max={"cpu": 8})
    world.pods(8, prefix="t", namespace="team", memory="1Mi")  # team asks for the whole node
    assert _runtime_cpu(world, "team") == 8000

    world.foreign("daemon-a", "n1", cpu=2, memory="1Mi")
    world.foreign("daemon-b", "n1", cpu=1, memory="1Mi")
    assert _runtime_cpu(world, "team") == 5000
    assert len(world.schedule()) == 5

    world.finish("daemon-a")
    assert _runtime_cpu(world, "team") == 7000
    world.finish("daemon-b")
    assert _runtime_cpu(world, "team") == 8000
    assert len(world.schedule()) == 3
