"""The pod and node watch: every event reaches Herder, in order, across broken and expired streams.

The reflector runs over real HTTP against the emulated API server; what it hands on is
recorded. The last test runs the whole operator through a watch that breaks and expires.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast

import pytest
from kubernetes import client

from shim.kube.calls import ApiCalls
from shim.kube.watch.listing import ClusterReader, PagedListing
from shim.kube.watch.reflector import Reflector, WatchTarget, WatchTiming, split_lines
from tests.kube.conftest import Cluster, eventually, herder_pod
from tests.kube.emulator import EmulatorServer, namespace_body, node_body
from tests.kube.emulator_api import PODS
from tests.kube.flaky_proxy import FlakyProxy

pytestmark = pytest.mark.timeout(60)


class Received:
    """What the reflector handed on, in order: ("apply" | "delete" | "relist", pod names)."""

    def __init__(self, refuse: str | None = None) -> None:
        self.lock = threading.Lock()
        self.log: list[tuple[str, str]] = []
        self.refuse = refuse

    def apply(self, pod: Mapping[str, Any]) -> None:
        name = pod["metadata"]["name"]
        if name == self.refuse:
            raise ValueError(f"cannot take {name}")
        with self.lock:
            self.log.append(("apply", name))

    def delete(self, pod: Mapping[str, Any]) -> None:
        with self.lock:
            self.log.append(("delete", pod["metadata"]["name"]))

    def relist(self, pods: list[dict[str, Any]], _began: float) -> None:
        with self.lock:
            self.log.append(("relist", ",".join(sorted(p["metadata"]["name"] for p in pods))))

    def has(self, entry: tuple[str, str]) -> bool:
        with self.lock:
            return entry in self.log

    def entries(self) -> list[tuple[str, str]]:
        with self.lock:
            return list(self.log)


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer() as running:
        client.CoreV1Api(running.api_client()).create_namespace(namespace_body("batch"))
        yield running


Watch = Callable[[Received], tuple[Reflector, client.CoreV1Api]]


@pytest.fixture
def watch(server: EmulatorServer) -> Iterator[Watch]:
    """Start a pod watch from a fresh listing, handing on to `received`; stopped after the test."""
    started: list[Reflector] = []

    def start(received: Received) -> tuple[Reflector, client.CoreV1Api]:
        api_client = server.api_client()
        reader = ClusterReader(api_client)
        target = WatchTarget(
            "pods", "/api/v1/pods", reader.pod_listing, received.apply, received.delete, received.relist
        )
        reflector = Reflector(api_client, target)
        started.append(reflector)
        _, version = reader.pod_listing()
        reflector.start(version)
        # The emulator replays current objects on connect instead of events since `version`; tests
        # that count events wait for the stream, and for kmock to subscribe it to new events.
        eventually(lambda: reflector.streams >= 1, "the watch to be open")
        time.sleep(0.1)
        return reflector, client.CoreV1Api(api_client)

    yield start
    for reflector in started:
        reflector.stop()


def pod_watches(server: EmulatorServer) -> list[dict[str, str]]:
    async def read() -> list[dict[str, str]]:
        return [query for plural, query in server.emulator.watches if plural == "pods"]

    return server.call(read)


def expire_and_end_pod_watches(server: EmulatorServer) -> None:
    """As after a compaction: every pod resourceVersion so far is gone, and the open watches end."""

    async def expire_and_end() -> None:
        server.emulator.expire_versions(PODS)
        await server.emulator.end_watches(PODS)

    server.call(expire_and_end)


def test_added_modified_and_deleted_pods_arrive_in_order(watch: Watch) -> None:
    received = Received()
    _, core = watch(received)
    core.create_namespaced_pod("batch", herder_pod("a"))
    core.patch_namespaced_pod("a", "batch", {"metadata": {"labels": {"step": "two"}}})
    core.delete_namespaced_pod("a", "batch")
    eventually(lambda: received.has(("delete", "a")), "the DELETED event for a")
    assert received.entries() == [("apply", "a"), ("apply", "a"), ("delete", "a")]


def test_a_broken_stream_resumes_from_the_last_version_seen(server: EmulatorServer, watch: Watch) -> None:
    received = Received()
    reflector, core = watch(received)
    created = core.create_namespaced_pod("batch", herder_pod("before"))
    eventually(lambda: received.has(("apply", "before")), "the pod created before the break")
    server.call(lambda: server.emulator.end_watches(PODS))
    eventually(lambda: len(pod_watches(server)) >= 2, "a second watch request")
    core.create_namespaced_pod("batch", herder_pod("after"))
    eventually(lambda: received.has(("apply", "after")), "the pod created after the break")
    first, second = pod_watches(server)[:2]
    assert second["resourceVersion"] == created.metadata.resource_version
    assert first["resourceVersion"] != second["resourceVersion"]
    assert second["allowWatchBookmarks"] == "true"
    assert reflector.relists == 0


def test_an_expired_version_lists_everything_again_and_the_watch_goes_on(server: EmulatorServer, watch: Watch) -> None:
    received = Received()
    reflector, core = watch(received)
    core.create_namespaced_pod("batch", herder_pod("kept"))
    eventually(lambda: received.has(("apply", "kept")), "the first pod")
    expire_and_end_pod_watches(server)
    eventually(lambda: received.has(("relist", "kept")), "a fresh listing after 410 Gone")
    core.create_namespaced_pod("batch", herder_pod("later"))
    eventually(lambda: received.has(("apply", "later")), "a pod created after the relisting")
    assert reflector.relists == 1


def test_a_server_refusing_every_version_is_not_hammered_with_listings(server: EmulatorServer, watch: Watch) -> None:
    received = Received()
    reflector, _ = watch(received)

    async def refuse_all() -> None:
        server.emulator.expired_before["pods"] = 10**9
        await server.emulator.end_watches(PODS)

    server.call(refuse_all)
    eventually(lambda: reflector.relists >= 1, "a listing after 410 Gone")
    time.sleep(1.2)
    # Pauses of 0.5 s then 1 s after each refused fresh listing; a spinning loop lists hundreds of times.
    assert reflector.relists <= 3


def test_an_object_herder_cannot_take_does_not_stall_the_stream(watch: Watch) -> None:
    received = Received(refuse="broken")
    reflector, core = watch(received)
    core.create_namespaced_pod("batch", herder_pod("broken"))
    core.create_namespaced_pod("batch", herder_pod("fine"))
    eventually(lambda: received.has(("apply", "fine")), "the pod after the one that failed")
    assert reflector.streams == 1  # the failure did not cost a reconnection (and a replay)


def test_stop_ends_a_quiet_stream_at_once(watch: Watch) -> None:
    reflector, _ = watch(Received())
    reflector.stop(timeout=10)
    assert reflector._thread is not None and not reflector._thread.is_alive()


def test_lines_are_whole_whatever_the_chunks() -> None:
    chunks = [b'{"a":', b"1}\n", b'{"b":2}\n{"c"', b":3}", b"", b"\n\n", b'{"d":4}']
    assert list(split_lines(iter(chunks))) == [b'{"a":1}', b'{"b":2}', b'{"c":3}', b'{"d":4}']


def test_the_operator_keeps_binding_after_its_pod_watch_broke_and_expired(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.create_namespace("batch")
    cluster.create_pods("batch", 2, cpu="1")
    cluster.all_bound("batch")
    expire_and_end_pod_watches(cluster.server)
    assert herder.operator is not None
    eventually(lambda: herder.operator is not None and herder.operator.pod_watch.relists == 1, "a relisting")
    cluster.create_pods("batch", 2, prefix="late", cpu="1")
    cluster.all_bound("batch")
    # The API shows every binding; the reflector learns of the last ones from the watch, a moment later.
    operator = herder.operator
    eventually(lambda: operator.pods.counts()["own"] == 4, "the bound pods seen through the new watch")
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{herder.operator.rest_port}/metrics").read().decode()
    assert 'herder_watch_restarts_total{reason="expired",resource="pods"} 1.0' in metrics


def test_a_listing_longer_than_a_page_arrives_page_by_page_whole_and_with_its_version(
    server: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shim.kube.watch import listing

    monkeypatch.setattr(listing, "PAGE", 7)
    core = client.CoreV1Api(server.api_client())
    for index in range(30):
        core.create_namespaced_pod("batch", herder_pod(f"p{index}"))
    reader = ClusterReader(server.api_client())
    pages = reader.pod_pages()
    sizes = [len(page) for page in pages]
    assert sizes == [7, 7, 7, 7, 2]
    names = sorted(pod["metadata"]["name"] for pod in reader.pods())
    assert names == sorted(f"p{index}" for index in range(30))
    assert pages.version == reader.pod_listing()[1] != ""


class _Calls:
    """Stands in for the API (shim/kube/calls.py): every GET answered by `get`."""

    def __init__(self, get: Callable[..., Any]) -> None:
        self.get = get


def _listing(get: Callable[..., Any]) -> PagedListing:
    return PagedListing(cast(ApiCalls, _Calls(get)), "/api/v1/pods", timeout=1)


def test_a_failed_page_is_raised_to_the_reader() -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise client.ApiException(status=500, reason="page lost")

    with pytest.raises(client.ApiException, match="page lost"):
        list(_listing(broken))


def _endless_listing(calls: list[int]) -> Callable[..., Any]:
    """A list call that always has a next page (one item each), counting its calls."""

    def endless(*_: Any, **__: Any) -> dict[str, Any]:
        calls.append(1)
        index = len(calls)
        return {"metadata": {"continue": f"c{index}"}, "items": [{"n": index}]}

    return endless


def test_a_reader_that_stops_early_lets_the_page_thread_end() -> None:
    calls: list[int] = []
    endless = _endless_listing(calls)
    listing = _listing(endless)
    for page in listing:
        assert page == [{"n": 1}]
        break  # a conversion failed: the sync gives up on this listing
    listing._reader.join(5)
    assert not listing._reader.is_alive()
    assert len(calls) <= 4  # the thread read at most a page or two ahead


def test_a_listing_started_early_and_given_up_before_it_is_read_ends_its_thread() -> None:
    """The start-up sync starts the pods' listing first and reads it last: a failure between
    (the node listing, say) closes it."""

    calls: list[int] = []
    endless = _endless_listing(calls)
    listing = _listing(endless).started()
    deadline = time.monotonic() + 5
    while len(calls) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(calls) == 3  # two pages wait to be read, the third is being handed over
    listing.close()
    listing._reader.join(5)
    assert not listing._reader.is_alive()


def test_a_quiet_watch_cut_again_and_again_reconnects_at_once_every_time(
    server: EmulatorServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A proxy drops the node watch's connection every fraction of a second; the stream had been
    served each time (open longer than `served_after`, here shortened), so it reconnects after the
    first pause, never drifting to the longest one (30 s before: a node seen up to 30 s late)."""
    caplog.set_level(logging.INFO, logger="herder.watch")
    received = Received()
    with FlakyProxy(server.url, every=(0.3, 0.5)) as proxy:
        api_client = server.api_client()
        api_client.configuration.host = proxy.url
        reader = ClusterReader(api_client)
        target = WatchTarget(
            "nodes", "/api/v1/nodes", reader.node_listing, received.apply, received.delete, received.relist
        )
        reflector = Reflector(api_client, target, WatchTiming(served_after=0.2))
        reflector.start(reader.node_listing()[1])
        try:
            eventually(lambda: reflector.cut >= 5, "five cuts of the node watch", timeout=30)
            client.CoreV1Api(server.api_client()).create_node(node_body("late"))
            eventually(lambda: received.has(("apply", "late")), "the node added after the cuts")
        finally:
            reflector.stop()
    pauses = [r.getMessage() for r in caplog.records if "again from resourceVersion" in r.getMessage()]
    assert pauses and all(message.endswith("in 0.5s") for message in pauses), pauses


def test_a_watch_that_cannot_be_opened_backs_off_up_to_its_cap(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="herder.watch")
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nothing listens there once closed
    config = client.Configuration()
    config.host = f"http://127.0.0.1:{port}"
    received = Received()
    target = WatchTarget("nodes", "/api/v1/nodes", lambda: ([], ""), received.apply, received.delete, received.relist)
    reflector = Reflector(client.ApiClient(config), target, WatchTiming(first_pause=0.1, max_pause=0.4))
    reflector.start("1")
    try:
        eventually(lambda: sum("broke" in r.getMessage() for r in caplog.records) >= 6, "six refused connections")
    finally:
        reflector.stop()
    pauses = [r.getMessage().rsplit(" in ", 1)[1] for r in caplog.records if "broke" in r.getMessage()]
    assert pauses[:5] == ["0.1s", "0.2s", "0.4s", "0.4s", "0.4s"], pauses
