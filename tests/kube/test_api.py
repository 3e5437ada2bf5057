"""Bindings and evictions reach the API server as the subresource POSTs Kubernetes expects."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from kubernetes import client

from shim.kube.api import KubeWriter


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
