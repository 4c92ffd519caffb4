"""A grader's session: the items, this grader's order, the grades given so far, and the
next item to grade (the first in the order without a grade: a restarted command or a
reopened tab continues there)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from reportgen.grading.experiment import Experiment, Task, check_grader, load_experiment
from reportgen.grading.grades_file import Grade, GradesFile
from reportgen.grading.items import ItemSet, item_set
from reportgen.grading.order import grader_order
from reportgen.grading.outputs import Outputs


@dataclass
class GradingSession:
    experiment: Experiment
    grader: str
    items: ItemSet
    order: list[str]
    grades: GradesFile
    outputs: Outputs
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def total(self) -> int:
        return len(self.order)

    @property
    def n_graded(self) -> int:
        return len(self.grades.grades)

    def next_item(self) -> str | None:
        """The first item of this grader's order not graded yet (None when all are)."""
        graded = self.grades.graded
        return next((item for item in self.order if item not in graded), None)

    def task(self, item: str) -> Task:
        call = self.outputs.calls[self.items.key[item]]
        return self.experiment.task_of(call)

    def record(self, item: str, grade: str, reason: str) -> Grade | None:
        """Record ``grade`` for ``item`` if it is the item waiting for a grade; None (and
        nothing written) when it is not (graded already, from another tab, say)."""
        with self._lock, self.grades.locked():
            if item != self.next_item():
                return None
            return self.grades.add(item, grade, reason)


def prepare(source: Path, experiment: str, grader: str, sample: int | None = None,
            seed: int | None = None) -> GradingSession:
    """Everything ``reportgen grade`` needs, without the server: check the grader's name,
    read the experiment, draw or reuse the items (grades/key.csv, grades/sample.json),
    read and check this grader's grades, and draw or check this grader's order
    (grades/<grader>.order.json). Raises GradingError (one line) on bad input."""
    check_grader(grader)
    loaded = load_experiment(Path(source), experiment)
    items = item_set(loaded, sample, seed)
    outputs = Outputs(loaded, items.key)
    versions = {item: loaded.task_of(outputs.calls[call_id]).rule_version for item, call_id in items.key.items()}
    grades = GradesFile(loaded.grades_folder / f"{grader}.csv", f"{loaded.rel_grades}/{grader}.csv", versions)
    order = grader_order(loaded, items, grader)
    return GradingSession(loaded, grader, items, order, grades, outputs)
