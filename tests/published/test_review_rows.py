"""The reviewer's rows of calls take the call and its request hash from the change
record, never by parsing its label back: a call id may hold " (" itself."""

from __future__ import annotations

from reportgen.published.diff import CallLabel, Change, VersionDiff
from reportgen.published.review import review

HASH = "sha256:" + "ab" * 32


def test_a_call_id_with_a_parenthesis_keeps_its_id_and_hash():
    odd = CallLabel("run", "B-2 (retry)", HASH)
    moved = CallLabel("run", "C-1", f"{HASH} -> sha256:{'cd' * 32}")
    art = CallLabel("run", "D (1)")
    d = VersionDiff("v1", "v2", (), (), (odd,), (), (Change(str(moved), "status", "ok", "error", moved),),
                    (Change(str(art), "image.svg", "x", "y", art),), (), (), ())
    r = review(d)
    assert [(row.call, row.request_hash) for row in r.added] == [("run/B-2 (retry)", HASH)]
    assert [(row.call, row.request_hash) for row in r.calls] == [("run/C-1", moved.request_hash)]
    assert [(row.call, row.request_hash) for row in r.artifacts] == [("run/D (1)", "")]
    assert str(odd) == f"run/B-2 (retry) ({HASH})" and str(art) == "run/D (1)"
