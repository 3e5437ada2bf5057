"""`herder explain POD`: why a pod waits and where it is in line, asked of a running Herder.

The answer comes from Herder's REST API (`/ws/v1/partition/default/explain?pod=`), either at
a URL (`--url`, default http://localhost:9080: a port-forward) or through the API server's
service proxy with a kubeconfig (`--kubeconfig`, `--namespace`, `--service`), so no port needs
forwarding. POD is `namespace/name` or the pod's uid. A token-protected REST API gets its
bearer token from `--token-file`; the service proxy cannot carry one (the API server keeps
the Authorization header to itself), so that goes with `--url`. When Herder cannot be asked,
the message says what to try (the port-forward, `--url`, `--kubeconfig`, a token).
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from shim.command import EXIT_INVALID, EXIT_OK, EXIT_USAGE

DEFAULT_URL = "http://localhost:9080"
PATH = "/ws/v1/partition/default/explain"
TIMEOUT = 10.0


class ExplainError(Exception):
    """Herder could not be asked, or said no: the message says what and where."""


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def render(doc: dict[str, Any]) -> str:
    """The explanation in a few lines for people."""
    head = f"{doc['name']} (application {doc['applicationID']}, queue {doc['queueName'] or '-'})"
    if doc["state"] == "Placed":
        return f"{head}: placed on node {doc['nodeId']}"
    if doc["state"] == "NotQueued":
        return f"{head}: not in any queue yet\n  held by: {doc['blockedBy']}: {doc['reason']}"
    lines = [f"{head}: waiting, {_ordinal(doc['position'])} of {doc['waiting']} in its queue's line"]
    if doc["blockedBy"]:
        lines.append(f"  held by: {doc['blockedBy']}: {doc['reason']}")
    else:
        lines.append("  not tried yet: it is tried when its turn comes")
    reservation = doc.get("reservation")
    if reservation:
        frees = reservation.get("freesInSeconds")
        when = (
            f"it frees by about t+{frees:.0f} s (the activeDeadlineSeconds of the pods that must leave)"
            if frees is not None
            else "it frees as the pods there end (they set no activeDeadlineSeconds: no time is promised)"
        )
        lines.append(f"  node {reservation['nodeID']} is reserved for you; {when}")
    lines.append(f"  priority {doc['priority']}, user {doc['user']}")
    return "\n".join(lines)


def ask_url(base: str, pod: str, token: str | None = None) -> dict[str, Any]:
    """Herder's answer at `base`; with `token`, sent as `Authorization: Bearer`."""
    url = base.rstrip("/") + PATH + "?" + urllib.parse.urlencode({"pod": pod})
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            result: dict[str, Any] = json.load(response)
            return result
    except urllib.error.HTTPError as err:
        raise ExplainError(_error_text(err.read(), f"{url}: HTTP {err.code}") + _http_hint(err.code, token)) from None
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise ExplainError(f"{url}: cannot reach Herder ({reason}){_connection_hint(base, reason)}") from None


def _http_hint(status: int, token: str | None) -> str:
    if status != 401:
        return ""
    if token:
        return "; the token from --token-file was refused: is it the one in Herder's rest.tokenSecret?"
    return "; Herder's REST API wants a bearer token: give it with --token-file FILE (docs/security.md)"


def _connection_hint(base: str, reason: object) -> str:
    """What to try when nothing answered at `base`."""
    parsed = urllib.parse.urlsplit(base)
    where = f"{parsed.hostname}:{parsed.port or (443 if parsed.scheme == 'https' else 80)}"
    if isinstance(reason, ConnectionRefusedError):
        local = parsed.hostname in ("localhost", "127.0.0.1", "::1")
        forward = (
            f"\n  nothing listens on {where}: forward Herder's REST port there with"
            f" `kubectl -n herder-system port-forward svc/herder {parsed.port or 9080}`,"
            f" or serve a simulation with `herder simulate NAME --serve`;"
            if local
            else f"\n  nothing listens on {where};"
        )
        return forward + " or give Herder's address with --url, or go through the API server with --kubeconfig"
    if isinstance(reason, socket.gaierror):
        return f"\n  the name {parsed.hostname} does not resolve here: inside the cluster only? try --kubeconfig"
    if isinstance(reason, TimeoutError) or "timed out" in str(reason):
        return f"\n  no answer from {where} within {TIMEOUT:g} s: a firewall or NetworkPolicy may drop it"
    return ""


