"""Blind grades and an automated judge, as the build reads them: the contract's
``[grading]`` table, the grades folder (``grades/key.csv``, ``grades/sample.json``,
``grades/<grader>.csv``) and each call's grades with the resolution the review rule
gave them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Mapping

Primary = Literal["logged", "human"]
Review = Literal["third-grader", "majority", "disputed"]
Grade = Literal["pass", "fail", "disputed"]
PRIMARIES: tuple[Primary, ...] = ("logged", "human")
REVIEWS: tuple[Review, ...] = ("third-grader", "majority", "disputed")
GRADES: tuple[Grade, ...] = ("pass", "fail", "disputed")
# The grades folder's files, as `reportgen grade` writes them and the build reads them.
GRADER_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")  # names grades/<grader>.csv
ITEM_ID_HEX = 12  # an item id: this many lowercase hex characters from a seeded draw
ITEM_ID = re.compile(rf"[0-9a-f]{{{ITEM_ID_HEX}}}")
KEY_HEADER = ("item", "call_id")
GRADES_HEADER = ("item", "grade", "reason", "graded_at", "rule_version")

REVIEW_WORDS: dict[Review, str] = {
    "majority": "the majority of the graders' grades (a tie stays disputed)",
    "third-grader": "the first two grades given; when they differ, the next grader's grade settles it "
                    "(none yet: disputed)",
    "disputed": "any disagreement leaves the call disputed",
}


@dataclass(frozen=True)
class GradingRules:
    """The contract's ``[grading]`` table (absent: outcomes as logged, no judge)."""

    primary: Primary = "logged"
    review: Review = "majority"
    judge_column: str | None = None


@dataclass(frozen=True)
class GradeRow:
    """One row of ``grades/<grader>.csv``."""

    grader: str
    item: str
    grade: Grade
    reason: str
    graded_at: datetime
    graded_at_text: str
    rule_version: str
    file: str  # relative to the source folder, for messages
    line: int


@dataclass(frozen=True)
class CallGrades:
    """Every blind grade one call got, and what the review rule made of them."""

    item: str
    grades: tuple[GradeRow, ...]  # in the order they were given
    resolved: Grade | None  # None: no grade yet
    how: str  # the resolution in words ("two graders agree", "majority 2 of 3", ...)
    fills_outcome: bool = False  # the resolution is the call's outcome (primary = "human")


@dataclass(frozen=True)
class BlindGrades:
    """The grades folder of one run, read and checked against its log."""

    folder: str  # e.g. "experiments/judge-ab/grades"
    key: Mapping[str, str]  # item -> call id
    sample: Mapping[str, object]  # sample.json as written ({} when absent)
    graders: tuple[str, ...]  # sorted
    rows: tuple[GradeRow, ...]  # every grade, by grader then line
    by_call: Mapping[str, CallGrades]  # call id -> its grades (only calls with at least one)
    files: Mapping[str, bytes]  # name inside grades/ -> bytes as read, published with the data

    @property
    def sampled(self) -> bool:
        return self.sample.get("sample") is not None


@dataclass(frozen=True)
class Grading:
    """What a run's outcomes rest on: the rules, the blind grades (None: no grades
    folder) and the judge's grade of each call that has one."""

    rules: GradingRules
    blind: BlindGrades | None = None
    judge: Mapping[str, bool] | None = None  # call id -> judge passed it; None: no judge column

    @property
    def recorded(self) -> bool:
        return self.blind is not None
