"""Steps a large build hands to forked copies of itself (the audit, the record of the
source's files, the page of changes since the previous version): the same site and the
same records as when the build does them itself, and the build's own step (with its
error) whenever a copy fails."""

from __future__ import annotations

import pytest

import reportgen.build.audit_apart as audit_apart
from reportgen.build.pipeline import build_site
from reportgen.errors import AuditError
from tests.conftest import default_rows


def _rows_with_findings():
    """Two identical outputs (an audit warning) beside the usual calls."""
    rows = default_rows()
    rows[1] = dict(rows[1], artifact_path=rows[0]["artifact_path"])
    return rows


def _files(folder):
    """Every file below ``folder``, by relative path, with its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("copy_fails", [False, True])
def test_a_run_audited_apart_gives_the_site_the_build_gives(make_source, tmp_path, monkeypatch, copy_fails):
    source = make_source(_rows_with_findings())
    alone = build_site(source, tmp_path / "alone", cache=tmp_path / "cache-alone")
    assert alone.n_warnings > 0  # the run has findings to send back
    monkeypatch.setattr(audit_apart, "AUDIT_APART", 1)
    forks = []
    real_fork = audit_apart._fork_audit
    monkeypatch.setattr(audit_apart, "_fork_audit", lambda *a: forks.append(1) or real_fork(*a))
    if copy_fails:  # in the copy only: the build's own audit is imported apart
        def broken(*_):
            raise OSError("the copy could not read a file")
        monkeypatch.setattr(audit_apart, "audit_with_artifacts", broken)
    apart = build_site(source, tmp_path / "apart", cache=tmp_path / "cache-apart")
    assert forks == [1]
    assert apart.n_warnings == alone.n_warnings and apart.n_claims == alone.n_claims
    alone_files, apart_files = _files(tmp_path / "alone" / "v1"), _files(tmp_path / "apart" / "v1")
    assert alone_files.keys() == apart_files.keys()
    assert [rel for rel in alone_files if alone_files[rel] != apart_files[rel]] == []
    # The contents found clean are remembered either way: the same list of them.
    assert sorted((tmp_path / "cache-apart" / "clean").glob("*.txt"))[0].read_text() == \
        sorted((tmp_path / "cache-alone" / "clean").glob("*.txt"))[0].read_text()


def test_a_credential_found_apart_stops_the_build(make_source, tmp_path, monkeypatch):
    source = make_source()
    response = source / "experiments/mini/artifacts/X-1/response.txt"
    response.write_text(response.read_text() + "key: sk-proj-" + "s" * 40 + "\n")
    monkeypatch.setattr(audit_apart, "AUDIT_APART", 1)
    with pytest.raises(AuditError, match="looks like a OpenAI-style API key"):
        build_site(source, tmp_path / "site", cache=tmp_path / "cache")
    assert not (tmp_path / "site" / "v1").exists()


def test_a_copy_still_at_work_is_stopped_when_the_build_fails(make_source, tmp_path, monkeypatch):
    import os

    source = make_source()
    monkeypatch.setattr(audit_apart, "AUDIT_APART", 1)
    started: list[int] = []
    real_fork = audit_apart._fork_audit

    def fork(*args):
        copy = real_fork(*args)
        started.append(copy.pid)
        return copy

    monkeypatch.setattr(audit_apart, "_fork_audit", fork)
    import reportgen.build.pipeline as pipeline

    def failing(*_):
        raise RuntimeError("analysis failed")

    monkeypatch.setattr(pipeline, "_analyse_early", failing)
    with pytest.raises(RuntimeError, match="analysis failed"):
        build_site(source, tmp_path / "site", cache=tmp_path / "cache")
    assert len(started) == 1
    with pytest.raises(ChildProcessError):  # reaped: no copy is left behind
        os.waitpid(started[0], os.WNOHANG)


def _two_versions(make_source, out, cache):
    """v1, then v2 (one grade corrected, previous = "v1") built beside it."""
    rows = default_rows()
    build_site(make_source(rows), out, cache=cache)
    rows[2] = dict(rows[2], qualified="true")
    source = make_source(rows, site='title = "Mini report"\nversion = "v2"\nprevious = "v1"\n')
    return build_site(source, out, cache=cache), source


@pytest.mark.parametrize("copy_fails", [False, True])
def test_the_changes_page_and_the_source_record_made_apart_are_those_the_build_makes(
        make_source, tmp_path, monkeypatch, copy_fails):
    import reportgen.build.forked as forked
    import reportgen.build.pipeline as pipeline
    import reportgen.load.contents as contents
    from reportgen.build.incremental import _hashes_path

    monkeypatch.setattr(contents, "RACY_SECONDS", -60.0)  # files written by the test count as settled
    _two_versions(make_source, tmp_path / "alone", tmp_path / "cache-alone")
    monkeypatch.setattr(pipeline, "APART_FROM", 1)
    made: list[int] = []
    real = forked.Forked.__init__

    def counting(self, step):
        made.append(1)
        real(self, (lambda: 1 / 0) if copy_fails else step)

    monkeypatch.setattr(forked.Forked, "__init__", counting)
    _, source = _two_versions(make_source, tmp_path / "apart", tmp_path / "cache-apart")
    assert len(made) == 4  # per build: the source record and the changes page
    page = "diff/v1..v2/index.html"
    assert (tmp_path / "apart" / page).read_bytes() == (tmp_path / "alone" / page).read_bytes()
    assert [p.name for p in (tmp_path / "apart" / "diff" / "v1..v2").iterdir()] == ["index.html"]
    for version in ("v1", "v2"):
        assert _files(tmp_path / "apart" / version) == _files(tmp_path / "alone" / version)
    # The record of the source's files is there either way: the next build reads no file again.
    record = _hashes_path(tmp_path / "cache-apart", source).read_text()
    assert "calls.csv\t" in record and "image.svg\t" in record
