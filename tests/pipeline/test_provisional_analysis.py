"""A rebuild whose source is listed apart analyses each run while the listing is made,
as the run will load if the listing changes none of its calls; the analysis is used only
when the run loaded is that run, and the site is the one a build in one process makes."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest

import reportgen.analysis.run
import reportgen.audit.credentials
import reportgen.audit.protocol
import reportgen.audit.stage
import reportgen.load.source
import reportgen.pipeline.audit_apart
import reportgen.pipeline.provisional
import reportgen.pipeline.stages
from reportgen.errors import AuditError, Collector
from reportgen.load.source import load_source, provisional_run, same_run
from reportgen.load.calllog import find_log, read_log
from reportgen.model.grading import Grading, GradingRules
from reportgen.pipeline.pipeline import build_site
from reportgen.pipeline.runner import ParallelRunner, SequentialRunner, Tuning
from sitecheck import tree_bytes

DEMO = Path(__file__).resolve().parents[2] / "content"
LISTED_APART = Tuning(list_apart_bytes=1)  # a rebuild with any record lists its folder apart


def _analysed(monkeypatch) -> list[bool]:
    """Whether each run analysed, and each run whose calls were audited, was the
    provisional one (no files: the listing was not in): "analysed", "audited" in turn."""
    seen: list[tuple[str, bool]] = []

    def counted(what, work):
        def run_it(run):
            seen.append((what, run.files is None))
            return work(run)
        return run_it

    analysed = counted("analysed", reportgen.analysis.run.analyze_run)
    audited = counted("audited", reportgen.audit.protocol.call_findings)
    for module in (reportgen.pipeline.stages, reportgen.pipeline.provisional):
        monkeypatch.setattr(module, "analyze_run", analysed)
    for module in (reportgen.audit.protocol, reportgen.audit.stage):
        monkeypatch.setattr(module, "call_findings", audited)
    return seen


def _twice(source: Path, out: Path, cache: Path, runner) -> dict[str, bytes]:
    build_site(source, out, cache=cache, runner=runner)
    build_site(source, out, version="v2", cache=cache, runner=runner)
    return tree_bytes(out / "v2")


def test_a_rebuild_listed_apart_analyses_the_run_while_it_is_listed(make_source, tmp_path, monkeypatch):
    source = make_source()
    reference = _twice(source, tmp_path / "one", tmp_path / "cache-one", SequentialRunner())
    seen = _analysed(monkeypatch)
    built = _twice(source, tmp_path / "apart", tmp_path / "cache-apart", ParallelRunner(LISTED_APART))
    # The first build has no record to list by; the rebuild analyses and audits the
    # provisional run's calls, once.
    assert seen == [("analysed", False), ("audited", False), ("analysed", True), ("audited", True)]
    assert built == reference


def test_a_provisional_run_that_is_not_the_run_loaded_is_analysed_again(make_source, tmp_path, monkeypatch):
    """Should the listing change the run (here: the provisional run made with a call
    short), the run loaded is analysed, and the site is as it would be without."""
    source = make_source()
    reference = _twice(source, tmp_path / "one", tmp_path / "cache-one", SequentialRunner())
    make = reportgen.load.source.provisional_run

    def short(*args):
        run = make(*args)
        return dataclasses.replace(run, calls=run.calls[:-1]) if run is not None else None

    monkeypatch.setattr(reportgen.load.source, "provisional_run", short)
    seen = _analysed(monkeypatch)
    built = _twice(source, tmp_path / "apart", tmp_path / "cache-apart", ParallelRunner(LISTED_APART))
    assert seen == [("analysed", False), ("audited", False), ("analysed", True), ("audited", True),
                    ("analysed", False), ("audited", False)]
    assert built == reference


def test_a_run_with_a_grades_folder_is_analysed_once_listed(tmp_path, monkeypatch):
    source = tmp_path / "src"
    shutil.copytree(DEMO / "experiments" / "judge-ab", source / "experiments" / "judge-ab")
    (source / "reportgen.toml").write_text('title = "t"\nversion = "v1"\n', encoding="utf-8")
    assert (source / "experiments" / "judge-ab" / "grades").is_dir()
    seen = _analysed(monkeypatch)
    _twice(source, tmp_path / "site", tmp_path / "cache", ParallelRunner(LISTED_APART))
    assert seen == [("analysed", False), ("audited", False)] * 2


def _parsed(source: Path):
    """A run folder's contract, log and calls as parsed, before its folder is listed."""
    (run,) = load_source(source).runs
    log = read_log(find_log(run.folder)[0], run.log.file, Collector())
    return run, log


def test_the_provisional_run_is_the_run_loaded_when_the_listing_changes_nothing(make_source):
    run, log = _parsed(make_source())
    provisional = provisional_run(run.contract, run.folder, run.rel_folder, log, run.calls)
    assert provisional is not None and provisional.files is None and provisional.requests == {}
    assert same_run(provisional, run)
    # What an analysis reads, each changed in turn: not the same run.
    assert not same_run(dataclasses.replace(provisional, calls=run.calls[:-1]), run)
    assert not same_run(dataclasses.replace(provisional, calls=(dataclasses.replace(run.calls[0]), *run.calls[1:])),
                        run)
    assert not same_run(dataclasses.replace(provisional, contract=dataclasses.replace(run.contract)), run)
    assert not same_run(dataclasses.replace(provisional, grading=Grading(GradingRules(), judge={})), run)


