"""Call sheets: the pages that show calls, shared by every version that holds them.

A run's calls are shown on sheets: each service's calls in log order, ``SHEET_CALLS`` to
a sheet, each call a section with its own anchor (``call_anchor``). A sheet says only
what the log, the artifacts and the renders say about its calls: no version label, no
claim, no link into a version folder. So a sheet is the same file in every version whose
calls are the same, written once to the store under its sha256, and a version's claims
and evidence pages link to ``<sheet>.html#<call anchor>``.

Beside each sheet, its pack (see ``packs``): the raw files the sheet shows whole, and the
list of every artifact of its calls. Every other raw file (a drawing's SVG, a response
too long to show) is published on its own in the store and linked from the sheet.

What a sheet shows is a function of its ``Sheet`` record alone (and of the bytes the
record names by sha256), so ``sheet_key`` of the record and the code names the sheet's
content before it is rendered: a later build whose key is the same reuses the file.
The records are tuples (``NamedTuple``): a board of 100,000 calls makes 300,000 of them
in every build, to key its sheets, and a tuple is made several times faster.
"""

from __future__ import annotations

import hashlib
import marshal
import re
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, Iterator, Mapping, NamedTuple, Sequence
from urllib.parse import quote

from reportgen.audit.redaction import is_redacted
from reportgen.load.artifacts import svg_spans
from reportgen.model.artifacts import Artifact, CallArtifacts, sha256
from reportgen.model.calls import Call
from reportgen.model.outcomes import ShownOutcome
from reportgen.render.report import RunReport
from reportgen.render.text_runs import holds_drawings

SHEET_CALLS = 50  # calls a sheet holds: a changed grade rewrites one sheet of 50, not one page per call
SHOWN_WHOLE = 2000  # bytes of text a sheet shows in full (its drawing left out); longer files are linked
RESPONSE_EXCERPT = 400  # characters shown of a response too long to show whole


class PublishedFile(NamedTuple):
    """One raw file of a call, as a sheet lists it and its pack's index records it."""

    name: str  # as in the source folder, e.g. response.txt
    sha256: str
    kind: str
    size: int
    derived: str | None
    redacted_from: str | None
    file: str  # "<sha256>.txt": its name in the store, or in the pack when ``packed``
    # Shown whole on the sheet and kept in its pack, rather than on its own; None in the
    # record a sheet is keyed by (it follows from the bytes, which the sha256 names).
    packed: bool | None

    def to_json(self) -> dict:
        entry = {"name": self.name, "sha256": self.sha256, "kind": self.kind, "bytes": self.size,
                 "file": self.file, "in": "pack" if self.packed else "store"}
        if self.derived:
            entry["derived"] = self.derived
        if self.redacted_from:
            entry["redacted_from"] = self.redacted_from
        return entry


class SheetCall(NamedTuple):
    call: Call
    anchor: str
    outcome: ShownOutcome
    outcome_text: str
    request: str | None  # the published request body's name in the store
    request_redacted: str | None  # that body's hash, when a credential was redacted from it
    files: tuple[PublishedFile, ...]
    drawing: str | None  # the sha256 of the call's SVG (given, or extracted from its response)
    png: str | None  # the render's name in the store
    safe_svg: str | None  # the sanitized copy's name in the store
    render_notes: tuple[str, ...]
    rendered: bool  # the drawing went through the renderer (a record of it exists)

    @property
    def counted(self) -> bool:
        return self.call.counted


class Sheet(NamedTuple):
    run_id: str
    service: str
    number: int  # 1-based, among the service's sheets
    n_sheets: int
    first: int  # the 1-based position of its first call among the service's calls
    n_service_calls: int
    log_name: str
    log_unit: str  # "line", or "row" in Parquet
    dispute_rule: str
    renderer: str  # what rendered the run's drawings; "" when the run holds none (a text run)
    stylesheet: str  # the theme's style.css, by its name in the store
    icon: str  # the theme's favicon.svg, by its name in the store
    calls: tuple[SheetCall, ...]

    @property
    def last(self) -> int:
        return self.first + len(self.calls) - 1


_PLAIN = re.compile(r"[A-Za-z0-9_.~-]+")  # what quote() leaves as it is


def call_anchor(call_id: str) -> str:
    """A call's id on its sheet: percent-encoded, so any id the log holds is a valid one."""
    return "call-" + (call_id if _PLAIN.fullmatch(call_id) else quote(call_id, safe=""))


def call_link(sheet: str, call_id: str) -> str:
    """A call's place on its sheet: the sheet's link and the call's anchor."""
    return f"{sheet}#{call_anchor(call_id)}"


