"""Renders kept across builds, in a folder keyed by content hash and settings.

The cache speeds a build up; it never decides what is published. Plain files (a JSON
record, the PNG, the sanitized SVG), never pickles: a cache folder is not trusted to run
code. A record is read only when it is of this format, for its key, and its PNG and SVG
hash to what it says. A render's notes are published on its call's sheet, so they do
not come from the record: the notes the renderer gives a drawing before it draws it
(repairs, an assumed size, why it cannot be drawn) are made again from the SVG itself;
the record keeps only the notes drawing added, and each is read only in a shape the
renderer writes, checked against the drawing (a refused reference must be one the SVG
holds), or a failure in the renderer's fixed words. A render with any other note (the
text of an error the renderer raised) is not kept: it is drawn again by the next build.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from reportgen.atomic import write_atomic
from reportgen.model.artifacts import Render, RenderSettings, sha256
from reportgen.render import svg
from reportgen.render.svg import (BUILD_OUT_OF_TIME, ENDLESS, NOT_KEPT, OUT_OF_TIME, TOO_DEEP, TOO_LARGE, RenderBudget,
                                  cache_key, drawing_notes, render_all, timeout_note)

RECORD_FORMAT = "reportgen.render/2"


@dataclass(frozen=True)
class RenderRecord:
    """A kept render: its PNG's and sanitized SVG's sha256 (None: not made), and the
    notes drawing added (see ``drawn_notes_hold``)."""

    png: str | None
    safe_svg: str | None
    drawn: tuple[str, ...] = ()

    def to_json(self, key: str) -> bytes:
        body = {"format": RECORD_FORMAT, "png": self.png, "safe_svg": self.safe_svg, "drawn": list(self.drawn)}
        body["check"] = _record_check(key, self)
        return json.dumps(body).encode("utf-8")


class RenderCache:
    """The render cache of a build (``folder`` None: no cache). ``hits``/``misses``
    count what the build found; ``unwritable`` says why the cache could not be written."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.hits = 0
        self.misses = 0
        self.hit_shas: set[str] = set()  # the SVGs whose render came from the cache
        self.unwritable: str | None = None  # why the cache could not be written, if so

    def get(self, svg_sha: str, settings: RenderSettings, data: Callable[[], bytes]) -> Render | None:
        """The kept render of the SVG ``data()`` reads, with its notes made again from it."""
        if self.folder is None:
            return None
        key = cache_key(svg_sha, settings)
        base = self.folder / key
        record = read_record(base.with_suffix(".json"), key)
        if record is None:
            return None
        try:
            png = base.with_suffix(".png").read_bytes() if record.png else None
            safe = base.with_suffix(".svg").read_bytes() if record.safe_svg else None
            svg_bytes = data()
        except OSError:
            return None
        if (png is not None and sha256(png) != record.png) or (safe is not None and sha256(safe) != record.safe_svg):
            return None
        notes = drawing_notes(svg_bytes, svg_sha, settings)
        failed = any(note.startswith("not rendered") for note in notes + record.drawn)
        if failed != (record.png is None) or not drawn_notes_hold(record.drawn, svg_bytes, settings):
            return None  # a record that does not fit its drawing is read as absent
        self.hits += 1
        self.hit_shas.add(svg_sha)
        return Render(svg_sha, png, record.png, safe, record.safe_svg, notes + record.drawn)

    def put(self, render: Render, settings: RenderSettings, data: bytes) -> None:
        """Keep ``render`` of ``data`` when its notes can be read back (see the module
        text); a cache that cannot be written (full, read-only) is left alone for the
        rest of the build, said once in ``unwritable``: it is optional."""
        if self.folder is None or self.unwritable:
            return
        before = drawing_notes(data, render.svg_sha256, settings)
        drawn = render.notes[len(before):]
        if render.notes[:len(before)] != before or not drawn_notes_hold(drawn, data, settings):
            return
        key = cache_key(render.svg_sha256, settings)
        base = self.folder / key
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            if render.png is not None:
                write_atomic(base.with_suffix(".png"), render.png)
            if render.safe_svg is not None:
                write_atomic(base.with_suffix(".svg"), render.safe_svg)
            # The record last: a half-written entry is never read.
            record = RenderRecord(render.png_sha256, render.safe_svg_sha256, drawn)
            write_atomic(base.with_suffix(".json"), record.to_json(key))
        except OSError as exc:
            self.unwritable = f"{exc.filename or self.folder}: {exc.strerror or exc}"


