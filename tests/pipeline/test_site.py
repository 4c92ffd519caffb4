"""The built demo, read as a reader and an auditor would: numbers, links, hashes."""

from __future__ import annotations

import hashlib
import json

import pytest

from reportgen import stats
from conftest import DEMO
from reportgen.render.packs import read_pack
from sitecheck import broken_links, call_section, manifest_problems, sheet_of, parse, parse_text, text, tree_bytes


def test_headline_numbers_on_the_front_page(demo_site):
    page = text(demo_site / "index.html")
    for expected in ("80.0% (16/20)", "[58.4%, 91.9%]", "40.0% (8/20)", "[21.9%, 61.3%]",
                     "50.0% (8/16)", "p = 0.0225", "\u221240.0 points", "[\u221261.7, \u22129.6]",
                     "candidate worse"):
        assert expected in page, expected


def test_b_rate_among_complete_returns_sits_beside_its_headline(demo_site):
    page = text(demo_site / "experiments/pelican-ab/index.html")
    row = page[page.index('href="../../experiments/pelican-ab/B.html"'):]
    row = row[: row.index("</tr>")]
    assert row.index("40.0% (8/20)") < row.index("50.0% (8/16)")
    assert "timeout or any other technical failure is a non-pass, never a dropped row" in page


def test_p_value_reading_says_what_a_p_value_is(demo_site):
    page = text(demo_site / "experiments/pelican-ab/index.html")
    assert ("If both services had the same pass probability, a split of passes at least this uneven "
            "would occur in about 2.2% of runs like this one") in page
    assert "It is not the probability that either service is better" in page
    lowered = page.lower()
    assert "probability that b is better" not in lowered
    assert "probability b is better" not in lowered


def test_results_json_matches_the_statistics(demo_site):
    results = json.loads(text(demo_site / "data/results.json"))
    assert results["schema"] == "reportgen.results/1" and results["version"] == "v1"
    claims = {c["id"]: c for c in results["claims"]}
    a = claims["pelican-ab.A.first_pass_rate"]
    expected = stats.wilson(16, 20)
    assert (a["estimate"], a["numerator"], a["denominator"]) == (0.8, 16, 20)
    assert a["interval"] == {"low": expected.low, "high": expected.high, "confidence_level": 0.95,
                             "method": "wilson"}
    assert claims["pelican-ab.B.complete_pass_rate"]["estimate"] == 0.5
    diff = claims["pelican-ab.B_vs_A.difference"]
    assert diff["interval"]["low"] == pytest.approx(-0.6169646658137687, abs=1e-12)
    assert diff["interval"]["high"] == pytest.approx(-0.09633737988749153, abs=1e-12)
    assert claims["pelican-ab.B_vs_A.fisher"]["p_value"] == pytest.approx(0.0224774273717544, abs=1e-12)
    assert claims["pelican-ab.B_vs_A.verdict"]["verdict"] == "candidate_worse"
    assert claims["pelican-ab.B.technical_failures.timeout"]["numerator"] == 4
    assert len(a["evidence"]) == 20 and all(i.startswith("A-") for i in a["evidence"])


def test_every_claim_has_an_anchor_and_every_evidence_call_a_page(demo_site):
    results = json.loads(text(demo_site / "data/results.json"))
    anchors = parse(demo_site / "claims.html").ids
    for claim in results["claims"]:
        assert claim["id"] in anchors
        for call_id in claim["evidence"]:
            assert f'id="call-{call_id}"' in text(sheet_of(demo_site, claim["experiment"], call_id))


def test_every_block_has_its_own_row(demo_site):
    claims = {c["id"]: c for c in json.loads(text(demo_site / "data/results.json"))["claims"]}
    total = sum(claims[f"pelican-ab.block-{b}.A.first_pass_rate"]["numerator"] for b in "1234")
    assert total == 16
    assert all(claims[f"pelican-ab.block-{b}.B.first_pass_rate"]["denominator"] == 5 for b in "1234")


def test_links_resolve(demo_site):
    assert broken_links(demo_site.parent) == []


def test_manifest_covers_every_file(demo_site):
    assert manifest_problems(demo_site) == []


