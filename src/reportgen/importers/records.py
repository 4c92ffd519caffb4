"""What a harness reader hands to the importer: one model's log of one task, and its
samples, in the harness's own terms. Readers know formats; they decide nothing about
designs, ids or files (assemble and write do).

A Sample's heavy part (the request and the artifacts: prompts, transcripts, outputs) is
either held (``request`` / ``artifacts``) or loaded when written (``payload``: a loader
that reads it again from the log). A streaming reader sets ``payload`` and keeps only the
small per-sample fields, so that memory is bounded by the samples' metadata, not by the
log's bytes; ``materialize()`` gives the heavy part either way."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from reportgen.model.outcomes import Status

MetricKind = Literal["pass", "score"]
Artifacts = tuple[tuple[str, bytes], ...]
Payload = tuple[Mapping[str, object], Artifacts]  # (the request, the artifacts)
NO_REQUEST: Mapping[str, object] = MappingProxyType({})  # a lazy Sample's request field (shared, read-only)


@dataclass(frozen=True, slots=True)
class Sample:
    """One graded model call: a sample (or document, or request state) and epoch."""

    unit: str  # the sample / document / instance id: the same id in two logs is the same item
    epoch: int  # 1-based repetition of the unit
    request: Mapping[str, object]  # the request as the harness records it (JSON-able); NO_REQUEST when lazy
    status: Status  # "ok" or a technical failure: timeout, api_error, stream_cut, length_limit, harness_error
    passed: bool | None = None  # a pass/fail metric's outcome (None: a technical failure)
    score: float | None = None  # a numeric metric's value
    finish_reason: str = ""
    failure_reason: str = ""  # why a technical failure happened, in the harness's words
    grade_reason: str = ""  # the grade as the harness wrote it (e.g. 'accuracy: "C"')
    returned_model: str = ""  # the model the response names, when the log records one
    started_at: str = ""  # ISO 8601 with an offset, when the log records it
    latency_ms: float | None = None
    slice: str = ""  # a split or subset, when the harness records one
    artifacts: tuple[tuple[str, bytes], ...] = ()  # (file name, bytes): the output, the transcript
    columns: Mapping[str, str] = field(default_factory=dict)  # harness ids kept as log columns
    partial: bool = False  # graded partial credit (Inspect's "P"): not a pass; a registered share under a score
    # Reads (request, artifacts) again from the log, when the reader does not hold them.
    payload: Callable[[], Payload] | None = field(default=None, compare=False, repr=False)

    def materialize(self) -> Payload:
        """The request and the artifacts: loaded from the log now when the Sample is lazy."""
        if self.payload is not None:
            return self.payload()
        return self.request, self.artifacts


@dataclass(frozen=True)
class HarnessLog:
    """One model's evaluation of one task, as one harness logged it."""

    harness: str  # "inspect", "lm-eval" or "helm"
    harness_version: str
    source: str  # the file or folder it was read from, as given (for notes)
    task: str  # logs of one task (and metric) become one experiment
    model: str  # as logged, provider prefix and all
    metric: str  # the metric graded, e.g. "accuracy" or "exact_match"
    kind: MetricKind
    started_at: str  # when the run started (ISO 8601 with an offset): the fallback for samples
    samples: tuple[Sample, ...]
    params: Mapping[str, object] = field(default_factory=dict)  # generation settings as logged
    prompt: str = ""  # the task's instruction or first input, for the contract's [task]
    listed_units: int | None = None  # how many units × epochs the log's header lists
    aggregate: Mapping[str, float] = field(default_factory=dict)  # the harness's own numbers
    headline: str = ""  # which of them is the harness's headline (a key of ``aggregate``)
    rule: str = ""  # how the harness counts a sample into its headline, in words
    variant: str = ""  # what else the run varied, e.g. Inspect's solver: tells two logs of one model apart
    higher_is_better: bool = True  # the metric's direction, as the harness records it
    notes: tuple[str, ...] = ()  # what the reader noticed and the report should say
    column_notes: Mapping[str, str] = field(default_factory=dict)  # what each kept column is


def json_object(value: object) -> Mapping[str, Any]:
    """A JSON object, or an empty one for anything else: the optional parts a harness
    leaves out are read as empty, never as an error."""
    return value if isinstance(value, Mapping) else {}
