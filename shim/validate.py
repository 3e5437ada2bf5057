"""`herder validate FILE`: check a queues.yaml, or a scheduler ConfigMap manifest, as Herder would.

The file goes through `core.config.check_config` (a manifest's data through
`check_config_data`), the same check the ConfigMap reload and `POST /ws/v1/validate-conf`
run. Every problem is listed with its path, then every warning, whether the file is valid or
not (a warning often explains a problem: a plain number read in new units). Exit 0 when
valid, 1 when not, 2 when the file cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from core.config import ConfigReport, SchedulerConfig, check_config, check_config_data
from core.config.safe_yaml import DuplicateKey, load_yaml
from shim.command import EXIT_INVALID, EXIT_OK, EXIT_USAGE, read_user_text


def check_file(text: str) -> ConfigReport:
    """The report for a file holding queues.yaml or a ConfigMap manifest with it in `data`."""
    duplicates: list[DuplicateKey] = []
    document = load_yaml(text, duplicate_keys=duplicates)
    if isinstance(document, dict) and document.get("kind") == "ConfigMap":
        data = document.get("data") or {}
        if not isinstance(data, dict):
            return ConfigReport(None, None, (f"ConfigMap data: expected a mapping, got {type(data).__name__}",), ())
        report = check_config_data(data)
        manifest = tuple(f"ConfigMap: {duplicate}" for duplicate in duplicates)
        return ConfigReport(report.config, report.settings, manifest + report.problems, report.warnings)
    if document is not None and not isinstance(document, dict):
        return ConfigReport(None, None, (f"config: expected a queues.yaml mapping, got {type(document).__name__}",), ())
    return check_config(text)


def _queue_count(config: SchedulerConfig) -> int:
    count = 0
    stack = list(config.partition().queues)
    while stack:
        queue = stack.pop()
        count += 1
        stack.extend(queue.queues)
    return count


def validate_command(args: argparse.Namespace) -> int:
    path = Path(args.config)
    try:
        report = check_file(read_user_text(path))
    except OSError as err:
        print(f"herder validate: cannot read {path}: {err.strerror}", file=sys.stderr)
        return EXIT_USAGE
    except yaml.YAMLError as err:
        print(f"herder validate: {path} is not valid YAML: {err}", file=sys.stderr)
        return EXIT_INVALID
    except ValueError as err:  # too big, not UTF-8
        print(f"herder validate: {err}", file=sys.stderr)
        return EXIT_INVALID
    if report.config is None:
        problems = len(report.problems)
        print(f"herder validate: {path} is invalid ({problems} problem{'s' * (problems != 1)}):", file=sys.stderr)
        for problem in report.problems:
            print(f"  - {problem}", file=sys.stderr)
        for warning in report.warnings:
            print(f"  warning: {warning}", file=sys.stderr)
        return EXIT_INVALID
    print(f"{path}: valid ({_queue_count(report.config)} queues, checksum {report.config.checksum})")
    for warning in report.warnings:
        print(f"  warning: {warning}")
    return EXIT_OK