@pytest.mark.parametrize("primary", ["human"])
def test_no_provisional_run_when_its_grading_has_problems(make_source, primary):
    """A run whose grading cannot load without its folder (human grades, no grades/
    folder) has none: loading it reports the problem."""
    run, log = _parsed(make_source())
    contract = dataclasses.replace(run.contract, raw={**run.contract.raw, "grading": {"primary": primary}})
    assert provisional_run(contract, run.folder, run.rel_folder, log, run.calls) is None


def test_no_provisional_run_when_its_design_has_problems(make_source):
    """A slice name that cannot name a claim: loading the run reports it; no stage works
    on the run as parsed meanwhile."""
    run, log = _parsed(make_source())
    calls = (dataclasses.replace(run.calls[0], extra={**run.calls[0].extra, "slice": "no good"}), *run.calls[1:])
    assert provisional_run(run.contract, run.folder, run.rel_folder, log, run.calls) is not None
    assert provisional_run(run.contract, run.folder, run.rel_folder, log, calls) is None


def test_what_fails_while_the_folder_is_listed_is_made_again_in_its_stage(make_source, tmp_path, monkeypatch):
    source = make_source()
    reference = _twice(source, tmp_path / "one", tmp_path / "cache-one", SequentialRunner())

    def failing(config, run):
        raise ValueError("not now")

    monkeypatch.setattr(reportgen.pipeline.provisional, "made_while_listed", failing)
    seen = _analysed(monkeypatch)
    built = _twice(source, tmp_path / "apart", tmp_path / "cache-apart", ParallelRunner(LISTED_APART))
    assert seen == [("analysed", False), ("audited", False)] * 2
    assert built == reference


def _refused(source: Path, out: Path, cache: Path, runner) -> list[str]:
    with pytest.raises(AuditError) as refused:
        build_site(source, out, version="v2", cache=cache, runner=runner)
    return [str(f) for f in refused.value.findings]


def test_credentials_found_while_the_folder_is_listed_are_those_found_after(make_source, tmp_path, monkeypatch):
    """Credentials in the log (found while the folder is listed) and in a response
    (found once it is read), numbered in the one order whichever found them."""
    scanned: list[bool] = []  # whether each scan of the log was of the provisional run
    scan = reportgen.audit.credentials.credentials_in_log

    def spied(run, *args):
        scanned.append(run.files is None)
        return scan(run, *args)

    for module in (reportgen.audit.credentials, reportgen.audit.stage):
        monkeypatch.setattr(module, "credentials_in_log", spied)
    source = make_source()
    for name, runner in (("one", SequentialRunner()), ("apart", ParallelRunner(LISTED_APART))):
        build_site(source, tmp_path / name, cache=tmp_path / f"cache-{name}", runner=runner)
    log = source / "experiments/mini/calls.csv"
    log.write_text(log.read_text().replace(",wrong", ",wrong (Bearer abcdefghijklmnopqrstuvwx)", 1))
    response = source / "experiments/mini/artifacts/X-1/response.txt"
    response.write_text(response.read_text() + "key: sk-proj-" + "s" * 40 + "\n")
    (source / "experiments/mini/run.toml").write_text(
        (source / "experiments/mini/run.toml").read_text() + "# ghp_" + "a" * 36 + "\n")
    found = {name: _refused(source, tmp_path / name, tmp_path / f"cache-{name}", runner)
             for name, runner in (("one", SequentialRunner()), ("apart", ParallelRunner(LISTED_APART)))}
    assert scanned == [False, False, False, True]  # two first builds, then the refused ones
    assert found["apart"] == found["one"]
    assert [f.split(":", 1)[0] for f in found["one"]] == [
        "experiments/mini/calls.csv", "experiments/mini/run.toml", "experiments/mini/artifacts/X-1/response.txt"]


def test_a_run_audited_apart_is_audited_with_what_was_found_while_it_was_listed(make_source, tmp_path, monkeypatch):
    """The copy that audits a large run apart takes the findings of its calls found
    while the folder was listed, rather than finding them again."""
    source = make_source()
    reference = _twice(source, tmp_path / "one", tmp_path / "cache-one", SequentialRunner())
    done = tmp_path / "done.txt"  # a line by whichever process audits the run, or its calls

    def spied(what, work):
        def run_it(run, *args):
            with done.open("a") as handle:
                handle.write(f"{what} {'here' if os.getpid() == build else 'apart'} "
                             f"{'provisional' if run.files is None else 'loaded'}\n")
            return work(run, *args)
        return run_it

    build = os.getpid()
    calls = spied("calls", reportgen.audit.protocol.call_findings)
    for module in (reportgen.audit.protocol, reportgen.audit.stage):
        monkeypatch.setattr(module, "call_findings", calls)
    monkeypatch.setattr(reportgen.pipeline.audit_apart, "audit_with_artifacts",
                        spied("run", reportgen.pipeline.audit_apart.audit_with_artifacts))
    runner = ParallelRunner(dataclasses.replace(LISTED_APART, audit_apart_calls=1))
    build_site(source, tmp_path / "apart", cache=tmp_path / "cache-apart", runner=runner)
    done.unlink(missing_ok=True)
    build_site(source, tmp_path / "apart", version="v2", cache=tmp_path / "cache-apart", runner=runner)
    # The rebuild audits the provisional run's calls as the folder is listed; the copy
    # auditing the run takes them.
    assert done.read_text().splitlines() == ["calls here provisional", "run apart loaded"]
    assert tree_bytes(tmp_path / "apart" / "v2") == reference
