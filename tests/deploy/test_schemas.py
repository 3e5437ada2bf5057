"""Every rendered chart object and everything in manifests/ is valid against the Kubernetes schemas.

Built-in kinds use kubernetes-validate's bundled (offline) schemas; ElasticQuota objects use the
CRD's own openAPIV3Schema through jsonschema.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from tests.deploy.conftest import CHART, ROOT
from tests.deploy.test_chart import VARIANTS

Manifest = dict[str, Any]
KUBERNETES_VERSION = "1.33.0"
MANIFESTS = sorted((ROOT / "manifests").rglob("*.yaml"))
# Kinds from other projects' CRDs (cert-manager, prometheus-operator): no bundled schema.
FOREIGN_KINDS = {"Certificate", "Issuer", "ServiceMonitor"}


def _load(path: Path) -> list[Manifest]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _crd_schema() -> dict[str, Any]:
    crd = _load(ROOT / "manifests" / "elasticquota-crd.yaml")[0]
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def _openapi_to_jsonschema(node: Any) -> Any:
    """Drop the OpenAPI-only keys so jsonschema checks the structure and quantity patterns."""
    if isinstance(node, dict):
        return {k: _openapi_to_jsonschema(v) for k, v in node.items() if not k.startswith("x-kubernetes-")}
    if isinstance(node, list):
        return [_openapi_to_jsonschema(v) for v in node]
    return node


def validate(manifest: Manifest) -> None:
    if manifest["kind"] == "ElasticQuota":
        jsonschema.validate(manifest, _openapi_to_jsonschema(_crd_schema()))
    elif manifest["kind"] in FOREIGN_KINDS:
        assert manifest["apiVersion"] and manifest["metadata"]["name"] and manifest["spec"]
    else:
        kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)


def test_manifests_folder_holds_the_crd_and_examples() -> None:
    kinds = {m["kind"] for path in MANIFESTS for m in _load(path)}
    assert {"CustomResourceDefinition", "ElasticQuota", "Namespace", "ConfigMap"} <= kinds


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_manifest_is_schema_valid(path: Path) -> None:
    for manifest in _load(path):
        validate(manifest)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_rendered_object_is_schema_valid(render: Callable[..., list[Manifest]], variant: str) -> None:
    for manifest in render(*VARIANTS[variant]):
        validate(manifest)


def test_chart_ships_the_same_crd_as_manifests() -> None:
    assert _load(CHART / "crds" / "elasticquota-crd.yaml") == _load(ROOT / "manifests" / "elasticquota-crd.yaml")


def test_crd_serves_status_subresource_and_quota_columns() -> None:
    version = _load(ROOT / "manifests" / "elasticquota-crd.yaml")[0]["spec"]["versions"][0]
    assert version["subresources"] == {"status": {}}
    columns = {c["name"]: c["jsonPath"] for c in version["additionalPrinterColumns"]}
    assert columns["Min"] == ".spec.min" and columns["Max"] == ".spec.max" and columns["Used"] == ".status.used"
    assert columns["Runtime"].endswith("quota\\.scheduling\\.koordinator\\.sh/runtime")


def test_validation_rejects_a_namespace_with_malformed_annotations() -> None:
    quota = _load(ROOT / "manifests" / "examples" / "namespaces.yaml")[0]
    broken = copy.deepcopy(quota)
    broken["metadata"]["annotations"] = ["not", "a", "map"]
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(broken)


@pytest.mark.parametrize("quantity", ["4 cores", "1.5.0", "Gi", "-"])
def test_crd_rejects_malformed_quantities(quantity: str) -> None:
    quota = _load(ROOT / "manifests" / "examples" / "quota-tree.yaml")[0]
    quota["spec"]["max"]["cpu"] = quantity
    with pytest.raises(jsonschema.ValidationError):
        validate(quota)


@pytest.mark.parametrize("quantity", ["4", "500m", "16Gi", "1e3", 8])
def test_crd_accepts_kubernetes_quantities(quantity: str | int) -> None:
    quota = _load(ROOT / "manifests" / "examples" / "quota-tree.yaml")[0]
    quota["spec"]["min"]["memory"] = quantity
    validate(quota)
