"""The Helm chart lints strictly and renders what an operator needs in every supported variant."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from core.config import parse_settings
from shim.cli import build_parser
from tests.deploy.conftest import CHART

Manifest = dict[str, Any]
VARIANTS = {
    "default": (),
    "ha": ("replicaCount=3", "podDisruptionBudget.minAvailable=2"),
    "cert-manager-webhook": ("certManager.enabled=true",),
    "no-webhook": ("webhook.enabled=false",),
    "servicemonitor": ("serviceMonitor.enabled=true",),
    "locked-rest": ("rest.tokenSecret=herder-rest", "rest.tokenReview=true", "rest.address=127.0.0.1"),
}


def _one(manifests: list[Manifest], kind: str) -> Manifest:
    found = [m for m in manifests if m["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, got {len(found)}"
    return found[0]


def _kinds(manifests: list[Manifest]) -> set[str]:
    return {m["kind"] for m in manifests}


def test_chart_passes_strict_lint(helm: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    done = helm("lint", "--strict", str(CHART))
    assert done.returncode == 0, done.stdout + done.stderr


def test_lint_rejects_values_that_break_the_schema(
    helm: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    done = helm("lint", "--strict", str(CHART), "--set", "webhook.failurePolicy=Sometimes")
    assert done.returncode != 0
    assert "failurePolicy" in done.stdout + done.stderr


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_variant_renders_the_operator_and_its_access(render: Callable[..., list[Manifest]], variant: str) -> None:
    kinds = _kinds(render(*VARIANTS[variant]))
    assert {"Deployment", "ServiceAccount", "ClusterRole", "Role", "ConfigMap", "Service"} <= kinds


def test_default_install_runs_two_replicas_spread_over_nodes(render: Callable[..., list[Manifest]]) -> None:
    deployment = _one(render(), "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] == 2
    anti = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    assert anti["podAffinityTerm"]["labelSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]


def test_operator_runs_unprivileged_on_a_read_only_root(render: Callable[..., list[Manifest]]) -> None:
    pod = _one(render(), "Deployment")["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["resources"]["requests"] and container["resources"]["limits"]


def test_probes_use_health_and_readiness_endpoints_on_the_rest_port(
    render: Callable[..., list[Manifest]],
) -> None:
    container = _one(render(), "Deployment")["spec"]["template"]["spec"]["containers"][0]
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "rest"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "rest"}
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"rest": 9080, "webhook": 9443}


def test_config_map_carries_queues_and_settings_from_values(render: Callable[..., list[Manifest]]) -> None:
    manifests = render("settings.quota\\.recycle\\.delay=30s", "settings.bind\\.workers=8")
    config = _one(manifests, "ConfigMap")
    assert config["metadata"]["name"] == "herder-config"
    assert yaml.safe_load(config["data"]["queues.yaml"])["partitions"][0]["queues"][0]["name"] == "root"
    assert config["data"]["quota.recycle.delay"] == "30s"
    assert config["data"]["bind.workers"] == "8"
    args = _one(manifests, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--config-map=herder-config" in args


def test_config_change_rolls_the_pods(render: Callable[..., list[Manifest]]) -> None:
    def checksum(*sets: str) -> str:
        annotations = _one(render(*sets), "Deployment")["spec"]["template"]["metadata"]["annotations"]
        return str(annotations["checksum/config"])

    assert checksum() != checksum("settings.quota\\.recycle\\.delay=30s")


def test_service_exposes_rest_and_webhook_on_443(render: Callable[..., list[Manifest]]) -> None:
    ports = {p["name"]: (p["port"], p["targetPort"]) for p in _one(render(), "Service")["spec"]["ports"]}
    assert ports == {"rest": (9080, "rest"), "webhook": (443, "webhook")}


def test_generated_certificate_is_trusted_by_both_webhooks(render: Callable[..., list[Manifest]]) -> None:
    manifests = render()
    secret = _one(manifests, "Secret")
    for kind, path in (
        ("ValidatingWebhookConfiguration", "/validate-elasticquota"),
        ("MutatingWebhookConfiguration", "/mutate-pod"),
    ):
        hook = _one(manifests, kind)["webhooks"][0]
        assert hook["clientConfig"]["caBundle"] == secret["data"]["ca.crt"]
        assert hook["clientConfig"]["service"]["path"] == path
        assert hook["clientConfig"]["service"]["port"] == 443


def test_cert_manager_issues_the_certificate_and_injects_the_ca(
    render: Callable[..., list[Manifest]],
) -> None:
    manifests = render("certManager.enabled=true")
    assert "Secret" not in _kinds(manifests)
    certificate = _one(manifests, "Certificate")
    mounted = _one(manifests, "Deployment")["spec"]["template"]["spec"]["volumes"]
    assert {"name": "webhook-tls", "secret": {"secretName": certificate["spec"]["secretName"]}} in mounted
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        hook = _one(manifests, kind)
        assert hook["metadata"]["annotations"]["cert-manager.io/inject-ca-from"].endswith(
            certificate["metadata"]["name"]
        )
        assert "caBundle" not in hook["webhooks"][0]["clientConfig"]


def test_mutating_webhook_never_intercepts_its_own_namespace(render: Callable[..., list[Manifest]]) -> None:
    hook = _one(render(), "MutatingWebhookConfiguration")["webhooks"][0]
    excluded = hook["namespaceSelector"]["matchExpressions"][0]["values"]
    assert "herder-system" in excluded and "kube-system" in excluded


def test_disabling_webhooks_removes_them_and_their_port(render: Callable[..., list[Manifest]]) -> None:
    manifests = render("webhook.enabled=false")
    assert not _kinds(manifests) & {
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "Secret",
    }
    container = _one(manifests, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    assert [p["name"] for p in container["ports"]] == ["rest"]


def test_service_monitor_scrapes_metrics_only_when_asked(render: Callable[..., list[Manifest]]) -> None:
    assert "ServiceMonitor" not in _kinds(render())
    monitor = _one(render("serviceMonitor.enabled=true"), "ServiceMonitor")
    assert monitor["spec"]["endpoints"] == [{"port": "rest", "path": "/metrics", "interval": "30s"}]


def test_disruption_budget_keeps_one_replica(render: Callable[..., list[Manifest]]) -> None:
    assert _one(render(), "PodDisruptionBudget")["spec"]["minAvailable"] == 1


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_container_command_is_one_herder_run_accepts(render: Callable[..., list[Manifest]], variant: str) -> None:
    container = _one(render(*VARIANTS[variant]), "Deployment")["spec"]["template"]["spec"]["containers"][0]
    args = build_parser().parse_args(container["args"])
    assert args.command == "run"
    assert args.configmap == _one(render(*VARIANTS[variant]), "ConfigMap")["metadata"]["name"]


def test_webhook_trusts_herders_own_service_accounts_in_the_release_namespace(
    render: Callable[..., list[Manifest]],
) -> None:
    data = _one(render(), "ConfigMap")["data"]
    settings = parse_settings({key: value for key, value in data.items() if key != "queues.yaml"})
    assert "system:serviceaccount:herder-system:.*" in settings.admission_trusted_users
    chosen = _one(render("settings.admission\\.trustedUsers=system:serviceaccount:ci:.*"), "ConfigMap")["data"]
    assert chosen["admission.trustedUsers"] == "system:serviceaccount:ci:.*"


def test_rest_is_reachable_only_from_listed_peers_and_the_webhook_stays_open(
    render: Callable[..., list[Manifest]],
) -> None:
    policy = _one(render(), "NetworkPolicy")
    assert (
        policy["spec"]["podSelector"]["matchLabels"] == _one(render(), "Deployment")["spec"]["selector"]["matchLabels"]
    )
    rest, webhook = policy["spec"]["ingress"]
    assert rest["ports"] == [{"port": 9080, "protocol": "TCP"}]
    assert rest["from"] == [{"podSelector": {}}]  # Herder's own namespace only
    assert webhook == {"ports": [{"port": 9443, "protocol": "TCP"}]}
    assert "NetworkPolicy" not in _kinds(render("networkPolicy.enabled=false"))


def test_rest_lockdown_values_become_run_options(render: Callable[..., list[Manifest]]) -> None:
    manifests = render(*VARIANTS["locked-rest"], "rest.corsOrigins[0]=https://ui.example")
    pod = _one(manifests, "Deployment")["spec"]["template"]["spec"]
    args = build_parser().parse_args(pod["containers"][0]["args"])
    assert (args.rest_address, args.rest_token_review, args.rest_cors_origin) == (
        "127.0.0.1",
        True,
        ["https://ui.example"],
    )
    mount = next(m for m in pod["containers"][0]["volumeMounts"] if m["name"] == "rest-token")
    assert args.rest_token_file == mount["mountPath"] + "/token"
    volume = next(v for v in pod["volumes"] if v["name"] == "rest-token")
    assert volume["secret"] == {"secretName": "herder-rest", "items": [{"key": "token", "path": "token"}]}
    default_args = build_parser().parse_args(
        _one(render(), "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    )
    assert default_args.rest_token_file is None and default_args.rest_cors_origin == []
