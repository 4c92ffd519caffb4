"""The part of a version that goes to the store: request bodies, raw files published on
their own, renders, call sheets and their packs.

These are written first, because the version's own pages link to them by name. Every
store file is named by its sha256; a sheet's name is known only once it is rendered, so
a sheet is rendered only when the store does not already hold the sheet of the same
record (``sheet_key``): a later version whose calls did not change renders none of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterable, Mapping, Protocol, Sequence, cast

import jinja2

from reportgen.model.artifacts import sha256
from reportgen.render.packs import make_pack
from reportgen.render.report import Report, RunReport
from reportgen.render.sheet_record import SheetRecord
from reportgen.model.artifacts import CallArtifacts
from reportgen.render.sheets import (
    CallLinks,
    Sheet,
    SheetCall,
    SheetPlace,
    ShownText,
    make_sheet,
    with_layout,
    partition,
    request_names,
    sheet_hrefs,
    sheet_key,
    shown_texts,
)

FROM_ROOT = "../store/"  # the store, from a version's root folder


class VersionOutput(Protocol):
    """Where a version's files go (write.version.VersionWriter)."""

    @property
    def notes(self) -> Mapping[str, object]: ...

    def add(self, rel: str, data: bytes) -> None: ...
    def add_pieces(self, rel: str, pieces: Iterable[bytes]) -> None: ...
    def share(self, name: str, data: bytes) -> str: ...
    def reuse(self, name: str, size: int) -> bool: ...
    def note(self, key: str, value: object) -> None: ...
    def run_tasks(self, tasks: Sequence[Callable[[], None]]) -> None: ...


# A sheet's note: its key, its record, and whether this build wrote it.
SheetNote = tuple[str, SheetRecord, bool]


def store_name(data: bytes, ext: str) -> str:
    return f"{sha256(data)}.{ext}"


class SheetsMade:
    """The sheets earlier builds made, and those of this build: by ``sheet_key``, where
    their files are in the store."""

    def __init__(self, earlier: Mapping[str, SheetRecord] | None = None) -> None:
        self.earlier = dict(earlier or {})
        self.now: dict[str, SheetRecord] = {}
        self.written = 0  # sheets this build rendered (the others were in the store already)

    def get(self, key: str) -> SheetRecord | None:
        return self.now.get(key) or self.earlier.get(key)


def write_shared(report: Report, env: jinja2.Environment, out: VersionOutput, static: Mapping[str, bytes],
                 code_key: str, known: SheetsMade, tick: Callable[[], None]) -> dict[str, "RunSheets"]:
    """Write every store file of the version; for each run, its sheets, their names and
    each call's link from the version root. A sheet ``known`` holds, whose files are in
    the store, is not made again; the sheets of this build are added to ``known.now``.

    Only the partition is made here: each sheet's record, key and files are made by its
    own job, on every core (a board of 100,000 calls has 2,000 sheets to key, each time)."""
    # The theme's stylesheet and icon, for the sheets, which cannot reach a version's static/.
    css, icon = static["static/style.css"], static["static/favicon.svg"]
    theme = (out.share(store_name(css, "css"), css), out.share(store_name(icon, "svg"), icon))
    template = env.get_template("sheet.html")
    planned: dict[str, list[SheetPlace]] = {}
    jobs = []
    for run in report.runs:
        rid = run.analysis.run.contract.id
        requests = request_names(run)
        for hexdigest, body in sorted(run.analysis.run.requests.items()):
            out.share(requests[hexdigest], body)
        places = planned[rid] = partition(run)
        job = _SheetJob(template, out, run, theme, requests, code_key, known, tick)
        jobs += [partial(_sheet_job, job, f"{rid}:{i}", places[i]) for i in _in_log_order(places)]
    out.run_tasks(jobs)
    result = {}
    for rid, places in planned.items():
        # As ``_sheet_job`` noted them: (key, record, written), from a writer process or this one.
        notes = [cast(SheetNote, out.notes[f"sheet:{rid}:{i}"]) for i in range(len(places))]
        known.now.update((key, made) for key, made, _ in notes)
        known.written += sum(1 for _, _, written in notes if written)
        names = tuple(made.page for _, made, _ in notes)
        result[rid] = RunSheets(tuple(places), names, tuple(made.pack for _, made, _ in notes),
                                sheet_hrefs(places, names, FROM_ROOT))
    return result


