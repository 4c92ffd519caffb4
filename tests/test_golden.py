"""Golden test of the built demo: the build is deterministic, so any change to any
byte of the site shows here. The manifest pins every file by sha256; a few pages are
kept in full so a reviewer reads the change as a diff.

After reviewing an intended change, regenerate with:
    REPORTGEN_REGEN_GOLDEN=1 python -m pytest tests/test_golden.py
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden" / "demo"
KEPT = ("manifest.json", "data/results.json", "index.html", "experiments/pelican-ab/index.html",
        "experiments/pelican-ab/B.html", "calls/pelican-ab/B/B-09.html", "calls/pelican-ab/A/A-01.html",
        "experiments/seeds-paired/index.html", "experiments/relay-weekly/index.html")


def test_demo_matches_golden(demo_site):
    if os.environ.get("REPORTGEN_REGEN_GOLDEN"):
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for rel in KEPT:
            (GOLDEN / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(demo_site / rel, GOLDEN / rel)
        pytest.skip("golden files regenerated; review them with git diff")
    for rel in KEPT:
        expected = (GOLDEN / rel).read_text(encoding="utf-8")
        actual = (demo_site / rel).read_text(encoding="utf-8")
        if actual != expected:
            diff = "".join(list(difflib.unified_diff(
                expected.splitlines(True), actual.splitlines(True), f"golden/{rel}", f"built/{rel}"))[:80])
            pytest.fail(f"{rel} differs from the golden copy:\n{diff}")
    # Every other file, byte for byte, through its hash.
    manifest = json.loads((demo_site / "manifest.json").read_text())
    assert manifest == json.loads((GOLDEN / "manifest.json").read_text())