def ask_kubernetes(kubeconfig: str | None, namespace: str, service: str, pod: str) -> dict[str, Any]:
    """Through `/api/v1/namespaces/{namespace}/services/{service}/proxy/...`, authenticated to
    the API server with the kubeconfig's credentials (token, client certificate or exec plugin);
    the client's own proxy method would put the query into the path, so the request is built here."""
    from kubernetes import config
    from kubernetes.client.exceptions import ApiException

    try:
        api = config.new_client_from_config(config_file=kubeconfig)  # type: ignore[no-untyped-call]
    except Exception as err:  # the loader raises several kinds for a bad or missing file
        raise ExplainError(f"kubeconfig {kubeconfig or '(default)'}: {err}") from None
    where = f"service {namespace}/{service}"
    try:
        request = api.param_serialize(
            "GET",
            "/api/v1/namespaces/{namespace}/services/{name}/proxy" + PATH,
            path_params={"namespace": namespace, "name": service},
            query_params=[("pod", pod)],
            auth_settings=["BearerToken"],
        )
        response = api.call_api(*request, _request_timeout=TIMEOUT)
        response.read()
        if not 200 <= response.status < 300:
            body = response.data or b""
            text = _error_text(body, f"{where}: HTTP {response.status}")
            raise ExplainError(text + _proxy_hint(response.status, _from_herder(body), namespace, service))
        result: dict[str, Any] = json.loads(response.data)
        return result
    except ApiException as err:
        body = err.body or b""
        text = _error_text(body, f"{where}: HTTP {err.status} {err.reason}")
        raise ExplainError(text + _proxy_hint(err.status or 0, _from_herder(body), namespace, service)) from None
    except (OSError, ValueError) as err:
        host = api.configuration.host
        raise ExplainError(f"{where}: cannot reach the API server at {host} ({err})") from None


def _proxy_hint(status: int, herder: bool, namespace: str, service: str) -> str:
    """What to try after an error through the proxy; `herder`: Herder said it, not the API server."""
    if status == 401 and not herder:
        return "\n  the API server did not accept the kubeconfig's credentials (expired? `kubectl get ns` tells)"
    if status == 401:
        return (
            "\n  the API server keeps bearer tokens to itself: through its service proxy a token-protected"
            f" Herder answers 401. Forward the port (`kubectl -n {namespace} port-forward svc/{service.split(':')[0]}"
            " 9080`) and use --url with --token-file"
        )
    if status == 403:
        return f"\n  your kubeconfig's user may not `get services/proxy` in namespace {namespace} (RBAC)"
    if status == 404:
        return f"\n  is Herder installed as service {service} in namespace {namespace}? (--namespace, --service)"
    if status == 503:
        return "\n  the service has no ready Herder replica behind it"
    return ""


def _from_herder(body: bytes | str) -> bool:
    """Whether an error body is Herder's (YuniKorn's shape) rather than the API server's Status."""
    try:
        doc = json.loads(body)
    except (ValueError, TypeError):
        return False
    return isinstance(doc, dict) and "description" in doc and doc.get("kind") != "Status"


def _error_text(body: bytes | str, fallback: str) -> str:
    """Herder's error (`message: description`), the API server's Status message, or `fallback`."""
    try:
        doc = json.loads(body)
    except (ValueError, TypeError):
        return fallback
    if isinstance(doc, dict) and "message" in doc and "description" in doc:
        return f"{doc['message']}: {doc['description']}"
    if isinstance(doc, dict) and doc.get("kind") == "Status" and doc.get("message"):
        return f"{fallback}: {doc['message']}"
    return fallback


def read_token(path: str) -> str:
    """The bearer token in `path` (a mounted Secret's file, say), without surrounding white space."""
    try:
        token = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as err:
        raise ExplainError(f"cannot read the token file {path}: {getattr(err, 'strerror', None) or err}") from None
    if not token:
        raise ExplainError(f"the token file {path} is empty")
    return token


def explain_command(args: argparse.Namespace) -> int:
    token_file = getattr(args, "token_file", None)
    if token_file and args.kubeconfig is not None:
        print(
            "herder explain: --token-file goes with --url: the API server's service proxy does not pass a bearer"
            " token on to Herder (port-forward Herder's service and use --url)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        if args.kubeconfig is not None:
            doc = ask_kubernetes(args.kubeconfig or None, args.namespace, args.service, args.pod)
        else:
            doc = ask_url(args.url, args.pod, read_token(token_file) if token_file else None)
    except ExplainError as err:
        print(f"herder explain: {err}", file=sys.stderr)
        return EXIT_INVALID
    print(json.dumps(doc, indent=2) if args.json else render(doc))
    return EXIT_OK


def add_parser(commands: Any) -> None:
    explain = commands.add_parser("explain", help="why a pod waits and where it is in line (asks a running Herder)")
    explain.add_argument("pod", help="namespace/name or the pod's uid")
    explain.add_argument("--url", default=DEFAULT_URL, help=f"Herder's REST API (default {DEFAULT_URL})")
    explain.add_argument(
        "--kubeconfig",
        nargs="?",
        const="",
        default=None,
        metavar="PATH",
        help="go through the API server's service proxy (no PATH: the default kubeconfig)",
    )
    explain.add_argument(
        "--token-file",
        metavar="FILE",
        help="send the bearer token in FILE to Herder's REST API (when it requires one; with --url)",
    )
    explain.add_argument("--namespace", default="herder-system", help="Herder's namespace (with --kubeconfig)")
    explain.add_argument("--service", default="herder:9080", help="Herder's service and port (with --kubeconfig)")
    explain.add_argument("--json", action="store_true", help="print the answer as JSON")
    explain.set_defaults(handler=explain_command)