@dataclass(frozen=True)
class RunSheets:
    places: tuple[SheetPlace, ...]
    pages: tuple[str, ...]  # each sheet's name in the store
    packs: tuple[str | None, ...]  # each sheet's pack, None when its calls have no artifact
    hrefs: CallLinks  # each call's link from the version root, by call id


def _in_log_order(places: Sequence[SheetPlace]) -> list[int]:
    """The sheets' indexes in the log order of their first calls, not service by service.
    A page-writing helper copies each page of memory its jobs read (see ``run_tasks``),
    and the calls were read in log order, where the services take turns: the sheets of
    one service touched its calls all over the log, and a helper copied them nearly all
    (a window of sheets in log order touches a stretch of it: half the copy at 100,000
    calls)."""
    return sorted(range(len(places)), key=lambda i: places[i].calls[0].line if places[i].calls else 0)


@dataclass(frozen=True)
class _SheetJob:
    """What every sheet job of a run shares."""

    template: jinja2.Template
    out: VersionOutput
    run: RunReport
    theme: tuple[str, str]
    requests: Mapping[str, str]
    code_key: str
    known: SheetsMade
    tick: Callable[[], None]


def _sheet_job(job: _SheetJob, tag: str, place: SheetPlace) -> None:
    """One sheet: its key, from a record that needs no artifact's bytes; its files,
    unless the store has them all from the sheet of the same key (then no byte of its
    calls' artifacts is read). Noted as (key, record, written)."""
    out, run = job.out, job.run
    keyed = make_sheet(run, place, job.theme, job.requests, layout=False)
    key = sheet_key(job.code_key, keyed)
    made = job.known.get(key)
    written = made is None or not _reused(out, run, keyed, made)
    if made is None or written:
        sheet = with_layout(run, keyed)
        alone = _share_own_files(run, sheet, out)
        made = _write_sheet(job.template, out, sheet, run.artifacts, alone)
    out.note(f"sheet:{tag}", (key, made, written))
    job.tick()


def _reused(out: VersionOutput, run: RunReport, sheet: Sheet, made: SheetRecord) -> bool:
    """Whether the store holds every file of the sheet made before: the page, the pack,
    the files it published on their own, and its calls' drawings and renders."""
    if not out.reuse(made.page, made.page_size):
        return False
    if made.pack is not None and not out.reuse(made.pack, made.pack_size):
        return False
    if not all(out.reuse(name, size) for name, size in made.alone):
        return False
    for entry in sheet.calls:
        if not all(out.reuse(f.file, f.size) for f in entry.files if f.kind == "svg"):
            return False
        render = run.renders.get(entry.drawing) if entry.drawing else None
        if render and entry.png and not out.reuse(entry.png, len(render.png or b"")):
            return False
        if render and entry.safe_svg and not out.reuse(entry.safe_svg, len(render.safe_svg or b"")):
            return False
    return True


def _write_sheet(template: jinja2.Template, out: VersionOutput, sheet: Sheet,
                 artifacts: Mapping[str, CallArtifacts], alone: tuple[tuple[str, int], ...]) -> SheetRecord:
    pack = make_pack(sheet, artifacts)
    pack_name = out.share(store_name(pack, "tar.gz"), pack) if pack is not None else None

    def shown(entry: SheetCall) -> dict[str, ShownText]:
        return shown_texts(entry, artifacts.get(entry.call.call_id))

    html = template.render(s=sheet, pack=pack_name, shown=shown).encode("utf-8")
    page = out.share(store_name(html, "html"), html)
    return SheetRecord(page, len(html), pack_name, len(pack) if pack is not None else 0, alone)


def _share_own_files(run: RunReport, sheet: Sheet, out: VersionOutput) -> tuple[tuple[str, int], ...]:
    """The raw files a sheet links rather than shows (a drawing's SVG, a long response),
    published as text under their sha256, and each drawing's PNG and sanitized copy;
    [name, size] of those that are not SVGs (the SVGs and renders follow from the record)."""
    alone: dict[str, int] = {}
    for entry in sheet.calls:
        bundle = run.artifacts.get(entry.call.call_id)
        by_sha = {a.sha256: a for a in bundle.files} if bundle else {}
        for f in entry.files:
            if not f.packed:
                out.share(f.file, by_sha[f.sha256].data)
                if f.kind != "svg":
                    alone[f.file] = f.size
        render = run.renders.get(entry.drawing) if entry.drawing else None
        if render and render.png and entry.png:
            out.share(entry.png, render.png)
        if render and render.safe_svg and entry.safe_svg:
            out.share(entry.safe_svg, render.safe_svg)
    return tuple(sorted(alone.items()))
