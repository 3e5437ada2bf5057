"""A workload trace: a team's history as rows (CSV or JSON lines), replayed as a scenario's workload.

Each row is one or more identical pods arriving together. The columns (CSV header names or JSON
keys, any order, case-insensitive):

    arrival      seconds from the start of the trace (required)
    duration     seconds the pods run once bound (empty: until the end of the run)
    namespace    the pods' namespace (default: default)
    queue        the yunikorn.apache.org/queue label (read when a `provided` rule is configured)
    user         the submitting user; groups: its groups, separated by `;` or `|`
    cpu, memory, gpu      requests per pod as Kubernetes quantities (gpu is nvidia.com/gpu)
    requests     (JSON lines only) a mapping of any other resource to its quantity
    pods         how many pods the row makes (default 1)
    application  rows naming the same application are one application (default: the row's own)
    gang         the row's pods are a gang of at least this many members (a YuniKorn task
                 group): none starts before that many can (default: no gang); a gang's
                 application is its row's alone
    priority     the pods' priority (an integer)
    scheduler    spec.schedulerName (default: herder; another scheduler's pods are foreign)
    name         the pods' name (default: `<application>-<row>`)

Rows are read strictly: every problem is reported with its line and column, and at most
`MAX_TRACE_ROWS` rows are read. What a row says becomes an ordinary Pod manifest, so a trace
row goes through the same conversion as every other pod of the simulator.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from shim.convert.gangs.yunikorn import ANNOTATION_TASK_GROUP_NAME, ANNOTATION_TASK_GROUPS
from shim.convert.identity import ANNOTATION_USER_INFO, LABEL_APP_ID, LABEL_QUEUE

MAX_TRACE_ROWS = 1_000_000
MAX_TRACE_BYTES = 256 * 1024 * 1024
MAX_PODS_PER_ROW = 100_000
MAX_PROBLEMS = 20
COLUMNS = (
    "arrival",
    "duration",
    "namespace",
    "queue",
    "user",
    "groups",
    "cpu",
    "memory",
    "gpu",
    "requests",
    "pods",
    "application",
    "gang",
    "priority",
    "scheduler",
    "name",
)
GPU = "nvidia.com/gpu"
GANG_GROUP = "members"


class TraceError(ValueError):
    """The trace cannot be replayed; `problems` name each line and column that is wrong."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True, slots=True)
class TraceRow:
    """One row: `count` pods of one shape arriving at `arrival`."""

    line: int
    arrival: float
    duration: float | None
    namespace: str
    requests: Mapping[str, str]
    count: int
    application: str
    gang: int | None
    priority: int | None
    queue: str | None
    user: str | None
    groups: tuple[str, ...]
    scheduler: str
    name: str


