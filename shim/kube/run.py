"""`herder run`: the operator against a cluster, from a kubeconfig (a laptop) or in-cluster (a pod).

Takes its ports first (shim/ports.py: a port already taken is one line and exit code 1 at once,
not after the ConfigMap is read), connects with the kubernetes client (kopf logs in with the same
credentials), reads the scheduler ConfigMap, loads the whole cluster, takes part in the Lease election and schedules
while it leads; REST and /metrics on `--rest-port`, admission webhooks on `--webhook-port`.
SIGTERM or Ctrl+C stop it cleanly: scheduling stops, in-flight bindings finish, the Lease is
released so a standby takes over at once. Problems a user can fix (unreadable kubeconfig,
invalid ConfigMap, bad `--set`) are one clear message and exit code 1 (2 for usage).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import socket
import sys
import threading
from pathlib import Path

from kubernetes import client, config

from core.config import ConfigError, SettingsError, load_config, parse_settings
from shim.command import EXIT_INVALID, EXIT_OK, EXIT_USAGE, parse_set_options, read_user_text
from shim.kube.operator import HerderOperator, OperatorOptions, StartupError
from shim.kube.watch.reload import ConfigSource
from shim.kube.write.api import token_reviewer
from shim.ports import PortTaken, take_ports
from shim.rest.access import RestAccess

log = logging.getLogger("herder.operator")

SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
DEFAULT_NAMESPACE = "herder-system"


class RunError(Exception):
    """Something the user must fix before Herder can run; the message says what."""


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # kopf logs every handler call at INFO; Herder's own lines say what matters.
    logging.getLogger("kopf").setLevel(logging.DEBUG if level == "debug" else logging.WARNING)
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)


def api_client(kubeconfig: str | None, context: str | None) -> tuple[client.ApiClient, str, str | None]:
    """(client, where it connects, the kubeconfig context's namespace): --kubeconfig, in-cluster, ~/.kube/config."""
    configuration = client.Configuration()
    if kubeconfig is None and context is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
            return client.ApiClient(configuration), "in-cluster service account", None
        except config.ConfigException as error:
            raise RunError(f"in-cluster configuration failed: {error}") from None
    try:
        config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration)  # type: ignore[no-untyped-call]
        _, active = config.list_kube_config_contexts(config_file=kubeconfig)  # type: ignore[no-untyped-call]
        if context is not None:
            contexts, _ = config.list_kube_config_contexts(config_file=kubeconfig)  # type: ignore[no-untyped-call]
            active = next((c for c in contexts if c.get("name") == context), active)
    except (config.ConfigException, OSError) as error:
        where = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
        raise RunError(f"cannot load kubeconfig {where}: {error}") from None
    namespace = (active or {}).get("context", {}).get("namespace")
    name = (active or {}).get("name", "?")
    return client.ApiClient(configuration), f"context {name} ({configuration.host})", namespace


def herder_namespace(explicit: str | None, context_namespace: str | None) -> str:
    if explicit:
        return explicit
    if os.environ.get("POD_NAMESPACE"):
        return os.environ["POD_NAMESPACE"]
    if SERVICE_ACCOUNT_NAMESPACE.is_file():
        return SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
    return context_namespace or DEFAULT_NAMESPACE


def rest_access(args: argparse.Namespace, api: client.ApiClient) -> RestAccess:
    """Who may call the REST API: --rest-token-file, --rest-token-review, --rest-cors-origin."""
    token = None
    if args.rest_token_file:
        path = Path(args.rest_token_file)
        try:
            token = read_user_text(path, 4096).strip()
        except OSError as error:
            raise RunError(f"cannot read --rest-token-file {path}: {error.strerror}") from None
        except ValueError as error:
            raise RunError(f"--rest-token-file: {error}") from None
        if not token:
            raise RunError(f"--rest-token-file {path} is empty")
    review = token_reviewer(api) if args.rest_token_review else None
    return RestAccess(token=token, review=review, cors_origins=tuple(args.rest_cors_origin or ()))


def operator_options(args: argparse.Namespace, namespace: str, api: client.ApiClient) -> OperatorOptions:
    overrides = parse_set_options(args.set or [])
    parse_settings(overrides)  # a bad --set fails now, naming the key
    fallback = None
    if args.config:
        path = Path(args.config)
        try:
            fallback = load_config(read_user_text(path))
        except OSError as error:
            raise RunError(f"cannot read --config {path}: {error.strerror}") from None
        except ValueError as error:
            raise RunError(f"--config: {error}") from None
    webhook_port = args.webhook_port or None
    cert_dir = getattr(args, "webhook_cert_dir", None)
    if webhook_port and not cert_dir and not (args.webhook_cert and args.webhook_key):
        raise SettingsError(
            "--webhook-port needs --webhook-cert-dir, or --webhook-cert and --webhook-key (the API server calls it "
            "over TLS)"
        )
    return OperatorOptions(
        source=ConfigSource(namespace=namespace, name=args.configmap, fallback=fallback, overrides=overrides),
        identity=args.identity or os.environ.get("POD_NAME") or socket.gethostname(),
        rest_port=args.rest_port or None,
        rest_host=args.rest_address,
        rest_access=rest_access(args, api),
        webhook_port=webhook_port,
        webhook_cert=args.webhook_cert,
        webhook_key=args.webhook_key,
        webhook_cert_dir=cert_dir,
        rest_socket=getattr(args, "rest_socket", None),
        freeze_after_sync=True,
    )


def run_command(args: argparse.Namespace) -> int:
    configure_logging(args.log_level)
    try:
        api, where, context_namespace = api_client(args.kubeconfig, args.context)
        namespace = herder_namespace(args.namespace, context_namespace)
        options = operator_options(args, namespace, api)
    except (ConfigError, SettingsError) as error:
        print("herder run: invalid options:", file=sys.stderr)
        for problem in error.problems:
            print(f"  - {problem}", file=sys.stderr)
        return EXIT_USAGE
    except RunError as error:
        print(f"herder run: {error}", file=sys.stderr)
        return EXIT_INVALID
    if options.rest_socket is None:  # not taken by the command line yet (herder run does, first of all)
        try:
            options = dataclasses.replace(
                options, rest_socket=take_ports(options.rest_host, options.rest_port, options.webhook_port)
            )
        except PortTaken as taken:
            print(f"herder run: {taken}", file=sys.stderr)
            return EXIT_INVALID
    log.info("herder %s connecting to %s; ConfigMap and Lease in namespace %s", options.identity, where, namespace)
    try:
        operator = HerderOperator(api, options)
    except StartupError as error:
        print(f"herder run: {error}", file=sys.stderr)
        return EXIT_INVALID
    except client.ApiException as error:
        print(
            f"herder run: the API server refused reading the configuration: {error.status} {error.reason}",
            file=sys.stderr,
        )
        return EXIT_INVALID
    except Exception as error:  # network errors come in many types; the user needs the message
        print(f"herder run: cannot reach the API server ({where}): {error}", file=sys.stderr)
        return EXIT_INVALID
    stop = threading.Event()
    try:
        operator.run(stop)  # kopf handles SIGTERM/SIGINT in the main thread and runs the cleanup
    except KeyboardInterrupt:
        stop.set()
    except StartupError as error:
        print(f"herder run: {error}", file=sys.stderr)
        return EXIT_INVALID
    except Exception as error:
        log.error("the operator stopped: %s", error)
        operator.stop()
        return EXIT_INVALID
    return EXIT_OK