def sheet_key(code_key: str, sheet: Sheet) -> str:
    """What names a sheet (and its pack) before it is made: the code that renders it and
    every field of its record (the record leaves the bytes out; it names them).

    The record as plain tuples, written by ``marshal`` (format 2: a str, int, float,
    bool, None, tuple or dict by its type and content, with no references between
    objects, so equal records give the same bytes in any process, however their strings
    are held): five times faster than its repr, which a build made of every sheet, 20,000
    at a million calls, each time. A record holding a value marshal does not write (a
    call's blind grades, a subclass of str) is keyed by its repr, under another tag. (A
    record holds no other kind of value: marshal would write a bytearray or a numpy
    number as the bytes of a bytes object.)"""
    record = key_record(sheet)
    key = hashlib.sha256(code_key.encode("utf-8", "surrogatepass") + b"\x1f")
    try:
        data = marshal.dumps(record, 2)
        key.update(b"marshal\x1f")
    except ValueError:
        data = repr(record).encode("utf-8", "surrogatepass")
        key.update(b"repr\x1f")
    key.update(data)
    return key.hexdigest()


def key_record(sheet: Sheet) -> Any:
    """The record ``sheet_key`` writes: the sheet's fields as plain tuples (its calls'
    through ``_CALL_FIELDS``, its files' as tuples), or marshal says which are not."""
    calls = tuple(tuple(_CALL_FIELDS(v) if v is entry.call else tuple(map(tuple, v)) if v is entry.files else v
                        for v in entry) for entry in sheet.calls)
    return tuple(sheet[:-1]), calls


# A call's fields as a tuple of plain values (see ``sheet_key``), but for ``started_at``,
# the time ``load.rows`` reads from ``started_at_text``, which the record holds and the
# sheet shows (a theme's sheet that showed the time itself is keyed by its code too); a
# datetime is neither marshalled nor quick to repr (a sixth of the repr of a record).
_CALL_FIELDS = attrgetter(*(f.name for f in fields(Call) if f.name != "started_at"))


class SheetPlace(NamedTuple):
    """Where a sheet stands among its service's: what the run's partition says of it."""

    service: str
    number: int  # 1-based, among the service's sheets
    n_sheets: int
    first: int  # the 1-based position of its first call among the service's calls
    n_service_calls: int
    calls: tuple[Call, ...]
    drawings: bool = True  # the run holds drawings

    @property
    def last(self) -> int:
        return self.first + len(self.calls) - 1


