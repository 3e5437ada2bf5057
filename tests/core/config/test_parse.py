"""Parsing queues.yaml: strict keys and types with paths, root insertion, warnings, checksum, examples."""

from __future__ import annotations

import hashlib

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from core.config import ConfigError, config_document, default_config, load_config, parse_config
from tests.seeds import SEED_004_NAMESPACE_MAPPING

SEED_004_QUOTAS = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: advertisement
            resources:
              guaranteed: {memory: 500000, vcore: 50000}
              max: {memory: 800000, vcore: 80000}
          - name: search
            resources:
              guaranteed: {memory: 400000, vcore: 40000}
              max: {memory: 600000, vcore: 60000}
          - name: sandbox
            resources:
              guaranteed: {memory: 100000, vcore: 10000}
              max: {memory: 100000, vcore: 10000}
"""

SEED_004_TAG = SEED_004_NAMESPACE_MAPPING

SEED_001_LIMITS = """
partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: a
            limits:
              - limit: "specific user"
                users: ["sue"]
                maxresources: {memory: 25G, vcore: 5}
              - limit: "specific groups"
                groups: ["development", "test"]
                maxresources: {memory: 100G, vcore: 10}
              - limit: "user catch all"
                users: ["*"]
                maxresources: {memory: 10G, vcore: 1}
              - limit: "group catch all"
                groups: ["*"]
                maxresources: {memory: 50G, vcore: 10}
"""


def _problems(source: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(source)
    return info.value.problems


def test_seed_004_quota_example_loads_with_vcore_in_millicores() -> None:
    cfg = load_config(SEED_004_QUOTAS)
    root = cfg.partition().root
    assert [q.name for q in root.queues] == ["advertisement", "search", "sandbox"]
    assert root.queues[0].max == {"memory": 800000, "vcore": 80000000}
    assert root.submit_acl == "*"


def test_seed_004_static_queues_warn_for_each_value_only_the_old_units_explain() -> None:
    # Seed 004, "Static queue definition": YuniKorn before 1.0 read memory in MB, vcore in millicores.
    warnings = load_config(SEED_004_QUOTAS).warnings
    assert len(warnings) == 12  # memory and vcore of guaranteed and max, three queues
    assert (
        "partitions[default].queues.root.sandbox.resources.max: memory 100000 is read as 100000 bytes; "
        "YuniKorn before 1.0 read a plain memory number as MB: write '100000M' for 100000 MB"
    ) in warnings
    assert (
        "partitions[default].queues.root.sandbox.resources.max: vcore 10000 is read as 10000 cores; "
        "YuniKorn before 1.0 read a plain vcore number as millicores: write '10000m' for 10 cores"
    ) in warnings


def test_quantities_that_make_sense_today_get_no_old_unit_warning() -> None:
    text = SEED_004_QUOTAS
    for old, new in (("500000", "500000M"), ("800000", "64Gi"), ("50000", "50"), ("80000", "999")):
        text = text.replace(f"memory: {old}", f"memory: {new}").replace(f"vcore: {old}", f"vcore: {new}")
    warned = {w.split(":")[0] for w in load_config(text).warnings}
    assert not any("advertisement" in where for where in warned)
    assert (
        load_config(
            "partitions: [{name: default, queues: [{name: root, queues: [{name: a, "
            "resources: {max: {memory: 2Mi, vcore: '500m'}}}]}]}]"
        ).warnings
        == ()
    )


def test_seed_004_tag_example_loads_and_warns_stateaware_is_fifo() -> None:
    cfg = load_config(SEED_004_TAG)
    rule = cfg.partition().placement_rules[0]
    assert (rule.name, rule.value, rule.create) == ("tag", "namespace", True)
    assert any("stateaware" in w for w in cfg.warnings)


def test_seed_001_catch_all_limits_example_loads() -> None:
    cfg = load_config(SEED_001_LIMITS)
    limits = cfg.partition().root.queues[0].limits
    assert [lim.limit for lim in limits] == [
        "specific user",
        "specific groups",
        "user catch all",
        "group catch all",
    ]
    assert limits[0].users == ("sue",)
    assert limits[0].max_resources == {"memory": 25 * 10**9, "vcore": 5000}


def test_unknown_key_is_named_with_its_queue_path() -> None:
    source = "partitions:\n- name: default\n  queues:\n  - name: root\n    queues:\n    - name: a\n"
    source += "      resources: {maxx: {vcore: 1}}\n"
    problems = _problems(source)
    assert problems == ["partitions[default].queues.root.a.resources: unknown key 'maxx' (did you mean 'max'?)"]


def test_every_problem_is_collected_not_just_the_first() -> None:
    source = """
partitions:
  - name: default
    bogus: 1
    queues:
      - name: root
        queues:
          - name: a
            maxapplications: many
          - name: b
            resources: {max: {memory: lots}}
