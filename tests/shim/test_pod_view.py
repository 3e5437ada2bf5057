"""A pod read once into its view: every field the conversion's readers take, and no failure on
shapes the API would never send (the reader owning the field decides what is an error)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shim.convert.pod_view import as_view, read_pod


def test_a_bound_pods_fields_are_read_once_into_the_view() -> None:
    owner = {"kind": "Job", "name": "train", "controller": True}
    pod = {
        "metadata": {
            "name": "train-0",
            "namespace": "ml",
            "uid": "u-1",
            "labels": {"job-name": "train"},
            "annotations": {"yunikorn.apache.org/queue": "root.ml"},
            "ownerReferences": [owner, "not an object"],
            "creationTimestamp": "2026-11-27T10:00:00Z",
        },
        "spec": {
            "schedulerName": "herder",
            "nodeName": "node-1",
            "priority": 10,
            "containers": [{"name": "c"}],
            "initContainers": [{"name": "i"}],
            "affinity": {"nodeAffinity": {}},
            "volumes": [{"name": "v", "emptyDir": {}}],
        },
        "status": {"phase": "Running", "startTime": "2026-11-27T10:00:05Z"},
    }
    view = read_pod(pod)
    assert (view.name, view.pod_name, view.namespace, view.uid) == ("ml/train-0", "train-0", "ml", "u-1")
    assert view.labels == {"job-name": "train"} and view.annotations == {"yunikorn.apache.org/queue": "root.ml"}
    assert view.owners == (owner,)
    assert (view.created, view.deleting) == ("2026-11-27T10:00:00Z", False)
    assert (view.scheduler_name, view.node, view.priority) == ("herder", "node-1", 10)
    assert view.containers == [{"name": "c"}] and view.init_containers == [{"name": "i"}]
    assert view.affinity == {"nodeAffinity": {}} and view.volumes == [{"name": "v", "emptyDir": {}}]
    assert (view.phase, view.started) == ("Running", "2026-11-27T10:00:05Z")
    assert view.raw is pod and view.spec is pod["spec"]
    assert as_view(view) is view  # a caller that read the pod hands the view on


def test_a_pod_without_namespace_is_named_by_its_name_and_a_deleted_one_says_so() -> None:
    view = read_pod({"metadata": {"name": "lone", "deletionTimestamp": "2026-11-27T10:00:00Z"}})
    assert (view.name, view.namespace, view.uid, view.node, view.deleting) == ("lone", "", "", None, True)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
_fields = ("metadata", "spec", "status", "labels", "annotations", "ownerReferences", "containers", "volumes")


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(_fields), _json, max_size=4), st.dictionaries(st.sampled_from(_fields), _json))
def test_reading_never_fails_and_wrong_shapes_read_as_empty(top: dict[str, Any], nested: dict[str, Any]) -> None:
    pod: dict[str, Any] = {**top, "metadata": nested, "spec": nested}
    view = read_pod(pod)
    assert isinstance(view.labels, dict) or view.labels == {}
    assert all(isinstance(owner, dict) for owner in view.owners)
    assert isinstance(view.containers, (list, tuple)) and isinstance(view.volumes, (list, tuple))
    assert view.node is None or isinstance(view.node, str)