def _records(text: str, source: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(line, record) for each row: JSON lines when the first non-blank character is `{`, else CSV."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise TraceError([f"{source}:{number}: not valid JSON: {error.msg}"]) from None
            if not isinstance(record, dict):
                raise TraceError([f"{source}:{number}: expected an object, got {type(record).__name__}"])
            yield number, {str(key).lower(): value for key, value in record.items()}
        return
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    for row in reader:
        if not row or all(not cell.strip() for cell in row):
            continue
        if header is None:
            header = [cell.strip().lower() for cell in row]
            unknown = [name for name in header if name not in COLUMNS]
            if unknown:
                raise TraceError([f"{source}:{reader.line_num}: unknown column {unknown[0]!r} ({_expected()})"])
            if "arrival" not in header:
                raise TraceError([f"{source}:{reader.line_num}: the header needs an `arrival` column ({_expected()})"])
            continue
        if len(row) > len(header):
            raise TraceError([f"{source}:{reader.line_num}: {len(row)} values for {len(header)} columns"])
        yield reader.line_num, {name: cell.strip() for name, cell in zip(header, row) if cell.strip() != ""}


def _expected() -> str:
    return "columns: " + ", ".join(COLUMNS)


class _RowReader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[str] = []

    def bad(self, line: int, column: str, message: str) -> None:
        self.problems.append(f"{self.source}:{line}: {column}: {message}")

    def number(self, record: Mapping[str, Any], line: int, column: str, required: bool = False) -> float | None:
        value = record.get(column)
        if value is None:
            if required:
                self.bad(line, column, "required (seconds)")
            return None
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.bad(line, column, f"must be a number of seconds, got {value!r}")
            return None
        if not 0 <= number <= 10 * 365 * 24 * 3600:  # also refuses NaN
            self.bad(line, column, f"must be from 0 to ten years of seconds, got {value!r}")
            return None
        return number

    def whole(self, record: Mapping[str, Any], line: int, column: str, low: int, high: int) -> int | None:
        value = record.get(column)
        if value is None:
            return None
        try:
            number = int(str(value))
        except ValueError:
            self.bad(line, column, f"must be a whole number, got {value!r}")
            return None
        if not low <= number <= high:
            self.bad(line, column, f"must be from {low} to {high}, got {number}")
            return None
        return number

    def text(self, record: Mapping[str, Any], line: int, column: str) -> str | None:
        value = record.get(column)
        if value is None:
            return None
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            self.bad(line, column, f"must be a string, got {value!r}")
            return None
        return str(value)


def read_trace(text: str, source: str) -> list[TraceRow]:
    """Every row of a trace, or TraceError naming each problem (at most MAX_PROBLEMS of them)."""
    reader = _RowReader(source)
    rows: list[TraceRow] = []
    for index, (line, record) in enumerate(_records(text, source)):
        if index >= MAX_TRACE_ROWS:
            raise TraceError([f"{source}: more than {MAX_TRACE_ROWS} rows"])
        unknown = [key for key in record if key not in COLUMNS]
        if unknown:
            reader.bad(line, unknown[0], f"unknown key ({_expected()})")
        before = len(reader.problems)
        row = _row(reader, index, line, record)
        if row is not None and len(reader.problems) == before:
            rows.append(row)
        if len(reader.problems) >= MAX_PROBLEMS:
            reader.problems.append(f"{source}: stopped after {MAX_PROBLEMS} problems")
            break
    if reader.problems:
        raise TraceError(reader.problems)
    _check_gangs(rows, source)
    return rows


def _row(reader: _RowReader, index: int, line: int, record: Mapping[str, Any]) -> TraceRow | None:
    arrival = reader.number(record, line, "arrival", required=True)
    duration = reader.number(record, line, "duration")
    if duration == 0:
        reader.bad(line, "duration", "must be above 0 (leave it empty for pods that run until the end)")
    requests: dict[str, str] = {}
    for column, resource in (("cpu", "cpu"), ("memory", "memory"), ("gpu", GPU)):
        value = reader.text(record, line, column)
        if value is not None:
            requests[resource] = value
    extra = record.get("requests")
    if extra is not None:
        if not isinstance(extra, Mapping):
            reader.bad(line, "requests", f"must be a mapping of resource to quantity, got {extra!r}")
        else:
            requests.update({str(key): str(value) for key, value in extra.items()})
    count = reader.whole(record, line, "pods", 1, MAX_PODS_PER_ROW) or 1
    gang = reader.whole(record, line, "gang", 1, MAX_PODS_PER_ROW)
    if gang is not None and gang > count:
        reader.bad(line, "gang", f"{gang} members but the row makes {count} pods")
    priority = reader.whole(record, line, "priority", -(2**31), 2**31 - 1)
    application = reader.text(record, line, "application") or f"trace-{index + 1}"
    groups_text = reader.text(record, line, "groups") or ""
    groups = tuple(g.strip() for g in groups_text.replace("|", ";").split(";") if g.strip())
    if arrival is None:
        return None
    return TraceRow(
        line=line,
        arrival=arrival,
        duration=duration,
        namespace=reader.text(record, line, "namespace") or "default",
        requests=requests,
        count=count,
        application=application,
        gang=gang,
        priority=priority,
        queue=reader.text(record, line, "queue"),
        user=reader.text(record, line, "user"),
        groups=groups,
        scheduler=reader.text(record, line, "scheduler") or "herder",
        name=reader.text(record, line, "name") or f"{application}-{index + 1}",
    )


def _check_gangs(rows: list[TraceRow], source: str) -> None:
    """A gang is one row: its application is no other row's."""
    rows_of: dict[str, int] = {}
    for row in rows:
        rows_of[row.application] = rows_of.get(row.application, 0) + 1
    problems: list[str] = []
    for row in rows:
        if row.gang is not None and rows_of[row.application] > 1:
            problems.append(f"{source}:{row.line}: gang: application {row.application} has other rows (one row a gang)")
    if problems:
        raise TraceError(problems[:MAX_PROBLEMS])


def trace_shape(row: TraceRow) -> tuple[object, ...] | None:
    """What the pods of rows of one shape share: everything of `trace_pod` but the name and the
    application (None for a gang's row: its gang is its own)."""
    if row.gang is not None:
        return None
    requests = tuple(sorted(row.requests.items()))
    return (row.namespace, row.queue, row.user, row.groups, row.scheduler, row.priority, requests)


def trace_pod(row: TraceRow) -> dict[str, Any]:
    """The Pod manifest a row's pods share (the simulator names each copy)."""
    labels = {LABEL_APP_ID: row.application}
    if row.queue:
        labels[LABEL_QUEUE] = row.queue
    annotations: dict[str, str] = {}
    if row.user:
        annotations[ANNOTATION_USER_INFO] = _user_info(row.user, row.groups)
    if row.gang is not None:
        group = {"name": GANG_GROUP, "minMember": row.gang, "minResource": dict(row.requests)}
        annotations[ANNOTATION_TASK_GROUPS] = json.dumps([group])
        annotations[ANNOTATION_TASK_GROUP_NAME] = GANG_GROUP
    spec: dict[str, Any] = {
        "schedulerName": row.scheduler,
        "containers": [{"name": "main", "image": "trace", "resources": {"requests": dict(row.requests)}}],
    }
    if row.priority is not None:
        spec["priority"] = row.priority
    metadata: dict[str, Any] = {"name": row.name, "namespace": row.namespace, "labels": labels}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


@lru_cache(maxsize=4096)
def _user_info(user: str, groups: tuple[str, ...]) -> str:
    """The user annotation's text (a week of history has a few hundred users, not a text a row)."""
    return json.dumps({"user": user, "groups": list(groups)})


def load_trace(path: Path) -> list[TraceRow]:
    """Read a trace file; OSError when unreadable, TraceError when invalid."""
    with path.open("rb") as handle:
        data = handle.read(MAX_TRACE_BYTES + 1)
    if len(data) > MAX_TRACE_BYTES:
        raise TraceError([f"{path}: larger than {MAX_TRACE_BYTES // (1024 * 1024)} MiB"])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TraceError([f"{path}: not UTF-8 text"]) from None
    return read_trace(text, str(path))
