"""The binder binds each placed pod exactly once, retries transient errors and hands failures back."""

from __future__ import annotations

import random
import threading

import pytest

from shim.kube.write.binder import FAILED, GONE, RETRY, Binder, BindPolicy, classify


class ApiError(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


class FlakyApiServer:
    """Accepts bindings like the API server, failing a share of them with 5xx or a timeout."""

    def __init__(self, failure_rate: float = 0.0, seed: int = 1) -> None:
        self.bound: dict[tuple[str, str], str] = {}
        self.posts: dict[tuple[str, str], int] = {}
        self._random = random.Random(seed)
        self._failure_rate = failure_rate
        self._lock = threading.Lock()

    def post_binding(self, namespace: str, name: str, node: str, key: str) -> None:
        with self._lock:
            self.posts[(namespace, name)] = self.posts.get((namespace, name), 0) + 1
            if self._random.random() < self._failure_rate:
                if self._random.random() < 0.5:
                    raise ApiError(503)
                raise TimeoutError("read timed out")
            if (namespace, name) in self.bound:
                raise ApiError(409)
            self.bound[(namespace, name)] = node


def make_binder(api: FlakyApiServer, pods: dict[str, tuple[str, str]], released: list[str]) -> Binder:
    return Binder(
        api.post_binding,
        pods.get,
        released.append,
        BindPolicy(workers=4, attempts=10, first_backoff=0.0),
        sleep=lambda _: None,
    )


def test_every_pod_is_bound_despite_20_percent_5xx_and_timeouts() -> None:
    api = FlakyApiServer(failure_rate=0.2)
    pods = {f"uid-{i}": ("team", f"pod-{i}") for i in range(200)}
    released: list[str] = []
    binder = make_binder(api, pods, released)
    for key in pods:
        assert binder.submit(key, "node-1")
    binder.shutdown()
    assert len(api.bound) == 200
    assert released == []
    assert any(count > 1 for count in api.posts.values())


def test_a_pod_is_never_bound_twice_even_when_submitted_twice() -> None:
    api = FlakyApiServer()
    pods = {"uid-1": ("team", "pod-1")}
    released: list[str] = []
    binder = make_binder(api, pods, released)
    assert binder.submit("uid-1", "node-1")
    assert not binder.submit("uid-1", "node-2")
    binder.shutdown()
    assert api.bound == {("team", "pod-1"): "node-1"}
    assert api.posts == {("team", "pod-1"): 1}


def test_already_bound_pod_is_released_back_to_the_core() -> None:
    api = FlakyApiServer()
    api.bound[("team", "pod-1")] = "elsewhere"
    released: list[str] = []
    binder = make_binder(api, {"uid-1": ("team", "pod-1")}, released)
    binder.submit("uid-1", "node-1")
    binder.shutdown()
    assert released == ["uid-1"]
    assert api.bound[("team", "pod-1")] == "elsewhere"


def test_vanished_pod_is_released_without_a_binding_post() -> None:
    api = FlakyApiServer()
    released: list[str] = []
    binder = make_binder(api, {}, released)
    binder.submit("uid-gone", "node-1")
    binder.shutdown()
    assert released == ["uid-gone"]
    assert api.posts == {}


def test_pod_is_released_when_retries_run_out() -> None:
    api = FlakyApiServer(failure_rate=1.0)
    released: list[str] = []
    binder = make_binder(api, {"uid-1": ("team", "pod-1")}, released)
    binder.submit("uid-1", "node-1")
    binder.shutdown()
    assert released == ["uid-1"]
    assert api.posts[("team", "pod-1")] == 10


def test_backoff_doubles_up_to_its_ceiling() -> None:
    api = FlakyApiServer(failure_rate=1.0)
    waits: list[float] = []
    binder = Binder(
        api.post_binding,
        {"uid-1": ("team", "pod-1")}.get,
        lambda _: None,
        BindPolicy(workers=1, attempts=6, first_backoff=0.5, max_backoff=3.0),
        sleep=waits.append,
    )
    binder.submit("uid-1", "node-1")
    binder.shutdown()
    assert waits == [0.5, 1.0, 2.0, 3.0, 3.0]


@pytest.mark.parametrize(
    ("error", "verdict"),
    [
        (ApiError(500), RETRY),
        (ApiError(503), RETRY),
        (ApiError(429), RETRY),
        (TimeoutError(), RETRY),
        (ConnectionResetError(), RETRY),
        (ApiError(404), GONE),
        (ApiError(409), GONE),
        (ApiError(403), FAILED),
        (ApiError(422), FAILED),
        (ValueError("bad node name"), FAILED),
    ],
)
def test_errors_are_classified_by_what_a_retry_could_change(error: BaseException, verdict: str) -> None:
    assert classify(error) == verdict


def test_bindings_beyond_the_workers_count_as_queued_until_posted() -> None:
    gate = threading.Event()
    posted: list[str] = []

    def post(namespace: str, name: str, node: str, key: str) -> None:
        gate.wait(10)
        posted.append(key)

    binder = Binder(post, lambda key: ("team", key), lambda key: None, BindPolicy(workers=2))
    for index in range(5):
        binder.submit(f"pod-{index}", "node-1")
    assert (binder.in_flight(), binder.queued()) == (5, 3)
    gate.set()
    binder.shutdown(timeout=10)
    assert (binder.queued(), len(posted)) == (0, 5)
