"""The one error grading raises: a single ``file:line: field: message`` line."""

from __future__ import annotations

from reportgen.errors import Problem, ReportgenError


class GradingError(ReportgenError):
    """Something stops grading; said in one line, where it is and what to do."""

    def __init__(self, file: str, line: int, field: str, message: str) -> None:
        self.problem = Problem(file, line, field, message)
        super().__init__(str(self.problem))
