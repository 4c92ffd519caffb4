"""The experiment to grade, read with the project's loaders: its contract (task prompt,
grading rule and its version) and the calls that returned an output to grade."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reportgen.errors import Collector
from reportgen.grading.errors import GradingError
from reportgen.load.rows import check_artifact_paths
from reportgen.load.source import load_contract_and_log, parse_rows
from reportgen.model.calls import Call
from reportgen.model.config import RunContract
from reportgen.model.grading import GRADER_NAME
from reportgen.model.source import RawLog



@dataclass(frozen=True)
class Task:
    """What the grading page shows beside each output (the same for every item of a task)."""

    prompt: str
    rule: str
    rule_version: str


@dataclass(frozen=True)
class Experiment:
    source: Path
    name: str
    folder: Path
    rel_folder: str  # experiments/<name>, for messages
    contract: RunContract
    log: RawLog
    calls: tuple[Call, ...]  # every call of the log, in log order

    @property
    def grades_folder(self) -> Path:
        return self.folder / "grades"

    @property
    def rel_grades(self) -> str:
        return f"{self.rel_folder}/grades"

    def gradable(self) -> list[Call]:
        """The calls with an output to grade: those that returned (status ok). A technical
        failure has nothing to grade; the log's status decides its outcome."""
        return [call for call in self.calls if call.status == "ok"]

    def task_of(self, call: Call) -> Task:
        """The prompt and rule of the call's task ([[task]] by the log's task_id, else the first)."""
        tasks = self.contract.tasks
        wanted = call.column("task_id")
        task = next((t for t in tasks if wanted and str(t.get("id", "")) == wanted), tasks[0] if tasks else {})
        return Task(str(task.get("prompt", "")), str(task.get("grading_rule", "")),
                    str(task.get("grading_rule_version", "")))


def check_grader(grader: str) -> None:
    if not GRADER_NAME.fullmatch(grader):
        raise GradingError("--grader", 0, "grader", f"{grader!r} is not a grader name: use 1 to 40 letters, "
                           "digits, '-' or '_' (it names the file grades/<grader>.csv)")


def load_experiment(source: Path, name: str) -> Experiment:
    """The experiment ``name`` of the report source ``source``; one-line errors."""
    folder = source / "experiments" / name
    rel = f"experiments/{name}"
    if "/" in name or "\\" in name or name in ("", ".", "..") or not folder.is_dir():
        known = sorted(p.name for p in (source / "experiments").glob("*") if p.is_dir()) \
            if (source / "experiments").is_dir() else []
        listed = f" (experiments here: {', '.join(known)})" if known else " (no experiments/ folder there)"
        raise GradingError(str(source), 0, "experiment", f"no experiment {name!r}{listed}")
    problems = Collector()
    read = load_contract_and_log(folder, rel, problems)
    calls: list[Call] = []
    if read is not None:
        contract, log = read
        calls = check_artifact_paths(parse_rows(log, contract, log.rows, problems), folder, None, log.file,
                                     problems)
    if problems.problems:
        first = sorted(problems.problems)[0]
        more = len(problems.problems) - 1
        raise GradingError(first.file, first.line, first.field,
                           first.message + (f" (and {more} more problems: run `reportgen check`)" if more else ""))
    assert read is not None
    experiment = Experiment(source, name, folder, rel, read[0], read[1], tuple(calls))
    _check_task(experiment)
    return experiment


def _check_task(experiment: Experiment) -> None:
    contract = experiment.contract
    where = f"{experiment.rel_folder}/run.toml"
    if not experiment.gradable():
        raise GradingError(experiment.log.file, 0, "status",
                           f"no call returned an output to grade ({len(experiment.calls)} calls, none with status ok)")
    for task in {experiment.task_of(call) for call in experiment.gradable()}:
        if not task.rule_version:
            raise GradingError(where, contract.line_of("grading_rule", "[task]"), "grading_rule_version",
                               "not set: register the grading rule and its version in [task] before grading")
        if not task.rule:
            raise GradingError(where, contract.line_of("grading_rule_version", "[task]"), "grading_rule",
                               "not set: register the grading rule in [task] before grading")


__all__ = ["Experiment", "GRADER_NAME", "Task", "check_grader", "load_experiment"]