"""
    problems = _problems(source)
    assert len(problems) == 3
    assert any("partitions[default]: unknown key 'bogus'" in p for p in problems)
    assert any(p.startswith("partitions[default].queues.root.a.maxapplications") for p in problems)
    assert any(p.startswith("partitions[default].queues.root.b.resources.max") for p in problems)


def test_error_text_lists_each_problem_on_its_own_line() -> None:
    err = ConfigError(["one", "two"])
    assert str(err) == "one\ntwo"
    assert isinstance(err, ValueError)


def test_yaml_syntax_error_reports_line_and_column() -> None:
    problems = _problems("partitions:\n  - name: [unclosed\n")
    assert len(problems) == 1
    assert "line" in problems[0] and "column" in problems[0]


def test_root_is_inserted_above_top_level_queues() -> None:
    cfg = parse_config("partitions:\n- queues:\n  - name: a\n  - name: b\n")
    part = cfg.partition()
    assert part.name == "default"
    assert part.root.name == "root"
    assert [q.name for q in part.root.queues] == ["a", "b"]


def test_queue_names_and_property_keys_keep_their_case() -> None:
    cfg = parse_config(
        "partitions:\n- queues:\n  - name: Root\n    queues:\n    - name: TeamA\n      properties: {X.Y: v}\n"
    )
    child = cfg.partition().root.queues[0]
    assert child.name == "TeamA"
    assert dict(child.properties) == {"X.Y": "v"}


def test_cpu_is_read_as_vcore_with_a_warning() -> None:
    cfg = parse_config("partitions:\n- queues:\n  - name: a\n    resources: {max: {cpu: 500m}}\n")
    assert cfg.partition().root.queues[0].max == {"vcore": 500}
    assert any("'cpu'" in w and "root.a" in w for w in cfg.warnings)


def test_source_and_checksum_are_kept() -> None:
    cfg = parse_config(SEED_004_TAG)
    assert cfg.source == SEED_004_TAG
    assert cfg.checksum == hashlib.sha256(SEED_004_TAG.encode()).hexdigest()


def test_mapping_source_is_kept_as_yaml_text() -> None:
    data = yaml.safe_load(SEED_004_QUOTAS)
    cfg = parse_config(data)
    assert yaml.safe_load(cfg.source) == data
    assert cfg.checksum == hashlib.sha256(cfg.source.encode()).hexdigest()


@pytest.mark.parametrize("source", [None, "", "   \n"])
def test_empty_source_means_the_default_config(source: str | None) -> None:
    assert parse_config(source) == default_config()


def test_default_config_is_tag_namespace_with_open_root() -> None:
    part = default_config().partition()
    assert part.root.submit_acl == "*"
    assert part.node_sort_policy.type == "binpacking"
    rule = part.placement_rules[0]
    assert (rule.name, rule.value, rule.create) == ("tag", "namespace", True)


def test_partition_limits_become_root_limits() -> None:
    source = """
partitions:
  - name: default
    limits:
      - users: ["*"]
        maxapplications: 3
    queues:
      - name: root
"""
    cfg = load_config(source)
    assert cfg.partition().root.limits[0].max_applications == 3


def test_preemption_flag_is_read() -> None:
    cfg = parse_config("partitions:\n- preemption: {enabled: false}\n  queues: [{name: root}]\n")
    assert cfg.partition().preemption_enabled is False


def test_wrong_type_is_named_with_its_path() -> None:
    problems = _problems("partitions:\n- queues:\n  - name: root\n    queues: {a: 1}\n")
    assert problems == ["partitions[default].queues.root.queues: expected a list, got dict"]


def test_config_document_uses_yunikorn_keys_and_integer_resources() -> None:
    cfg = load_config(SEED_004_QUOTAS)
    doc = config_document(cfg)
    assert doc["checksum"] == cfg.checksum
    adv = doc["partitions"][0]["queues"][0]["queues"][0]
    assert adv["name"] == "advertisement"
    assert adv["resources"]["max"] == {"memory": 800000, "vcore": 80000000}
    assert doc["partitions"][0]["queues"][0]["submitacl"] == "*"
    assert yaml.safe_load(yaml.safe_dump(doc)) == doc


_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8))
_keys = st.sampled_from(
    [
        "partitions",
        "name",
        "queues",
        "resources",
        "max",
        "guaranteed",
        "limits",
        "users",
        "groups",
        "maxresources",
        "maxapplications",
        "placementrules",
        "filter",
        "parent",
        "vcore",
        "memory",
        "x",
    ]
)
_yamlish = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_keys, _yamlish, max_size=3))
def test_parse_never_raises_anything_but_config_error(data: dict[str, object]) -> None:
    try:
        cfg = load_config(data)
    except ConfigError as err:
        assert err.problems and all(isinstance(p, str) and p for p in err.problems)
    else:
        assert all(part.root.name.lower() == "root" for part in cfg.partitions)


def test_unschedulable_ask_backoff_is_accepted_and_said_to_be_ignored() -> None:
    cfg = load_config(
        """
partitions:
  - name: default
    queues:
      - name: root
        properties: {application.unschedasks.backoff: "3", application.unschedasks.backoff.delay: 30s}
"""
    )
    warned = [w for w in cfg.warnings if "application.unschedasks.backoff" in w]
    assert len(warned) == 2 and all("ignored" in w for w in warned)
