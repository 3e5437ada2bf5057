"""The `herder` command: `run`, `simulate`, `bench`, `validate`, `explain`, `snapshot`, `trace` and `--version`.

Each subcommand lives in its own module and is imported only when it runs, so `herder
validate` never loads kopf and `herder simulate` never needs a cluster. Every command returns
an exit code; errors a user can act on go to stderr with a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from shim.command import EXIT_INVALID, collect_garbage_less_often, herder_version


def validate_command(args: argparse.Namespace) -> int:
    from shim.validate import validate_command as run

    return run(args)


def simulate_command(args: argparse.Namespace) -> int:
    from shim.sim.command import simulate_command as run

    return run(args)


def bench_command(args: argparse.Namespace) -> int:
    try:
        if args.event_streams:
            from shim.bench.events import bench_command as run
        else:
            from shim.bench.scheduling import bench_command as run
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith("shim.bench"):
            raise
        print(
            "herder bench: the benches are not installed here (the container image leaves them out); "
            "run them from a source checkout: pip install -e '.[dev]'",
            file=sys.stderr,
        )
        return EXIT_INVALID
    return run(args)


def explain_command(args: argparse.Namespace) -> int:
    from shim.explain import explain_command as run

    return run(args)


def run_command(args: argparse.Namespace) -> int:
    from shim.ports import PortTaken, take_ports

    try:  # before the operator is even imported: a port taken is said at once
        args.rest_socket = take_ports(args.rest_address, args.rest_port or None, args.webhook_port or None)
    except PortTaken as taken:
        print(f"herder run: {taken}", file=sys.stderr)
        return EXIT_INVALID
    from shim.kube.run import run_command as run

    return run(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="herder",
        description="A batch scheduler for Kubernetes: hierarchical queues, user/group limits, elastic quotas.",
    )
    parser.add_argument("--version", action="version", version=f"herder {herder_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    simulate = commands.add_parser("simulate", help="run a scenario on a simulated cluster (no cluster needed)")
    simulate.add_argument("scenario", help="scenario YAML file, or the name of an example (`herder examples`)")
    simulate.add_argument("--json", action="store_true", help="print the whole report as JSON")
    simulate.add_argument("--out", metavar="DIR", help="write report.json and PNG charts into DIR")
    simulate.add_argument(
        "--indent", type=int, default=0, metavar="N", help="indent the JSON report by N spaces (default: compact)"
    )
    simulate.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a setting")
    simulate.add_argument("--quiet", action="store_true", help="no progress bar")
    simulate.add_argument(
        "--serve",
        action="store_true",
        help="play the scenario in (simulated) real time and serve Herder's REST API, event stream and /metrics"
        " over it, for herder explain, YuniKorn's web UI and Prometheus (Ctrl+C stops)",
    )
    simulate.add_argument(
        "--speed", type=float, metavar="N", help="with --serve: N simulated seconds per second (default 1)"
    )
    simulate.add_argument("--port", type=int, metavar="P", help="with --serve: the port (default 9080; 0: any free)")
    simulate.add_argument("--address", metavar="A", help="with --serve: the address to listen on (default 127.0.0.1)")
    simulate.add_argument(
        "--compare",
        metavar="CANDIDATE",
        help="run twice, as it is and with CANDIDATE (a queues.yaml, ConfigMap, settings or scenario patch), "
        "and show what changes",
    )
    simulate.add_argument("--trace", metavar="FILE", help="replay a workload trace (CSV or JSON lines) as well")
    simulate.set_defaults(handler=simulate_command)

    validate = commands.add_parser("validate", help="check a queues.yaml (or the scheduler ConfigMap)")
    validate.add_argument("config", help="queues.yaml, or a ConfigMap manifest holding it")
    validate.set_defaults(handler=validate_command)

    from shim.explain import add_parser as add_explain
    from shim.whatif.command import add_parsers as add_what_if

    add_explain(commands)
    add_what_if(commands)

    from shim.sim.examples import add_parser as add_examples

    add_examples(commands)

    bench = commands.add_parser(
        "bench",
        help="measure scheduling speed and memory on a synthetic cluster",
        description="Scale figures (docs/performance.md names the command behind each). Without options: 5,000"
        " nodes and 50,000 pending pods, built and placed in one process (about 15 CPU-seconds: a minute or more"
        " on a busy machine). Each step is said on stderr as it starts; the figures go to stdout.",
    )
    bench.add_argument("--nodes", type=int, default=5000, help="nodes in the synthetic cluster (default %(default)s)")
    bench.add_argument("--pods", type=int, default=50000, help="pending pods to place (default %(default)s)")
    bench.add_argument(
        "--quotas", type=int, default=0, metavar="N", help="instead: time quota runtime recomputes for N quotas"
    )
    bench.add_argument(
        "--users",
        type=int,
        default=0,
        metavar="U",
        help="instead: the pods spread over U users, without and with limits on every queue (6 runs of --nodes"
        " x --pods, each in a fresh interpreter)",
    )
    bench.add_argument("--groups", type=int, default=0, metavar="G", help="with --users: G groups")
    bench.add_argument(
        "--preemption", action="store_true", help="two of the nine team queues below a guarantee, preemption on"
    )
    bench.add_argument(
        "--node-affinity", action="store_true", help="give every pod required node affinity (zones, instance types)"
    )
    bench.add_argument("--gangs", type=int, default=0, help="make this percent of applications gangs (task groups)")
    bench.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a setting for the scheduling bench's core"
    )
    bench.add_argument(
        "--gang-topology",
        choices=("required", "preferred"),
        default=None,
        help="with --gangs: nodes in racks of 16, each gang kept in one rack (Kueue's podset-*-topology)",
    )
    bench.add_argument(
        "--emulator",
        action="store_true",
        help="instead: bind --pods pods (at most 20,000) on --nodes nodes (at most 500) through the whole shim"
        " against the API emulator (a source checkout)",
    )
    bench.add_argument(
        "--restart",
        action="store_true",
        help="with --emulator: time herder run to ready on --nodes nodes and --pods bound pods",
    )
    bench.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="with --emulator: the ceiling and Herder's burst N times in alternation (at most 20); medians",
    )
    bench.add_argument(
        "--soak",
        type=int,
        default=0,
        metavar="PODS",
        help="instead: the binding soak against a lossy, slow emulator (2,000 pods take minutes)",
    )
    bench.add_argument(
        "--soak-delays",
        default="1-3",
        metavar="MIN-MAX",
        help="with --soak: seconds a delayed request waits (default %(default)s)",
    )
    bench.add_argument(
        "--watch-drops",
        type=float,
        default=0,
        metavar="SECONDS",
        help="instead: Herder through a proxy cutting every API connection every 2-8 s (180: three minutes)",
    )
    bench.add_argument(
        "--leaves",
        type=int,
        default=0,
        metavar="N",
        help="instead: time a decision with N leaf queues against 10 (20,000 pods, or --pods if fewer; 12 runs)",
    )
    bench.add_argument(
        "--leaf-pods",
        type=int,
        default=0,
        help="with --leaves: pods in each batch (200,000 with 10,000 leaves: 20 a queue); nodes grow to hold them",
    )
    bench.add_argument(
        "--queue-priorities",
        action="store_true",
        help="with --leaves: root sets priority.offset, so queue priorities order the leaves",
    )
    bench.add_argument(
        "--decode",
        action="store_true",
        help="instead: time reading one pod into the core as the watch does (PodSync.apply), in CPU µs",
    )
    bench.add_argument(
        "--sweep", action="store_true", help="instead: 500, 5,000 and 20,000 nodes with --pods pods, as a table"
    )
    bench.add_argument(
        "--trace",
        type=int,
        default=0,
        metavar="PODS",
        help="instead: replay a synthetic week of PODS pods' history (what-if)",
    )
    bench.add_argument(
        "--preemption-gangs",
        type=int,
        default=0,
        metavar="NODES",
        help="instead: gangs preempting a queue that fills NODES nodes, through herder simulate (CPU-s)",
    )
    bench.add_argument(
        "--event-streams", type=int, default=0, metavar="N", help="instead: schedule with N event stream clients"
    )
    bench.add_argument(
        "--event-rate", type=int, default=10000, help="with --event-streams: events/s added (default %(default)s)"
    )
    bench.add_argument(
        "--rules",
        type=int,
        default=0,
        metavar="PERCENT",
        help="PERCENT of pods carry required hostname anti-affinity or a zone spread (DoNotSchedule)",
    )
    bench.add_argument(
        "--fuzz",
        type=int,
        default=0,
        metavar="N",
        help="run N random scenarios through the simulator, checking tracebacks, hangs, repeatability, bounds",
    )
    bench.add_argument("--fuzz-seed", type=int, default=0, metavar="S", help="with --fuzz: the first scenario's seed")
    bench.add_argument("--fuzz-out", metavar="DIR", help="with --fuzz: write each failing scenario into DIR")
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")
    bench.set_defaults(handler=bench_command)

    run = commands.add_parser("run", help="run the scheduler against a Kubernetes cluster")
    run.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster, then ~/.kube/config)")
    run.add_argument("--context", help="kubeconfig context")
    run.add_argument("--namespace", default=None, help="where the ConfigMap and Lease live")
    run.add_argument(
        "--config-map", "--configmap", dest="configmap", default="herder-config", help="the scheduler ConfigMap"
    )
    run.add_argument("--config", metavar="FILE", help="queues.yaml to use when the ConfigMap has none")
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a setting")
    run.add_argument("--rest-port", type=int, default=9080, help="REST API and /metrics port (0: off)")
    run.add_argument("--rest-address", default="0.0.0.0", help="address the REST API listens on")
    run.add_argument(
        "--rest-token-file", metavar="FILE", help="require this bearer token on the REST API (a mounted Secret)"
    )
    run.add_argument(
        "--rest-token-review", action="store_true", help="accept bearer tokens the API server authenticates"
    )
    run.add_argument(
        "--rest-cors-origin", action="append", default=[], metavar="ORIGIN", help="send CORS headers to ORIGIN (*: any)"
    )
    run.add_argument("--webhook-port", type=int, default=0, help="admission webhook port (0: off)")
    run.add_argument("--webhook-cert", help="TLS certificate for the webhook server")
    run.add_argument("--webhook-key", help="TLS key for the webhook server")
    run.add_argument(
        "--webhook-cert-dir", metavar="DIR", help="directory with tls.crt and tls.key (the chart mounts one)"
    )
    run.add_argument("--identity", help="this replica's name in the Lease (default: $POD_NAME, else hostname)")
    run.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    run.set_defaults(handler=run_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    collect_garbage_less_often()
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "webhook_cert_dir", None):
        directory = Path(args.webhook_cert_dir)
        args.webhook_cert = args.webhook_cert or str(directory / "tls.crt")
        args.webhook_key = args.webhook_key or str(directory / "tls.key")
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
