"""The call log (CSV, JSONL or Parquet) -> raw rows with their source line numbers.

Only shape is checked here (encoding, quoting, columns); meaning is checked in
``validate``. Every value is kept as text so that a bad value can be quoted back to
the user exactly as written. A Parquet log's "line" is its row number (the first row
is 1), and its values are written as text the way JSONL values are.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import json
import re
from collections.abc import Iterator
from pathlib import Path

from reportgen.errors import Collector
from reportgen.model.source import RawLog, RawRow

REQUIRED_COLUMNS = (
    "run_id", "block_id", "service", "service_group", "requested_model", "returned_model",
    "started_at", "request_hash", "status", "finish_reason", "latency_ms", "qualified",
    "failure_reason", "artifact_path",
)
OPTIONAL_COLUMNS = (
    "call_id", "attempt", "critical", "task_id", "repetition", "pair_id", "seed", "cluster_id",
    "phase", "input_tokens", "output_tokens", "cost_usd", "backend_fingerprint", "score",
    "grader", "grade_reason", "disputed", "excluded", "exclusion_reason", "slice", "partial",
)
LOG_NAMES = ("calls.csv", "calls.jsonl", "calls.parquet")
MAX_FIELD_CHARS = 1_000_000
# Columns whose values repeat down the log (a few services, blocks, models, statuses):
# each distinct value is kept once, not once a row (some 500 bytes a row).
REPEATED_COLUMNS = frozenset((
    "run_id", "block_id", "service", "service_group", "requested_model", "returned_model", "request_hash",
    "status", "finish_reason", "qualified", "failure_reason", "attempt", "critical", "phase", "grader",
    "disputed", "excluded", "partial", "slice", "task_id", "repetition",
))
# Memory stays proportional to the log; past this size a log is refused before it is read.
MAX_LOG_BYTES = 512 * 1024 * 1024


def find_log(folder: Path) -> list[Path]:
    return [folder / name for name in LOG_NAMES if (folder / name).is_file()]


def read_log(path: Path, rel: str, problems: Collector) -> RawLog | None:
    try:
        size = path.stat().st_size
        if size > MAX_LOG_BYTES:
            problems.add(rel, 0, "", f"is {size / 2**30:.1f} GiB; logs up to {MAX_LOG_BYTES // 2**20} MiB are "
                         "read (split the run into several experiments, or check that this is the right file)")
            return None
        data = path.read_bytes()
    except OSError as exc:
        problems.add(rel, 0, "", f"cannot be read: {exc.strerror}")
        return None
    if path.suffix == ".parquet":
        log = _read_parquet(data, rel, path.name, problems)
        return dataclasses.replace(log, held=data) if log is not None else None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.add(rel, line, "", f"not UTF-8 text (byte {exc.start}); save the log as UTF-8")
        return None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        problems.add(rel, line, "", "contains a NUL byte: this is not a text log")
        return None
    log = read_text(text, rel, path.name, problems)
    return dataclasses.replace(log, held=data) if log is not None else None


def read_text(text: str, rel: str, name: str, problems: Collector) -> RawLog | None:
    """A text log's rows (``name``: calls.csv or calls.jsonl), as read_log reads them."""
    return _read_jsonl(text, rel, name, problems) if name.endswith(".jsonl") else _read_csv(text, rel, name, problems)


