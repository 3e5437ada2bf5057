"""One kept-alive HTTP/1.1 connection per binder thread, for the pods/binding POSTs.

A binding is the one request Herder makes for every pod it places. Through urllib3 (the
kubernetes client's transport) one costs about 360 µs of CPU here; through the standard
library's `http.client` on a connection the thread keeps, about 180 µs, a third of it parsing
the answer's headers with the `email` package (docs/performance.md). So the exchange is done
here: the request written in one piece, the status line and the three headers that matter
(Content-Length, Transfer-Encoding, Connection) read from the socket's buffered reader.

The connection is set up as the kubernetes client would set up its own from the same
`Configuration`: CA file or data, client certificate, `verify_ssl`, and
`assert_hostname=False`; the caller adds the client's auth headers to every request, so
tokens are refreshed as before.

A connection that sat idle may have been closed by the server or a load balancer; it is
checked (a non-blocking readability poll) before reuse when it has been idle for a while, as
urllib3 does. Any error closes the connection: the next request opens a new one.

`usable(configuration)` is False for what this module does not handle (an HTTP or SOCKS
proxy, a TLS server name or hostname to assert other than the host's, socket options); the
writer then keeps the kubernetes client's transport.
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
import time
from typing import Any
from urllib.parse import urlsplit

IDLE_CHECK = 1.0  # seconds idle after which a connection is checked before it is reused


def usable(configuration: Any) -> bool:
    """Whether this transport can talk to the API server `configuration` describes."""
    scheme = urlsplit(str(configuration.host)).scheme
    return (
        scheme in ("http", "https")
        and not configuration.proxy
        and not getattr(configuration, "tls_server_name", None)
        and configuration.assert_hostname in (None, True, False)
        and configuration.socket_options is None
    )


def ssl_context(configuration: Any) -> ssl.SSLContext:
    """The TLS settings the kubernetes client gives urllib3, as an SSLContext."""
    cadata = getattr(configuration, "ca_cert_data", None)
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert or None, cadata=cadata or None)
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file or None)
    if not configuration.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif configuration.assert_hostname is False:
        context.check_hostname = False
    return context


MAX_LINE = 65536  # a status or header line longer than this is not an API server's answer
MAX_HEADERS = 100


class _Connection:
    """One HTTP/1.1 connection (TLS when https): a socket and its buffered reader."""

    def __init__(self, host: str, port: int, timeout: float, context: ssl.SSLContext | None) -> None:
        self._address = (host, port)
        self._host_header = host if ":" not in host else f"[{host}]"
        self._host_header += f":{port}"
        self._timeout = timeout
        self._context = context
        self._sock: socket.socket | None = None
        self._reader: Any = None

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
        if self._sock is not None:
            self._sock.close()
        self._sock = self._reader = None

    def dropped(self) -> bool:
        """An idle kept-alive socket that is readable has been closed by the other end (or is broken)."""
        if self._sock is None:
            return False
        try:
            readable, _, _ = select.select([self._sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def _open(self) -> None:
        sock = socket.create_connection(self._address, self._timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._context is not None:
            sock = self._context.wrap_socket(sock, server_hostname=self._address[0])
        self._sock, self._reader = sock, sock.makefile("rb")

    def exchange(self, method: str, target: str, body: bytes, headers: dict[str, str]) -> tuple[int, str, bytes]:
        """Send one request and read its whole answer: (status, reason, body)."""
        if self._sock is None:
            self._open()
        assert self._sock is not None
        head = f"{method} {target} HTTP/1.1\r\nHost: {self._host_header}\r\nContent-Length: {len(body)}\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self._sock.sendall(head.encode("latin-1") + b"\r\n" + body)
        status, reason, version = self._status_line()
        while 100 <= status < 200:  # an interim answer (none is asked for); the real one follows
            self._header_fields()
            status, reason, version = self._status_line()
        fields = self._header_fields()
        data, until_close = self._body(fields, status)
        if until_close or version != "HTTP/1.1" or fields.get("connection", "").lower() == "close":
            self.close()
        return status, reason, data

    def _line(self) -> bytes:
        line: bytes = self._reader.readline(MAX_LINE + 1)
        if not line:
            raise ConnectionResetError("the API server closed the connection without an answer")
        if len(line) > MAX_LINE:
            raise ConnectionError("an answer line longer than 64 KiB")
        return line

    def _status_line(self) -> tuple[int, str, str]:
        parts = self._line().decode("latin-1").rstrip("\r\n").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            raise ConnectionError(f"not an HTTP answer: {' '.join(parts)[:80]!r}")
        return int(parts[1]), parts[2] if len(parts) > 2 else "", parts[0]

    def _header_fields(self) -> dict[str, str]:
        fields: dict[str, str] = {}
        for _ in range(MAX_HEADERS + 1):
            line = self._line()
            if line in (b"\r\n", b"\n"):
                return fields
            name, _, value = line.decode("latin-1").partition(":")
            fields[name.strip().lower()] = value.strip()
        raise ConnectionError(f"more than {MAX_HEADERS} header fields in an answer")

    def _body(self, fields: dict[str, str], status: int) -> tuple[bytes, bool]:
        """The answer's body, and whether it ran to the connection's end (which is then spent)."""
        if status in (204, 304):
            return b"", False
        if "chunked" in fields.get("transfer-encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self._line().split(b";", 1)[0].strip(), 16)
                if size == 0:
                    while self._line() not in (b"\r\n", b"\n"):  # trailer fields
                        pass
                    return b"".join(chunks), False
                chunks.append(self._exactly(size))
                self._line()  # the CRLF after the chunk
        length = fields.get("content-length")
        if length is not None:
            return self._exactly(int(length)), False
        return bytes(self._reader.read()), True

    def _exactly(self, size: int) -> bytes:
        data: bytes = self._reader.read(size)
        if len(data) != size:
            raise ConnectionResetError(f"the answer ended after {len(data)} of {size} bytes")
        return data


class KeptAliveConnections:
    def __init__(self, configuration: Any, timeout: float) -> None:
        url = urlsplit(str(configuration.host))
        self._https = url.scheme == "https"
        self._host = url.hostname or "localhost"
        self._port = url.port or (443 if self._https else 80)
        self._prefix = url.path.rstrip("/")
        self._timeout = timeout
        self._context = ssl_context(configuration) if self._https else None
        self._local = threading.local()

    def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, str, bytes]:
        """POST `body` to `path` on this thread's connection; (status, reason, whole answer)."""
        connection = self._connection()
        try:
            answer = connection.exchange("POST", self._prefix + path, body, headers)
        except BaseException:
            connection.close()
            raise
        self._local.used = time.monotonic()
        return answer

    def _connection(self) -> _Connection:
        connection: _Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = _Connection(self._host, self._port, self._timeout, self._context)
            self._local.connection = connection
            self._local.used = time.monotonic()
        elif time.monotonic() - self._local.used > IDLE_CHECK and connection.dropped():
            connection.close()  # opened again by the next request
        return connection
