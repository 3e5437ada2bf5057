"""Bindings and evictions reach the API server as the subresource POSTs Kubernetes expects."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from kubernetes import client

from shim.kube.write.api import KubeWriter
from tests.kube.emulator import EmulatorServer, namespace_body, node_body


class Recorder(BaseHTTPRequestHandler):
    requests: list[tuple[str, str, Any]] = []
    answer = 201

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Recorder.requests.append(("POST", self.path, body))
        self.send_response(Recorder.answer)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps({"kind": "Status", "code": Recorder.answer}).encode())

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def writer() -> Iterator[KubeWriter]:
    Recorder.requests = []
    Recorder.answer = 201
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    config = client.Configuration()
    config.host = f"http://127.0.0.1:{server.server_address[1]}"
    yield KubeWriter(client.ApiClient(config), timeout=5)
    server.shutdown()
    server.server_close()


def test_binding_posts_the_node_as_target_of_the_pods_binding(writer: KubeWriter) -> None:
    writer.post_binding("team", "web-1", "node-7")
    [(method, path, body)] = Recorder.requests
    assert (method, path) == ("POST", "/api/v1/namespaces/team/pods/web-1/binding")
    assert body["target"] == {"apiVersion": "v1", "kind": "Node", "name": "node-7"}


def test_eviction_posts_to_the_pods_eviction_subresource(writer: KubeWriter) -> None:
    writer.post_eviction("team", "web-1")
    [(method, path, body)] = Recorder.requests
    assert (method, path) == ("POST", "/api/v1/namespaces/team/pods/web-1/eviction")
    assert body["metadata"] == {"name": "web-1", "namespace": "team"}


def test_pdb_refusal_surfaces_as_status_429(writer: KubeWriter) -> None:
    Recorder.answer = 429
    with pytest.raises(client.ApiException) as refused:
        writer.post_eviction("team", "web-1")
    assert refused.value.status == 429


def test_binding_carries_the_pods_uid_as_precondition(writer: KubeWriter) -> None:
    writer.post_binding("team", "web-1", "node-7", uid="0b7c-uid")
    [(_, _, body)] = Recorder.requests
    assert body["metadata"] == {"name": "web-1", "namespace": "team", "uid": "0b7c-uid"}


def test_binding_refusal_surfaces_as_api_exception_with_status(writer: KubeWriter) -> None:
    Recorder.answer = 409
    with pytest.raises(client.ApiException) as refused:
        writer.post_binding("team", "web-1", "node-7", uid="0b7c-uid")
    assert refused.value.status == 409


def test_a_pod_recreated_under_the_same_name_never_receives_the_old_pods_binding() -> None:
    with EmulatorServer() as server:
        core = client.CoreV1Api(server.api_client())
        core.create_node(node_body("node-1"))
        core.create_namespace(namespace_body("team"))
        pod = {"metadata": {"name": "web-1"}, "spec": {"schedulerName": "herder", "containers": [{"name": "c"}]}}
        old_uid = core.create_namespaced_pod("team", pod).metadata.uid
        core.delete_namespaced_pod("web-1", "team")
        new_uid = core.create_namespaced_pod("team", pod).metadata.uid
        writer = KubeWriter(server.api_client(), timeout=5)

        with pytest.raises(client.ApiException) as stale:
            writer.post_binding("team", "web-1", "node-1", uid=old_uid)
        assert stale.value.status == 409
        assert core.read_namespaced_pod("web-1", "team").spec.node_name is None

        writer.post_binding("team", "web-1", "node-1", uid=new_uid)
        assert core.read_namespaced_pod("web-1", "team").spec.node_name == "node-1"
