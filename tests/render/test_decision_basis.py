"""A decision shows the interval it was decided on: on a leaderboard that is the
Bonferroni-adjusted interval, not the unadjusted one printed in the next column, and the
verdict's sentence names it and quotes the adjusted p-value."""

from __future__ import annotations

import html
import json
import math
import re
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from reportgen import stats
from reportgen.render.present import points

sys.path.insert(0, str(ROOT / "benchmarks"))
from make_leaderboard import generate  # noqa: E402


def _plain(fragment: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", fragment))).strip()


def leaderboard_rows(page: str) -> dict[str, list[str]]:
    """The leaderboard table's cells as text, by service."""
    start = page.index('<table class="results leaderboard">')
    table = page[start:page.index("</table>", start)]
    rows = {}
    for row in re.findall(r"<tr class=\"group-\d+\">(.*?)</tr>", table, re.S):
        cells = [_plain(c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
        rows[cells[1].removesuffix(" (baseline)")] = cells
    return rows


def interval_text(claim: dict) -> str:
    return f"[{points(claim['interval']['low'])}, {points(claim['interval']['high'])}]"


def test_verdict_names_its_interval_and_quotes_the_adjusted_p():
    test = stats.Test(0.3425, 0.05, "the Holm-adjusted Fisher test over 5 comparisons", "Holm-adjusted p")
    v = stats.decide(-0.055, 0.461, test=test, basis="the 99% Bonferroni-adjusted Newcombe interval")
    assert v.code == "no_difference_shown"
    assert v.reason.startswith("the 99% Bonferroni-adjusted Newcombe interval contains zero; Holm-adjusted p = 0.3425.")
    shown = stats.decide(0.02, 0.30, min_useful_effect=0.05, test=stats.Test(0.01, 0.05, "t", "Holm-adjusted p"),
                         basis="the 99% Bonferroni-adjusted Newcombe interval")
    assert shown.code == "improvement_not_useful_size"
    assert "the 99% Bonferroni-adjusted Newcombe interval excludes zero" in shown.reason
    assert "Holm-adjusted p = 0.0100" in shown.reason
    # Without a name the sentences read as before: "the interval".
    assert stats.decide(-0.1, 0.2).reason.startswith("the interval contains zero.")


def _check_board(version: Path, run_id: str) -> int:
    """Every decision cell on the board shows its own interval, and agrees with it."""
    claims = {c["id"]: c for c in json.loads((version / "data/results.json").read_text())["claims"]}
    page = (version / "experiments" / run_id / "index.html").read_text(encoding="utf-8")
    rows = leaderboard_rows(page)
    checked = 0
    for cid, c in claims.items():
        if c["experiment"] != run_id or c["kind"] != "decision" or ".block-" in cid or ".slice-" in cid:
            continue
        service = cid.split(".")[1].split("_vs_")[0]
        cell = rows[service][-1]
        level = f"{c['interval']['confidence_level'] * 100:.4g}%"
        assert c["interval"]["confidence_level"] > 0.95  # Bonferroni: more than the unadjusted level
        assert f"read on the {level} Bonferroni-adjusted Newcombe {interval_text(c)}" in cell, cell
        assert f"the {level} Bonferroni-adjusted Newcombe interval" in c["verdict_text"]
        difference = claims[cid.replace(".verdict", ".difference")]
        assert interval_text(difference) in rows[service][-3]  # the unadjusted interval keeps its column
        low, high = c["interval"]["low"], c["interval"]["high"]
        if low <= 0 <= high:  # the verdict agrees with the interval it names
            assert c["verdict"] in ("no_difference_shown", "not_decidable", "blocked_by_critical")
            assert "contains zero" in c["verdict_text"] or c["verdict"] != "no_difference_shown"
        elif math.isfinite(low) and c["verdict"] == "no_difference_shown":
            assert "does not reject" in c["verdict_text"]  # only the adjusted test can hold a direction back
        checked += 1
    return checked


def test_demo_board_decision_cell_shows_the_bonferroni_interval(demo_site):
    rows = leaderboard_rows((demo_site / "experiments/relay-leaderboard/index.html").read_text(encoding="utf-8"))
    cell = rows["relay-04"][-1]
    assert "no difference shown" in cell
    assert "[−5.5, +46.1]" in cell and "[+1.0, +41.3]" not in cell
    assert "not adjusted" in _plain((demo_site / "experiments/relay-leaderboard/index.html").read_text())
    assert _check_board(demo_site, "relay-leaderboard") == 5
    entry = _plain((demo_site / "experiments/relay-leaderboard/relay-04.html").read_text(encoding="utf-8"))
    assert "the 99% Bonferroni-adjusted Newcombe interval contains zero; Holm-adjusted p = 0.3425" in entry


@pytest.fixture(scope="module")
def twelve_services(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("board12")
    generate(out, services=12, calls=30, distinct_svgs=12, blocks=2, seed=11)
    return out


def test_twelve_service_board_decisions_show_their_own_interval(twelve_services, run_cli, tmp_path):
    result = run_cli("build", twelve_services, "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    version = tmp_path / "site/v1"
    run_id = next(p.name for p in (version / "experiments").iterdir() if p.is_dir())
    assert _check_board(version, run_id) == 11
    index_rows = leaderboard_rows((version / "index.html").read_text(encoding="utf-8"))
    assert all("Bonferroni-adjusted" in cells[-1] for name, cells in index_rows.items() if cells[-1] != "—")
