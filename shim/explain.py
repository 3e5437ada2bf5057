"""`herder explain POD`: why a pod waits and where it is in line, asked of a running Herder.

The answer comes from Herder's REST API (`/ws/v1/partition/default/explain?pod=`), either at
a URL (`--url`, default http://localhost:9080: a port-forward) or through the API server's
service proxy with a kubeconfig (`--kubeconfig`, `--namespace`, `--service`), so no port needs
forwarding. POD is `namespace/name` or the pod's uid.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from shim.command import EXIT_INVALID, EXIT_OK

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
    lines.append(f"  priority {doc['priority']}, user {doc['user']}")
    return "\n".join(lines)


def ask_url(base: str, pod: str) -> dict[str, Any]:
    url = base.rstrip("/") + PATH + "?" + urllib.parse.urlencode({"pod": pod})
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
            result: dict[str, Any] = json.load(response)
            return result
    except urllib.error.HTTPError as err:
        raise ExplainError(_error_text(err.read(), f"{url}: HTTP {err.code}")) from None
    except (urllib.error.URLError, OSError) as err:
        raise ExplainError(f"{url}: cannot reach Herder ({getattr(err, 'reason', err)})") from None


def ask_kubernetes(kubeconfig: str | None, namespace: str, service: str, pod: str) -> dict[str, Any]:
    """Through `/api/v1/namespaces/{namespace}/services/{service}/proxy/...`; the client's own
    proxy method would put the query into the path, so the request is built here."""
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
            raise ExplainError(_error_text(response.data or b"", f"{where}: HTTP {response.status}"))
        result: dict[str, Any] = json.loads(response.data)
        return result
    except ApiException as err:
        raise ExplainError(_error_text(err.body or b"", f"{where}: HTTP {err.status} {err.reason}")) from None
    except (OSError, ValueError) as err:
        raise ExplainError(f"{where}: {err}") from None


def _error_text(body: bytes | str, fallback: str) -> str:
    try:
        doc = json.loads(body)
        return f"{doc['message']}: {doc['description']}"
    except (ValueError, KeyError, TypeError):
        return fallback


def explain_command(args: argparse.Namespace) -> int:
    try:
        if args.kubeconfig is not None:
            doc = ask_kubernetes(args.kubeconfig or None, args.namespace, args.service, args.pod)
        else:
            doc = ask_url(args.url, args.pod)
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
    explain.add_argument("--namespace", default="herder-system", help="Herder's namespace (with --kubeconfig)")
    explain.add_argument("--service", default="herder:9080", help="Herder's service and port (with --kubeconfig)")
    explain.add_argument("--json", action="store_true", help="print the answer as JSON")
    explain.set_defaults(handler=explain_command)
