"""Which model answered: the returned model string judged against the requested one.

A provider resolves an alias to one of its dated snapshots and names the snapshot in
its response: ``gpt-4o-mini`` is answered as ``gpt-4o-mini-2024-07-18``,
``claude-3-7-sonnet-latest`` as ``claude-3-7-sonnet-20250219``. That is the model asked
for, and the page says which snapshot served it. A name that is already a snapshot
(it ends in a date) answered under another date, or a model of another family, is a
substitution: the audit warns.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Iterable, Iterator, Literal

from reportgen.model.calls import Call
from reportgen.model.config import UNKNOWN
from reportgen.model.findings import Finding, some_ids
from reportgen.model.source import ValidatedRun
from reportgen.model.numbers import counted

Identity = Literal["same", "snapshot", "different"]

# The suffixes a provider dates a snapshot with: -2024-07-18, -20250219, @20240620, a
# year and month (-2024-07), the month and day of older names (gpt-4-0613) and the year
# and month of others (mistral-large-2407). Months and days must be real ones.
_MONTH = r"(?:0[1-9]|1[0-2])"
_DAY = r"(?:0[1-9]|[12]\d|3[01])"
_DATED = re.compile(rf"[-@](?:20\d\d-{_MONTH}(?:-{_DAY})?|20\d\d{_MONTH}{_DAY}|{_MONTH}{_DAY}|2[3-9]{_MONTH})$")
_LATEST = "-latest"


def model_name(name: str) -> str:
    """The model's own name: after the provider or route prefix ("openai/gpt-4o-mini"
    is "gpt-4o-mini"), in lower case."""
    return name.rsplit("/", 1)[-1].strip().lower()


def is_dated(name: str) -> bool:
    """Does the name already pin a snapshot by its date?"""
    return _DATED.search(model_name(name)) is not None


def model_identity(requested: str, returned: str) -> Identity:
    """"same": the model requested, or a returned string that says nothing ("", "unknown");
    "snapshot": the requested alias's own dated snapshot; "different": anything else."""
    if returned.strip() in ("", UNKNOWN):
        return "same"
    want, got = model_name(requested), model_name(returned)
    if want == got:
        return "same"
    dated = _DATED.search(got)
    if dated is None or is_dated(want):
        return "different"  # a dated name answered under another date is another snapshot
    family = want[: -len(_LATEST)] if want.endswith(_LATEST) else want
    return "snapshot" if got[: dated.start()] == family else "different"


def served_as(calls: Iterable[Call]) -> dict[str, tuple[tuple[str, int], ...]]:
    """Each service's dated snapshots that answered for its requested alias, with how
    many calls each served, most calls first (services with none are left out)."""
    known: dict[tuple[str, str], Identity] = {}
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for call in calls:
        pair = (call.requested_model, call.returned_model)
        identity = known.get(pair)
        if identity is None:
            identity = known[pair] = model_identity(*pair)
        if identity == "snapshot":
            counts[call.service][call.returned_model] += 1
    return {service: tuple(sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))) for service, c in counts.items()}


def returned_model_findings(run: ValidatedRun) -> Iterator[Finding]:
    """A warning for calls answered by another model than requested, and one for a
    service whose calls were answered by more than one dated snapshot of its alias
    (which snapshot served is stated on its pages: see ``served_as``)."""
    other: dict[str, list[Call]] = defaultdict(list)
    snapshots: dict[str, dict[str, list[Call]]] = defaultdict(lambda: defaultdict(list))
    known: dict[tuple[str, str], Identity] = {}
    for call in run.calls:
        pair = (call.requested_model, call.returned_model)
        identity = known.get(pair)
        if identity is None:
            identity = known[pair] = model_identity(*pair)
        if identity == "different":
            other[call.service].append(call)
        elif identity == "snapshot":
            snapshots[call.service][call.returned_model].append(call)
    for service, calls in sorted(other.items()):
        models = ", ".join(sorted({c.returned_model for c in calls}))
        ids = tuple(c.call_id for c in calls)
        yield Finding("returned-model-differs", "warning", run.log.file, calls[0].line, "returned_model",
                      f"{service}: {counted(len(calls), 'call')} ({some_ids(ids)}) returned {models} instead of "
                      f"the requested {calls[0].requested_model}; the interface's model string is not proof either way, but "
                      "these calls may not have been served by the model under test", (service,), calls=ids,
                      summary=f"returned {models} instead of the requested {calls[0].requested_model}: these "
                      "calls may not have been served by the model under test")
    for service, by_model in sorted(snapshots.items()):
        if len(by_model) < 2:
            continue
        ordered = sorted(by_model.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        served = "; ".join(f"{model}: {counted(len(calls), 'call')}" for model, calls in ordered)
        mixed = sorted((c for model, calls in ordered[1:] for c in calls), key=lambda c: c.line)
        ids = tuple(c.call_id for c in mixed)
        yield Finding("returned-snapshots-mixed", "warning", run.log.file, mixed[0].line, "returned_model",
                      f"{service}: the alias {ordered[0][1][0].requested_model} was served by {len(ordered)} "
                      f"snapshots ({served}; the calls of the others: {some_ids(ids)}); a difference may come "
                      "from a change of model during the run, not from the service", (service,), calls=ids,
                      summary=f"one alias served by {len(ordered)} dated snapshots during the run: a difference "
                      "may come from a change of model, not from the service")

