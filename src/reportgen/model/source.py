"""A source folder as the stages hand it on: the raw log, the run's files, the
validated run and source."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Protocol, TypedDict

from reportgen.model.artifacts import CallArtifacts
from reportgen.model.calls import Call
from reportgen.model.config import RunContract, SiteConfig
from reportgen.model.findings import Finding
from reportgen.model.grading import Grading, GradingRules


class RedactionSummary(TypedDict):
    """``data/<run>/redactions.json``: what ``build --redact`` replaced."""

    schema: str  # "reportgen.redactions/1"
    requests: dict[str, str]  # logged request hash -> hash of the redacted canonical JSON
    files: list[dict[str, object]]  # file, replaced [{line, kind}], original_sha256, published_sha256


@dataclass(frozen=True)
class RawRow:
    line: int
    values: Mapping[str, str]


class Rereadable(Protocol):
    """A file of the source read again when asked for, checked against the hash it was
    listed with (``load.contents.FileRef``)."""

    def read(self) -> bytes: ...


@dataclass(frozen=True)
class RawLog:
    file: str  # path relative to the source folder, for messages
    name: str  # calls.csv, calls.jsonl or calls.parquet
    columns: tuple[str, ...]
    rows: tuple[RawRow, ...]
    # The file as read, published as it is (or redacted); or, when the run's listing kept
    # the same bytes, that file of the listing: the build lets go of the listing's bytes
    # once the sheets are written, and the log (a quarter of a GB at a million calls)
    # is then read again for the one page that publishes it, not held through the pages.
    held: bytes | Rereadable = b""

    @property
    def data(self) -> bytes:
        """The log's bytes (read again, and checked, when they are no longer held)."""
        return self.held if isinstance(self.held, bytes) else self.held.read()


@dataclass(frozen=True)
class RunFiles:
    """Every regular file of a run folder, read once: the source digest, the artifact
    path checks and the artifacts themselves all come from here. Symbolic links are
    listed, never followed (their targets are checked the slow way)."""

    data: Mapping[str, bytes]  # path relative to the run folder -> bytes, in sorted-Path order
    dirs: frozenset[str]
    links: tuple[str, ...]  # sorted
    sha256: Mapping[str, str]  # path -> sha256 of its bytes (hex): hashed once, for the digest and the artifacts


@dataclass(frozen=True)
class ValidatedRun:
    contract: RunContract
    folder: Path
    rel_folder: str  # e.g. "experiments/pelican-ab"
    log: RawLog
    calls: tuple[Call, ...]
    requests: Mapping[str, bytes]  # request hex -> the file's bytes as published
    redacted_log: bytes | None = None  # the call log as --redact published it (None: as the source holds it)
    redactions: tuple[RedactionSummary, ...] = ()  # what --redact replaced, file by file
    files: RunFiles | None = None  # the run folder as read
    grading: Grading = Grading(GradingRules())  # [grading], the blind grades and the judge's

    @property
    def log_bytes(self) -> bytes:
        """The call log as published."""
        return self.log.data if self.redacted_log is None else self.redacted_log


@dataclass(frozen=True)
class ValidatedSource:
    root: Path
    config: SiteConfig
    runs: tuple[ValidatedRun, ...]
    digest: str  # sha256 over every input file, names included


@dataclass(frozen=True)
class SourceSnapshot:
    """A source folder read and hashed, nothing validated yet: enough for a build to tell
    that nothing has changed since it last ran, and read only once either way."""

    config: SiteConfig
    runs: Mapping[str, RunFiles]  # experiment name -> its files, in build order
    digest: str


@dataclass(frozen=True)
class AuditedRun:
    run: ValidatedRun
    artifacts: dict[str, CallArtifacts]
    findings: tuple[Finding, ...]
