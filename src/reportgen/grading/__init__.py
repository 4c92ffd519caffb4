"""Blind grading: ``reportgen grade SOURCE EXPERIMENT --grader NAME``.

Items (calls that returned an output, or a seeded sample stratified by service) get
opaque ids (grades/key.csv, kept apart for ``build``); each grader sees them in an
order of their own (grades/<grader>.order.json), one at a time on a local page that
shows the output, the task prompt and the registered grading rule and nothing that
identifies the service; each grade is written durably as it is given
(grades/<grader>.csv). ``prepare`` does all but the page.
"""

from __future__ import annotations

from reportgen.grading.errors import GradingError
from reportgen.grading.grades_file import GRADES, Grade, read_grades
from reportgen.grading.session import GradingSession, prepare

__all__ = ["GRADES", "Grade", "GradingError", "GradingSession", "prepare", "read_grades"]
