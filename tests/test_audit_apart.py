"""A large run's audit, worked out in a forked copy of the build: the same findings and
the same site as the build's own audit, the contents it found clean remembered, and the
build's own audit (with its error) whenever the copy fails."""

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
        pid, fd = real_fork(*args)
        started.append(pid)
        return pid, fd

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
