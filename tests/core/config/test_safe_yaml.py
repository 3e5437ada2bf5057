"""A user's YAML costs bounded time and memory whatever its shape, and refusals say why and where."""

from __future__ import annotations

from typing import Any

import pytest

from core.config import ConfigError, load_config
from core.config.safe_yaml import DuplicateKey, YAMLDuplicateKeyError, YAMLLimitError, load_yaml


def nested_queues(depth: int) -> dict[str, Any]:
    queue: dict[str, Any] = {"name": f"q{depth}"}
    for level in range(depth - 1, -1, -1):
        queue = {"name": f"q{level}", "queues": [queue]}
    return {"partitions": [{"name": "default", "queues": [{"name": "root", "queues": [queue]}]}]}


# Every refusal holds on both paths: libyaml's (checked on its event stream) and pure Python's.
LIBYAML = pytest.mark.parametrize("libyaml", [True, False], ids=["libyaml", "python"])


@LIBYAML
def test_anchors_and_aliases_within_the_limit_read_as_usual(libyaml: bool) -> None:
    text = "a: &x {b: 1}\nc: *x\nd: [*x, *x]\ne: &s 3\nf: *s\n"
    assert load_yaml(text, libyaml=libyaml) == {"a": {"b": 1}, "c": {"b": 1}, "d": [{"b": 1}] * 2, "e": 3, "f": 3}


@LIBYAML
def test_aliases_expanding_past_the_limit_are_refused_at_their_line(libyaml: bool) -> None:
    lines = ["a0: &a0 [1, 2, 3, 4, 5, 6, 7, 8]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 8)}]" for i in range(1, 12)]
    with pytest.raises(YAMLLimitError, match="aliases are expanded") as refused:
        load_yaml("\n".join(lines), libyaml=libyaml)
    assert refused.value.problem_mark is not None and refused.value.problem_mark.line < 12


@LIBYAML
@pytest.mark.parametrize(("limit", "refused"), [(13, False), (12, True)])
def test_the_node_limit_counts_alike_on_both_paths(libyaml: bool, limit: int, refused: bool) -> None:
    text = "a: &x [1, 2]\nb: [*x, *x]\n"  # the mapping 1, keys 1 + 1, x 3, [*x, *x] 1 + 3 + 3: 13
    try:
        load_yaml(text, max_nodes=limit, libyaml=libyaml)
    except YAMLLimitError:
        assert refused
    else:
        assert not refused


@LIBYAML
def test_an_alias_inside_what_it_names_is_refused(libyaml: bool) -> None:
    with pytest.raises(YAMLLimitError, match="refers to a value that contains it"):
        load_yaml("a: &x [1, *x]\n", libyaml=libyaml)


@LIBYAML
def test_nesting_thousands_deep_is_refused_not_a_recursion_error(libyaml: bool) -> None:
    with pytest.raises(YAMLLimitError, match="nested deeper than 100"):
        load_yaml("[" * 5000 + "]" * 5000, libyaml=libyaml)
    with pytest.raises(YAMLLimitError, match="nested deeper than 3"):
        load_yaml("[[[1]]]", max_depth=3, libyaml=libyaml)
    assert load_yaml("[[1]]", max_depth=3, libyaml=libyaml) == [[1]]
    with pytest.raises(ConfigError, match="too large to check at line 1"):
        load_config("a: " + "{b: " * 5000 + "1" + "}" * 5000)


def test_text_beyond_the_size_limit_is_refused_before_parsing() -> None:
    with pytest.raises(YAMLLimitError, match="more than the 1048576 allowed"):
        load_yaml("# " + "x" * (1024 * 1024))


@pytest.mark.parametrize("depth", [41, 200, 2000])
def test_queues_nested_past_forty_levels_are_refused_naming_where(depth: int) -> None:
    with pytest.raises(ConfigError) as refused:
        load_config(nested_queues(depth))
    assert any("nested deeper than" in problem for problem in refused.value.problems)


def test_forty_levels_of_queues_are_accepted() -> None:
    config = load_config(nested_queues(39))
    assert config.partition().queues[0].name == "root"


@pytest.mark.parametrize("source", [[1, 2], 5, 3.5])
def test_a_config_that_is_not_a_mapping_is_a_config_error(source: Any) -> None:
    with pytest.raises(ConfigError, match=r"expected queues\.yaml text or a mapping"):
        load_config(source)


# -- repeated keys --------------------------------------------------------------------------------

REPEATED = """partitions:
  - name: default
    queues:
      - name: root
        queues: [{name: a, name: b}]
    queues: []
"""


@LIBYAML
def test_a_repeated_key_is_refused_naming_both_lines(libyaml: bool) -> None:
    with pytest.raises(YAMLDuplicateKeyError) as refused:
        load_yaml(REPEATED, libyaml=libyaml)
    assert refused.value.problem == "key 'name' is given again (first at line 5)"
    mark = refused.value.problem_mark
    assert mark is not None and (mark.line + 1, mark.column + 1) == (5, 28)


@LIBYAML
def test_repeated_keys_can_be_collected_and_the_document_read_as_usual(libyaml: bool) -> None:
    found: list[DuplicateKey] = []
    data = load_yaml(REPEATED, libyaml=libyaml, duplicate_keys=found)
    assert data["partitions"][0]["queues"] == []  # the later value, as PyYAML keeps it
    assert [(d.key, d.line, d.first_line) for d in found] == [("name", 5, 5), ("queues", 6, 3)]


@LIBYAML
@pytest.mark.parametrize(
    ("text", "repeated"),
    [
        ("a: 1\n'a': 2\n", True),  # quoting does not make another key
        ("1: x\n'1': y\n", False),  # the number 1 and the text '1' are two keys
        ("true: 1\nTrue: 2\n", True),  # both the boolean true
        ("base: &b {x: 1}\nm:\n  <<: *b\n  x: 2\n", False),  # overriding a merged key is what merging is for
        ("[{a: 1}, {a: 2}]\n", False),  # the same key in two mappings
    ],
)
def test_what_counts_as_the_same_key_is_what_loads_as_the_same_key(libyaml: bool, text: str, repeated: bool) -> None:
    found: list[DuplicateKey] = []
    load_yaml(text, libyaml=libyaml, duplicate_keys=found)
    assert bool(found) is repeated


def test_a_repeated_key_in_a_config_is_a_problem_with_its_line() -> None:
    with pytest.raises(ConfigError) as refused:
        load_config(REPEATED)
    assert refused.value.problems[:2] == [
        "line 5, column 28: key 'name' is given again (first at line 5); the later value would silently replace "
        "the first",
        "line 6, column 5: key 'queues' is given again (first at line 3); the later value would silently replace "
        "the first",
    ]
