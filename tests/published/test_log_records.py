"""Comparing two versions' logs as records: the records are the rows csv reads (quoted
newlines and doubled quotes included), and the records that differ are the rows that differ."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen.errors import Collector
from reportgen.load.calllog import REQUIRED_COLUMNS, read_text
from reportgen.published import log_records
from reportgen.published.log_records import differing, parsed, record_bytes, record_stream, same_bytes

VARIED = ["call_id", "service", "qualified", "grade_reason"]
OTHERS = [c for c in REQUIRED_COLUMNS if c not in VARIED]
COLUMNS = VARIED + OTHERS
# No bare "\r" in a value: csv.writer leaves it unquoted, and csv.reader then splits the row.
texts = st.text(alphabet=st.sampled_from(list('ab ,"\n;é')), max_size=8)
rows = st.lists(st.tuples(st.sampled_from(["A", "B"]), st.sampled_from(["true", "false"]), texts), max_size=12)


@dataclass(frozen=True)
class Records:
    header: bytes
    records: tuple[tuple[int, bytes], ...]


def records(data: bytes, name: str) -> Records | None:
    """A log's header and all its records at once, from ``record_stream``."""
    stream = record_stream(data, name)
    return Records(stream[0], tuple(stream[1])) if stream is not None else None


def csv_log(items: list[tuple[str, ...]], line_end: str = "\n") -> bytes:
    """A log of the items, each given a call id by its place unless it carries one."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator=line_end)
    writer.writerow(COLUMNS)
    writer.writerows([*(item if len(item) == len(VARIED) else (f"c{i}", *item)), *("x" for _ in OTHERS)]
                     for i, item in enumerate(items))
    return out.getvalue().encode("utf-8")


def values(data: bytes, name: str) -> list[dict[str, str]]:
    log = read_text(data.decode("utf-8"), "calls", name, Collector())
    return [dict(r.values) for r in log.rows] if log else []


@settings(max_examples=200, deadline=None)
@given(items=rows, line_end=st.sampled_from(["\n", "\r\n"]))
def test_the_records_of_a_csv_log_are_the_rows_csv_reads(items, line_end) -> None:
    data = csv_log(items, line_end)
    split = records(data, "calls.csv")
    assert split is not None and len(split.records) == len(items)
    if not items:
        return
    rows_read = parsed(split.header, list(split.records), "calls.csv", "calls.csv", Collector())
    assert [dict(r.values) for r in rows_read.rows] == values(data, "calls.csv")
    whole = read_text(data.decode("utf-8"), "calls.csv", "calls.csv", Collector())
    assert [r.line for r in rows_read.rows] == [r.line for r in whole.rows]  # each row keeps its line


@settings(max_examples=200, deadline=None)
@given(items=rows, changes=st.lists(st.tuples(st.integers(0, 11), texts), max_size=4), data=st.data())
def test_the_records_that_differ_are_the_rows_that_differ(items, changes, data) -> None:
    old = [(f"c{i}", *item) for i, item in enumerate(items)]
    new = list(old)
    for index, text in changes:
        if index < len(new):
            new[index] = (*new[index][:3], text)
    if new and data.draw(st.booleans()):  # rows that move are still the same rows
        new = new[1:] + new[:1]
    old_data, new_data = csv_log(old), csv_log(new)
    # As the diff reads them: each log's records made one at a time, each side read once.
    a_stream, b_stream = record_stream(old_data, "calls.csv"), record_stream(new_data, "calls.csv")
    a, b = records(old_data, "calls.csv"), records(new_data, "calls.csv")
    assert (a_stream[0], b_stream[0]) == (a.header, b.header)
    a_differ, b_differ = differing(a_stream[1], b_stream[1], record_bytes)
    assert (a_differ, b_differ) == differing(a.records, b.records, record_bytes)

    def chosen(log, picked):
        got = parsed(log.header, picked, "calls.csv", "calls.csv", Collector()) if picked else None
        return Counter(tuple(sorted(r.values.items())) for r in got.rows) if got else Counter()

    old_rows = Counter(tuple(sorted(v.items())) for v in values(old_data, "calls.csv"))
    new_rows = Counter(tuple(sorted(v.items())) for v in values(new_data, "calls.csv"))
    assert chosen(a, a_differ) == old_rows - new_rows
    assert chosen(b, b_differ) == new_rows - old_rows


def test_a_jsonl_log_is_one_record_per_line_and_parquet_is_not_split() -> None:
    lines = [json.dumps({"call_id": f"c{i}", "note": "a\nb"}) for i in range(3)]
    data = ("\n".join(lines) + "\n\n").encode("utf-8")
    split = records(data, "calls.jsonl")
    assert split.header == b"" and [r for _, r in split.records] == [line.encode() for line in lines]
    assert [line for line, _ in split.records] == [1, 2, 3]
    assert records(b"PAR1...", "calls.parquet") is None


def test_a_record_with_a_quoted_newline_keeps_its_first_line() -> None:
    data = csv_log([("A", "true", "one\ntwo"), ("B", "false", "x")])
    split = records(data, "calls.csv")
    assert [line for line, _ in split.records] == [2, 4]


log_bytes = st.lists(st.sampled_from([b"a", b"\xc3\xa9", b'"', b"\n", b"\r\n", b"\r", b",", b" "]),
                     max_size=30).map(b"".join)


@settings(max_examples=200, deadline=None)
@given(data=log_bytes, name=st.sampled_from(["calls.csv", "calls.jsonl"]))
def test_a_log_read_from_its_file_gives_the_records_its_bytes_give(tmp_path_factory, data, name) -> None:
    """The previous version's log is compared from its published file, a piece at a
    time: its records are those of its bytes, wherever its newlines and quotes stand."""
    path = tmp_path_factory.mktemp("log") / name
    path.write_bytes(data)
    assert records(path, name) == records(data, name)  # type: ignore[arg-type]
    assert same_bytes(path, data) and same_bytes(data, path) and same_bytes(path, path)
    assert not same_bytes(path, data + b"x") and not same_bytes(data[:-1] + b"\0", path)


def test_logs_are_compared_piece_by_piece_to_their_last_byte(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(log_records, "_PIECE", 3)
    path = tmp_path / "calls.csv"
    path.write_bytes(b"0123456789")
    assert same_bytes(path, b"0123456789") and same_bytes(b"0123456789", path)
    assert not same_bytes(path, b"012345678x") and not same_bytes(b"x123456789", path)
    assert not same_bytes(path, b"01234567890") and not same_bytes(path, b"012345678")
