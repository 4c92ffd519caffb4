"""One exception family. Every problem knows where it is: file, line and field."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with the input, written as ``file:line: field: message``."""

    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class ReportgenError(Exception):
    """Base class: an expected failure reported to the user without a traceback (exit 1)."""


class InputError(ReportgenError):
    """The source folder cannot be published; carries every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems) if problems and "more problems not shown" in problems[-1].message \
            else sorted(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class Collector:
    """Collects problems across a stage so the user sees all of them at once (up to a
    limit: a log that is wrong on every one of a million lines needs the first few)."""

    LIMIT = 200

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.n_more = 0

    def add(self, file: str, line: int, field: str, message: str) -> None:
        if len(self.problems) < self.LIMIT:
            self.problems.append(Problem(file, line, field, message))
        else:
            self.n_more += 1

    def raise_if_any(self) -> None:
        if self.problems:
            problems = sorted(self.problems)
            if self.n_more:
                last = problems[-1]
                problems.append(Problem(last.file, last.line + 1, "",
                                        f"... and {self.n_more} more problems not shown; fix these first"))
            raise InputError(problems)


class AuditError(ReportgenError):
    """The run breaks its contract in a way that cannot be published (findings of
    severity error, see ``audit``)."""

    def __init__(self, findings: list) -> None:
        self.findings = findings
        super().__init__("\n".join(str(f) for f in findings))
