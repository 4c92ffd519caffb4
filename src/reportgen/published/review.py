"""The page of changes between two versions, as a reviewer reads it: decisions first
(flipped, then read on a changed interval, then how many are unchanged), then each
changed claim on one row with its old and new numbers formatted as the report formats
them, then each changed call on one row with the fields that changed and its request
hash. The counts are those ``reportgen diff`` prints.

One writer serves ``reportgen build`` (site/diff/<old>..<new>/) and ``reportgen diff
--html`` (any folder): links are computed from where the page is written, so the
stylesheet and navigation resolve from either place.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from reportgen.atomic import write_atomic
from reportgen.published.diff import CallLabel, Change, VersionDiff, calls_by_where
from reportgen.render import present


@dataclass(frozen=True)
class RecordView:
    """A claim's published record (data/results.json) read as the formatting reads a claim."""

    record: dict[str, Any]

    def _interval(self, name: str) -> Any:
        interval = self.record.get("interval")
        return interval.get(name) if isinstance(interval, dict) else None

    @property
    def kind(self) -> str:
        return str(self.record.get("kind", ""))

    @property
    def unit(self) -> str | None:
        return self.record.get("unit")

    @property
    def estimate(self) -> float | None:
        return _number(self.record.get("estimate"))

    @property
    def numerator(self) -> int | None:
        return self.record.get("numerator")

    @property
    def denominator(self) -> int | None:
        return self.record.get("denominator")

    @property
    def low(self) -> float | None:
        return _number(self._interval("low"))

    @property
    def high(self) -> float | None:
        return _number(self._interval("high"))

    @property
    def confidence_level(self) -> float | None:
        return _number(self._interval("confidence_level"))

    @property
    def method(self) -> str | None:
        return self._interval("method") or self.record.get("test")

    @property
    def p_value(self) -> float | None:
        return _number(self.record.get("p_value"))

    @property
    def adjusted_p_value(self) -> float | None:
        return _number(self.record.get("adjusted_p_value"))

    @property
    def adjustment(self) -> str | None:
        return self.record.get("adjustment")

    @property
    def verdict(self) -> str | None:
        return self.record.get("verdict")

    @property
    def verdict_label(self) -> str | None:
        return self.record.get("verdict_label")

    @property
    def group(self) -> int | None:
        return self.record.get("group")

    @property
    def decision_basis(self) -> str | None:
        return self.record.get("decision_basis")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def shown(record: dict[str, Any] | None) -> str:
    """A claim's number as the report shows it: value and interval (a decision: its
    verdict and the interval it was read on)."""
    if record is None:
        return "(none)"
    view = RecordView(record)
    if view.kind == "decision":
        return f"{present.value(view)}, read on the {present.decision_basis(view)}"
    return f"{present.value(view)} {present.interval(view)}".strip()


@dataclass(frozen=True)
class ClaimRow:
    id: str
    old: str
    new: str
    fields: str  # which published fields changed, e.g. "estimate, interval, numerator"


@dataclass(frozen=True)
class CallRow:
    label: CallLabel  # the call, as the diff's change record carries it
    changes: tuple[Change, ...]

    @property
    def call(self) -> str:
        return self.label.call

    @property
    def request_hash(self) -> str:
        """The request hash (or "old -> new" when it changed); empty for an artifact's change."""
        return self.label.request_hash


@dataclass(frozen=True)
class Review:
    diff: VersionDiff
    flipped: tuple[ClaimRow, ...]
    moved: tuple[ClaimRow, ...]
    claims: tuple[ClaimRow, ...]
    calls: tuple[CallRow, ...]
    artifacts: tuple[CallRow, ...]
    added: tuple[CallRow, ...] = ()
    removed: tuple[CallRow, ...] = ()


def review(d: VersionDiff) -> Review:
    fields_of: dict[str, list[str]] = {}
    for c in (*d.verdict_flips, *d.claims_changed):
        name = c.field.split(".")[0]
        if name not in fields_of.setdefault(c.where, []):
            fields_of[c.where].append(name)

    def row(cid: str) -> ClaimRow:
        old, new = d.records.get(cid, (None, None))
        return ClaimRow(cid, shown(old), shown(new), ", ".join(fields_of.get(cid, ())))

    changed = sorted({c.where for c in d.claims_changed}, key=list(fields_of).index)
    return Review(
        d, tuple(row(cid) for cid in d.decisions.flipped), tuple(row(cid) for cid in d.decisions.moved),
        tuple(row(cid) for cid in changed),
        tuple(_call_row(cs) for _, cs in calls_by_where(d.calls_changed)),
        tuple(_call_row(cs) for _, cs in calls_by_where(d.artifacts_changed)),
        tuple(CallRow(c, ()) for c in d.calls_added), tuple(CallRow(c, ()) for c in d.calls_removed),
    )


def _call_row(changes: list[Change]) -> CallRow:
    """One row for a call's changes (a diff groups them by the call they carry)."""
    label = changes[0].call
    if label is None:  # not a diff's change of a call
        raise ValueError(f"{changes[0].where}: a change that names no call")
    return CallRow(label, tuple(changes))


@dataclass(frozen=True)
class Links:
    """Relative links from the page's folder: the site index, and each version's folder."""

    site: str
    old: str
    new: str


def links_from(folder: Path, old_folder: Path, new_folder: Path) -> Links:
    def rel(target: Path) -> str:
        return Path(os.path.relpath(target.resolve(), folder.resolve())).as_posix() + "/"

    return Links(rel(new_folder.parent), rel(old_folder), rel(new_folder))


def write_diff_page(folder: Path, d: VersionDiff, env: jinja2.Environment, old_folder: Path,
                    new_folder: Path) -> Path:
    """``folder``/index.html: the reviewer's page of changes from ``old_folder`` to
    ``new_folder``, written whole or not at all."""
    folder.mkdir(parents=True, exist_ok=True)
    page = env.get_template("diff.html").render(r=review(d), d=d, links=links_from(folder, old_folder, new_folder))
    target = folder / "index.html"
    write_atomic(target, page.encode("utf-8"))
    return target
