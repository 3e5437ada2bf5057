"""Decisions answered without kopf become the AdmissionReview answers the API server applies."""

from __future__ import annotations

import base64
import json

from shim.kube.admission.decisions import Decision
from shim.kube.admission.direct import admission_response, json_patch


def test_merge_patch_becomes_adds_where_missing_and_replaces_where_present() -> None:
    obj = {"metadata": {"name": "p", "annotations": {"a/b": "1"}}, "spec": {"schedulerName": "default-scheduler"}}
    merge = {"metadata": {"annotations": {"a/b": "2", "c~d": "3"}}, "spec": {"schedulerName": "herder"}}
    assert json_patch(obj, merge) == [
        {"op": "replace", "path": "/metadata/annotations/a~1b", "value": "2"},
        {"op": "add", "path": "/metadata/annotations/c~0d", "value": "3"},
        {"op": "replace", "path": "/spec/schedulerName", "value": "herder"},
    ]


def test_missing_parents_are_added_whole() -> None:
    merge = {"spec": {"template": {"metadata": {"annotations": {"k": "v"}}}}}
    obj = {"spec": {"template": {"spec": {}}}}
    assert json_patch(obj, merge) == [
        {"op": "add", "path": "/spec/template/metadata", "value": {"annotations": {"k": "v"}}}
    ]


def test_answer_carries_uid_verdict_and_patch() -> None:
    review = {"apiVersion": "admission.k8s.io/v1", "request": {"uid": "42", "object": {"metadata": {}}}}
    allowed = admission_response(review, Decision(patch={"metadata": {"labels": {"x": "y"}}}))
    assert allowed["kind"] == "AdmissionReview" and allowed["response"]["uid"] == "42"
    assert allowed["response"]["patchType"] == "JSONPatch"
    ops = json.loads(base64.b64decode(allowed["response"]["patch"]))
    assert ops == [{"op": "add", "path": "/metadata/labels", "value": {"x": "y"}}]
    refused = admission_response(review, Decision.deny("no", 403))["response"]
    assert refused == {"uid": "42", "allowed": False, "status": {"code": 403, "message": "no"}}
