"""Golden test of the built demo: the build is deterministic, so any change to any
byte of the site shows here. The manifest pins every file by sha256; a few pages are
kept in full so a reviewer reads the change as a diff.

PNG files and chart SVGs are pinned through what reportgen writes about them, not
through bytes that come from the installed cairo and vl-convert: each chart by the data
embedded in it (checked against the table its page shows), each PNG by the SVG it was
rendered from (data/<run>/artifacts.json). Pages and data that name a PNG by its hash
are compared with that name replaced by its source SVG's (see test_golden_designs).

After reviewing an intended change, regenerate with:
    REPORTGEN_REGEN_GOLDEN=1 python -m pytest tests/test_golden.py
"""

from __future__ import annotations

import difflib
import os
import shutil
from pathlib import Path

import pytest

from test_golden_designs import DIFF_LINES, compared_files

GOLDEN = Path(__file__).parent / "golden" / "demo"
KEPT = ("data/results.json", "index.html", "experiments/pelican-ab/index.html",
        "experiments/pelican-ab/B.html", "experiments/seeds-paired/index.html", "experiments/relay-weekly/index.html")
SHEETS_OF = (("pelican-ab", "A-01"), ("pelican-ab", "B-09"))  # the sheets of A and B, in full


def test_demo_matches_golden(demo_site):
    actual = compared_files(demo_site, KEPT, SHEETS_OF)
    if os.environ.get("REPORTGEN_REGEN_GOLDEN"):
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for rel, body in actual.items():
            (GOLDEN / rel).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / rel).write_text(body, encoding="utf-8")
        pytest.skip("golden files regenerated; review them with git diff")
    kept = sorted(p.relative_to(GOLDEN).as_posix() for p in GOLDEN.rglob("*") if p.is_file())
    assert kept == sorted(actual), "golden/demo holds other files than the test compares"
    for rel, body in actual.items():
        expected = (GOLDEN / rel).read_text(encoding="utf-8")
        if body != expected:
            diff = "".join(list(difflib.unified_diff(
                expected.splitlines(True), body.splitlines(True), f"golden/{rel}", f"built/{rel}"))[:DIFF_LINES])
            pytest.fail(f"{rel} differs from the golden copy:\n{diff}")
