"""The site configuration and the run contract, as frozen records, with the
vocabulary they use (designs, metrics, ids)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Mapping, get_args

from reportgen.model.metric import METRICS as METRICS, Metric, PrimaryMetric  # METRICS: re-exported
from reportgen.model.plan import RegisteredPlan, Schedule


def allowed_attempts(retry: str | None) -> int | None:
    """Attempts the contract's retry rule allows, when it can be read from the text."""
    if retry is None:
        return None
    text = retry.strip().lower()
    if text.startswith(("none", "no ", "no-", "0")) or text in ("no", "never"):
        return 1
    match = re.search(r"(\d+)\s*(?:retr|attempt)", text)
    if match:
        n = int(match.group(1))
        return n + 1 if "retr" in text[match.start():match.end() + 6] else n
    return None


SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


Design = Literal["independent", "paired", "repeated", "leaderboard", "longitudinal"]
DESIGNS: tuple[Design, ...] = get_args(Design)


PAIRED_DESIGNS: tuple[Design, ...] = ("paired", "repeated")  # both arms on the same units: analysed by differences


Phase = Literal["pilot", "formal"]
PHASES: tuple[Phase, ...] = get_args(Phase)


DEFAULT_VIEWPORT = (400.0, 300.0)  # width, height: the size an SVG that gives none is rendered at


# A value the interface does not report, or that cannot be confirmed (never a default).
UNKNOWN = "unknown"
SPECIAL_VALUES = ("unsupported", UNKNOWN)


@dataclass(frozen=True)
class SiteConfig:
    title: str
    version: str
    theme: str
    experiments: tuple[str, ...] | None
    base_url: str
    built_at: str | None
    previous: str | None = None  # the version this one supersedes: its diff page is linked
    # [audit] not_credentials: texts a reviewer declared not credentials (a placeholder
    # such as "my_secret_api_key" in a prompt), published as they are; exact strings only.
    not_credentials: tuple[str, ...] = ()


@dataclass(frozen=True)
class Service:
    id: str
    group: str
    requested_model: str
    snapshot: str
    params: Mapping[str, Any]  # each a value, "unsupported" or "unknown", kept as given


@dataclass(frozen=True)
class HarnessReported:
    """``[harness]``: the harness's own number for each service, as its log reports it,
    and the rule it counts a sample by (written by ``import``; shown beside the headline)."""

    name: str  # the harness, e.g. "Inspect"
    metric: str  # its aggregate's name, e.g. "accuracy"
    rule: str  # how it counts a sample, in words
    values: Mapping[str, float]  # service id -> the harness's number
    version: str = ""
    scorers: Mapping[str, str] = field(default_factory=dict)  # service id -> the scorer it used


# An assumption the statistics state for a pre-registered comparison, and what a
# contract written after the run says in its place.
CHOSEN_BEFORE = "the comparison was chosen before the data were seen"
CHOSEN_AFTER = ("the comparison was not fixed before the data were seen (the contract was written after the "
                "run): the interval and p-value describe these data; they do not test a registered hypothesis")


@dataclass(frozen=True)
class RunContract:
    id: str
    title: str
    question: str
    phase: Phase
    registered_at: str
    design: Design
    primary_metric: Metric
    higher_is_better: bool
    baseline: str
    candidates: tuple[str, ...]
    alpha: float
    min_useful_effect: float | None
    noninferiority_margin: float | None
    planned_calls: Mapping[str, int]
    blocks: tuple[str, ...]
    window_start: str | None
    window_end: str | None
    order: str | None
    retry: str | None
    concurrency: int | None
    exclusion_rules: tuple[str, ...]
    dispute_rule: str | None
    block_on_critical: bool
    candidates_tried: int | None
    slices: tuple[str, ...]  # slices named in advance; any other value of `slice` is exploratory
    failure_score: float | None  # the score a technical failure counts as (score metric)
    bootstrap_resamples: int
    bootstrap_seed: int
    services: tuple[Service, ...]
    tasks: tuple[Mapping[str, Any], ...]
    environment: Mapping[str, Any]
    raw: Mapping[str, Any]  # the whole parsed contract, shown on the experiment page
    text: str = ""  # run.toml as written, for line numbers in messages
    # ``blocks = N``: how many blocks, not their names; loading takes the log's N ids as ``blocks``.
    block_count: int | None = None
    # A pair (or task) that only one service has rows for: "count" (a planned call that
    # never happened: a non-pass, or failure_score) or "leave_out" (the other service
    # never ran that unit, as when two harness logs hold different samples).
    unmatched_units: str = "count"
    # The size an SVG that gives none is rendered at: [task] render_viewport ("400x300").
    render_viewport: tuple[float, float] = DEFAULT_VIEWPORT
    harness: HarnessReported | None = None  # [harness]: the harness's own number and rule
    # The score a call graded partial credit earns (the log's ``partial`` column) under
    # primary_metric = "score"; None: partial credit is a non-pass.
    partial_credit: float | None = None
    plan: RegisteredPlan | None = None  # the [plan] table: how the sample size was chosen
    schedule: Schedule | None = None  # schedule.csv: the order the run was to follow

    def line_of(self, key: str, table: str = "[run]", nth: int = 1, whole_key: bool = False) -> int:
        return _line_of(self.text, key, table, nth, whole_key)

    @property
    def confidence_level(self) -> float:
        return 1.0 - self.alpha

    @property
    def metric(self) -> PrimaryMetric:
        """The primary metric as an object: its comparison's names and its numbers' format."""
        return PrimaryMetric(self.primary_metric == "score", self.higher_is_better)

    @property
    def written_after_run(self) -> bool:
        """registered_at = "unknown": the contract was written after the run (an import)."""
        return self.registered_at == UNKNOWN

    @property
    def decision_title(self) -> str:
        """What a decision is called: pre-registered only when the contract was."""
        return ("Decision by the contract's rule, written after the run" if self.written_after_run
                else "Pre-registered decision")

    def stated(self, assumptions: tuple[str, ...]) -> tuple[str, ...]:
        """``assumptions`` as this contract can state them: a comparison is "chosen before
        the data were seen" only when the contract was registered before the run."""
        if not self.written_after_run:
            return assumptions
        return tuple(CHOSEN_AFTER if a == CHOSEN_BEFORE else a for a in assumptions)

    def service(self, service_id: str) -> Service:
        return next(s for s in self.services if s.id == service_id)


def _line_of(text: str, key: str, table: str = "[run]", nth: int = 1, whole_key: bool = False) -> int:
    """Best-effort line of ``key = ...`` (bare or quoted) inside the ``nth`` occurrence of
    ``table`` in a TOML text, for error messages (tomllib does not keep positions); 0 if
    not found. A dotted ``key`` names its last part, unless ``whole_key`` (an id with dots)."""
    leaf = key if whole_key else key.rsplit(".", 1)[-1]
    start = 0
    for _ in range(nth):
        found = re.compile(rf"^\s*{re.escape(table)}\s*$", re.M).search(text, start)
        if found is None:
            start = 0
            break
        start = found.end()
    match = re.compile(rf"^\s*(?:{re.escape(leaf)}|\"{re.escape(leaf)}\")\s*=", re.M).search(text, start)
    return text.count("\n", 0, match.start()) + 1 if match else 0


def parse_timestamp(text: str) -> datetime | None:
    """An ISO 8601 timestamp WITH a UTC offset, else None."""
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return value if value.tzinfo is not None else None
