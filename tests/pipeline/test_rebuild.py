"""A rebuild of inputs that have not changed writes nothing; anything that would change
the version's bytes (source, label, --redact, theme, reportgen's code, a render, a file
of the version itself) makes it a full build, equal to a cold one."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import reportgen.pipeline.pipeline
import reportgen.pipeline.stages
import reportgen.pipeline.incremental
from sitecheck import tree_bytes


def build(run_cli, source, out, *extra, label="v1"):
    result = run_cli("build", source, "--out", out, "-q", *extra)
    assert result.exit_code == 0, result.output
    return tree_bytes(out / label), result.output


def no_building(*args, **kwargs):
    raise AssertionError("the version was built again")


def test_a_rebuild_of_the_same_inputs_writes_nothing(demo_source, run_cli, tmp_path, monkeypatch):
    out = tmp_path / "site"
    cold, _ = build(run_cli, demo_source, out)
    before = {p: p.stat().st_ino for p in (out / "v1").rglob("*")}
    monkeypatch.setattr(reportgen.pipeline.pipeline, "load_source", no_building)
    monkeypatch.setattr(reportgen.pipeline.stages, "analysed_report", no_building)
    for extra in ((), ("--force",)):
        again, output = build(run_cli, demo_source, out, *extra)
        assert again == cold
        assert "is up to date" in output and "nothing written" in output
        assert {p: p.stat().st_ino for p in (out / "v1").rglob("*")} == before
    assert run_cli("verify", out / "v1").exit_code == 0


def test_a_changed_source_is_built_again_and_equals_a_cold_build(make_source, run_cli, tmp_path):
    source = make_source()
    out = tmp_path / "site"
    build(run_cli, source, out)
    log = source / "experiments/mini/calls.csv"
    log.write_text(log.read_text().replace(",true,", ",false,", 1))
    rebuilt, output = build(run_cli, source, out, "--force")
    assert output.startswith("built ")
    fresh, _ = build(run_cli, source, tmp_path / "fresh", "--no-cache")
    assert rebuilt == fresh
    # Built once from the changed source, it is up to date again.
    again, output = build(run_cli, source, out, "--force")
    assert again == fresh and "is up to date" in output


def test_a_file_of_the_version_touched_since_makes_a_full_build(make_source, run_cli, tmp_path):
    source = make_source()
    out = tmp_path / "site"
    cold, _ = build(run_cli, source, out)
    tampered = [
        lambda v: (v / "claims.html").write_bytes((v / "claims.html").read_bytes().replace(b"Mini report", b"Tampered")),
        lambda v: (v / "claims.html").write_bytes((v / "claims.html").read_bytes()),  # same bytes, written again
        lambda v: (v / "index.html").unlink(),
        lambda v: (v / "extra.html").write_text("not ours"),
        lambda v: (v / "static/more.css").symlink_to(v.parent / "index.html"),
    ]
    for change in tampered:
        change(out / "v1")
        again, output = build(run_cli, source, out)
        assert output.startswith("built "), output
        assert again == cold
        assert not (out / "v1/static/more.css").is_symlink()


def test_label_redact_and_renders_are_inputs(make_source, run_cli, tmp_path, render_cache):
    source = make_source()
    out = tmp_path / "site"
    build(run_cli, source, out)
    # Another label is another version.
    _, output = build(run_cli, source, out, "--version", "v2", label="v2")
    assert output.startswith("built ")
    _, output = build(run_cli, source, out, "--version", "v2", label="v2")
    assert "is up to date" in output
    # --redact publishes other bytes (a redactions record at least).
    _, output = build(run_cli, source, out, "--force", "--redact")
    assert output.startswith("built ")
    # A render the cache now holds differently (here: other notes drawing added) is a full build.
    _, output = build(run_cli, source, out, "--force", "--redact")
    assert "is up to date" in output
    entry = next(p for p in sorted(render_cache.glob("*.json")) if p.name != "sheets.json")
    record = json.loads(entry.read_text())  # a render's record (sheets.json lies beside them)
    entry.write_text(json.dumps({**record, "drawn": ["changed"]}))
    _, output = build(run_cli, source, out, "--force", "--redact")
    assert output.startswith("built ")


def test_another_theme_is_built_again(make_source, run_cli, tmp_path):
    source = make_source()
    out = tmp_path / "site"
    build(run_cli, source, out)
    theme = source / "mytheme/templates"
    theme.mkdir(parents=True)
    (source / "reportgen.toml").write_text('title = "Mini report"\nversion = "v1"\ntheme = "mytheme"\n')
    build(run_cli, source, out, "--force")
    # The theme folder is not part of the source digest, but it is an input.
    (theme / "claims.html").write_text("{% extends 'base.html' %}{% block main %}themed{% endblock %}")
    assert b"themed" in build(run_cli, source, out, "--force")[0]["claims.html"]


def test_reportgen_code_is_an_input(tmp_path, monkeypatch):
    package = tmp_path / "reportgen"
    shutil.copytree(reportgen.pipeline.incremental.resources.files("reportgen"), package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    real = reportgen.pipeline.incremental.resources.files
    monkeypatch.setattr(reportgen.pipeline.incremental.resources, "files",
                        lambda name: package if name == "reportgen" else real(name))

    def key() -> str:
        incremental = reportgen.pipeline.incremental
        return incremental.inputs_key(incremental.code_key(tmp_path, "default"), "v1", "sha256:00", False)

    before = key()
    assert key() == before
    (package / "render/pages.py").write_text((package / "render/pages.py").read_text() + "\n# a change\n")
    assert key() != before


def test_without_a_cache_nothing_is_remembered(make_source, run_cli, tmp_path, monkeypatch):
    source = make_source()
    out = tmp_path / "site"
    build(run_cli, source, out, "--no-cache")
    _, output = build(run_cli, source, out, "--no-cache")
    assert output.startswith("built ")


def test_an_up_to_date_build_does_not_import_the_chart_libraries(make_source, run_cli, tmp_path):
    # altair and pandas take about a second to import; only drawing charts needs them.
    source = make_source()
    out, cache = tmp_path / "site", tmp_path / "cache"
    assert run_cli("build", source, "--out", out, "--cache", cache, "-q").exit_code == 0
    script = ("import sys; from reportgen.cli import main\n"
              "try:\n    main(sys.argv[1:])\nexcept SystemExit as exit:\n    assert not exit.code, exit.code\n"
              "print(sorted(m for m in ('altair', 'pandas', 'vl_convert') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", script, "build", str(source), "--out", str(out),
                             "--cache", str(cache)], capture_output=True, text=True, check=True)
    assert "is up to date" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "[]"
