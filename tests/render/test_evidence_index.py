"""The evidence index: each claim's evidence split into per-service sets, each written
once; checked against the direct computation (every claim, every call of its evidence)
on lists shaped to trip it."""

from __future__ import annotations

import hashlib
import random
from types import SimpleNamespace

from reportgen.render.evidence import evidence_index


def direct(claims, calls):
    """The plain way: walk every claim's evidence call by call."""
    sets, by_claim = {}, {}
    for claim in claims:
        groups: dict[str, list[str]] = {}
        for call_id in claim.evidence:
            view = calls.get((claim.experiment, call_id))
            groups.setdefault(view.call.service if view else "", []).append(call_id)
        links = []
        for service, ids in groups.items():
            key = hashlib.sha256("\x1f".join((claim.experiment, service, *ids)).encode()).hexdigest()[:16]
            sets.setdefault(key, (claim.experiment, service, tuple(ids)))
            links.append((service, len(ids), f"evidence/{claim.experiment}/{key}.html"))
        by_claim[claim.id] = links
    return sets, by_claim


def test_the_index_matches_the_direct_computation():
    rng = random.Random(7)
    calls = {}
    for run in ("board", "weekly"):
        for service in ("a", "b", "c"):
            for i in range(30):
                call_id = f"{service}-{i:02d}"
                calls[(run, call_id)] = SimpleNamespace(call=SimpleNamespace(service=service, call_id=call_id))
    ids = {run: [c for (r, c) in calls if r == run] for run in ("board", "weekly")}
    of = {(run, s): [c for c in ids[run] if c.startswith(s)] for run in ids for s in "abc"}
    claims = []

    def claim(run, evidence):
        claims.append(SimpleNamespace(id=f"{run}.claim{len(claims)}", experiment=run, evidence=tuple(evidence)))

    for run in ("board", "weekly"):
        for s in "abc":
            claim(run, of[(run, s)])  # a service's rate
            claim(run, of[(run, s)])  # another claim on the same list
        claim(run, of[(run, "a")] + of[(run, "b")])  # a comparison: a then b
        claim(run, of[(run, "b")] + of[(run, "a")])
        mixed = of[(run, "a")][:10] + of[(run, "c")][:5] + of[(run, "a")][10:]  # a service in two runs
        claim(run, mixed)
        claim(run, rng.sample(ids[run], 40))  # interleaved services
        claim(run, of[(run, "c")][:3] + ["not-a-call", "c-00"])  # an unknown id, a repeated call
        claim(run, [])
    by_run: dict[str, dict[str, SimpleNamespace]] = {}
    for (run, call_id), view in calls.items():
        by_run.setdefault(run, {})[call_id] = view
    got = evidence_index(claims, by_run)
    want = direct(claims, calls)
    assert got[0] == want[0]
    assert got[1] == want[1]
    # Two rates of one list share its page; a comparison links one page per service.
    assert got[1]["board.claim0"] == got[1]["board.claim1"]
    assert [n for _, n, _ in got[1]["board.claim6"]] == [30, 30]
    assert [s for s, _, _ in got[1]["board.claim10"]] == ["c", ""]  # the unknown id goes under ""