def test_call_page_shows_hash_request_response_and_render(demo_site):
    store = demo_site.parent / "store"
    page = call_section(demo_site, "pelican-ab", "A-01")
    artifacts = json.loads(text(demo_site / "data/pelican-ab/artifacts.json"))
    (request_hex, request_file), = artifacts["requests"].items()
    assert f"sha256:{request_hex}" in page
    assert f'<a href="{request_file}">the published request body</a>, recomputed by the build: it matches' in page
    body = (store / request_file).read_bytes()
    assert request_file == hashlib.sha256(body).hexdigest() + ".json"
    assert "Generate an SVG of a pelican riding a bicycle" in body.decode()  # the raw request
    # The response, whole, its SVG named in place: it is listed and drawn apart.
    svg = (DEMO / "experiments/pelican-ab/artifacts/A-01/image.svg").read_bytes()
    sha = hashlib.sha256(svg).hexdigest()
    assert f"```svg\n[image.svg, listed above: {len(svg)} bytes, sha256 {sha[:12]}…]```" in page
    assert "response.txt, whole:" in page
    assert f'<a href="{sha}.txt">image.svg</a>' in page and (store / f"{sha}.txt").read_bytes() == svg
    images = parse_text(page).images
    pngs = [i for i in images if i["src"].endswith(".png")]
    assert pngs and all(i.get("alt") for i in images)
    png = store / pngs[0]["src"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert hashlib.sha256(png.read_bytes()).hexdigest() in pngs[0]["src"]


def test_the_raw_response_is_in_the_sheets_pack(demo_site):
    sheet = next(s for s in json.loads(text(demo_site / "data/pelican-ab/artifacts.json"))["sheets"]
                 if "A-01" in s["calls"])
    index, files = read_pack((demo_site.parent / "store" / sheet["pack"]).read_bytes())
    response = next(e for e in index["calls"]["A-01"] if e["name"] == "response.txt")
    assert response["in"] == "pack"
    raw = (DEMO / "experiments/pelican-ab/artifacts/A-01/response.txt").read_bytes()
    assert files[response["file"]] == raw and response["sha256"] == hashlib.sha256(raw).hexdigest()
    assert f'<a href="{sheet["pack"]}">this sheet\'s pack</a>' in text(demo_site.parent / "store" / sheet["page"])


def test_malformed_svg_is_a_note_not_a_failed_build(demo_site):
    page = call_section(demo_site, "pelican-ab", "B-09")
    assert "No picture: not rendered: not well-formed XML" in page
    assert "complete, failed the task" in page


def test_timeout_page_says_nothing_came_back(demo_site):
    page = call_section(demo_site, "pelican-ab", "B-03")
    assert "technical failure: timed out" in page
    assert "The call returned nothing (timed out)" in page


def test_no_page_inlines_svg_or_ships_script(demo_site):
    for page in [*demo_site.rglob("*.html"), *(demo_site.parent / "store").glob("*.html")]:
        tags = set(parse(page).tags)
        assert "svg" not in tags and "script" not in tags, page
        assert "Content-Security-Policy" in text(page)


def test_published_model_files_are_text_or_sanitized(demo_site):
    for path in (demo_site.parent / "store").iterdir():
        assert path.name.endswith((".txt", ".png", ".svg", ".html", ".css", ".json", ".tar.gz")), path
        if path.suffix == ".svg":
            body = path.read_bytes()
            assert b"<script" not in body and b"onload" not in body


def test_data_holds_the_exact_inputs(demo_site):
    from conftest import DEMO
    source = DEMO / "experiments/pelican-ab"
    assert (demo_site / "data/pelican-ab/calls.csv").read_bytes() == (source / "calls.csv").read_bytes()
    assert (demo_site / "data/pelican-ab/run.toml").read_bytes() == (source / "run.toml").read_bytes()


def test_site_root_lists_versions(demo_site):
    root = demo_site.parent
    versions = json.loads(text(root / "versions.json"))
    assert versions[0]["version"] == "v1" and versions[0]["source_digest"].startswith("sha256:")
    assert (root / ".nojekyll").is_file() and (root / "404.html").is_file()
    assert 'href="v1/index.html"' in text(root / "index.html")


def test_build_is_deterministic(tmp_path, demo_source, run_cli):
    for name in ("one", "two"):
        result = run_cli("build", demo_source, "--out", tmp_path / name, "-q")
        assert result.exit_code == 0, result.output
    assert tree_bytes(tmp_path / "one") == tree_bytes(tmp_path / "two")


def block(items) -> int:
    """Lines of a list or map written one item per line: its opening, items and close."""
    return len(items) + 2 if items else 1


def test_results_json_holds_one_claim_per_line(demo_site):
    raw = text(demo_site / "data/results.json")
    body = json.loads(raw)
    lines = raw.splitlines()
    assert len(lines) == 1 + 5 + block(body["claims"]) + block(body["findings"]) + 1
    for claim in body["claims"]:
        line = next(li for li in lines if li.startswith(f'  {{"id":"{claim["id"]}",'))
        assert json.loads(line.rstrip(",")) == claim


def test_artifacts_json_names_every_file_and_render_once(demo_site):
    stored = json.loads(text(demo_site / "manifest.json"))["store"]
    store = demo_site.parent / "store"
    for path in (demo_site / "data").glob("*/artifacts.json"):
        body = json.loads(text(path))
        assert body["schema"] == "reportgen.artifacts/3"
        assert body["store"] == "../../../store/" and (path.parent / body["store"]).resolve() == store.resolve()
        log = (path.parent / "calls.csv")
        n_calls = len(log.read_text().splitlines()) - 1 if log.is_file() else None
        svgs, on_sheets = set(), []
        for sheet in body["sheets"]:
            assert sheet["page"] in stored and (sheet["pack"] is None or sheet["pack"] in stored)
            on_sheets += sheet["calls"]
            index = read_pack((store / sheet["pack"]).read_bytes())[0] if sheet["pack"] else {"calls": {}}
            assert set(index["calls"]) <= set(sheet["calls"])
            for entries in index["calls"].values():
                for entry in entries:
                    assert entry["in"] == "pack" or entry["file"] in stored
                    svgs |= {entry["sha256"]} if entry["kind"] == "svg" else set()
        assert len(on_sheets) == len(set(on_sheets)) and (n_calls is None or len(on_sheets) == n_calls)
        assert set(body["renders"]) == svgs
        for render in body["renders"].values():
            for published in (render["png"], render["sanitized_svg"]):
                assert published is None or published in stored
        assert set(body["requests"].values()) <= set(stored)
        # One sheet per line: a reviewer's line diff shows the sheets that changed.
        assert len(text(path).splitlines()) == (1 + 3 + block(body["requests"]) + block(body["sheets"])
                                                + block(body["renders"]) + 1)
