"""One lm-evaluation-harness ``samples_<task>_<date>.jsonl`` file, read line by line.

Each line is one document (for one filter) with the model's responses and a value per
metric. The reader keeps, per line, only what the Samples need (the request, the two
artifacts, the hash columns and the target for the grade line) and, per metric, the
document's value; a metric whose values are not numbers (a corpus-level metric such as
span F1, whose documents carry [reference, prediction] items) keeps no values at all.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reportgen.errors import Collector, InputError, Problem

HASH_COLUMNS = ("doc_hash", "prompt_hash", "target_hash")
# Outputs scored by log-likelihood: each response is a [log-likelihood, is-greedy] pair.
SCORED_OUTPUTS = ("loglikelihood", "multiple_choice", "loglikelihood_rolling")
PROMPT_CHARS = 2000
TARGET_CHARS = 300  # more than a grade line (200 characters) shows


@dataclass(frozen=True)
class TaskSettings:
    """What the results file says about one task, as the samples reader needs it."""

    name: str
    request: Mapping[str, object]  # the run's model and generation settings, added to each request
    output_type: str = ""
    repeats: int = 1
    filter_names: tuple[str, ...] = ("none",)  # in lm-eval's order: old samples lines do not name theirs
    metric_names: tuple[str, ...] = ()  # from the results' "metric,filter" keys: old lines do not list theirs


@dataclass(frozen=True, slots=True)
class DocLine:
    """One samples line, reduced to what its Samples carry (shared by every metric of the line)."""

    unit: str
    line: int
    target: str  # at most TARGET_CHARS: only the grade line shows it
    columns: Mapping[str, str]
    where: LineAt  # the line's bytes in the file: its request and artifacts are read again from there
    repetitions: int = 0  # how many per-repetition responses the line holds (0: none)

    def payload(self, repetition: int = 0) -> tuple[Mapping[str, object], tuple[tuple[str, bytes], ...]]:
        """The request and the artifacts (response.txt of ``repetition`` when 1 or more), from the file."""
        sample = self.where.read()
        request = {**self.where.settings.request, "arguments": sample.get("arguments")}
        output_type = self.where.settings.output_type
        filtered = sample.get("filtered_resps")
        response = filtered[repetition - 1] if repetition and isinstance(filtered, list) else filtered
        return request, (("response.txt", response_text(response, output_type).encode("utf-8")),
                         ("sample.json", json.dumps(sample, indent=2, ensure_ascii=False).encode("utf-8") + b"\n"))


@dataclass(frozen=True, slots=True)
class LineAt:
    """Where one samples line is: read again (open, seek, read, parse) when its call is written."""

    path: Path
    offset: int
    length: int
    settings: TaskSettings

    def read(self) -> dict[str, object]:
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            data = handle.read(self.length)
        sample = json.loads(data.decode("utf-8")) if len(data) == self.length else None
        if not isinstance(sample, dict):
            raise InputError([Problem(str(self.path), 0, "", "the file changed while it was imported: "
                                      "import it again")])
        return sample


@dataclass
class MetricValues:
    """One (metric, filter)'s values in file order; ``corpus`` says why there are none."""

    values: list[tuple[DocLine, object]] = field(default_factory=list)
    corpus: str = ""  # the type of a non-numeric value: the metric has no per-document value


@dataclass
class SamplesFile:
    path: Path
    task: str
    filters: list[str] = field(default_factory=list)
    metrics: dict[tuple[str, str], MetricValues] = field(default_factory=dict)
    first_prompt: str = ""


def read_samples(path: Path, settings: TaskSettings, problems: Collector) -> SamplesFile:
    """Stream ``path``: one JSON object a line, never the whole file in memory."""
    out = SamplesFile(path, settings.name)
    seen: dict[str, int] = {}  # doc_id -> lines so far: the filter of an old line is its occurrence
    lines: dict[tuple[str, str], int] = {}  # (doc_id, filter) -> its line: each is logged once
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            where = LineAt(path, offset, len(raw), settings)
            offset += len(raw)
            text = raw.decode("utf-8")
            if not text.strip():
                continue
            try:
                sample = json.loads(text)
            except json.JSONDecodeError as exc:
                problems.add(str(path), number, "", f"not a JSON line ({exc.msg}); lm-eval writes one "
                             "JSON object per line")
                continue
            if not isinstance(sample, dict) or "doc_id" not in sample:
                problems.add(str(path), number, "doc_id", "required: lm-eval writes a doc_id on every line")
                continue
            _read_line(out, sample, where, number, (seen, lines), problems)
    return out


