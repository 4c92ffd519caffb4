"""``grades/<grader>.csv``: one row per item, ``item,grade,reason,graded_at,rule_version``.

Read and checked whole when grading starts; each new grade rewrites the file through a
temporary file, fsync and rename (see ``files``), so a process killed at any moment
leaves the file as it was before the grade or after it, and always a valid CSV.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable, Mapping

from reportgen.grading.errors import GradingError
from reportgen.grading.files import write_durable
from reportgen.model.config import parse_timestamp
from reportgen.model.grading import GRADES
from reportgen.model.grading import GRADES_HEADER as HEADER

MAX_REASON = 2000


@dataclass(frozen=True)
class Grade:
    item: str
    grade: str
    reason: str
    graded_at: str
    rule_version: str

    def row(self) -> tuple[str, str, str, str, str]:
        return (self.item, self.grade, self.reason, self.graded_at, self.rule_version)


def clean_reason(text: str) -> str:
    """A reason as one line of plain text: control characters and line breaks become
    spaces, at most MAX_REASON characters."""
    flat = "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in text)
    return " ".join(flat.split())[:MAX_REASON]


def read_grades(path: Path, rel: str, versions: Mapping[str, str]) -> list[Grade]:
    """The grades in ``path`` ([] when absent), checked row by row: known items
    (``versions``: item -> the rule version its page shows), one grade per item, a grade
    word, a timestamp with its offset, the registered rule version."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise GradingError(rel, 0, "", f"not readable ({exc})") from None
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise GradingError(rel, 0, "", f"not a CSV file ({exc})") from None
    if not rows or tuple(rows[0]) != HEADER:
        raise GradingError(rel, 1, "", f"the header must be {','.join(HEADER)}")
    grades: list[Grade] = []
    seen: dict[str, int] = {}
    for line, row in enumerate(rows[1:], 2):
        grade = _checked_row(row, rel, line, versions)
        if grade.item in seen:
            raise GradingError(rel, line, "item", f"{grade.item} was graded already on line {seen[grade.item]}: "
                               "a grader grades each item once")
        seen[grade.item] = line
        grades.append(grade)
    return grades


def _checked_row(row: list[str], rel: str, line: int, versions: Mapping[str, str]) -> Grade:
    if len(row) != len(HEADER):
        raise GradingError(rel, line, "", f"{len(row)} fields; expected {len(HEADER)} ({','.join(HEADER)})")
    grade = Grade(*row)
    if grade.item not in versions:
        raise GradingError(rel, line, "item", f"{grade.item!r} is not an item of grades/key.csv")
    if grade.grade not in GRADES:
        raise GradingError(rel, line, "grade", f"{grade.grade!r} is not one of {', '.join(GRADES)}")
    if parse_timestamp(grade.graded_at) is None:
        raise GradingError(rel, line, "graded_at", f"{grade.graded_at!r} is not an ISO 8601 time with an offset")
    if grade.rule_version != versions[grade.item]:
        raise GradingError(rel, line, "rule_version", f"{grade.rule_version!r}, but the contract's "
                           f"grading_rule_version is {versions[grade.item]!r}: the rule changed after this grade")
    return grade


def encode(grades: list[Grade]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(g.row() for g in grades)
    return buffer.getvalue().encode("utf-8")


class GradesFile:
    """One grader's grades: those on disk, and each new one written durably before it counts."""

    def __init__(self, path: Path, rel: str, versions: Mapping[str, str],
                 clock: Callable[[], datetime] = lambda: datetime.now().astimezone()) -> None:
        self.path, self.rel, self.versions, self.clock = path, rel, versions, clock
        self.grades: list[Grade] = []
        if path.parent.is_dir():
            with self.locked():  # reads the grades, and removes what a killed writer left
                pass

    @property
    def graded(self) -> set[str]:
        return {g.item for g in self.grades}

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the grader's lock (``.<grader>.lock`` beside the file; the system drops
        it when the process ends, however it ends) and read the grades again: another
        command grading as the same grader at the same time cannot lose a grade."""
        fd = os.open(self.path.with_name(f".{self.path.stem}.lock"), os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            for left in self.path.parent.glob(f".{self.path.name}.*.tmp"):  # no writer is running: ours
                left.unlink(missing_ok=True)
            self.grades = read_grades(self.path, self.rel, self.versions)
            yield
        finally:
            os.close(fd)  # closing the file releases the lock

    def add(self, item: str, grade: str, reason: str) -> Grade:
        """Record a grade: on disk (whole, synced) before it is kept in memory."""
        if item not in self.versions:
            raise ValueError(f"unknown item {item!r}")
        if grade not in GRADES:
            raise ValueError(f"unknown grade {grade!r}")
        if item in self.graded:
            raise ValueError(f"item {item} is graded already")
        new = Grade(item, grade, clean_reason(reason), self.clock().isoformat(timespec="seconds"),
                    self.versions[item])
        write_durable(self.path, encode([*self.grades, new]))
        self.grades.append(new)
        return new