def _record_check(key: str, record: RenderRecord) -> str:
    body = json.dumps([key, RECORD_FORMAT, svg.RENDER_CODE_VERSION, record.png, record.safe_svg, list(record.drawn)])
    return sha256(body.encode("utf-8"))


def read_record(path: Path, key: str) -> RenderRecord | None:
    """A render's cache record, when it is whole, of this format, and for ``key``; else None."""
    try:
        body = json.loads(path.read_text("utf-8"))
        png, safe, drawn = body["png"], body["safe_svg"], body["drawn"]
        if not (body.get("format") == RECORD_FORMAT and isinstance(drawn, list)
                and all(isinstance(n, str) for n in drawn)
                and all(x is None or isinstance(x, str) for x in (png, safe))):
            return None
        record = RenderRecord(png, safe, tuple(drawn))
        return record if body.get("check") == _record_check(key, record) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


# The notes drawing adds, in the shapes the renderer writes them (see svg.render_one).
_IMAGES = re.compile(r"[1-9][0-9]{0,5} embedded data: image\(s\) decoded and drawn: "
                     r"(PNG|JPEG|GIF) [0-9]{1,6}×[0-9]{1,6}(, (PNG|JPEG|GIF) [0-9]{1,6}×[0-9]{1,6}){0,200}")
_REFUSED = re.compile(r"[1-9][0-9]{0,5} external reference\(s\) refused and drawn as nothing: (.*)", re.S)


def drawn_notes_hold(notes: tuple[str, ...], data: bytes, settings: RenderSettings) -> bool:
    """Whether each note is one drawing ``data`` can add: the time budget's, a failure
    in fixed words, the embedded images' (numbers and kinds only), or the refused
    references', each of which the SVG holds."""
    text = data.decode("utf-8", "replace")
    for note in notes:
        if note == timeout_note(settings.seconds) or note in (ENDLESS, TOO_LARGE, TOO_DEEP) or _IMAGES.fullmatch(note):
            continue
        refused = _REFUSED.fullmatch(note)
        if refused is None or not _made_of(refused.group(1), text):
            return False
    return True


def _made_of(shown: str, text: str) -> bool:
    """Whether ``shown`` is pieces joined by ", ", each found in ``text`` (at most 100
    characters each, as the renderer shows them)."""
    reachable = [False] * (len(shown) + 1)  # where a piece may start: after a whole piece and ", "
    reachable[0] = True
    for start in range(len(shown) + 1):
        if not reachable[start]:
            continue
        for stop in range(start, min(len(shown), start + 100) + 1):
            if (stop == len(shown) or shown.startswith(", ", stop)) and shown[start:stop] in text:
                if stop == len(shown):
                    return True
                reachable[stop + 2] = True
    return False


def render_and_keep(svgs: Mapping[str, bytes], settings: RenderSettings, cache: RenderCache,
                    processes: int | None = None, tick: Callable[[], None] = lambda: None,
                    stop: threading.Event | None = None, budget: RenderBudget | None = None,
                    batch_max: int | None = None) -> dict[str, Render]:
    """Render SVGs the cache does not hold, and keep the renders in it."""
    cache.misses += len(svgs)
    fresh = render_all(svgs, settings, processes, tick, stop, budget, batch_max)
    for sha, render in fresh.items():
        if not any(note.startswith((NOT_KEPT, OUT_OF_TIME, BUILD_OUT_OF_TIME)) for note in render.notes):
            cache.put(render, settings, svgs[sha])
    return fresh
