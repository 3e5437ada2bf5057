"""The `herder` command as a user meets it: exit codes, messages on stderr, and the flags the chart passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from shim.cli import build_parser, main
from tests.seeds import SEED_004_NAMESPACE_MAPPING, SEED_004_STATIC

ROOT = Path(__file__).resolve().parents[2]


def test_version_names_the_installed_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("herder ")


def test_validate_accepts_the_shipped_scheduler_config_map(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(ROOT / "manifests" / "examples" / "scheduler-config.yaml")]) == 0
    assert "valid" in capsys.readouterr().out


def test_validate_lists_every_problem_with_its_path_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "queues.yaml"
    config.write_text(
        "partitions:\n"
        "  - name: default\n"
        "    queues:\n"
        "      - name: root\n"
        "        colour: blue\n"
        "        queues:\n"
        "          - name: a\n"
        "            resources: {guaranteed: {vcore: 4}, max: {vcore: 2}}\n"
    )
    assert main(["validate", str(config)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "unknown key 'colour'" in captured.err
    assert "partitions[default].queues.root" in captured.err


def test_validate_refuses_a_bad_setting_in_the_config_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: herder-config}\n"
        "data:\n  queues.yaml: |\n    partitions: [{name: default, queues: [{name: root}]}]\n"
        "  quota.recycle.delay: soon\n"
    )
    assert main(["validate", str(manifest)]) == 1
    assert "quota.recycle.delay" in capsys.readouterr().err


def test_validate_of_a_missing_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path / "nope.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_validate_of_broken_yaml_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("partitions: [\n")
    assert main(["validate", str(broken)]) == 1
    assert "not valid YAML" in capsys.readouterr().err


def test_run_accepts_the_flags_the_helm_chart_passes() -> None:
    args = build_parser().parse_args(
        [
            "run",
            "--namespace=herder-system",
            "--config-map=herder-config",
            "--rest-port=9080",
            "--webhook-port=9443",
            "--webhook-cert-dir=/etc/herder/webhook",
        ]
    )
    assert (args.namespace, args.configmap, args.rest_port, args.webhook_port) == (
        "herder-system",
        "herder-config",
        9080,
        9443,
    )


@pytest.mark.parametrize(
    ("content", "named"),
    [
        (b"\xff\xfepartitions: []\n", "is not UTF-8 text (byte 0)"),
        (b"- a\n- b\n", "expected a queues.yaml mapping, got list"),
        (b"42\n", "expected a queues.yaml mapping, got int"),
        (b"kind: ConfigMap\ndata: [a, b]\n", "ConfigMap data: expected a mapping, got list"),
        (b"kind: ConfigMap\ndata: {queues.yaml: 5}\n", "expected queues.yaml text or a mapping, got int"),
        (b"a: " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested deeper than 100 levels"),
    ],
)
def test_validate_of_malformed_files_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, named: str
) -> None:
    path = tmp_path / "queues.yaml"
    path.write_bytes(content)
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert named in err
    assert "Traceback" not in err


def test_validate_names_preemption_and_priority_problems_and_warns_about_stateaware(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "queues.yaml"
    queue = "partitions:\n  - name: default\n    queues:\n      - name: root\n        queues:\n          - name: a\n"
    config.write_text(queue + "            properties: {preemption.delay: soon, priority.offset: high}\n")
    assert main(["validate", str(config)]) == 1
    err = capsys.readouterr().err
    assert "root.a.properties.preemption.delay: not a duration: 'soon'" in err
    assert "root.a.properties.priority.offset: not an integer: 'high'" in err
    config.write_text(queue + "            properties: {application.sort.policy: stateaware}\n")
    assert main(["validate", str(config)]) == 0
    assert "warning: partitions[default].queues.root.a.properties.application.sort.policy: 'stateaware'" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize(
    ("seed_example", "warned"),
    [
        # Seed 004, "Static queue definition": plain numbers only the old units explain.
        (
            SEED_004_STATIC,
            ["root.sandbox.resources.max: memory 100000", "write '100000M' for 100000 MB", "'10000m' for 10 cores"],
        ),
        # Seed 004, "Namespace to queue mapping": the deprecated stateaware policy.
        (SEED_004_NAMESPACE_MAPPING, ["root.properties.application.sort.policy: 'stateaware'", "read as 'fifo'"]),
    ],
)
def test_validate_of_a_seed_example_says_it_is_valid_and_lists_its_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed_example: str, warned: list[str]
) -> None:
    config = tmp_path / "queues.yaml"
    config.write_text(seed_example)
    assert main(["validate", str(config)]) == 0
    out = capsys.readouterr().out
    assert ": valid (" in out and "  warning: partitions[default].queues." in out
    for text in warned:
        assert text in out


# -- herder validate: every problem of every kind, warnings always ---------------------------------

THREE_KINDS = """partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: a
            maxApplications: 3
            resources:
              guaranteed: {vcore: 10000}
              max: {vcore: 5}
"""


def test_validate_prints_a_structural_and_a_semantic_problem_and_an_old_unit_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "queues.yaml"
    config.write_text(THREE_KINDS)
    assert main(["validate", str(config)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert lines[0] == f"herder validate: {config} is invalid (2 problems):"
    assert lines[1] == (
        "  - partitions[default].queues.root.a: unknown key 'maxApplications' (did you mean 'maxapplications'?)"
    )
    assert lines[2] == "  - partitions[default].queues.root.a: guaranteed vcore 10000 exceeds max 5"
    assert lines[3].startswith("  warning: partitions[default].queues.root.a.resources.guaranteed: vcore 10000 is read")


def test_validate_of_a_file_without_the_default_partition_is_a_clear_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "queues.yaml"
    config.write_text("partitions:\n  - name: gpu\n    queues:\n      - name: root\n")
    assert main(["validate", str(config)]) == 1
    err = capsys.readouterr().err
    assert "  - partitions: Herder schedules the partition 'default' only" in err
    assert "it defines 'gpu'" in err and "Traceback" not in err


def test_simulate_with_a_partition_not_named_default_is_a_clear_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "gpu.yaml"
    scenario.write_text(
        "config:\n  partitions:\n    - name: gpu\n      queues: [{name: root}]\n"
        "nodes:\n  - {name: n1, allocatable: {cpu: '4', memory: 8Gi}}\n"
    )
    assert main(["simulate", str(scenario), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "config: partitions: Herder schedules the partition 'default' only" in err
    assert "Traceback" not in err


def test_validate_checksums_the_text_of_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import hashlib

    text = "partitions:\n  - name: default   # the only one\n    queues: [{name: root}]\n"
    config = tmp_path / "queues.yaml"
    config.write_text(text)
    assert main(["validate", str(config)]) == 0
    assert f"checksum {hashlib.sha256(text.encode()).hexdigest()}" in capsys.readouterr().out


def test_validate_of_a_config_map_names_repeated_keys_of_the_manifest_and_its_queues(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: herder-config}\n"
        "data:\n  bind.workers: '8'\n  queues.yaml: |\n    partitions:\n      - name: default\n"
        "        queues: [{name: root}]\n        queues: []\n  bind.workers: '9'\n"
    )
    assert main(["validate", str(manifest)]) == 1
    err = capsys.readouterr().err
    assert "  - ConfigMap: line 11, column 3: key 'bind.workers' is given again (first at line 5)" in err
    assert "  - queues.yaml: line 4, column 5: key 'queues' is given again (first at line 3)" in err
