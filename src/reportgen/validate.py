"""Source folder -> ValidatedSource (config, contracts, typed calls), or every problem at once."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Mapping

from .calllog import OPTIONAL_COLUMNS, REQUIRED_COLUMNS, RawLog, RawRow, find_log, read_log
from .config import SAFE_ID, RunContract, SiteConfig, load_contract, load_site_config, parse_timestamp
from .design_checks import check_design
from .errors import Collector
from .outcomes import STATUSES, TECHNICAL_FAILURES, Outcome, classify, counts_as_pass

HASH_RE = re.compile(r"^sha256:([0-9a-f]{64})$")
TRUE_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
TRUE_WORDS_YES = frozenset(w for w, v in TRUE_WORDS.items() if v)


@dataclass(frozen=True)
class Call:
    call_id: str
    line: int
    run_id: str
    block_id: str
    service: str
    service_group: str
    requested_model: str
    returned_model: str
    started_at: datetime
    started_at_text: str
    request_hash: str
    status: str
    finish_reason: str
    latency_ms: float | None
    qualified: bool | None
    failure_reason: str
    artifact_path: str
    attempt: int
    critical: bool
    disputed: bool
    phase: str
    extra: Mapping[str, str]  # every other column, as written

    @property
    def outcome(self) -> Outcome:
        return classify(self.status, self.qualified, self.disputed)

    @property
    def passed(self) -> bool:
        return counts_as_pass(self.status, self.qualified)

    @property
    def excluded(self) -> bool:
        return self.extra.get("excluded", "").strip().lower() in TRUE_WORDS_YES

    @property
    def request_hex(self) -> str:
        return self.request_hash.removeprefix("sha256:")

    def column(self, name: str) -> str:
        """An optional column's value, stripped ('' when absent)."""
        return self.extra.get(name, "").strip()

    @property
    def score(self) -> float | None:
        """The numeric score, checked by the design checks when the metric is a score."""
        text = self.column("score")
        try:
            return float(text) if text else None
        except ValueError:
            return None


@dataclass(frozen=True)
class RunFiles:
    """Every regular file of a run folder, read once: the source digest, the artifact
    path checks and the artifacts themselves all come from here. Symbolic links are
    listed, never followed (their targets are checked the slow way)."""

    data: Mapping[str, bytes]  # path relative to the run folder -> bytes, in sorted-Path order
    dirs: frozenset[str]
    links: tuple[str, ...]  # sorted


@dataclass(frozen=True)
class ValidatedRun:
    contract: RunContract
    folder: Path
    rel_folder: str  # e.g. "experiments/pelican-ab"
    log: RawLog
    calls: tuple[Call, ...]
    requests: Mapping[str, bytes]  # request hex -> the file's bytes as published
    log_bytes: bytes = b""  # the call log as published (redacted when --redact replaced a credential)
    redactions: tuple[Mapping[str, object], ...] = ()  # what --redact replaced, file by file
    files: RunFiles | None = None  # the run folder as read


@dataclass(frozen=True)
class ValidatedSource:
    root: Path
    config: SiteConfig
    runs: tuple[ValidatedRun, ...]
    digest: str  # sha256 over every input file, names included


