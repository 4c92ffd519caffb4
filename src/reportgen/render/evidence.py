"""Evidence pages: the calls behind one or more claims, each set written once.

A claim's evidence is split by service; each (run, service, call ids) set gets one page
under evidence/, named by a hash of its members, and claims link to those pages. A
leaderboard's comparisons reuse the pages of the two services' rates, so the site grows
with the number of calls, not with calls times claims.

A short set is a table, a row and a thumbnail per call. A long one is listed by the
sheets its calls are on: for each sheet, its calls in the set, or, when the set holds
most of the sheet, the few it leaves out; so a service's 2,000 calls are 40 lines, and
every call of the set is still named and linked, exactly.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from reportgen.claims.claim import Claim
from reportgen.model.numbers import counted
from reportgen.model.outcomes import SHOWN_LABELS, ShownOutcome
from reportgen.render.views import CallView, RunView, ServiceView, SheetLink

EVIDENCE_PREVIEW = 4  # thumbnails shown with the first claim of each evidence list on its claims page
EVIDENCE_ROWS = 200  # a set this long or shorter is a table, a thumbnail per call


@dataclass(frozen=True)
class SheetShare:
    """The calls of one evidence set that lie on one sheet: counted from the set's places
    (``Members``); its calls are made from the service's only when a template names them."""

    sheet: SheetLink
    n_members: int
    n_left_out: int  # the sheet's calls that are not in the set
    counts: tuple[tuple[str, int], ...]  # the members' outcomes: (label, how many)
    service_calls: tuple[CallView, ...] = field(compare=False, repr=False)
    inside: np.ndarray = field(compare=False, repr=False)  # which of the sheet's calls are in the set

    @property
    def lists_left_out(self) -> bool:
        return self.n_left_out < self.n_members

    @property
    def listed(self) -> tuple[CallView, ...]:
        """The shorter of the two lists (the members on a tie); none when the set holds the whole sheet."""
        return self._calls(not self.lists_left_out) if self.n_left_out else ()

    @property
    def count_texts(self) -> tuple[str, ...]:
        """The counts as they read: "3 technical failures", "2 complete, passed"."""
        return tuple(outcome_count(_OUTCOME_OF[label], n) for label, n in self.counts)

    @property
    def members(self) -> tuple[CallView, ...]:
        return self._calls(True)

    @property
    def left_out(self) -> tuple[CallView, ...]:
        return self._calls(False)

    def _calls(self, inside: bool) -> tuple[CallView, ...]:
        start, which = self.sheet.first - 1, self.inside if inside else ~self.inside
        return tuple(self.service_calls[start + int(j)] for j in np.flatnonzero(which))


@dataclass(frozen=True)
class Members:
    """A long evidence set as places among its service's calls (as its sheets list them),
    worked out by the build before the page writers are forked: a page writer then reads
    two arrays, not every call of the set and of its service's sheets (a Python object
    read in a forked writer is a page of memory copied: see ``VersionWriter.run_tasks``)."""

    places: np.ndarray  # each member's place among the service's calls; -1 when it is not one
    outcomes: np.ndarray  # the service's calls' outcomes, as indexes into SHOWN_LABELS (shared by its sets)


_OUTCOME_CODES = {outcome: i for i, outcome in enumerate(SHOWN_LABELS)}
_OUTCOME_OF = {label: outcome for outcome, label in SHOWN_LABELS.items()}


def set_members(sets: Mapping[str, tuple[str, str, tuple[str, ...]]], runs: Mapping[str, RunView]
                ) -> dict[str, Members]:
    """``Members`` of each set of ``evidence_index`` long enough to be listed by sheet."""
    long: dict[tuple[str, str], list[str]] = {}
    for key, (run_id, service, ids) in sets.items():
        if len(ids) > EVIDENCE_ROWS and run_id in runs:
            long.setdefault((run_id, service), []).append(key)
    members: dict[str, Members] = {}
    for (run_id, service), keys in long.items():
        view = next((s for s in runs[run_id].services if s.id == service), None)
        if view is None:
            continue
        place = {call.call.call_id: i for i, call in enumerate(view.calls)}  # one service's at a time
        outcomes = np.fromiter((_OUTCOME_CODES[c.outcome] for c in view.calls), np.int8, len(view.calls))
        for key in keys:
            ids = sets[key][2]
            members[key] = Members(np.fromiter((place.get(c, -1) for c in ids), np.int32, len(ids)), outcomes)
    return members


