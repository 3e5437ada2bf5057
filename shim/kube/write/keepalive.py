"""One kept-alive HTTP/1.1 connection per binder thread, for the pods/binding POSTs.

A binding is the one request Herder makes for every pod it places. Through urllib3 (the
kubernetes client's transport) one costs about 360 µs of CPU here; straight through the
standard library's `http.client` on a connection the thread keeps, about 180 µs
(docs/performance.md). The connection is set up as the kubernetes client would set up its own
from the same `Configuration`: CA file or data, client certificate, `verify_ssl`, and
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

import http.client
import select
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


def _dropped(connection: http.client.HTTPConnection) -> bool:
    """An idle kept-alive socket that is readable has been closed by the other end (or is broken)."""
    sock = connection.sock
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class KeptAliveConnections:
    def __init__(self, configuration: Any, timeout: float) -> None:
        url = urlsplit(str(configuration.host))
        self._https = url.scheme == "https"
        self._host = url.hostname or "localhost"
        self._port = url.port
        self._prefix = url.path.rstrip("/")
        self._timeout = timeout
        self._context = ssl_context(configuration) if self._https else None
        self._local = threading.local()

    def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, str, bytes]:
        """POST `body` to `path` on this thread's connection; (status, reason, whole answer)."""
        connection = self._connection()
        try:
            connection.request("POST", self._prefix + path, body, headers)
            response = connection.getresponse()
            data = response.read()
        except BaseException:
            connection.close()
            raise
        if response.will_close:
            connection.close()
        self._local.used = time.monotonic()
        return response.status, response.reason, data

    def _connection(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            if self._https:
                connection = http.client.HTTPSConnection(
                    self._host, self._port, timeout=self._timeout, context=self._context
                )
            else:
                connection = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
            self._local.connection = connection
            self._local.used = time.monotonic()
        elif time.monotonic() - self._local.used > IDLE_CHECK and _dropped(connection):
            connection.close()  # http.client opens it again on the next request
        return connection