def partition(run: RunReport) -> list[SheetPlace]:
    """The run's calls on sheets: by service in contract order, in log order within each,
    SHEET_CALLS to a sheet."""
    vr = run.analysis.run
    by_service: dict[str, list[Call]] = {s.id: [] for s in vr.contract.services}
    for call in vr.calls:
        by_service.setdefault(call.service, []).append(call)
    places = []
    drawings = holds_drawings(run)
    for service, calls in by_service.items():
        n_sheets = -(-len(calls) // SHEET_CALLS)
        for number in range(1, n_sheets + 1):
            start = (number - 1) * SHEET_CALLS
            places.append(SheetPlace(service, number, n_sheets, start + 1, len(calls),
                                     tuple(calls[start:start + SHEET_CALLS]), drawings))
    return places


def make_sheet(run: RunReport, place: SheetPlace, theme: tuple[str, str], requests: Mapping[str, str],
               layout: bool = True) -> Sheet:
    """The record of the sheet at ``place``. ``theme``: the store names of the theme's
    stylesheet and icon; ``requests``: each published request body's store name, by
    request hash. Without ``layout``, the record to key the sheet by: which files it
    shows whole is left open, so no artifact's bytes are read."""
    vr = run.analysis.run
    contract = vr.contract
    log_unit = "row" if vr.log.name.endswith(".parquet") else "line"
    scored = contract.metric.scored
    return Sheet(contract.id, place.service, place.number, place.n_sheets, place.first, place.n_service_calls,
                 vr.log.name, log_unit, contract.dispute_rule or "", run.settings.short() if place.drawings else "",
                 *theme, tuple(_sheet_call(run, call, requests, layout, scored) for call in place.calls))


def with_layout(run: RunReport, keyed: Sheet) -> Sheet:
    """The sheet a keyed record (``make_sheet(..., layout=False)``) stands for, with the
    files it shows whole decided (this reads the bytes of its calls' artifacts)."""
    calls = []
    for entry in keyed.calls:
        if entry.files:
            bundle = run.artifacts[entry.call.call_id]
            svg = bundle.first("svg")
            entry = entry._replace(files=tuple(f._replace(packed=shown_whole(a, svg))
                                               for f, a in zip(entry.files, bundle.files)))
        calls.append(entry)
    return keyed._replace(calls=tuple(calls))


def _sheet_call(run: RunReport, call: Call, requests: Mapping[str, str], layout: bool, scored: bool) -> SheetCall:
    bundle: CallArtifacts | None = run.artifacts.get(call.call_id)
    raw = bundle.files if bundle else ()
    svg = bundle.first("svg") if bundle else None
    render = run.renders.get(svg.sha256) if svg else None
    outcome, text = call.shown_outcome(scored)
    return SheetCall(
        call=call, anchor=call_anchor(call.call_id), outcome=outcome, outcome_text=text,
        request=requests.get(call.request_hex), request_redacted=is_redacted(run.analysis.run, call.request_hex),
        files=tuple(_published(a, svg, layout) for a in raw), drawing=svg.sha256 if svg else None,
        png=f"{render.png_sha256}.png" if render and render.png else None,
        safe_svg=f"{render.safe_svg_sha256}.svg" if render and render.safe_svg else None,
        render_notes=render.notes if render else (), rendered=render is not None)


def _published(artifact: Artifact, drawing: Artifact | None, layout: bool) -> PublishedFile:
    return PublishedFile(artifact.name, artifact.sha256, artifact.kind, artifact.size, artifact.derived,
                         artifact.redacted_from, artifact.published_name,
                         shown_whole(artifact, drawing) if layout else None)


def shown_whole(artifact: Artifact, drawing: Artifact | None) -> bool:
    """Whether a sheet shows this file in full (and keeps it in its pack): UTF-8 text of at
    most SHOWN_WHOLE bytes once the call's drawing, shown and linked apart, is left out.
    An SVG is always published on its own: it is drawn, and its source linked."""
    if artifact.kind == "svg":
        return False
    data = artifact.data
    size = len(data)
    if drawing is not None and drawing.size and drawing is not artifact:
        drawn = drawing.data
        size -= data.count(drawn) * len(drawn)
    if size > SHOWN_WHOLE:
        return False
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@dataclass(frozen=True)
class ShownText:
    text: str
    whole: bool  # False: an excerpt, the whole file linked


def shown_texts(entry: SheetCall, raw: CallArtifacts | None) -> dict[str, ShownText]:
    """The text a sheet shows of each of a call's files, by sha256: whole when packed, with
    the call's drawing named in place of its source; the start of a long response.
    ``raw``: the call's artifacts, whose bytes ``entry.files`` names."""
    by_sha = {a.sha256: a for a in raw.files} if raw else {}
    drawing = by_sha.get(entry.drawing) if entry.drawing else None
    marker = ""
    if drawing is not None:
        marker = f"[{drawing.name}, listed above: {drawing.size} bytes, sha256 {drawing.sha256[:12]}…]"
    out: dict[str, ShownText] = {}
    response = next((f for f in entry.files if f.kind == "response"), None)
    for f in entry.files:
        data = by_sha[f.sha256].data
        if f.packed:
            text = data.decode("utf-8")
            if drawing is not None and drawing.size:
                text = text.replace(drawing.data.decode("utf-8", "replace"), marker)
            out[f.sha256] = ShownText(text, True)
        elif f is response:
            text = _without_svgs(data.decode("utf-8", "replace")) if drawing is not None else \
                data.decode("utf-8", "replace")
            out[f.sha256] = ShownText(text[:RESPONSE_EXCERPT] + ("…" if len(text) > RESPONSE_EXCERPT else ""), False)
    return out


def _without_svgs(text: str) -> str:
    """The drawing and its source are shown and linked apart: not again in the excerpt."""
    pieces, last = [], 0
    for start, end in svg_spans(text):
        pieces += [text[last:start], f"[an SVG of {end - start} characters]"]
        last = end
    return "".join(pieces) + text[last:]


def sheet_hrefs(places: Sequence[SheetPlace], names: Sequence[str], prefix: str) -> CallLinks:
    """Each call's link, by call id: ``prefix`` + sheet name + its anchor."""
    sheet_of: dict[str, str] = {}
    for place, name in zip(places, names):
        sheet_of.update(dict.fromkeys((call.call_id for call in place.calls), prefix + name))
    return CallLinks(sheet_of)


class CallLinks(Mapping[str, str]):
    """Each call's link, by call id, made when asked for from its sheet's (held once a
    sheet): a string made and held for each call was 190 MB through the pages of a
    million calls."""

    __slots__ = ("sheet_of",)

    def __init__(self, sheet_of: dict[str, str]) -> None:
        self.sheet_of = sheet_of  # call id -> its sheet's link

    def __getitem__(self, call_id: str) -> str:
        return call_link(self.sheet_of[call_id], call_id)

    def __iter__(self) -> Iterator[str]:
        return iter(self.sheet_of)

    def __len__(self) -> int:
        return len(self.sheet_of)


def request_names(run: RunReport) -> dict[str, str]:
    """Each published request body's store name, by request hash."""
    return {hexdigest: f"{sha256(body)}.json" for hexdigest, body in run.analysis.run.requests.items()}
