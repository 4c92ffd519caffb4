"""Audit findings as pages summarise them: one short line per kind, with the services
and calls it covers counted, and the calls themselves one click away.

A run whose 100 calls each returned a dated snapshot, or whose six services each
repeated a drawing, shows one line, not a paragraph of call ids or six near-identical
warnings. Each finding keeps its own anchor on the line that summarises it, so a mark
beside a claim still lands on it; the full list (every message, with file, line and
calls) is a page of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from reportgen.model.findings import INLINE_IDS, Finding
from reportgen.model.numbers import counted

# Calls a summary line links behind its <details>; the full list has all of them.
LISTED_CALLS = 100
# Calls the audit page links for one finding. Past this, the rest are named in a data
# file (``FINDING_CALLS``): the findings about a million-call run's calls made the page
# 150 MB, which no browser opens (a hundred findings of 500 calls: some 5 MB).
AUDIT_PAGE_CALLS = 500
FINDING_CALLS = "finding-calls.json"  # in data/<run>/: {finding id: every call id}, when one is long


def long_findings(findings: Iterable[Finding]) -> dict[str, tuple[str, ...]]:
    """The calls of each finding the audit page does not list whole, by finding id."""
    return {f.id: f.calls for f in findings if len(f.calls) > AUDIT_PAGE_CALLS}


@dataclass(frozen=True, slots=True)
class FindingLine:
    severity: str
    code: str
    text: str  # what the findings say, without service, count or call ids
    services: tuple[tuple[str, int], ...]  # each service named, with its calls in the line (0: none named)
    ids: tuple[str, ...]  # the findings summarised, for their anchors
    calls: tuple[str, ...]  # the calls they are about, each once

    @property
    def n_calls(self) -> int:
        return len(self.calls)

    @property
    def who(self) -> str:
        """Whom the line is about: "2 calls of B", "128 calls of relay-01 (21), relay-02
        (19), ...", or the services alone when the findings name no calls."""
        if not self.calls:
            return ", ".join(s for s, _ in self.services)
        calls = counted(self.n_calls, 'call')
        if not self.services:
            return calls
        if len(self.services) == 1 or not all(n for _, n in self.services):
            return f"{calls} of " + ", ".join(s for s, _ in self.services)
        return f"{calls} of " + ", ".join(f"{s} ({n})" for s, n in self.services)

    @property
    def inline(self) -> bool:
        """Few enough calls to name on the line itself."""
        return self.n_calls <= INLINE_IDS

    @property
    def listed(self) -> tuple[str, ...]:
        return self.calls[:LISTED_CALLS]


def finding_lines(findings: Iterable[Finding], across_services: bool = True) -> tuple[FindingLine, ...]:
    """Findings of one severity, code and summary as one line each, in the order their
    first finding comes (errors first, then by file and line: the audit's order). Not
    ``across_services`` (a service's page), each service's findings are lines of their
    own, so that each line links to its finding."""
    groups: dict[tuple[str, str, str, tuple[str, ...]], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.severity, f.code, f.short, () if across_services else f.services), []).append(f)
    lines = []
    for (severity, code, text, _), members in groups.items():
        per_service: dict[str, int] = {}
        calls: dict[str, None] = {}
        for f in members:
            for service in f.services:
                per_service.setdefault(service, 0)
            own = [c for c in f.calls if c not in calls]
            calls.update(dict.fromkeys(own))
            if len(f.services) == 1:
                per_service[f.services[0]] += len(own)
        lines.append(FindingLine(severity, code, text, tuple(sorted(per_service.items())),
                                 tuple(f.id for f in members), tuple(calls)))
    return tuple(lines)
