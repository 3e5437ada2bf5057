"""Bindings over the binder's own kept-alive connections: TLS, credentials and dropped connections.

A local HTTP(S) server stands in for the API server's pods/binding endpoint and records what
arrives; trustme makes the certificate authority, as a cluster's would be.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import trustme
from kubernetes import client

from shim.kube.write import keepalive
from shim.kube.write.api import KubeWriter


class Bindings(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the API server
    seen: list[tuple[str, str | None, int]] = []  # (path, Authorization, client port)
    close_after_answer = False

    def do_POST(self) -> None:
        json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Bindings.seen.append((self.path, self.headers.get("Authorization"), self.client_address[1]))
        answer = json.dumps({"kind": "Status", "code": 201}).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)
        # A load balancer dropping an idle connection: closed without saying so in the answer.
        self.close_connection = Bindings.close_after_answer

    def log_message(self, *args: Any) -> None:
        return


class Server:
    def __init__(self, context: ssl.SSLContext | None = None) -> None:
        Bindings.seen = []
        Bindings.close_after_answer = False
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Bindings)
        if context is not None:
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.scheme = "https" if context is not None else "http"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def plain() -> Iterator[Server]:
    server = Server()
    yield server
    server.close()


def writer_for(url: str, **settings: Any) -> KubeWriter:
    config = client.Configuration()
    config.host = url
    for name, value in settings.items():
        setattr(config, name, value)
    return KubeWriter(client.ApiClient(config), timeout=5)


def test_bindings_share_one_connection_per_thread_and_carry_the_token(plain: Server) -> None:
    writer = writer_for(plain.url, api_key={"authorization": "secret"}, api_key_prefix={"authorization": "Bearer"})
    for name in ("a", "b", "c"):
        writer.post_binding("team", name, "node-1")
    assert [path for path, _, _ in Bindings.seen] == [f"/api/v1/namespaces/team/pods/{n}/binding" for n in "abc"]
    assert {auth for _, auth, _ in Bindings.seen} == {"Bearer secret"}
    assert len({port for _, _, port in Bindings.seen}) == 1


def test_a_connection_dropped_while_idle_is_replaced_before_the_next_binding(
    plain: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keepalive, "IDLE_CHECK", 0.0)
    writer = writer_for(plain.url)
    Bindings.close_after_answer = True
    writer.post_binding("team", "first", "node-1")
    time.sleep(0.2)  # the server's close reaches the client
    Bindings.close_after_answer = False
    writer.post_binding("team", "second", "node-1")  # no RemoteDisconnected, no retry needed
    assert [path.split("/")[-2] for path, _, _ in Bindings.seen] == ["first", "second"]
    assert Bindings.seen[0][2] != Bindings.seen[1][2]


def test_tls_is_verified_against_the_configured_ca(ca: trustme.CA, tmp_path: Path) -> None:
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_context)
    server = Server(server_context)
    try:
        ca_file = tmp_path / "ca.crt"
        ca.cert_pem.write_to_path(str(ca_file))
        writer_for(server.url, ssl_ca_cert=str(ca_file)).post_binding("team", "web", "node-1")
        assert len(Bindings.seen) == 1

        stranger = trustme.CA()
        stranger_file = tmp_path / "other-ca.crt"
        stranger.cert_pem.write_to_path(str(stranger_file))
        with pytest.raises(ssl.SSLCertVerificationError):
            writer_for(server.url, ssl_ca_cert=str(stranger_file)).post_binding("team", "web", "node-1")
        assert len(Bindings.seen) == 1
    finally:
        server.close()


def test_a_client_certificate_from_the_kubeconfig_is_presented(ca: trustme.CA, tmp_path: Path) -> None:
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_context)
    ca.configure_trust(server_context)
    server_context.verify_mode = ssl.CERT_REQUIRED  # as kind's API server, which knows users by certificate
    server = Server(server_context)
    try:
        ca_file, cert_file, key_file = tmp_path / "ca.crt", tmp_path / "user.crt", tmp_path / "user.key"
        ca.cert_pem.write_to_path(str(ca_file))
        user = ca.issue_cert("herder@example.com")
        user.cert_chain_pems[0].write_to_path(str(cert_file))
        user.private_key_pem.write_to_path(str(key_file))
        writer = writer_for(server.url, ssl_ca_cert=str(ca_file), cert_file=str(cert_file), key_file=str(key_file))
        writer.post_binding("team", "web", "node-1")
        assert len(Bindings.seen) == 1
    finally:
        server.close()


def test_a_proxy_keeps_the_kubernetes_clients_own_transport() -> None:
    config = client.Configuration()
    config.host = "https://api.example.com:6443"
    assert keepalive.usable(config)
    config.proxy = "http://proxy.example.com:3128"
    assert not keepalive.usable(config)


class Canned:
    """A TCP server that reads one request at a time and writes the next canned answer."""

    def __init__(self, answers: list[bytes]) -> None:
        import socket

        self.answers = answers
        self.requests: list[bytes] = []
        self.accepted = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while self.answers:
            conn, _ = self.listener.accept()
            self.accepted += 1
            with conn:
                while self.answers:
                    request = b""
                    while b"\r\n\r\n" not in request:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        request += chunk
                    if not request:
                        break
                    self.requests.append(request)
                    answer = self.answers.pop(0)
                    conn.sendall(answer)
                    if b"Connection: close" in answer or (b"Content-Length" not in answer and b"chunked" not in answer):
                        break


def test_chunked_close_delimited_and_error_answers_are_read_whole() -> None:
    server = Canned(
        [
            b'HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\n3\r\n:1}\r\n0\r\n\r\n',
            b"HTTP/1.1 409 Conflict\r\nContent-Length: 2\r\nContent-Type: application/json\r\n\r\n{}",
            b'HTTP/1.1 201 Created\r\nConnection: close\r\n\r\n{"done":true}',
            b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}",
        ]
    )
    config = client.Configuration()
    config.host = f"http://127.0.0.1:{server.port}"
    connections = keepalive.KeptAliveConnections(config, timeout=5)
    assert connections.post("/a", b"{}", {"Authorization": "Bearer t"}) == (201, "Created", b'{"a":1}')
    assert connections.post("/b", b"{}", {}) == (409, "Conflict", b"{}")
    assert connections.post("/c", b"{}", {}) == (201, "Created", b'{"done":true}')
    assert connections.post("/d", b"{}", {}) == (201, "Created", b"{}")  # on a new connection
    assert server.accepted == 2
    first = server.requests[0].decode()
    assert first.startswith("POST /a HTTP/1.1\r\n") and f"Host: 127.0.0.1:{server.port}\r\n" in first
    assert "Authorization: Bearer t\r\n" in first and first.endswith("\r\n\r\n{}")


def test_a_connection_closed_without_an_answer_is_a_network_error() -> None:
    server = Canned([b""])
    config = client.Configuration()
    config.host = f"http://127.0.0.1:{server.port}"
    with pytest.raises(ConnectionError):
        keepalive.KeptAliveConnections(config, timeout=5).post("/a", b"{}", {})