def _read_csv(text: str, rel: str, name: str, problems: Collector) -> RawLog | None:
    csv.field_size_limit(MAX_FIELD_CHARS)
    reader = csv.reader(csv_lines(text), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        problems.add(rel, 1, "", "empty file: expected a header row naming the columns")
        return None
    except csv.Error as exc:
        problems.add(rel, 1, "", f"header is not valid CSV: {exc}")
        return None
    columns = tuple(h.strip() for h in header)
    if not _check_columns(columns, rel, problems):
        return None
    rows: list[RawRow] = []
    repeated: list[tuple[int, dict[str, str]]] = [(i, {}) for i, c in enumerate(columns) if c in REPEATED_COLUMNS]
    start = reader.line_num + 1
    while True:
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.add(rel, start, "", f"not valid CSV: {exc}")
            return None
        line, start = start, reader.line_num + 1
        if not record or record == [""]:
            continue  # blank line
        if len(record) != len(columns):
            problems.add(rel, line, "", f"has {len(record)} fields, the header has {len(columns)}")
            continue
        for i, seen in repeated:
            record[i] = seen.setdefault(record[i], record[i])
        rows.append(RawRow(line, dict(zip(columns, record))))
    return RawLog(rel, name, columns, tuple(rows))


# A line as a text file opened with newline="" reads it: up to "\r\n", "\r" or "\n",
# which it keeps.
_CSV_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def csv_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` as ``io.StringIO(text, newline="")`` gives them, one at a
    time: a StringIO holds its text as four bytes a character (a million calls' log of
    260 MB took 1 GB more while it was read)."""
    return (match.group() for match in _CSV_LINE.finditer(text))


def _read_jsonl(text: str, rel: str, name: str, problems: Collector) -> RawLog | None:
    rows: list[RawRow] = []
    columns: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.add(rel, number, "", f"not valid JSON: {exc.msg} (column {exc.colno})")
            continue
        if not isinstance(record, dict):
            problems.add(rel, number, "", "each line must be a JSON object")
            continue
        values: dict[str, str] = {}
        for key, value in record.items():
            if isinstance(value, (dict, list)):
                problems.add(rel, number, str(key), "must be a string, number, boolean or null")
                continue
            values[str(key)] = _json_text(value)
            if key not in columns:
                columns.append(str(key))
        rows.append(RawRow(number, values))
    if not rows and not problems.problems:
        problems.add(rel, 1, "", "empty file: expected one JSON object per call")
        return None
    for row in rows:
        missing = [c for c in REQUIRED_COLUMNS if c not in row.values]
        if missing:
            problems.add(rel, row.line, missing[0], f"missing required field(s): {', '.join(missing)}")
    return RawLog(rel, name, tuple(columns), tuple(rows))


def _read_parquet(data: bytes, rel: str, name: str, problems: Collector) -> RawLog | None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError, ValueError) as exc:
        problems.add(rel, 0, "", f"not a readable Parquet file: {str(exc)[:200]}")
        return None
    columns = tuple(table.column_names)
    if not _check_columns(columns, rel, problems):
        return None
    for field in table.schema:
        if pa.types.is_nested(field.type) or pa.types.is_binary(field.type):
            problems.add(rel, 1, field.name, f"column type {field.type} cannot be read as text; "
                         "store strings, numbers, booleans or timestamps")
            return None
    texts = {column: [_parquet_text(v) for v in table.column(column).to_pylist()] for column in columns}
    rows = tuple(RawRow(i + 1, {c: texts[c][i] for c in columns}) for i in range(table.num_rows))
    if not rows:
        problems.add(rel, 1, "", "the Parquet file has no rows")
        return None
    return RawLog(rel, name, columns, rows)


def _parquet_text(value: object) -> str:
    if isinstance(value, datetime.datetime):
        return value.isoformat()  # without a time zone, validate says it lacks a UTC offset
    return _json_text(value)


def without_rows(log: RawLog) -> RawLog:
    """A text log once its calls are parsed: its bytes, without its rows as values (a
    dict a row, 800 bytes a call: the calls hold what the build needs of them), which
    ``with_rows`` reads again. A Parquet log keeps its rows: its bytes are not text."""
    return log if log.name.endswith(".parquet") else dataclasses.replace(log, rows=())


def with_rows(log: RawLog) -> RawLog:
    """The log with every row, as ``read_log`` read it (see ``without_rows``)."""
    if log.rows:
        return log
    data = log.data
    if not data:
        return log
    problems = Collector()
    read = read_text(data.decode("utf-8-sig"), log.file, log.name, problems)
    if read is None:  # the bytes read before, and parsed then: cannot happen
        raise ValueError(f"{log.file}: {problems.problems[0] if problems.problems else 'does not read again'}")
    return dataclasses.replace(read, held=log.held)


def searchable_text(log: RawLog) -> bytes:
    """The log as text for the credential scan: the file itself, or for Parquet (binary,
    maybe compressed) one line of values per row, so line N is row N."""
    if not log.name.endswith(".parquet"):
        return log.data
    return "\n".join("\t".join(row.values.values()) for row in log.rows).encode("utf-8")


def _json_text(value: object) -> str:
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def _check_columns(columns: tuple[str, ...], rel: str, problems: Collector) -> bool:
    ok = True
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        problems.add(rel, 1, missing[0], f"missing required column(s): {', '.join(missing)}")
        ok = False
    seen: set[str] = set()
    for column in columns:
        if column in seen:
            problems.add(rel, 1, column, "column appears twice in the header")
            ok = False
        seen.add(column)
    return ok
