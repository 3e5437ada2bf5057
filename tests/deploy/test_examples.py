"""The example objects users copy are coherent under Herder's own quantity grammar."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from core.resources import QuantityError, parse_quantity
from tests.deploy.conftest import ROOT

EXAMPLES = ROOT / "manifests" / "examples"


def _load(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def test_every_example_quota_has_min_within_max() -> None:
    for quota in _load(EXAMPLES / "quota-tree.yaml"):
        spec = quota["spec"]
        for resource, minimum in spec["min"].items():
            assert parse_quantity(minimum) <= parse_quantity(spec["max"][resource]), quota["metadata"]["name"]


def test_every_example_quota_lives_in_an_example_namespace() -> None:
    namespaces = {ns["metadata"]["name"] for ns in _load(EXAMPLES / "namespaces.yaml")}
    assert {q["metadata"]["namespace"] for q in _load(EXAMPLES / "quota-tree.yaml")} <= namespaces


def test_namespace_quota_annotations_are_json_quantities_with_guarantee_within_quota() -> None:
    for namespace in _load(EXAMPLES / "namespaces.yaml"):
        annotations = namespace["metadata"].get("annotations", {})
        cap = json.loads(annotations.get("yunikorn.apache.org/namespace.quota", "{}"))
        guaranteed = json.loads(annotations.get("yunikorn.apache.org/namespace.guaranteed", "{}"))
        for resource, amount in guaranteed.items():
            assert parse_quantity(amount) <= parse_quantity(cap[resource])


def test_example_parent_queues_exist_in_the_example_config() -> None:
    config = _load(EXAMPLES / "scheduler-config.yaml")[0]
    root = yaml.safe_load(config["data"]["queues.yaml"])["partitions"][0]["queues"][0]
    parents = {f"root.{queue['name']}" for queue in root["queues"]}
    for namespace in _load(EXAMPLES / "namespaces.yaml"):
        assert namespace["metadata"]["annotations"]["yunikorn.apache.org/parentqueue"] in parents


def test_crd_quantity_pattern_agrees_with_herders_parser() -> None:
    crd = _load(ROOT / "manifests" / "elasticquota-crd.yaml")[0]
    properties = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    pattern = re.compile(properties["spec"]["properties"]["max"]["additionalProperties"]["pattern"])
    for text in [
        "1",
        "500m",
        "1.5",
        ".5",
        "16Gi",
        "2k",
        "1e3",
        "1E-2",
        "+3",
        "4 cores",
        "Gi",
        "1.5.0",
        "",
        "2Kb",
    ]:
        try:
            parse_quantity(text)
            parsed = True
        except QuantityError:
            parsed = False
        assert bool(pattern.fullmatch(text)) == parsed, text