def _read_line(out: SamplesFile, sample: dict[str, object], where: LineAt, number: int,
               seen_so_far: tuple[dict[str, int], dict[tuple[str, str], int]], problems: Collector) -> None:
    seen, lines = seen_so_far
    settings = where.settings
    unit = str(sample["doc_id"])
    occurrence = seen.get(unit, 0)
    seen[unit] = occurrence + 1
    name = sample.get("filter")
    if not isinstance(name, str):
        if occurrence >= len(settings.filter_names):
            problems.add(str(out.path), number, "doc_id", f"document {unit} appears {occurrence + 1} times, "
                         f"but the task has {len(settings.filter_names)} filter(s) and the lines name none")
            return
        name = settings.filter_names[occurrence]
    first = lines.setdefault((unit, name), number)
    if first != number:
        problems.add(str(out.path), number, "doc_id", f"document {unit} is logged again for filter {name!r} "
                     f"(first on line {first}); lm-eval logs each document once per filter")
        return
    if name not in out.filters:
        out.filters.append(name)
    if not out.first_prompt:
        out.first_prompt = first_text(sample.get("arguments"))
    doc = _doc_line(unit, number, sample, where)
    listed = sample.get("metrics")
    names = [m for m in listed if isinstance(m, str)] if isinstance(listed, list) else \
        [m for m in settings.metric_names if m in sample]
    for metric in names:
        _add_value(out.metrics.setdefault((metric, name), MetricValues()), doc, sample.get(metric), settings)


def _add_value(into: MetricValues, doc: DocLine, value: object, settings: TaskSettings) -> None:
    if into.corpus:
        return
    if _is_number(value) or (settings.repeats > 1 and _per_repetition(value, settings.repeats)):
        into.values.append((doc, value))
        return
    # Not a per-document value: drop what was kept, so memory does not hold a metric never imported.
    into.corpus = type(value).__name__ if value is not None else "null"
    into.values.clear()


def _per_repetition(value: object, repeats: int) -> bool:
    return isinstance(value, list) and len(value) == repeats and all(_is_number(v) for v in value)


def _is_number(value: object) -> bool:
    return isinstance(value, (bool, int, float))


def _doc_line(unit: str, number: int, sample: dict[str, object], where: LineAt) -> DocLine:
    filtered = sample.get("filtered_resps")
    repeats = where.settings.repeats
    repetitions = repeats if repeats > 1 and isinstance(filtered, list) and len(filtered) == repeats else 0
    columns = {"doc_id": unit}
    columns.update({name: str(sample[name]) for name in HASH_COLUMNS if isinstance(sample.get(name), str)})
    return DocLine(unit, number, _plain(sample.get("target"))[:TARGET_CHARS], columns, where, repetitions)


def response_text(filtered: object, output_type: str) -> str:
    """The filtered response as a reader would want to see it."""
    if output_type in SCORED_OUTPUTS and isinstance(filtered, list) and all(isinstance(r, list) for r in filtered):
        # One [log-likelihood, is-greedy] pair per choice: the response is the scores.
        return "\n".join(f"choice {i}: log-likelihood {_plain(r[0]) if r else ''}"
                         + (f", greedy {_plain(r[1])}" if len(r) > 1 else "") for i, r in enumerate(filtered))
    texts = list(_strings(filtered))
    if len(texts) == 1:
        return texts[0]
    if texts:
        return "\n\n".join(f"[response {i}]\n{t}" for i, t in enumerate(texts, 1))
    return json.dumps(filtered, ensure_ascii=False, indent=1)


def _strings(value: object) -> Sequence[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        out: list[str] = []
        for item in value:
            found = _strings(item)
            if not found:
                return []  # a number or an object somewhere: not a list of texts
            out += found
        return out
    return []


def first_text(arguments: object) -> str:
    """The first argument of the first request: the prompt, for the contract's [task]."""
    value = arguments
    while isinstance(value, (dict, list)) and value:
        value = next(iter(value.values())) if isinstance(value, dict) else value[0]
    text = value if isinstance(value, str) else ""
    return text if len(text) <= PROMPT_CHARS else text[:PROMPT_CHARS] + " …"


def _plain(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return json.dumps(value, ensure_ascii=False)
