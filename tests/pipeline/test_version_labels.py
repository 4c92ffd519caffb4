"""Which version is the latest, and which version a build writes: ``built_at`` compared
as instants (not as text), and ``build --version`` applied before the version is checked
against the one it supersedes."""

from __future__ import annotations

import json

from reportgen.pipeline.pipeline import build_site
from tests.conftest import default_rows


def _site(version: str, built_at: str, previous: str | None = None) -> str:
    later = f'previous = "{previous}"\n' if previous else ""
    return f'title = "Mini report"\nversion = "{version}"\nbuilt_at = "{built_at}"\n{later}'


def test_the_latest_version_is_the_one_built_last_whatever_its_utc_offset(make_source, tmp_path):
    # v1 at 20:00 in +07:00 is 13:00 UTC; v2 at 15:00 UTC is two hours later. As text,
    # "2026-10-01T20..." sorts after "2026-10-01T15...": the old order made v1 the latest.
    out = tmp_path / "site"
    build_site(make_source(default_rows(), site=_site("v1", "2026-10-01T20:00:00+07:00")), out)
    build_site(make_source(default_rows(), site=_site("v2", "2026-10-01T15:00:00+00:00")), out)
    versions = json.loads((out / "versions.json").read_text("utf-8"))
    assert [(v["version"], v["aliases"]) for v in versions] == [("v2", ["latest"]), ("v1", [])]
    css = (out / "versions.css").read_text("utf-8")
    assert ".version-v1 .newer-version" in css and ".version-v2 " not in css  # v1's pages say v2 is newer


def test_a_version_with_an_unreadable_time_is_never_the_latest(make_source, tmp_path):
    out = tmp_path / "site"
    build_site(make_source(default_rows(), site=_site("v1", "2026-10-01T09:00:00+00:00")), out)
    build_site(make_source(default_rows(), site=_site("v2", "2026-10-02T09:00:00+00:00")), out)
    path = out / "versions.json"
    edited = [dict(v, built_at="yesterday") if v["version"] == "v2" else v for v in json.loads(path.read_text())]
    path.write_text(json.dumps(edited))
    build_site(make_source(default_rows(), site=_site("v3", "2026-09-30T09:00:00+00:00")), out)
    assert [v["version"] for v in json.loads(path.read_text())] == ["v1", "v3", "v2"]


def test_a_version_given_to_the_build_cannot_supersede_itself(make_source, run_cli, tmp_path):
    # reportgen.toml says v2 supersedes v1; `--version v1` makes it v1 superseding v1. The
    # override used to be applied after the check: the build wrote diff/v1..v1 and linked it.
    out = tmp_path / "site"
    source = make_source(default_rows(), site=_site("v2", "2026-10-01T09:00:00+00:00", previous="v1"))
    result = run_cli("build", source, "--out", out, "--version", "v1", "-q")
    assert result.exit_code == 1
    assert ("error: reportgen.toml:4: previous: a version cannot supersede itself (version 'v1' is given to the build)"
            in result.output.splitlines())
    assert not (out / "diff").exists() and not (out / "v1").exists()


def test_the_version_given_to_the_build_is_the_version_checked_and_written(make_source, run_cli, tmp_path):
    out = tmp_path / "site"
    source = make_source(default_rows(), site=_site("v1", "2026-10-01T09:00:00+00:00"))
    assert run_cli("build", source, "--out", out, "-q").exit_code == 0
    source = make_source(default_rows(), site=_site("v1", "2026-10-01T10:00:00+00:00", previous="v1-draft"))
    result = run_cli("build", source, "--out", out, "--version", "v2", "-q")
    assert result.exit_code == 0, result.output
    assert (out / "v2" / "manifest.json").is_file()
    assert json.loads((out / "v2" / "data" / "results.json").read_text())["version"] == "v2"
