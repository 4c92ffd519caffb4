"""What a build reports when it is done."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reportgen.pipeline.incremental import Remembered


@dataclass(frozen=True)
class BuildSummary:
    version: str
    folder: Path
    n_calls: int
    n_pages: int
    n_drawings: int  # calls with an SVG
    n_renders: int  # distinct SVGs rendered
    n_render_failures: int
    n_renders_reused: int
    n_sheets: int  # sheets of calls the version links (pages of the store)
    n_sheets_written: int  # of those, the ones this build rendered (the others were there)
    n_claims: int
    n_warnings: int
    seconds: float
    up_to_date: bool = False  # built before from the same inputs: nothing was written


def summary_of(remembered: Remembered, label: str, folder: Path, reused: int, seconds: float,
               n_sheets_written: int) -> BuildSummary:
    fields = {k: v for k, v in remembered.__dict__.items() if k != "built_at"}
    return BuildSummary(version=label, folder=folder, n_renders_reused=reused, seconds=seconds,
                        n_sheets_written=n_sheets_written, **fields)
