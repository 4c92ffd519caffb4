"""The command line as a user meets it: exit codes, one-line errors, nothing half-written."""

from __future__ import annotations

import hashlib

from conftest import default_rows
from sitecheck import tree_bytes


def test_help(run_cli):
    result = run_cli("build", "--help")
    assert result.exit_code == 0
    assert "Build SOURCE (default: content/) into OUT/<version>/" in result.output


def test_build_summary_line(make_source, run_cli, tmp_path):
    result = run_cli("build", make_source(), "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0
    assert "built " in result.output and "8 calls" in result.output and "7 drawings (7 distinct, 7 rendered, 0 reused)" in result.output


def test_bad_input_exits_1_with_every_problem_and_writes_nothing(make_source, run_cli, tmp_path):
    rows = default_rows()
    rows[0]["status"] = "crashed"
    rows[2]["started_at"] = "2026-10-01 09:03"
    out = tmp_path / "site"
    result = run_cli("build", make_source(rows), "--out", out)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert lines == [
        "error: experiments/mini/calls.csv:2: status: 'crashed' is not one of ok, timeout, api_error, "
        "stream_cut, length_limit, harness_error",
        "error: experiments/mini/calls.csv:4: started_at: '2026-10-01 09:03' has no UTC offset; write it "
        "as 2026-10-01T09:03:00+00:00 (or the offset it was recorded in)",
    ]
    assert "2 problems found; nothing was written." in result.output
    assert not out.exists()


def test_failed_rebuild_leaves_the_published_site_untouched(make_source, run_cli, tmp_path):
    out = tmp_path / "site"
    assert run_cli("build", make_source(), "--out", out, "-q").exit_code == 0
    before = tree_bytes(out)
    rows = default_rows()
    rows[0]["qualified"] = "maybe"
    result = run_cli("build", make_source(rows), "--out", out, "--force", "-q")
    assert result.exit_code == 1
    assert tree_bytes(out) == before


def test_published_version_is_immutable_unless_forced(make_source, run_cli, tmp_path):
    out = tmp_path / "site"
    assert run_cli("build", make_source(), "--out", out, "-q").exit_code == 0
    before = tree_bytes(out)
    rows = default_rows()
    rows[2]["qualified"] = "true"  # a relabelled call: a different source
    changed = make_source(rows)
    result = run_cli("build", changed, "--out", out, "-q")
    assert result.exit_code == 1
    assert "version 'v1' is already published from another source" in result.output
    assert "choose a new label with --version, or replace it with --force" in result.output
    assert tree_bytes(out) == before
    assert run_cli("build", changed, "--out", out, "--force", "-q").exit_code == 0
    assert tree_bytes(out) != before
    assert run_cli("build", changed, "--out", out, "--version", "v2", "-q").exit_code == 0
    assert (out / "v2/index.html").is_file() and (out / "v1/index.html").is_file()
    assert not [p for p in out.iterdir() if p.name.startswith(".v")]  # no temporary folders left


def test_rebuilding_the_same_source_is_allowed(make_source, run_cli, tmp_path):
    source, out = make_source(), tmp_path / "site"
    assert run_cli("build", source, "--out", out, "-q").exit_code == 0
    before = tree_bytes(out)
    assert run_cli("build", source, "--out", out, "-q").exit_code == 0
    assert tree_bytes(out) == before


def test_unexpected_failure_is_one_line_without_traceback(make_source, run_cli, tmp_path, monkeypatch):
    import reportgen.pipeline.stages

    def boom(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(reportgen.pipeline.stages, "render_version", boom)
    out = tmp_path / "site"
    result = run_cli("build", make_source(), "--out", out, "-q")
    assert result.exit_code == 1
    assert "internal error: RuntimeError: disk on fire (run with --debug for the traceback" in result.output
    assert "Traceback" not in result.output
    assert not (out / "v1").exists()


def test_missing_source_folder(run_cli, tmp_path):
    result = run_cli("build", tmp_path / "nope", "--out", tmp_path / "site")
    assert result.exit_code == 1
    assert f"error: {tmp_path / 'nope'}: source folder not found" in result.output


def test_render_cache_is_used_and_invalidated(make_source, run_cli, tmp_path, render_cache):
    import reportgen.render.svg as artifacts

    source = make_source()
    out = tmp_path / "site"
    assert "7 rendered, 0 reused" in run_cli("build", source, "--out", out, "-q").output
    # The same drawings again (into another version): nothing is rendered.
    assert "0 rendered, 7 reused" in run_cli("build", source, "--out", out, "--version", "v2", "-q").output
    # One SVG changed: exactly that one is rendered.
    svg = source / "experiments/mini/artifacts/X-1/image.svg"
    svg.write_text(svg.read_text().replace('r="9"', 'r="7"'))
    assert "1 rendered, 6 reused" in run_cli("build", source, "--out", out, "--force", "-q").output
    # A renderer setting changed: everything is rendered again.
    original = artifacts.RENDER_WIDTH
    artifacts.RENDER_WIDTH = 300
    try:
        assert "7 rendered, 0 reused" in run_cli("build", source, "--out", out, "--force", "-q").output
    finally:
        artifacts.RENDER_WIDTH = original
    # A tampered cache entry is not trusted.
    for png in render_cache.glob("*.png"):
        png.write_bytes(b"not a png")
    result = run_cli("build", source, "--out", out, "--force", "-q")
    assert "7 rendered, 0 reused" in result.output
    assert run_cli("verify", out / "v1").exit_code == 0
    # --no-cache renders everything and keeps nothing new.
    assert "7 rendered, 0 reused" in run_cli("build", source, "--out", out, "--force", "--no-cache", "-q").output


def test_drawings_render_while_the_log_is_checked_and_only_those_called_count(make_source, run_cli, tmp_path):
    source = make_source()
    # An SVG in the run folder that no call names: drawn early, as every SVG is, but
    # neither counted nor published.
    stray = source / "experiments/mini/artifacts/stray.svg"
    stray.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="5" height="5"/></svg>')
    out = tmp_path / "site"
    result = run_cli("build", source, "--out", out, "-q")
    assert "7 drawings (7 distinct, 7 rendered, 0 reused)" in result.output, result.output
    manifest = (out / "v1/manifest.json").read_text()
    assert hashlib.sha256(stray.read_bytes()).hexdigest() not in manifest
    # A log that does not validate: the build stops and publishes nothing, renders or not.
    log = source / "experiments/mini/calls.csv"
    log.write_text(log.read_text().replace(",ok,", ",okay,", 1))
    result = run_cli("build", source, "--out", tmp_path / "other", "-q")
    assert result.exit_code == 1 and "status" in result.output
    assert not (tmp_path / "other/v1").exists()


def test_jobs_sets_the_processes_and_the_site_is_the_same(make_source, run_cli, tmp_path, monkeypatch):
    from reportgen.pipeline import pipeline

    real, seen = pipeline.build_site, []

    def build_site(*args, runner, **kwargs):
        seen.append(runner.processes)
        return real(*args, runner=runner, **kwargs)

    monkeypatch.setattr(pipeline, "build_site", build_site)
    source = make_source()
    for jobs in ("1", "2"):
        result = run_cli("build", source, "--out", tmp_path / f"site-{jobs}", "--no-cache", "--jobs", jobs, "-q")
        assert result.exit_code == 0, result.output
    assert seen == [1, 2]
    assert tree_bytes(tmp_path / "site-1") == tree_bytes(tmp_path / "site-2")


def test_jobs_below_one_is_refused_in_one_line(make_source, run_cli, tmp_path):
    result = run_cli("build", make_source(), "--out", tmp_path / "site", "--jobs", "0")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "Invalid value for '--jobs' / '-j': 0 is not in the range x>=1." in result.output
    assert not (tmp_path / "site").exists()
