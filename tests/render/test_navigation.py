"""Finding one's way: the site index dates each version by its own data and links every
page of changes; each evidence page names the claims it supports; claims are on one page
per experiment, with a small index that keeps every claims.html#<id> link working."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from html import unescape
from pathlib import Path

import pytest

from conftest import default_rows
from sitecheck import broken_links, parse, text

CLAIMS_PAGE_LIMIT = 300_000  # bytes: a claims page a phone opens in one go


@lru_cache(maxsize=None)
def ids_of(page: Path) -> frozenset[str]:
    return frozenset(parse(page).ids)


@lru_cache(maxsize=None)
def body_of(page: Path) -> str:
    return text(page)


def build(run_cli, make_source, tmp_path: Path, version: str, previous: str | None = None,
          built_at: str | None = None, rows=None) -> Path:
    site = f'title = "Mini report"\nversion = "{version}"\n'
    site += f'previous = "{previous}"\n' if previous else ""
    site += f'built_at = "{built_at}"\n' if built_at else ""
    result = run_cli("build", make_source(rows=rows, site=site), "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    return tmp_path / "site"


def index_rows(site: Path) -> dict[str, str]:
    """Each version's row of the site index, as text, by version."""
    page = text(site / "index.html")
    rows = re.findall(r"<tr><th scope=\"row\">(.*?)</tr>", page, re.S)
    return {re.search(r">([^<]+)</a>", r).group(1): r for r in rows}


@pytest.mark.slow
def test_the_site_index_dates_each_version_by_its_own_data(run_cli, make_source, tmp_path):
    build(run_cli, make_source, tmp_path, "v1", built_at="2026-10-20T08:00:00+00:00")
    later = default_rows()
    for row in later:  # the same calls, a week later: v2's newest call dates it
        row["started_at"] = row["started_at"].replace("2026-10-", "2026-11-")
    site = build(run_cli, make_source, tmp_path, "v2", previous="v1", rows=later)
    rows = index_rows(site)
    assert "2026-10-20T08:00:00+00:00" in rows["v1"] and "set in its reportgen.toml" in rows["v1"]
    newest = max(r["started_at"] for r in later)
    assert newest in rows["v2"] and "its newest call" in rows["v2"]
    assert newest not in rows["v1"]
    # The dates come from each version's own results.json, not from versions.json.
    versions = json.loads(text(site / "versions.json"))
    for entry in versions:
        entry["built_at"] = "2000-01-01T00:00:00+00:00"
    (site / "versions.json").write_text(json.dumps(versions), encoding="utf-8")
    build(run_cli, make_source, tmp_path, "v2", previous="v1", rows=later)  # unchanged: index written again
    rows = index_rows(site)
    assert "2026-10-20T08:00:00+00:00" in rows["v1"] and newest in rows["v2"]
    assert "2000-01-01" not in text(site / "index.html")


def test_the_site_index_links_every_page_of_changes(run_cli, make_source, tmp_path):
    build(run_cli, make_source, tmp_path, "v1")
    build(run_cli, make_source, tmp_path, "v2", previous="v1")
    site = build(run_cli, make_source, tmp_path, "v3", previous="v2")
    rows = index_rows(site)
    assert 'href="diff/v1..v2/index.html"' in rows["v2"]
    assert 'href="diff/v2..v3/index.html"' in rows["v3"]
    assert "diff/" not in rows["v1"]  # it supersedes nothing
    assert (site / "diff/v1..v2/index.html").is_file() and (site / "diff/v2..v3/index.html").is_file()
    assert broken_links(site) == []


def test_each_evidence_page_names_the_claims_it_supports(demo_site):
    results = json.loads(text(demo_site / "data/results.json"))["claims"]
    claims = {c["id"]: c for c in results}
    pages = sorted((demo_site / "evidence").rglob("*.html"))
    assert pages
    cited_somewhere = set()
    for page in pages:
        body = text(page)
        named = re.findall(r'href="\.\./\.\./claims/([^"]+)\.html#([^"]+)"><code>([^<]+)</code></a>: ([^<\n]+)', body)
        assert named, page
        for run_id, anchor, claim_id, statement in named:
            claim = claims[claim_id]
            assert run_id == claim["experiment"] == page.parent.name
            assert unescape(statement).rstrip(".") == claim["statement"]
            assert anchor in ids_of(demo_site / "claims" / f"{run_id}.html")  # the link back lands on the claim
            # ...and the claim links to this very page.
            assert f"../evidence/{run_id}/{page.name}" in body_of(demo_site / "claims" / f"{run_id}.html")
            cited_somewhere.add(claim_id)
    assert cited_somewhere == set(claims)  # every claim is named by its evidence


def test_claims_are_split_per_experiment_and_every_id_resolves(demo_site):
    results = json.loads(text(demo_site / "data/results.json"))["claims"]
    experiments = sorted({c["experiment"] for c in results})
    index = demo_site / "claims.html"
    pages = [demo_site / "claims" / f"{run_id}.html" for run_id in experiments]
    assert index.stat().st_size < CLAIMS_PAGE_LIMIT / 3  # a small index
    for page in pages:
        assert page.stat().st_size < CLAIMS_PAGE_LIMIT, (page.name, page.stat().st_size)
    index_ids = parse(index).ids
    index_links = dict(parse(index).links)
    links = {url for _, url in parse(index).links}
    for claim in results:
        anchor = claim["id"]
        own = f"claims/{claim['experiment']}.html#{anchor}"
        assert anchor in index_ids  # an old claims.html#<id> link still lands
        assert own in links  # ...and leads on to the claim
        assert anchor in ids_of(demo_site / own.split("#")[0])
    assert index_links  # the index links each experiment's page
    for run_id in experiments:
        assert f"claims/{run_id}.html" in links


def test_every_link_to_a_claim_lands_on_it(demo_site):
    """Every page's claim link names the experiment's claims page and an id there."""
    seen = 0
    for page in [demo_site / "index.html", *sorted((demo_site / "experiments").rglob("*.html"))]:
        for _, url in parse(page).links:
            if "claims/" in url and "#" in url:
                path, anchor = url.split("#", 1)
                target = (page.parent / path).resolve()
                assert anchor in ids_of(target) or unescape(anchor) in ids_of(target), (page, url)
                seen += 1
    assert seen > 100
    assert broken_links(demo_site.parent) == []