def canonical_json(value: object) -> bytes:
    """The canonical form a request hash is taken over (SPEC 2.3)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def request_hash(value: object) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(value)).hexdigest()


@dataclass(frozen=True)
class SourceSnapshot:
    """A source folder read and hashed, nothing validated yet: enough for a build to tell
    that nothing has changed since it last ran, and read only once either way."""

    config: SiteConfig
    runs: Mapping[str, RunFiles]  # experiment name -> its files, in build order
    digest: str


def read_source(source: Path) -> SourceSnapshot | None:
    """Every input file, read and hashed; None when the site configuration itself has
    problems (``load_source`` then reports them, with every other problem)."""
    problems = Collector()
    if not source.is_dir():
        return None
    config = load_site_config(source, problems)
    experiments_dir = source / "experiments"
    names = _experiment_names(experiments_dir, config, problems)
    if config is None or problems.problems:
        return None
    runs = {name: read_run_files(experiments_dir / name) for name in names}
    return SourceSnapshot(config, runs, _digest(source, [(f"experiments/{n}", f) for n, f in runs.items()]))


def load_source(source: Path, check_artifacts: bool = True, snapshot: SourceSnapshot | None = None) -> ValidatedSource:
    """Read and validate everything; raise InputError listing every problem.

    ``check_artifacts=False`` is for recomputing a published version from its data/
    folder, which holds the contract, log and requests but publishes artifacts apart.
    ``snapshot`` is the same folder as ``read_source`` read it: its files are not read again."""
    problems = Collector()
    if not source.is_dir():
        problems.add(str(source), 0, "", "source folder not found")
        problems.raise_if_any()
    config = load_site_config(source, problems)
    runs: list[ValidatedRun] = []
    experiments_dir = source / "experiments"
    names = _experiment_names(experiments_dir, config, problems)
    for name in names:
        files = snapshot.runs.get(name) if snapshot is not None else None
        run = _load_run(experiments_dir / name, f"experiments/{name}", problems, check_artifacts, files)
        if run is not None:
            runs.append(run)
    problems.raise_if_any()
    assert config is not None
    digest = snapshot.digest if snapshot is not None else _digest(
        source, [(run.rel_folder, run.files or read_run_files(run.folder)) for run in runs])
    return ValidatedSource(source, config, tuple(runs), digest)


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


def _load_run(folder: Path, rel_folder: str, problems: Collector, check_artifacts: bool,
              files: RunFiles | None = None) -> ValidatedRun | None:
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
    files = files or read_run_files(folder)
    calls = _parse_calls(log, contract, folder if check_artifacts else None, problems, files)
    # A published version records the hashes of request bodies it redacted; a source
    # folder never gets to declare its own exceptions.
    redacted = {} if check_artifacts else _published_redactions(folder)
    check_design(contract, calls, log.file, problems)
    requests = _check_requests(calls, folder, rel_folder, log.file, problems, redacted)
    return ValidatedRun(contract, folder, rel_folder, log, tuple(calls), requests,
                        log_bytes=log.data, files=files)


def _published_redactions(folder: Path) -> dict[str, str]:
    try:
        body = json.loads((folder / "redactions.json").read_text("utf-8"))
        return {str(k): str(v) for k, v in body.get("requests", {}).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def _parse_calls(log: RawLog, contract: RunContract, folder: Path | None, problems: Collector,
                 files: RunFiles | None = None) -> list[Call]:
    calls: list[Call] = []
    seen_ids: dict[str, int] = {}
    service_ids = {s.id for s in contract.services}
    for row in log.rows:
        call = _parse_row(row, log.file, contract, service_ids, folder, problems, files)
        if call is None:
            continue
        if call.call_id in seen_ids:
            problems.add(log.file, row.line, "call_id",
                         f"{call.call_id!r} was already used on line {seen_ids[call.call_id]}")
            continue
        seen_ids[call.call_id] = row.line
        calls.append(call)
    if not calls and not problems.problems:
        problems.add(log.file, 1, "", "the log has no calls")
    return calls


def _parse_row(row: RawRow, file: str, contract: RunContract, service_ids: set[str],
               folder: Path | None, problems: Collector, files: RunFiles | None) -> Call | None:
    v = row.values
    ok = True

    def bad(field: str, message: str) -> None:
        nonlocal ok
        ok = False
        problems.add(file, row.line, field, message)

    def get(name: str) -> str:
        return (v.get(name) or "").strip()

    run_id = get("run_id")
    if run_id != contract.id:
        bad("run_id", f"{run_id!r} does not match run.id {contract.id!r} in run.toml")
    service = get("service")
    if service not in service_ids:
        bad("service", f"{service!r} is not a [[service]] id in run.toml "
            f"(known: {', '.join(sorted(service_ids))})")
    block_id = get("block_id")
    if contract.blocks and block_id not in contract.blocks:
        bad("block_id", f"{block_id!r} is not one of the registered blocks ({', '.join(contract.blocks)})")
    started_text = get("started_at")
    started = parse_timestamp(started_text)
    if started is None:
        try:
            naive = datetime.fromisoformat(started_text)
        except ValueError:
            bad("started_at", f"{started_text!r} is not an ISO 8601 date and time")
        else:
            bad("started_at", f"{started_text!r} has no UTC offset; write it as "
                f"{naive.isoformat()}+00:00 (or the offset it was recorded in)")
    rhash = get("request_hash")
    if not HASH_RE.match(rhash):
        bad("request_hash", f"{rhash!r} is not 'sha256:' followed by 64 lowercase hex digits")
    status = get("status")
    if status not in STATUSES:
        bad("status", f"{status!r} is not one of {', '.join(STATUSES)}")
    latency = None
    if get("latency_ms"):
        try:
            latency = float(get("latency_ms"))
            if not latency >= 0 or latency == float("inf"):
                raise ValueError
        except ValueError:
            bad("latency_ms", f"{get('latency_ms')!r} is not a non-negative number of milliseconds")
    disputed = _flag(get("disputed"), "disputed", bad)
    critical = _flag(get("critical"), "critical", bad)
    qualified_text = get("qualified").lower()
    qualified = TRUE_WORDS.get(qualified_text) if qualified_text else None
    if qualified_text and qualified is None:
        bad("qualified", f"{get('qualified')!r} is not true or false")
    elif status in TECHNICAL_FAILURES and qualified is not None:
        bad("qualified", f"must be empty for a technical failure (status {status!r}); "
            "a call that returned nothing was never graded")
    elif status == "ok" and qualified is None and not disputed:
        bad("qualified", "a complete return (status 'ok') needs a grade: true or false")
    attempt = 1
    if get("attempt"):
        try:
            attempt = int(get("attempt"))
            if attempt < 1:
                raise ValueError
        except ValueError:
            bad("attempt", f"{get('attempt')!r} is not a positive integer (1 = first submission)")
    phase = get("phase") or "formal"
    if phase not in ("pilot", "formal"):
        bad("phase", f"{phase!r} is not 'pilot' or 'formal'")
    artifact = get("artifact_path")
    if artifact and folder is not None:
        message = artifact_problem(folder, artifact, files)
        if message:
            bad("artifact_path", message)
    call_id = get("call_id") or _derived_call_id(service, run_id, started_text, rhash, block_id, attempt)
    if not SAFE_ID.match(call_id):
        bad("call_id", f"{call_id!r} is not a usable id (letters, digits, '.', '_', '-'; it names a page)")
    if not ok:
        return None
    assert started is not None
    known = set(REQUIRED_COLUMNS) | {"call_id", "attempt", "critical", "disputed", "phase"}
    extra = {k: val for k, val in v.items() if k not in known and (k in OPTIONAL_COLUMNS or val)}
    return Call(
        call_id=call_id, line=row.line, run_id=run_id, block_id=block_id, service=service,
        service_group=get("service_group"), requested_model=get("requested_model"),
        returned_model=get("returned_model"), started_at=started, started_at_text=started_text,
        request_hash=rhash, status=status, finish_reason=get("finish_reason"), latency_ms=latency,
        qualified=qualified, failure_reason=get("failure_reason"), artifact_path=artifact,
        attempt=attempt, critical=bool(critical), disputed=bool(disputed), phase=phase, extra=extra,
    )


def _flag(text: str, field: str, bad) -> bool | None:
    if not text:
        return False
    value = TRUE_WORDS.get(text.lower())
    if value is None:
        bad(field, f"{text!r} is not true or false")
    return value


def _derived_call_id(service: str, run_id: str, started: str, rhash: str, block: str, attempt: int) -> str:
    key = "\x1f".join((run_id, service, block, started, rhash, str(attempt)))
    return f"{service}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def artifact_problem(folder: Path, rel: str, files: RunFiles | None = None) -> str | None:
    """Why ``rel`` is not a safe, existing artifact path inside ``folder`` (None if it is).

    A path ``files`` lists as a regular file or folder was reached without a symbolic
    link, so it is inside the folder: no need to resolve it."""
    path = Path(rel)
    if path.is_absolute() or rel.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", rel):
        return f"{rel!r} is absolute; artifact paths are relative to the experiment folder"
    if ".." in path.parts or "\\" in rel:
        return f"{rel!r} leaves the experiment folder"
    if files is not None and ("/".join(path.parts) in files.data or "/".join(path.parts) in files.dirs):
        return None
    target = folder / path
    try:
        resolved = target.resolve(strict=True)
    except (FileNotFoundError, RuntimeError, OSError):
        return f"{rel!r} does not exist in the experiment folder"
    if not resolved.is_relative_to(folder.resolve()):
        return f"{rel!r} leaves the experiment folder (through a symbolic link)"
    if not (resolved.is_file() or resolved.is_dir()):
        return f"{rel!r} is neither a regular file nor a folder (a pipe or device is never read)"
    return None


def read_run_files(folder: Path) -> RunFiles:
    """Read every regular file below ``folder`` once (plain strings: a Path object per
    file costs more than reading a small file)."""
    found: list[tuple[tuple[str, ...], str]] = []
    dirs: list[str] = []
    links: list[str] = []

    def walk(directory: str, prefix: tuple[str, ...]) -> None:
        with os.scandir(directory) as entries:
            for entry in entries:
                parts = (*prefix, entry.name)
                if entry.is_symlink():
                    links.append("/".join(parts))
                elif entry.is_dir(follow_symlinks=False):
                    dirs.append("/".join(parts))
                    walk(entry.path, parts)
                elif entry.is_file(follow_symlinks=False):
                    found.append((parts, entry.path))

    walk(str(folder), ())
    found.sort(key=lambda item: item[0])
    data = {}
    for parts, path in found:
        with open(path, "rb") as handle:
            data["/".join(parts)] = handle.read()
    return RunFiles(data, frozenset(dirs), tuple(sorted(links)))


def plain_files(folder: Path) -> list[tuple[str, str]]:
    """(path relative to ``folder``, path) of every regular file below it, in the order
    of sorted Paths; symbolic links are neither listed nor followed."""
    found: list[tuple[tuple[str, ...], str]] = []

    def walk(directory: str, prefix: tuple[str, ...]) -> None:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path, (*prefix, entry.name))
                elif entry.is_file(follow_symlinks=False):
                    found.append(((*prefix, entry.name), entry.path))

    walk(str(folder), ())
    found.sort(key=lambda item: item[0])
    return [("/".join(parts), path) for parts, path in found]


def _check_requests(calls: list[Call], folder: Path, rel_folder: str, log_file: str,
                    problems: Collector, redacted: Mapping[str, str]) -> dict[str, bytes]:
    """Recompute each request hash from requests/<hex>.json; a mismatch is an error.
    A body redacted before publishing is checked against the hash recorded for it."""
    found: dict[str, bytes] = {}
    requests_dir = folder / "requests"
    for call in calls:
        hexdigest = call.request_hex
        if hexdigest in found:
            continue
        path = requests_dir / f"{hexdigest}.json"
        if not path.is_file():
            continue  # the call page says the request body was not published
        if not path.resolve().is_relative_to(folder.resolve()):
            problems.add(log_file, call.line, "request_hash",
                         f"requests/{hexdigest}.json leaves the experiment folder (symbolic link)")
            continue
        data = path.read_bytes()
        rel = f"{rel_folder}/requests/{hexdigest}.json"
        try:
            body = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            problems.add(rel, 0, "", f"not valid UTF-8 JSON: {exc}")
            continue
        actual = request_hash(body)
        expected = redacted.get(hexdigest, call.request_hash)
        if actual != expected:
            problems.add(log_file, call.line, "request_hash",
                         f"{expected} does not match requests/{hexdigest}.json, "
                         f"whose canonical JSON hashes to {actual}")
            continue
        found[hexdigest] = data
    return found


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
        for rel, data in listed.data.items():
            digest.update(f"{rel_folder}/{rel}".encode() + b"\0" + hashlib.sha256(data).digest())
    return "sha256:" + digest.hexdigest()
