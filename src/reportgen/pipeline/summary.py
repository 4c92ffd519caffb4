"""What a build reports when it is done."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reportgen.model.numbers import counted
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

    def text(self) -> str:
        """The line ``reportgen build`` ends with."""
        calls, claims = counted(self.n_calls, "call"), counted(self.n_claims, "claim")
        pages = counted(self.n_pages, "page")
        if self.up_to_date:
            return (f"{self.folder} is up to date: built before from these same inputs and unchanged since "
                    f"({calls}, {claims}, {pages}); nothing written, in {self.seconds:.1f} s")
        failures = f", {self.n_render_failures} not renderable" if self.n_render_failures else ""
        warnings = f", {counted(self.n_warnings, 'audit warning')} shown beside the claims" if self.n_warnings else ""
        return (f"built {self.folder}: {calls}, {claims}, {pages} and {counted(self.n_sheets, 'sheet')} of calls "
                f"({self.n_sheets_written} written, {self.n_sheets - self.n_sheets_written} shared with earlier "
                f"builds), {counted(self.n_drawings, 'drawing')} ({self.n_renders} distinct, "
                f"{self.n_renders - self.n_renders_reused} rendered, {self.n_renders_reused} reused{failures})"
                f"{warnings}, in {self.seconds:.1f} s")


def summary_of(remembered: Remembered, label: str, folder: Path, reused: int, seconds: float,
               n_sheets_written: int) -> BuildSummary:
    fields = {k: v for k, v in remembered.__dict__.items() if k != "built_at"}
    return BuildSummary(version=label, folder=folder, n_renders_reused=reused, seconds=seconds,
                        n_sheets_written=n_sheets_written, **fields)
