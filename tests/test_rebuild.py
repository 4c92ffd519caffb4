"""A rebuild reuses what an identical earlier build wrote, and is byte for byte a cold build."""

from __future__ import annotations

import reportgen.build
from sitecheck import tree_bytes


def build(run_cli, source, out, *extra):
    result = run_cli("build", source, "--out", out, "-q", *extra)
    assert result.exit_code == 0, result.output
    return tree_bytes(out / "v1")


def no_rendering(*args, **kwargs):
    raise AssertionError("the pages were rendered again")


def test_a_rebuild_of_the_same_source_reuses_every_file(demo_source, run_cli, tmp_path, monkeypatch):
    out = tmp_path / "site"
    cold = build(run_cli, demo_source, out)
    before = (out / "v1/index.html").stat().st_ino
    monkeypatch.setattr(reportgen.build, "render_version", no_rendering)
    assert build(run_cli, demo_source, out, "--force") == cold
    assert (out / "v1/index.html").stat().st_ino == before  # linked, not written again


def test_a_rebuild_after_a_change_equals_a_cold_build_of_the_changed_source(make_source, run_cli, tmp_path):
    source = make_source()
    out = tmp_path / "site"
    build(run_cli, source, out)
    log = source / "experiments/mini/calls.csv"
    log.write_text(log.read_text().replace(",true,", ",false,", 1))
    rebuilt = build(run_cli, source, out, "--force")
    fresh = build(run_cli, source, tmp_path / "fresh", "--no-cache")
    assert rebuilt == fresh
    # The next rebuild of the changed source reuses, and still equals the cold build.
    assert build(run_cli, source, out, "--force") == fresh


def test_a_file_changed_since_is_not_reused(make_source, run_cli, tmp_path, monkeypatch):
    source = make_source()
    out = tmp_path / "site"
    cold = build(run_cli, source, out)
    page = out / "v1/claims.html"
    page.write_bytes(page.read_bytes().replace(b"Mini report", b"Tampered"))
    assert build(run_cli, source, out, "--force") == cold


def test_another_theme_is_not_reused(make_source, run_cli, tmp_path):
    source = make_source()
    out = tmp_path / "site"
    build(run_cli, source, out)
    theme = source / "mytheme/templates"
    theme.mkdir(parents=True)
    (source / "reportgen.toml").write_text('title = "Mini report"\nversion = "v1"\ntheme = "mytheme"\n')
    build(run_cli, source, out, "--force")
    (theme / "claims.html").write_text("{% extends 'base.html' %}{% block main %}themed{% endblock %}")
    assert b"themed" in build(run_cli, source, out, "--force")["claims.html"]
