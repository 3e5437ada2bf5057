"""The ports `herder run` serves on, taken before anything else.

`herder run` binds its REST port (and checks its webhook port is free) before it imports the
operator, connects to the API server or reads the ConfigMap: a port already taken is one line
and exit code 1 within a moment, not after the start-up work, and the replica never runs
without its probes. The REST server is started later on the socket bound here. This module
imports nothing but the standard library, so the check costs nothing before it.
"""

from __future__ import annotations

import socket

ANY_ADDRESS = "0.0.0.0"


class PortTaken(Exception):
    """A port cannot be bound; the message names the address and why."""


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port and listening (port 0: any free port); OSError when it
    cannot be bound."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp's own sites do
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def check_port_free(host: str, port: int) -> None:
    """OSError now if host:port cannot be bound (kopf binds the webhook port only later)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))


def rest_port_taken(host: str, port: int | None, error: OSError) -> str:
    return f"cannot serve the REST API on {host}:{port}: {error.strerror or error}"


def webhook_port_taken(port: int, error: OSError) -> str:
    return f"cannot listen for admission webhooks on port {port}: {error.strerror or error}"


def take_ports(rest_host: str, rest_port: int | None, webhook_port: int | None) -> socket.socket | None:
    """The REST socket bound (None when REST is off), after checking the webhook port is free;
    PortTaken naming the address when either is taken."""
    if webhook_port:
        try:
            check_port_free(ANY_ADDRESS, webhook_port)
        except OSError as error:
            raise PortTaken(webhook_port_taken(webhook_port, error)) from None
    if rest_port is None:
        return None
    try:
        return listen(rest_host, rest_port)
    except OSError as error:
        raise PortTaken(rest_port_taken(rest_host, rest_port, error)) from None
