"""Source folder -> ValidatedSource (config, contracts, typed calls), or every problem at once."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Sequence

from reportgen.errors import Collector
from reportgen.load.blocks import resolve_blocks
from reportgen.load.calllog import MAX_LOG_BYTES, find_log, read_log, without_rows
from reportgen.load.contract import load_contract, load_site_config
from reportgen.load.design_checks import check_design
from reportgen.load.grades import load_grading
from reportgen.load.contents import Apart, FileContents, FileHashes, read_run_files
from reportgen.load.requests import _check_requests
from reportgen.load.rows import _parse_calls, check_artifact_paths
from reportgen.model.calls import Call
from reportgen.model.config import RunContract, SiteConfig
from reportgen.model.source import RawLog, RawRow, RunFiles, SourceSnapshot, ValidatedRun, ValidatedSource


def read_source(source: Path, hashes: FileHashes | None = None,
                drawings: Callable[[str, RunFiles], None] | None = None,
                version_label: str | None = None, keep: bool = True, apart: Apart | None = None
                ) -> SourceSnapshot | None:
    """Every input file, hashed (``hashes``: those known from an earlier build; see
    ``contents``); None when the site configuration itself has problems (``load_source``
    then reports them, with every other problem). ``drawings``: called with each
    experiment folder's name and its SVG files, before the folder's other files are read.
    ``version_label``: the version to build, in place of reportgen.toml's. ``keep`` and
    ``apart``: see ``read_run_files``."""
    problems = Collector()
    if not source.is_dir():
        return None
    config = load_site_config(source, problems, version_label)
    experiments_dir = source / "experiments"
    names = _experiment_names(experiments_dir, config, problems)
    if config is None or problems.problems or any(_log_too_large(experiments_dir / n) for n in names):
        return None  # load_source reports why, without reading the oversized log
    runs = {name: read_run_files(experiments_dir / name, hashes, partial(drawings, name) if drawings else None, keep,
                                 apart) for name in names}
    return SourceSnapshot(config, runs, _digest(source, [(f"experiments/{n}", f) for n, f in runs.items()]))


def load_source(source: Path, check_artifacts: bool = True,
                listing: Callable[[], SourceSnapshot | None] | None = None,
                version_label: str | None = None,
                meanwhile: Callable[[SiteConfig, ValidatedRun], None] | None = None) -> ValidatedSource:
    """Read and validate everything; raise InputError listing every problem.

    ``check_artifacts=False`` is for recomputing a published version from its data/
    folder, which holds the contract, log and requests but publishes artifacts apart.
    ``listing`` gives the same folder as ``read_source`` reads it (by another process,
    say), so that its files are not read again: it is asked for only once the first
    run's log is parsed. ``meanwhile``: given the site's configuration and that run as
    it will load if its folder's listing leaves its calls as parsed (``provisional_run``),
    before the listing is waited for: work on it overlaps the listing.
    ``version_label``: the version to build, in place of reportgen.toml's."""
    problems = Collector()
    if not source.is_dir():
        problems.add(str(source), 0, "", "source folder not found")
        problems.raise_if_any()
    config = load_site_config(source, problems, version_label)
    runs: list[ValidatedRun] = []
    experiments_dir = source / "experiments"
    names = _experiment_names(experiments_dir, config, problems)
    listed = _Listed(listing)
    for name in names:
        run = _load_run(experiments_dir / name, f"experiments/{name}", problems, check_artifacts,
                        partial(listed.files, name),
                        partial(meanwhile, config) if meanwhile and config and listed.pending else None)
        if run is not None:
            runs.append(run)
    problems.raise_if_any()
    assert config is not None
    done = listed.snapshot()
    digest = done.digest if done is not None else _digest(
        source, [(run.rel_folder, run.files or read_run_files(run.folder)) for run in runs])
    return ValidatedSource(source, config, tuple(runs), digest)


class _Listed:
    """The source as read by ``read_source``, taken from ``listing`` when first asked."""

    def __init__(self, listing: Callable[[], SourceSnapshot | None] | None) -> None:
        self.listing: Callable[[], SourceSnapshot | None] | None = listing
        self.done: SourceSnapshot | None = None

    @property
    def pending(self) -> bool:
        """Whether the listing is yet to be asked for."""
        return self.listing is not None

    def snapshot(self) -> SourceSnapshot | None:
        if self.listing is not None:
            self.done, self.listing = self.listing(), None
        return self.done

    def files(self, name: str) -> RunFiles | None:
        done = self.snapshot()
        return done.runs.get(name) if done is not None else None


def _experiment_names(folder: Path, config: SiteConfig | None, problems: Collector) -> list[str]:
    if not folder.is_dir():
        problems.add("experiments", 0, "", "folder not found: put each run in experiments/<run_id>/")
        return []
    found = sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    if config is None or config.experiments is None:
        if not found:
            problems.add("experiments", 0, "", "no experiment folders found")
        return found
    for name in config.experiments:
        if name not in found:
            problems.add("reportgen.toml", 0, "experiments",
                         f"experiment {name!r} has no folder experiments/{name}/")
    return [n for n in config.experiments if n in found]


