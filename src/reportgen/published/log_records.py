"""Two versions' call logs compared record by record, as bytes: only the records that
differ are parsed (a reviewer's 100 corrections to a log of 100,000 rows parse 200,
and the rows both versions share are never read into values).

A record is a line of a JSONL log, or of a CSV log outside quotes: a CSV line ends its
record when the quotes so far are even in number (a quoted field may hold a newline;
an escaped quote is written twice). Parquet logs, and logs whose CSV headers differ,
are compared the slow way, row by row (``records`` returns None).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from reportgen.errors import Collector
from reportgen.load.calllog import read_text
from reportgen.model.source import RawLog, RawRow

T = TypeVar("T")


@dataclass(frozen=True)
class Records:
    header: bytes  # a CSV log's header line (b"" for JSONL)
    records: tuple[tuple[int, bytes], ...]  # (first line, bytes) of each record, blank lines left out


def records(data: bytes, name: str) -> Records | None:
    """The log's records, or None when it is not a text log."""
    if name.endswith(".parquet"):
        return None
    quoted = name.endswith(".csv")
    if not quoted or b'"' not in data:  # every line a record: no quote to hold a newline
        lines = [(number, line) for number, line in enumerate(data.split(b"\n"), 1) if line.strip()]
        if not quoted:
            return Records(b"", tuple(lines))
        return Records(lines[0][1], tuple(lines[1:])) if lines else None
    found: list[tuple[int, bytes]] = []
    pending: list[bytes] = []
    start, inside = 1, False
    for number, line in enumerate(data.split(b"\n"), 1):
        if not pending:
            start = number
        pending.append(line)
        if quoted and b'"' in line:
            inside ^= bool(line.count(b'"') & 1)
        if not inside:
            found.append((start, pending[0] if len(pending) == 1 else b"\n".join(pending)))
            pending = []
    if pending:
        found.append((start, b"\n".join(pending)))
    found = [(line, record) for line, record in found if record.strip()]
    if quoted:
        if not found:
            return None
        return Records(found[0][1], tuple(found[1:]))
    return Records(b"", tuple(found))


def differing(a: Sequence[T], b: Sequence[T], key: Callable[[T], Hashable]) -> tuple[list[T], list[T]]:
    """The items of each side (records, or rows) that the other does not hold, by ``key``:
    compared in place first (most stand where they stood), the rest as multisets."""
    same_place = {i for i, (x, y) in enumerate(zip(a, b)) if key(x) == key(y)}
    a_rest = [item for i, item in enumerate(a) if i not in same_place]
    b_rest = [item for i, item in enumerate(b) if i not in same_place]
    common = Counter(map(key, a_rest)) & Counter(map(key, b_rest))

    def left(rest: list[T]) -> list[T]:
        counts, out = common.copy(), []
        for item in rest:
            k = key(item)
            if counts[k] > 0:
                counts[k] -= 1
            else:
                out.append(item)
        return out

    return left(a_rest), left(b_rest)


def record_bytes(record: tuple[int, bytes]) -> bytes:
    """A record's key for ``differing``: its bytes (not the line it stands on)."""
    return record[1]


def parsed(log: Records, chosen: Sequence[tuple[int, bytes]], file: str, name: str,
           problems: Collector) -> RawLog | None:
    """The chosen records as the log's reader reads them, each with its line in the whole log."""
    body = b"\n".join([log.header, *(record for _, record in chosen)] if log.header else
                      [record for _, record in chosen])
    read = read_text(body.decode("utf-8-sig", "replace"), file, name, problems) if chosen else None
    if read is None or len(read.rows) != len(chosen):
        return None
    rows = tuple(RawRow(line, row.values) for (line, _), row in zip(chosen, read.rows, strict=True))
    return RawLog(file, name, read.columns, rows)
