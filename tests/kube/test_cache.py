"""The cache finds pods by the core's key and namespaces by name, and forgets deleted objects."""

from __future__ import annotations

from typing import Any

from shim.kube.watch.cache import KubeCache


def pod(name: str, uid: str, namespace: str = "team") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid}}


def test_pod_is_located_by_uid_until_deleted() -> None:
    cache = KubeCache()
    key = cache.put_pod(pod("web-1", "uid-1"))
    assert key == "uid-1"
    assert cache.locate("uid-1") == ("team", "web-1")
    cache.drop_pod(pod("web-1", "uid-1"))
    assert cache.locate("uid-1") is None


def test_a_recreated_pod_with_the_same_name_is_a_different_pod() -> None:
    cache = KubeCache()
    cache.put_pod(pod("web-1", "uid-1"))
    cache.drop_pod(pod("web-1", "uid-1"))
    cache.put_pod(pod("web-1", "uid-2"))
    assert cache.locate("uid-1") is None
    assert cache.locate("uid-2") == ("team", "web-1")


def test_pods_of_a_namespace_are_listed_for_re_tagging() -> None:
    cache = KubeCache()
    cache.put_pod(pod("a", "uid-a", "prod"))
    cache.put_pod(pod("b", "uid-b", "dev"))
    cache.put_namespace({"metadata": {"name": "prod", "annotations": {"x": "y"}}})
    assert [p["metadata"]["name"] for p in cache.pods_in("prod")] == ["a"]
    assert cache.namespace("prod") == {"metadata": {"name": "prod", "annotations": {"x": "y"}}}
    cache.drop_namespace("prod")
    assert cache.namespace("prod") is None


def test_nodes_are_tracked_by_name() -> None:
    cache = KubeCache()
    cache.put_node({"metadata": {"name": "n2"}})
    cache.put_node({"metadata": {"name": "n1"}})
    cache.drop_node("n2")
    assert cache.node_names() == ["n1"]
