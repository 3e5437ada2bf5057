"""The chart's optional observability pieces: YuniKorn's web UI beside Herder, and a Grafana dashboard.

Both are off by default. The web UI must reach Herder's REST Service and must never be
counted as a Herder replica (Service endpoints, disruption budget, spread); the dashboard
must be valid JSON whose every query names metrics Herder really exports.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from typing import Any

from core.scheduler import Scheduler
from shim.metrics import ShimMetrics, metrics_registry
from shim.rest import RestStatus
from tests.deploy.conftest import CHART, NAMESPACE
from tests.shim.rest_world import Recorder

Manifest = dict[str, Any]
UI = ("webUI.enabled=true",)
DASHBOARD = ("grafanaDashboard.enabled=true",)


def _named(manifests: list[Manifest], kind: str, name: str) -> Manifest:
    [found] = [m for m in manifests if m["kind"] == kind and m["metadata"]["name"] == name]
    return found


def _matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def test_neither_is_installed_by_default(render: Callable[..., list[Manifest]]) -> None:
    manifests = render()
    assert [m["metadata"]["name"] for m in manifests if m["kind"] == "Deployment"] == ["herder"]
    assert not [m for m in manifests if m["metadata"]["name"].endswith(("-web-ui", "-dashboard"))]


def test_web_ui_proxies_to_herders_rest_service_and_is_never_taken_for_a_replica(
    render: Callable[..., list[Manifest]],
) -> None:
    manifests = render(*UI)
    ui = _named(manifests, "Deployment", "herder-web-ui")
    pod = ui["spec"]["template"]
    [container] = pod["spec"]["containers"]
    assert container["image"] == "apache/yunikorn:web-1.7.0"
    env = {item["name"]: item["value"] for item in container["env"]}
    assert env["PROXY_URL"] == f"http://herder.{NAMESPACE}.svc:9080"
    assert container["ports"] == [{"name": "http", "containerPort": 9889}]
    service = _named(manifests, "Service", "herder-web-ui")
    assert service["spec"]["ports"] == [{"name": "http", "port": 9889, "targetPort": "http"}]
    assert _matches(service["spec"]["selector"], pod["metadata"]["labels"])
    # Herder's own Service, budget and spread select Herder's pods only.
    herder_service = _named(manifests, "Service", "herder")
    budget = next(m for m in manifests if m["kind"] == "PodDisruptionBudget")
    assert not _matches(herder_service["spec"]["selector"], pod["metadata"]["labels"])
    assert not _matches(budget["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"])


def test_chart_with_both_enabled_passes_strict_lint(helm: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    done = helm("lint", "--strict", str(CHART), "--set", UI[0], "--set", DASHBOARD[0])
    assert done.returncode == 0, done.stdout + done.stderr
    done = helm("lint", "--strict", str(CHART), "--set", "webUI.port=0")
    assert done.returncode != 0 and "port" in done.stdout + done.stderr


def _exported_metric_names() -> set[str]:
    registry = metrics_registry(Scheduler(Recorder()), RestStatus(identity="t"), ShimMetrics())
    names: set[str] = set()
    for family in registry.collect():
        names.add(family.name)
        names.update(sample.name for sample in family.samples)
        if family.type == "histogram":
            names.update(f"{family.name}_{suffix}" for suffix in ("bucket", "sum", "count"))
        if family.type == "counter":
            names.add(f"{family.name}_total")
    return names


def test_grafana_dashboard_is_labelled_for_the_sidecar_and_queries_only_real_metrics(
    render: Callable[..., list[Manifest]],
) -> None:
    config_map = _named(render(*DASHBOARD), "ConfigMap", "herder-dashboard")
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    dashboard = json.loads(config_map["data"]["herder.json"])
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    used = {name for expr in exprs for name in re.findall(r"\b(herder_[a-z_]+)", expr)}
    assert used - _exported_metric_names() == set()
    titles = " | ".join(panel["title"] for panel in dashboard["panels"]).lower()
    for subject in ("guaranteed and max", "runtime", "waiting, by what holds them", "place a pod", "bind", "evictions"):
        assert subject in titles, subject
