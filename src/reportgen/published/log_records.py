"""Two versions' call logs compared record by record, as bytes: only the records that
differ are parsed (a reviewer's 100 corrections to a log of 100,000 rows parse 200,
and the rows both versions share are never read into values).

A record is a line of a JSONL log, or of a CSV log outside quotes: a CSV line ends its
record when the quotes so far are even in number (a quoted field may hold a newline;
an escaped quote is written twice). Parquet logs, and logs whose CSV headers differ,
are compared the slow way, row by row (``record_stream`` returns None).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from itertools import zip_longest
from pathlib import Path
from typing import Any, TypeVar

from reportgen.errors import Collector
from reportgen.load.calllog import read_text
from reportgen.model.source import RawLog, RawRow

T = TypeVar("T")


# A log's bytes, or the file that holds them, read a piece at a time: the diff of the
# build compares the previous version's log, a million rows of which were 260 MB held
# beside the build's whole memory, while the build finished.
Log = bytes | Path


def record_stream(log: Log, name: str) -> tuple[bytes, Iterator[tuple[int, bytes]]] | None:
    """The log's header (b"" for JSONL) and its records, (first line, bytes) of each,
    blank lines left out, made one at a time as they are read (a million rows held as a
    tuple were some 400 MB for each version compared); None when it is not a text log."""
    if name.endswith(".parquet"):
        return None
    quoted = name.endswith(".csv")
    # No quote in the bytes: every line a record, checked at once. A file is not read
    # whole for it: each line's quotes are counted as it comes (where there are none, the
    # records are the lines all the same).
    found = _records(log, quoted and (not isinstance(log, bytes) or b'"' in log))
    if not quoted:
        return b"", found
    header = next(found, None)
    return (header[1], found) if header is not None else None


def same_bytes(a: Log, b: Log) -> bool:
    """Whether two logs hold the same bytes."""
    if isinstance(a, bytes) and isinstance(b, bytes):
        return a == b
    if _size(a) != _size(b):
        return False
    return all(x == y for x, y in zip_longest(_pieces(a), _pieces(b), fillvalue=b""))


def _size(log: Log) -> int:
    return len(log) if isinstance(log, bytes) else log.stat().st_size


_PIECE = 1 << 20


def _pieces(log: Log) -> Iterator[bytes]:
    if isinstance(log, bytes):
        yield from (log[i:i + _PIECE] for i in range(0, len(log), _PIECE))
        return
    with open(log, "rb") as handle:
        while piece := handle.read(_PIECE):
            yield piece


def _records(log: Log, quoted: bool) -> Iterator[tuple[int, bytes]]:
    """(first line, bytes) of each record that is not blank."""
    pending: list[bytes] = []
    start, inside = 1, False
    for number, line in enumerate(_lines(log) if isinstance(log, bytes) else _file_lines(log), 1):
        if not pending:
            start = number
        pending.append(line)
        if quoted and b'"' in line:
            inside ^= bool(line.count(b'"') & 1)
        if not inside:
            record = pending[0] if len(pending) == 1 else b"\n".join(pending)
            if record.strip():
                yield start, record
            pending = []
    if pending and (record := b"\n".join(pending)).strip():
        yield start, record


def _lines(data: bytes) -> Iterator[bytes]:
    """``data.split(b"\\n")``, a line at a time."""
    start = 0
    while (end := data.find(b"\n", start)) >= 0:
        yield data[start:end]
        start = end + 1
    yield data[start:]


def _file_lines(path: Path) -> Iterator[bytes]:
    """``_lines`` of the file's bytes, read a line at a time."""
    last = b"\n"
    with open(path, "rb") as handle:
        for last in handle:
            yield last[:-1] if last.endswith(b"\n") else last
    if last.endswith(b"\n"):
        yield b""  # after the last newline (or of an empty file), as split gives it


_MISSING: Any = object()


def differing(a: Iterable[T], b: Iterable[T], key: Callable[[T], Hashable]) -> tuple[list[T], list[T]]:
    """The items of each side (records, or rows) that the other does not hold, by ``key``:
    compared in place first (most stand where they stood), the rest as multisets. Each
    side is read once, in order."""
    a_rest: list[T] = []
    b_rest: list[T] = []
    for x, y in zip_longest(a, b, fillvalue=_MISSING):
        if x is _MISSING:
            b_rest.append(y)
        elif y is _MISSING:
            a_rest.append(x)
        elif key(x) != key(y):
            a_rest.append(x)
            b_rest.append(y)
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


def parsed(header: bytes, chosen: Sequence[tuple[int, bytes]], file: str, name: str,
           problems: Collector) -> RawLog | None:
    """The chosen records as the log's reader reads them, each with its line in the whole
    log (``header``: the log's, as ``record_stream`` gives it)."""
    body = b"\n".join([header, *(record for _, record in chosen)] if header else
                      [record for _, record in chosen])
    read = read_text(body.decode("utf-8-sig", "replace"), file, name, problems) if chosen else None
    if read is None or len(read.rows) != len(chosen):
        return None
    rows = tuple(RawRow(line, row.values) for (line, _), row in zip(chosen, read.rows, strict=True))
    return RawLog(file, name, read.columns, rows)
