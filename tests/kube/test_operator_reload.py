"""The scheduler ConfigMap is hot-reloaded: valid changes apply at once, invalid ones are refused
with an Event on the ConfigMap that names the problem, and the running configuration stays."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.kube.conftest import QUEUES, Cluster, eventually

pytestmark = pytest.mark.timeout(60)


def queues_with_teams_max(vcore: str) -> str:
    config = json.loads(json.dumps(QUEUES))
    config["partitions"][0]["queues"][0]["queues"][0]["resources"]["max"]["vcore"] = vcore
    return yaml.safe_dump(config)


def refusals(cluster: Cluster) -> list[str]:
    return [e["message"] for e in cluster.events_about("ConfigMap", "herder-config") if e["reason"] == "ConfigRefused"]


def test_queue_limit_change_applies_without_a_restart(cluster: Cluster) -> None:
    cluster.set_config({"queues.yaml": queues_with_teams_max("2")})
    herder = cluster.start_herder()
    cluster.create_namespace("ml", {"yunikorn.apache.org/parentqueue": "root.teams"})
    names = cluster.create_pods("ml", 3, cpu="1")
    eventually(lambda: sum(1 for n in names if cluster.node_of("ml", n)) == 2, "two pods bound under max 2")
    [waiting] = [cluster.core.read_namespaced_pod(n, "ml") for n in names if not cluster.node_of("ml", n)]
    reason = eventually(lambda: herder.scheduler.pending_reason(waiting.metadata.uid), "the third pod's reason")
    assert "root.teams" in reason

    cluster.set_config({"queues.yaml": queues_with_teams_max("3")})
    cluster.all_bound("ml")
    assert herder.scheduler.queue_document("root.teams")["maxResource"]["vcore"] == 3000


def test_settings_change_applies_without_a_restart(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.set_config({"quota.recycle.delay": "5s", "scheduler.interval": "50ms"})
    eventually(lambda: herder.scheduler.settings.recycle_delay == 5.0, "the new recycle delay")
    assert herder.scheduler.settings.scheduler_interval == 0.05


def test_invalid_queues_are_refused_with_an_event_and_the_running_config_stays(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    running = herder.scheduler.config.checksum
    cluster.set_config({"queues.yaml": "partitions: [{name: default, queues: [{name: root, maxapps: 3}]}]"})
    [message] = eventually(lambda: refusals(cluster), "a ConfigRefused Event on the ConfigMap")
    assert "maxapps" in message
    assert "running configuration stays" in message
    assert herder.scheduler.config.checksum == running
    cluster.create_namespace("batch")
    cluster.create_pods("batch", 1)
    cluster.bound("batch", "job-0")


def test_bad_setting_is_refused_naming_the_key_and_nothing_of_the_change_applies(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.set_config({"quota.recycle.delay": "soon", "quota.recycle.interval": "3s"})
    [message] = eventually(lambda: refusals(cluster), "a ConfigRefused Event on the ConfigMap")
    assert "quota.recycle.delay" in message
    assert herder.scheduler.settings.recycle_interval == 1.0, "a refused change applies no part of itself"


def test_scheduler_name_cannot_change_while_running(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.set_config({"scheduler.name": "other"})
    [message] = eventually(lambda: refusals(cluster), "a ConfigRefused Event on the ConfigMap")
    assert "scheduler.name" in message
    assert herder.scheduler.settings.scheduler_name == "herder"


def test_a_fixed_configmap_applies_after_a_refused_one(cluster: Cluster) -> None:
    herder = cluster.start_herder()
    cluster.set_config({"quota.recycle.delay": "soon"})
    eventually(lambda: refusals(cluster), "a ConfigRefused Event on the ConfigMap")
    cluster.set_config({"quota.recycle.delay": "7s"})
    eventually(lambda: herder.scheduler.settings.recycle_delay == 7.0, "the corrected delay to apply")


def test_seed_004_static_queues_in_old_units_apply_with_a_config_warning_event(cluster: Cluster) -> None:
    # Seed 004, "Static queue definition": `memory: 100000` meant MB and `vcore: 10000` millicores.
    herder = cluster.start_herder()
    sandbox = "{name: sandbox, resources: {max: {memory: 100000, vcore: 10000}}}"
    old_units = f"partitions: [{{name: default, queues: [{{name: root, queues: [{sandbox}]}}]}}]"
    cluster.set_config({"queues.yaml": old_units})

    def warnings() -> list[str]:
        events = cluster.events_about("ConfigMap", "herder-config")
        return [e["message"] for e in events if e["reason"] == "ConfigWarning"]

    [message] = eventually(warnings, "a ConfigWarning Event on the ConfigMap")
    assert "root.sandbox.resources.max: memory 100000 is read as 100000 bytes" in message
    assert "write '100000M'" in message and "write '10000m' for 10 cores" in message
    assert herder.scheduler.queue_document("root.sandbox")["maxResource"] == {"memory": 100000, "vcore": 10000000}


def test_a_refusal_names_every_problem_and_brings_the_warnings_that_explain_them(cluster: Cluster) -> None:
    # The same check as `herder validate`: a structural problem (a repeated key), a semantic one
    # (guaranteed above max, in the file's units) and the old-unit warning that explains it.
    herder = cluster.start_herder()
    running = herder.scheduler.config.checksum
    sandbox = "{name: sandbox, resources: {guaranteed: {vcore: 10000}, max: {vcore: 5}}}"
    root = f"{{name: root, queues: [{sandbox}]}}"
    cluster.set_config({"queues.yaml": f"partitions: [{{name: default, name: default, queues: [{root}]}}]"})
    [message] = eventually(lambda: refusals(cluster), "a ConfigRefused Event on the ConfigMap")
    assert "queues.yaml: line 1, column 30: key 'name' is given again (first at line 1)" in message
    assert "queues.yaml: partitions[default].queues.root.sandbox: guaranteed vcore 10000 exceeds max 5" in message
    assert (
        "(warnings: queues.yaml: partitions[default].queues.root.sandbox.resources.guaranteed: vcore 10000" in message
    )
    assert herder.scheduler.config.checksum == running