def load_contract_and_log(folder: Path, rel_folder: str, problems: Collector
                          ) -> tuple[RunContract, RawLog] | None:
    """A run folder's contract and its log's rows, as read (not yet parsed into calls)."""
    contract = load_contract(folder, rel_folder, problems)
    logs = find_log(folder)
    if not logs:
        problems.add(rel_folder, 0, "", "no call log: expected calls.csv, calls.jsonl or calls.parquet")
        return None
    if len(logs) > 1:
        problems.add(rel_folder, 0, "", "more than one call log; keep exactly one of calls.csv, calls.jsonl, calls.parquet")
        return None
    log = read_log(logs[0], f"{rel_folder}/{logs[0].name}", problems)
    if log is None or contract is None:
        return None
    # Before the rows are read: a registered count becomes the log's ids, which every
    # later stage (per-block tables, the plan per block) takes as the registered blocks.
    return resolve_blocks(contract, log, f"{rel_folder}/run.toml", problems), log


def parse_rows(log: RawLog, contract: RunContract, rows: Sequence[RawRow], problems: Collector) -> list[Call]:
    """Some rows of a published log, as calls (their artifacts are checked apart)."""
    return _parse_calls(dataclasses.replace(log, rows=tuple(rows)), contract, problems)


def _load_run(folder: Path, rel_folder: str, problems: Collector, check_artifacts: bool,
              listed: Callable[[], RunFiles | None],
              meanwhile: Callable[[ValidatedRun], None] | None = None) -> ValidatedRun | None:
    read = load_contract_and_log(folder, rel_folder, problems)
    if read is None:
        return None
    contract, log = read
    calls = _parse_calls(log, contract, problems)  # while the folder may still be being listed
    if meanwhile is not None and not problems.problems:
        provisional = provisional_run(contract, folder, rel_folder, log, calls)
        if provisional is not None:
            meanwhile(provisional)
    files = listed() or read_run_files(folder)
    log = _held_once(log, files)
    if check_artifacts:
        calls = check_artifact_paths(calls, folder, files, log.file, problems)
    # A published version records the hashes of request bodies it redacted; a source
    # folder never gets to declare its own exceptions.
    redacted = {} if check_artifacts else _published_redactions(folder)
    grading, calls = load_grading(contract, log, calls, files.data, rel_folder, problems)
    check_design(contract, calls, log.file, problems)
    requests = _check_requests(calls, folder, rel_folder, log.file, problems, redacted)
    return ValidatedRun(contract, folder, rel_folder, without_rows(log), tuple(calls), requests,
                        files=files, grading=grading)


def provisional_run(contract: RunContract, folder: Path, rel_folder: str, log: RawLog,
                    calls: Sequence[Call]) -> ValidatedRun | None:
    """The run as ``_load_run`` will load it when its folder's listing neither drops a
    call (an artifact path that is not there) nor joins grades to them (a grades/
    folder): the same contract, calls and grading, without the folder's files and
    request bodies. None when the run has a grades/ folder, or its grading or design has
    problems (``_load_run`` reports them, and no stage works on such a run). ``same_run``
    tells whether the run loaded is this one."""
    if (folder / "grades").exists():
        return None
    unreported = Collector()
    grading, joined = load_grading(contract, log, calls, {}, rel_folder, unreported)
    check_design(contract, joined, log.file, unreported)
    if unreported.problems:
        return None
    return ValidatedRun(contract, folder, rel_folder, without_rows(log), tuple(joined), {}, grading=grading)


def same_run(provisional: ValidatedRun, run: ValidatedRun) -> bool:
    """Whether ``run`` has the contract, the calls (the very objects, in order) and the
    grading of ``provisional`` (``provisional_run``): what its analysis and the audit of
    its calls read, with its log, which comes with the contract (one load of a run reads
    both once, and makes a new contract)."""
    return (provisional.contract is run.contract and len(provisional.calls) == len(run.calls)
            and all(a is b for a, b in zip(provisional.calls, run.calls)) and provisional.grading == run.grading)


def _held_once(log: RawLog, files: RunFiles) -> RawLog:
    """The log read through the listing, when the listing kept the same bytes (a first
    build reads every file to hash it): one copy of the log is held, not two (25 MB for
    100,000 calls, a quarter of a GB for a million), and it goes when the listing lets
    go of its bytes (see ``RawLog.held``)."""
    contents = files.data
    if not isinstance(contents, FileContents):
        return log
    kept = contents.kept(log.name)
    if kept is None or kept != log.data:
        return log
    return dataclasses.replace(log, held=contents.ref(log.name))


def _published_redactions(folder: Path) -> dict[str, str]:
    try:
        body = json.loads((folder / "redactions.json").read_text("utf-8"))
        return {str(k): str(v) for k, v in body.get("requests", {}).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def _digest(source: Path, runs: list[tuple[str, RunFiles]]) -> str:
    """sha256 over the names and bytes of every file the build reads."""
    files = [source / "reportgen.toml"]
    pages = source / "pages"
    if pages.is_dir():
        files += sorted(pages.glob("*.md"))
    digest = hashlib.sha256()
    for path in files:
        rel = path.relative_to(source).as_posix()
        digest.update(rel.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    for rel_folder, listed in runs:
        for rel, hexdigest in listed.sha256.items():
            digest.update(f"{rel_folder}/{rel}".encode() + b"\0" + bytes.fromhex(hexdigest))
    return "sha256:" + digest.hexdigest()


def _log_too_large(folder: Path) -> bool:
    """A log past the size limit is refused before anything reads it: the snapshot
    (which reads every file to hash it) must not be the step that runs out of memory."""
    return any(path.stat().st_size > MAX_LOG_BYTES for path in find_log(folder))
