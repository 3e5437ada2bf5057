"""`herder snapshot` of a cluster Herder schedules, then `herder simulate` of that snapshot: at t=0
the simulated queues hold what the running Herder's queues hold, and scheduling goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from shim.bench.restart import write_kubeconfig
from shim.cli import main
from shim.sim.engine import Simulation
from shim.sim.report import build_report
from shim.sim.scenario import load_scenario
from shim.whatif.anonymize import anonymize
from tests.kube.conftest import Cluster, eventually, herder_pod
from tests.kube.emulator import HERDER_NAMESPACE
from tests.kube.test_operator_gangs import gang_pods, placeholder_pods

pytestmark = pytest.mark.timeout(120)


def _cluster_with_every_kind_of_pod(cluster: Cluster) -> Any:
    """team-a: three bound pods and one too big for any node; another scheduler's pod on node-0;
    ml: a gang of four 3-core workers: two placeholders hold room, the others find none."""
    cluster.create_namespace("team-a")
    cluster.create_namespace("ml")
    herder = cluster.start_herder()
    for i in range(3):
        cluster.core.create_namespaced_pod("team-a", herder_pod(f"web-{i}", cpu="1", labels={"app": "web"}))
    cluster.core.create_namespaced_pod("team-a", herder_pod("huge", cpu="6"))
    cluster.core.create_namespaced_pod(
        "team-a", herder_pod("theirs", cpu="500m", scheduler="default-scheduler", node="node-0")
    )
    for i in range(3):
        cluster.bound("team-a", f"web-{i}")
    gang_pods(cluster, "ml", "train", 4, "3")
    eventually(lambda: len(placeholder_pods(cluster, "ml")) == 2 and placeholder_pods(cluster, "ml"), "placeholders")
    # the operator's view settles: what it holds is what the server shows
    eventually(
        lambda: (
            len(herder.scheduler.application_document("train")["allocations"]) == len(placeholder_pods(cluster, "ml"))
        ),
        "the placeholders allocated",
    )
    return herder


def _simulate(path: Path) -> dict[str, Any]:
    scenario = load_scenario(path)
    simulation = Simulation(scenario)
    simulation.run()
    return build_report(simulation)


def test_a_snapshot_simulates_from_the_cluster_as_it_is(cluster: Cluster, tmp_path: Path) -> None:
    herder = _cluster_with_every_kind_of_pod(cluster)
    usage = herder.scheduler.queue_usage()
    config = write_kubeconfig(tmp_path / "kubeconfig", cluster.server.url, token="admin-token")
    out = tmp_path / "snapshot.yaml"
    code = main(
        [
            "snapshot",
            "--kubeconfig",
            str(config),
            "--namespace",
            HERDER_NAMESPACE,
            "--duration",
            "60",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    document = yaml.safe_load(out.read_text())
    names = {(e["pod"]["metadata"]["namespace"], e["pod"]["metadata"]["name"]) for e in document["workload"]}
    assert {("team-a", "web-0"), ("team-a", "huge"), ("team-a", "theirs"), ("ml", "train-0")} <= names
    assert len([n for n in names if n[1].startswith("tg-")]) == len(placeholder_pods(cluster, "ml"))
    bound = [e for e in document["workload"] if e["pod"]["spec"].get("nodeName")]
    assert all(e["started"] < 0 for e in bound)
    assert all(0 < e["duration"] <= 60 for e in bound if not e["pod"]["metadata"]["name"].startswith("tg-"))
    assert not any("duration" in e for e in bound if e["pod"]["metadata"]["name"].startswith("tg-"))

    document["snapshots"] = [0]
    document["until"] = 200
    out.write_text(yaml.safe_dump(document))
    report = _simulate(out)
    at_start = report["snapshots"]["0"]["queues"]

    def simulated(queue: dict[str, Any], found: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
        found[queue["queuename"]] = queue["allocatedResource"]
        for child in queue.get("children", []):
            simulated(child, found)
        return found

    assert {q: u for q, u in simulated(at_start, {}).items() if any(u.values())} == {
        q: u for q, u in usage.items() if any(u.values())
    }
    # from there the run goes on: the bound pods end within their 60 s, and the node they leave
    # takes the gang's third placeholder (its fourth finds no room: the gang waits)
    pods = report["pods"]
    assert pods["team-a/web-0"]["state"] == "Succeeded"
    placeholders = [p for p in pods.values() if p.get("placeholder") and p["bound"] is not None]
    assert len(placeholders) == 3
    assert all(pods[f"ml/train-{i}"]["state"] == "Pending" for i in range(4))
    assert pods["team-a/huge"]["state"] == "Pending"  # 6 cores: no 4-core node holds it
    assert pods["team-a/theirs"]["state"] == "Foreign"


def test_a_snapshot_of_herders_state_dump_holds_its_queues_usage(cluster: Cluster, tmp_path: Path) -> None:
    herder = _cluster_with_every_kind_of_pod(cluster)
    usage = {q: u for q, u in herder.scheduler.queue_usage().items() if any(u.values())}
    out = tmp_path / "snapshot.yaml"
    assert main(["snapshot", "--url", f"http://127.0.0.1:{herder.operator.rest_port}", "--out", str(out)]) == 0
    document = yaml.safe_load(out.read_text())
    document["snapshots"] = [0]
    document["until"] = 1
    out.write_text(yaml.safe_dump(document))
    report = _simulate(out)
    found = {
        q["queuename"]: q["allocatedResource"]
        for q in _walk(report["snapshots"]["0"]["queues"])
        if any(q["allocatedResource"].values())
    }
    assert found == usage


def _walk(queue: dict[str, Any]) -> list[dict[str, Any]]:
    return [queue, *(q for child in queue.get("children", []) for q in _walk(child))]


def test_an_anonymized_snapshot_names_no_namespace_user_or_pod_and_behaves_the_same(
    cluster: Cluster, tmp_path: Path
) -> None:
    _cluster_with_every_kind_of_pod(cluster)
    config = write_kubeconfig(tmp_path / "kubeconfig", cluster.server.url, token="admin-token")
    args = ["snapshot", "--kubeconfig", str(config), "--namespace", HERDER_NAMESPACE, "--duration", "60"]
    hidden = tmp_path / "hidden.yaml"
    assert main([*args, "--anonymize", "--out", str(hidden)]) == 0
    text = hidden.read_text()
    for name in ("team-a", "web-0", "train", "huge", "theirs", "uid-"):
        assert (name in text) == (name == "uid-"), name
    plain = tmp_path / "plain.yaml"
    assert main([*args, "--out", str(plain)]) == 0
    document = yaml.safe_load(plain.read_text())
    anonymized, renames = anonymize(document)
    hidden.write_text(yaml.safe_dump(anonymized))
    reports = [_simulate(path) for path in (plain, hidden)]
    names = renames.names
    # the same pods do the same things, under their new names (placeholders the run makes are
    # named after their application, so they are left out)
    for name, pod in reports[0]["pods"].items():
        if pod.get("placeholder") and name.split("/")[1] not in names:
            continue
        namespace, pod_name = name.split("/")
        other = reports[1]["pods"][f"{names.get(namespace, namespace)}/{names.get(pod_name, pod_name)}"]
        assert (pod["state"], pod["bound"], pod["node"]) == (other["state"], other["bound"], other["node"]), name


def test_a_snapshot_keeps_the_pod_groups_its_pods_name(cluster: Cluster, tmp_path: Path) -> None:
    from tests.gang_apis import COSCHEDULING
    from tests.kube.test_operator_group_gangs import create_group, install, member

    install(cluster, COSCHEDULING)
    cluster.create_namespace("ml")
    cluster.start_herder()
    create_group(cluster, COSCHEDULING, "train", 3)
    for i in range(2):
        member(cluster, COSCHEDULING, "train", f"train-{i}")
    config = write_kubeconfig(tmp_path / "kubeconfig", cluster.server.url, token="admin-token")
    out = tmp_path / "snapshot.yaml"
    assert main(["snapshot", "--kubeconfig", str(config), "--namespace", HERDER_NAMESPACE, "--out", str(out)]) == 0
    document = yaml.safe_load(out.read_text())
    [group] = [o for o in document.get("objects", []) if o["kind"] == "PodGroup"]
    assert group["apiVersion"] == "scheduling.x-k8s.io/v1alpha1" and group["spec"] == {"minMember": 3}
    # played from there, the gang is the same gang: one pod short, then whole when its third comes
    third = {**document["workload"][0], "at": 10}
    metadata = {key: value for key, value in third["pod"]["metadata"].items() if key != "uid"}
    third["pod"] = {**third["pod"], "metadata": {**metadata, "name": "train-2"}}
    document["workload"].append(third)
    out.write_text(yaml.safe_dump(document))
    pods = _simulate(out)["pods"]
    assert [pods[f"ml/train-{i}"]["bound"] for i in range(3)] == [10, 10, 10]
