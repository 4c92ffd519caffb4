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
from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Sequence

from reportgen.claims.claim import Claim
from reportgen.model.outcomes import OUTCOME_LABELS
from reportgen.render.views import CallView, RunView, SheetLink

EVIDENCE_PREVIEW = 4  # thumbnails shown with the first claim of each evidence list on its claims page
EVIDENCE_ROWS = 200  # a set this long or shorter is a table, a thumbnail per call


@dataclass(frozen=True)
class SheetShare:
    """The calls of one evidence set that lie on one sheet."""

    sheet: SheetLink
    members: tuple[CallView, ...]  # in the sheet's order
    left_out: tuple[CallView, ...]  # the sheet's calls that are not in the set
    counts: tuple[tuple[str, int], ...]  # the members' outcomes: (label, how many)

    @property
    def listed(self) -> tuple[CallView, ...]:
        """The shorter of the two lists: the members, or the calls left out."""
        return self.left_out if len(self.left_out) < len(self.members) else self.members

    @property
    def lists_left_out(self) -> bool:
        return len(self.left_out) < len(self.members)


def sheet_shares(run: RunView, service: str, entries: Sequence[CallView]) -> dict:
    """What evidence.html shows of a set: ``entries`` as a table, or ``shares`` by sheet."""
    sheets = next((s.sheets for s in run.services if s.id == service), ())
    members = {v.call.call_id for v in entries}
    on_sheets = {c for sheet in sheets for c in sheet.calls}
    # A table when short, or when the list is not a set of this service's calls (an id
    # given twice, or one no sheet of the service holds): every entry is then shown as it is.
    if len(entries) <= EVIDENCE_ROWS or len(members) != len(entries) or not members <= on_sheets:
        return {"entries": entries, "shares": None}
    shares = []
    for sheet in sheets:
        inside = tuple(run.by_id[c] for c in sheet.calls if c in members)
        if not inside:
            continue
        counts = Counter(v.call.outcome for v in inside)
        shares.append(SheetShare(sheet, inside, tuple(run.by_id[c] for c in sheet.calls if c not in members),
                                 tuple((OUTCOME_LABELS[o], counts[o]) for o in OUTCOME_LABELS if counts[o])))
    return {"entries": None, "shares": shares}


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