def sheet_shares(run: RunView, service: str, ids: Sequence[str], members: Members | None) -> dict:
    """What evidence.html shows of a set: its calls as a table (``entries``), or
    ``shares`` by sheet (``members``: the set's ``Members``, when it is long)."""
    view = next((s for s in run.services if s.id == service), None)
    inside = _inside(view, ids, members)
    # A table when short, or when the list is not a set of this service's calls (an id
    # given twice, or one no sheet of the service holds): every entry is then shown as it is.
    if view is None or members is None or inside is None:
        return {"entries": [run.by_id[i] for i in ids], "shares": None}
    # The service's sheets hold its calls in order, each sheet a run of them from ``first``.
    starts = np.array([sheet.first - 1 for sheet in view.sheets], dtype=np.int64)
    n_in = np.add.reduceat(inside.astype(np.int64), starts)
    by_outcome = [np.add.reduceat((inside & (members.outcomes == code)).astype(np.int64), starts)
                  for code in range(len(SHOWN_LABELS))]
    shares = []
    for k, sheet in enumerate(view.sheets):
        n = int(n_in[k])
        if not n:
            continue
        start, size = sheet.first - 1, len(sheet.calls)
        counts = tuple((label, int(by_outcome[o][k])) for o, label in enumerate(SHOWN_LABELS.values())
                       if by_outcome[o][k])
        shares.append(SheetShare(sheet, n, size - n, counts, view.calls, inside[start:start + size]))
    return {"entries": None, "shares": shares}


def outcome_count(outcome: ShownOutcome, n: int) -> str:
    """``n`` calls of one outcome, as a count reads: "1 technical failure", "3 technical
    failures", "3 complete, passed"."""
    if outcome == "technical_failure":
        return counted(n, SHOWN_LABELS[outcome])
    return f"{n} {SHOWN_LABELS[outcome]}"


def _inside(view: ServiceView | None, ids: Sequence[str], members: Members | None) -> np.ndarray | None:
    """Whether each of the service's calls is in the set; None when the set is short, or
    is not a set of the service's calls."""
    if view is None or members is None or len(ids) <= EVIDENCE_ROWS or (members.places < 0).any():
        return None
    inside = np.zeros(len(view.calls), dtype=bool)
    inside[members.places] = True
    return inside if int(inside.sum()) == len(ids) else None  # fewer: an id given twice


def evidence_index(claims: Sequence[Claim], calls: Mapping[str, Mapping[str, CallView]]) -> tuple[dict, dict]:
    """Evidence lists, each written once however many claims share it, and each claim's
    links to them (see the module text). ``calls``: by run id, then call id."""
    service_of = {run_id: {call_id: view.call.service for call_id, view in views.items()}
                  for run_id, views in calls.items()}
    sets: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    by_claim: dict[str, list[tuple[str, int, str]]] = {}
    made: dict[tuple[str, tuple[str, ...]], tuple[list[tuple[str, int, str]], list[str]]] = {}
    for claim in claims:
        # Many claims share one evidence list (a service's rate, its comparisons).
        known = made.get((claim.experiment, claim.evidence))
        if known is None:
            links, keys = [], []
            for service, ids in _by_service(claim.evidence, service_of.get(claim.experiment, {})).items():
                key = hashlib.sha256("\x1f".join((claim.experiment, service, *ids)).encode()).hexdigest()[:16]
                sets.setdefault(key, (claim.experiment, service, tuple(ids)))
                links.append((service, len(ids), f"evidence/{claim.experiment}/{key}.html"))
                keys.append(key)
            known = made[(claim.experiment, claim.evidence)] = (links, keys)
        by_claim[claim.id] = known[0]
    return sets, by_claim


def _by_service(evidence: tuple[str, ...], service_of: Mapping[str, str]) -> dict[str, list[str]]:
    """Call ids grouped by service, in order of first appearance; an id that names no
    call goes under "". Evidence comes in runs of one service: sliced run by run."""
    services = list(map(service_of.get, evidence))
    groups: dict[str, list[str]] = {}
    start = 0
    for service, run in itertools.groupby(services):
        end = start + len(list(run))
        groups.setdefault(service or "", []).extend(evidence[start:end])
        start = end
    return groups




def claims_page(run_id: str) -> str:
    """Where one experiment's claims are, from the version root (claims.html lists them all)."""
    return f"claims/{run_id}.html"


def claims_by_run(claims: Sequence[Claim]) -> dict[str, tuple[Claim, ...]]:
    """Each experiment's claims, in the report's order."""
    runs: dict[str, list[Claim]] = {}
    for claim in claims:
        runs.setdefault(claim.experiment, []).append(claim)
    return {run_id: tuple(own) for run_id, own in runs.items()}


def first_with_evidence(claims: Sequence[Claim]) -> dict[str, str]:
    """Each claim's first claim on the page with the same evidence (itself, when it is
    the first): the calls are previewed once, where that claim is."""
    first: dict[tuple[str, ...], str] = {}
    return {claim.id: first.setdefault(claim.evidence, claim.id) for claim in claims}


def findings_of(claims: Sequence[Claim]) -> tuple[str, ...]:
    """The ids of the findings that weaken any of ``claims``, in order of first mention."""
    return tuple(dict.fromkeys(fid for claim in claims for fid in claim.findings))


def claims_by_set(by_claim: Mapping[str, Sequence[tuple[str, int, str]]]) -> dict[str, tuple[str, ...]]:
    """The ids of the claims each evidence page supports, by the page's key (the
    inverse of ``evidence_index``'s links)."""
    cited: dict[str, list[str]] = {}
    for claim_id, links in by_claim.items():
        for _, _, href in links:
            cited.setdefault(href.rsplit("/", 1)[-1].removesuffix(".html"), []).append(claim_id)
    return {key: tuple(ids) for key, ids in cited.items()}
