"""The built demo, read as a reader and an auditor would: numbers, links, hashes."""

from __future__ import annotations

import hashlib
import json

import pytest

from reportgen import stats
from sitecheck import broken_links, manifest_problems, parse, text, tree_bytes


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
            assert len(list((demo_site / "calls" / claim["experiment"]).glob(f"*/{call_id}.html"))) == 1


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
    page = text(demo_site / "calls/pelican-ab/A/A-01.html")
    request = next((demo_site / "data/pelican-ab/requests").glob("*.json"))
    assert f"sha256:{request.stem}" in page
    assert "Recomputed by this build" in page
    assert "Generate an SVG of a pelican riding a bicycle" in page  # the raw request
    assert "```svg\n[an SVG of 2031 characters: see Output]" in page  # the response, its SVG shown apart
    response = next(a for a in json.loads(text(demo_site / "data/pelican-ab/artifacts.json"))["calls"]["A-01"]
                    if a["name"] == "response.txt")
    assert (f'the whole response, as the model wrote it: <a href="../../../artifacts/{response["sha256"]}.txt">'
            'response.txt</a>') in page
    images = parse(demo_site / "calls/pelican-ab/A/A-01.html").images
    pngs = [i for i in images if i["src"].endswith(".png")]
    assert pngs and all(i.get("alt") for i in images)
    png = demo_site / "calls/pelican-ab/A" / pngs[0]["src"]
    assert png.resolve().read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert hashlib.sha256(png.resolve().read_bytes()).hexdigest() in pngs[0]["src"]


def test_malformed_svg_is_a_note_not_a_failed_build(demo_site):
    page = text(demo_site / "calls/pelican-ab/B/B-09.html")
    assert "No picture: not rendered: not well-formed XML" in page
    assert "complete, failed the task" in page


def test_timeout_page_says_nothing_came_back(demo_site):
    page = text(demo_site / "calls/pelican-ab/B/B-03.html")
    assert "technical failure: timed out" in page
    assert "The call returned nothing (timed out)" in page


def test_no_page_inlines_svg_or_ships_script(demo_site):
    for page in demo_site.rglob("*.html"):
        tags = set(parse(page).tags)
        assert "svg" not in tags and "script" not in tags, page
        assert "Content-Security-Policy" in text(page)


def test_published_model_files_are_text_or_sanitized(demo_site):
    for path in (demo_site / "artifacts").iterdir():
        assert path.suffix in (".txt", ".png", ".svg"), path
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


def test_a_long_list_of_claims_is_written_once_and_linked(demo_site):
    claims = json.loads(text(demo_site / "data/results.json"))["claims"]
    cited = [c["id"] for c in claims if "A-01" in c["evidence"] and c["experiment"] == "pelican-ab"]
    assert len(cited) > 8
    links = [url for tag, url in parse(demo_site / "calls/pelican-ab/A/A-01.html").links
             if "evidence/pelican-ab/claims-" in url]
    assert len(links) == 1
    listing = parse((demo_site / "calls/pelican-ab/A" / links[0]).resolve())
    assert [url.rsplit("#", 1)[1] for tag, url in listing.links if "claims.html#" in url] == cited


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
    manifest = json.loads(text(demo_site / "manifest.json"))["files"]
    for path in (demo_site / "data").glob("*/artifacts.json"):
        body = json.loads(text(path))
        assert body["schema"] == "reportgen.artifacts/2"
        assert body["published_as"] == "artifacts/<sha256>.txt"
        svgs = set()
        for entries in body["calls"].values():
            for entry in entries:
                assert f"artifacts/{entry['sha256']}.txt" in manifest
                svgs |= {entry["sha256"]} if entry["kind"] == "svg" else set()
        assert set(body["renders"]) == svgs
        for render in body["renders"].values():
            for published in (render["png"], render["sanitized_svg"]):
                assert published is None or published in manifest
        # One call per line: a reviewer's line diff shows the calls whose files changed.
        assert len(text(path).splitlines()) == 1 + 3 + block(body["calls"]) + block(body["renders"]) + 1
