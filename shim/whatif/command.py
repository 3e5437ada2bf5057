"""`herder snapshot` and `herder trace`: the commands that turn a live cluster or its history into
input for `herder simulate`.

    herder snapshot [--kubeconfig FILE] [--context C] [--namespace NS] [--config-map NAME]
                    [--url URL [--token-file FILE]] [--duration S] [--namespace-duration NS=S]
                    [--no-deadlines] [--anonymize] [--out FILE]
    herder trace --from-pods PODS.json [--out FILE]

Exit codes as everywhere: 0 done, 1 the input cannot be used, 2 a usage problem (a file or
the cluster cannot be read).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from shim.command import EXIT_INVALID, EXIT_OK, EXIT_USAGE, read_user_text
from shim.whatif.snapshot import ClusterObjects, Durations, scenario_document

STATE_DUMP = "/ws/v1/fullstatedump"
TIMEOUT = 60.0
MAX_HISTORY_BYTES = 512 * 1024 * 1024


class SnapshotError(Exception):
    """The cluster or Herder could not be read; the message says which and why."""


def add_parsers(commands: Any) -> None:
    snapshot = commands.add_parser(
        "snapshot",
        help="write the live cluster as a scenario for herder simulate (read only)",
        description="Capture the cluster now as a scenario: nodes, namespaces, quotas, priority classes, "
        "storage objects and PDBs, the scheduler ConfigMap and every pod that has not ended.",
    )
    snapshot.add_argument("--kubeconfig", help="read the API server with this kubeconfig (default: ~/.kube/config)")
    snapshot.add_argument("--context", help="kubeconfig context")
    snapshot.add_argument("--namespace", default="herder-system", help="where the scheduler ConfigMap lives")
    snapshot.add_argument("--config-map", default="herder-config", help="the scheduler ConfigMap's name")
    snapshot.add_argument("--url", help="read a running Herder's REST state dump instead (e.g. http://localhost:9080)")
    snapshot.add_argument("--token-file", help="with --url: a bearer token for Herder's REST API")
    snapshot.add_argument(
        "--duration",
        type=float,
        metavar="SECONDS",
        help="how long a pod runs when nothing else says (default: to the end)",
    )
    snapshot.add_argument(
        "--namespace-duration",
        action="append",
        default=[],
        metavar="NS=SECONDS",
        help="how long the pods of a namespace run (repeatable)",
    )
    snapshot.add_argument(
        "--no-deadlines", action="store_true", help="ignore pods' activeDeadlineSeconds when setting durations"
    )
    snapshot.add_argument("--anonymize", action="store_true", help="replace names of namespaces, users, pods, apps")
    snapshot.add_argument("--out", metavar="FILE", help="write the scenario here (default: standard output)")
    snapshot.set_defaults(handler=snapshot_command)

    trace = commands.add_parser(
        "trace", help="turn `kubectl get pods -A -o json` into a workload trace (CSV) to replay"
    )
    trace.add_argument("--from-pods", required=True, metavar="PODS.json", help="kubectl get pods -A -o json output")
    trace.add_argument("--out", metavar="FILE", help="write the trace here (default: standard output)")
    trace.set_defaults(handler=trace_command)


def _durations(args: argparse.Namespace) -> Durations:
    per_namespace: dict[str, float] = {}
    for item in args.namespace_duration:
        name, sep, value = item.partition("=")
        try:
            seconds = float(value)
        except ValueError:
            seconds = -1.0
        if not sep or not name or not seconds > 0:
            raise ValueError(f"--namespace-duration {item!r}: expected NAMESPACE=SECONDS, e.g. batch=3600")
        per_namespace[name] = seconds
    if args.duration is not None and not args.duration > 0:
        raise ValueError(f"--duration {args.duration:g}: must be a positive number of seconds")
    return Durations(default=args.duration, per_namespace=per_namespace, use_deadline=not args.no_deadlines)


def _from_kubernetes(args: argparse.Namespace, now: float) -> ClusterObjects:
    from kubernetes import client, config

    from shim.whatif.sources import from_api_server

    try:
        api = config.new_client_from_config(config_file=args.kubeconfig, context=args.context)  # type: ignore[no-untyped-call]
    except Exception as err:  # the loader raises several kinds for a bad or missing file
        raise SnapshotError(f"cannot load kubeconfig {args.kubeconfig or '(default)'}: {err}") from None
    where = f"the API server at {api.configuration.host}"
    try:
        return from_api_server(api, args.namespace, args.config_map, where, now, TIMEOUT)
    except client.ApiException as err:
        raise SnapshotError(f"{where}: {err.status} {err.reason}") from None
    except OSError as err:
        raise SnapshotError(f"{where}: cannot connect ({err})") from None


def _from_rest(args: argparse.Namespace, now: float) -> ClusterObjects:
    from shim.whatif.sources import from_state_dump

    url = args.url.rstrip("/") + STATE_DUMP
    request = urllib.request.Request(url)
    if args.token_file:
        try:
            token = Path(args.token_file).read_text().strip()
        except OSError as err:
            raise SnapshotError(f"cannot read {args.token_file}: {err.strerror}") from None
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            dump: dict[str, Any] = json.load(response)
    except urllib.error.HTTPError as err:
        hint = " (pass --token-file)" if err.code == 401 else ""
        raise SnapshotError(f"{url}: HTTP {err.code}{hint}") from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise SnapshotError(
            f"{url}: cannot read Herder's state ({getattr(err, 'reason', err)}); is the port right? "
            "On a cluster: kubectl -n herder-system port-forward svc/herder 9080"
        ) from None
    return from_state_dump(dump, f"Herder at {args.url}", now)


def snapshot_command(args: argparse.Namespace) -> int:
    try:
        durations = _durations(args)
    except ValueError as err:
        print(f"herder snapshot: {err}", file=sys.stderr)
        return EXIT_USAGE
    now = time.time()
    try:
        cluster = _from_rest(args, now) if args.url else _from_kubernetes(args, now)
    except SnapshotError as err:
        print(f"herder snapshot: {err}", file=sys.stderr)
        return EXIT_USAGE
    taken = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    document = scenario_document(cluster, durations, name=f"snapshot-{taken}")
    header = [
        f"# herder snapshot of {cluster.source} at {taken} (t=0 of this scenario)",
        f"# pods run for: {durations.describe()}",
        *(f"# note: {note}" for note in cluster.notes),
    ]
    if args.anonymize:
        from shim.whatif.anonymize import anonymize

        document, renames = anonymize(document)
        header.append(f"# anonymized: {len(renames.names)} names replaced")
    text = "\n".join(header) + "\n" + yaml.safe_dump(document, sort_keys=False, width=200)
    pods = len(document.get("workload") or [])
    summary = f"{len(document['nodes'])} nodes, {pods} pods"
    return _emit(args.out, text, f"herder snapshot: {summary}")


def trace_command(args: argparse.Namespace) -> int:
    from shim.whatif.pod_history import HistoryError, history_rows, write_csv

    path = Path(args.from_pods)
    try:
        text = read_user_text(path, MAX_HISTORY_BYTES)
        document = json.loads(text)
        rows, notes = history_rows(document)
    except OSError as err:
        print(f"herder trace: cannot read {path}: {err.strerror}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, HistoryError) as err:
        print(f"herder trace: {path}: {err}", file=sys.stderr)
        return EXIT_INVALID
    for note in notes:
        print(f"herder trace: {note}", file=sys.stderr)
    return _emit(args.out, write_csv(rows), f"herder trace: {len(rows)} rows")


def _emit(out: str | None, text: str, summary: str) -> int:
    if out is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        Path(out).write_text(text)
    except OSError as err:
        print(f"herder: cannot write {out}: {err.strerror}", file=sys.stderr)
        return EXIT_USAGE
    print(f"{summary} written to {out}", file=sys.stderr)
    return EXIT_OK
