"""Evictions go through the Eviction API; a PodDisruptionBudget refusal reaches the core."""

from __future__ import annotations

import threading

from shim.kube.write.evictor import Evictor


class ApiError(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


class EvictionApi:
    def __init__(self, protected: set[str], flaky: int = 0) -> None:
        self.protected = protected
        self.flaky = flaky
        self.evicted: list[str] = []
        self.posts = 0
        self._lock = threading.Lock()

    def post_eviction(self, namespace: str, name: str) -> None:
        with self._lock:
            self.posts += 1
            if self.flaky:
                self.flaky -= 1
                raise ApiError(500)
            if name in self.protected:
                raise ApiError(429)
            if name in self.evicted:
                raise ApiError(404)
            self.evicted.append(name)


PODS = {"uid-a": ("team", "a"), "uid-b": ("team", "b")}


def run(api: EvictionApi, keys: list[str]) -> list[tuple[str, str]]:
    failures: list[tuple[str, str]] = []
    evictor = Evictor(api.post_eviction, PODS.get, lambda k, r: failures.append((k, r)), sleep=lambda _: None)
    for key in keys:
        evictor.submit(key, "quota reclaim")
    evictor.shutdown()
    return failures


def test_pdb_refusal_is_reported_to_the_core_and_other_pods_are_evicted() -> None:
    api = EvictionApi(protected={"b"})
    failures = run(api, ["uid-a", "uid-b"])
    assert api.evicted == ["a"]
    assert failures == [("uid-b", "refused by a PodDisruptionBudget (429)")]


def test_server_errors_are_retried_before_giving_up() -> None:
    api = EvictionApi(protected=set(), flaky=2)
    assert run(api, ["uid-a"]) == []
    assert api.evicted == ["a"]
    assert api.posts == 3


def test_a_pod_already_gone_is_not_a_failure() -> None:
    api = EvictionApi(protected=set())
    api.evicted.append("a")
    assert run(api, ["uid-a"]) == []


def test_unknown_pod_makes_no_api_call() -> None:
    api = EvictionApi(protected=set())
    assert run(api, ["uid-unknown"]) == []
    assert api.posts == 0
