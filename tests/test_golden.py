"""Golden test of the built demo: the build is deterministic, so any change to any
byte of the site shows here. The manifest pins every file by sha256; a few pages are
kept in full so a reviewer reads the change as a diff.

PNG files and chart SVGs are left out of the manifest comparison: their bytes come from
the installed cairo and vl-convert, not from reportgen. They are pinned instead through
what reportgen writes about them: each chart's data (embedded in the SVG, checked here
against the table beside the chart on its experiment page, whose hash the manifest
pins) and each PNG's source SVG (data/<run>/artifacts.json, pinned in the manifest,
lists the render of every SVG; the PNGs published must be exactly those).

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

from test_golden_designs import DIFF_LINES, chart_data, png_sources, pretty

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
        if rel == "manifest.json":
            continue  # compared below, without the PNGs and chart SVGs
        expected = (GOLDEN / rel).read_text(encoding="utf-8")
        actual = (demo_site / rel).read_text(encoding="utf-8")
        if actual != expected:
            fail_with_diff(rel, expected, actual)
    # Every other file, byte for byte, through its hash; PNGs and charts as said above.
    actual, expected = (without_drawings(json.loads((root / "manifest.json").read_text("utf-8")))
                        for root in (demo_site, GOLDEN))
    if actual != expected:
        fail_with_diff("manifest.json (without PNGs and chart SVGs)", pretty(expected), pretty(actual))
    pngs = sorted(p.name for p in demo_site.glob("artifacts/*.png"))
    assert sorted(png_sources(demo_site)) == pngs, "every PNG is the render of one SVG in artifacts.json, and only those"
    assert chart_data(demo_site)  # every chart's data is the table its page shows


def without_drawings(manifest: dict) -> dict:
    files = {rel: digest for rel, digest in manifest["files"].items()
             if not rel.endswith(".png") and not rel.startswith("charts/")}
    return {**manifest, "files": files}


def fail_with_diff(rel: str, expected: str, actual: str) -> None:
    diff = "".join(list(difflib.unified_diff(
        expected.splitlines(True), actual.splitlines(True), f"golden/{rel}", f"built/{rel}"))[:DIFF_LINES])
    pytest.fail(f"{rel} differs from the golden copy:\n{diff}")
