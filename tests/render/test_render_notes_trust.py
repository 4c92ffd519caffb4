"""A render's notes come from the renderer, never from a cache record: a record edited
with its check made again to match (as anyone who can write the cache can) publishes
nothing it says; the notes made before drawing come from the SVG itself, and those
drawing adds are read only in the renderer's own shapes, checked against the drawing."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from conftest import svg_for
from reportgen.model.artifacts import Render, RenderSettings, sha256
from reportgen.published.verify import verify_version
from reportgen.render import svg
from reportgen.render.render_cache import RenderCache, RenderRecord, drawn_notes_hold, read_record, render_and_keep

SETTINGS = RenderSettings("test", 64, 256, 10.0, (40.0, 30.0))
REPAIRED = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30">'
            '<rect width="40" height="30" fill="red" fill="blue"/><desc>X-2</desc></svg>')
UNSIZED = '<svg xmlns="http://www.w3.org/2000/svg"><circle cx="5" cy="5" r="4"/><desc>X-3</desc></svg>'
EXTERNAL = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" '
            'height="30"><image xlink:href="https://example.org/a.png" width="9" height="9"/></svg>')


def files_of(folder: Path) -> dict[str, str]:
    return json.loads((folder / "manifest.json").read_text())["files"]


def drawing(source: Path, call: str, text: str) -> None:
    folder = source / "experiments" / "mini" / "artifacts" / call
    (folder / "image.svg").write_text(text)
    (folder / "response.txt").write_text(f"Here you go:\n```svg\n{text}\n```\n")


def rewrite_records(cache: Path, edit) -> int:
    """Each render record, edited by ``edit`` and written with a matching check."""
    n = 0
    for path in cache.glob("*.json"):
        record = read_record(path, path.stem)
        if record is None:
            continue
        path.write_bytes(edit(record).to_json(path.stem))
        n += 1
    return n


@pytest.mark.slow
def test_records_edited_with_a_matching_check_publish_what_a_clean_build_does(make_source, tmp_path, run_cli,
                                                                               render_cache):
    source = make_source()
    drawing(source, "X-2", REPAIRED)
    drawing(source, "X-3", UNSIZED)
    out = tmp_path / "site"
    assert run_cli("build", source, "--out", out, "-q").exit_code == 0
    edits = {
        "v2": lambda r: RenderRecord(r.png, r.safe_svg, ("<b>an edited note</b>",)),
        "v3": lambda r: RenderRecord(  # a reference the drawing does not hold
            r.png, r.safe_svg, ("1 external reference(s) refused and drawn as nothing: https://evil.example/x",)),
        "v4": lambda r: RenderRecord(r.png, r.safe_svg, ()),  # its notes dropped
    }
    for label, edit in edits.items():
        assert rewrite_records(render_cache, edit) >= 3, label
        result = run_cli("build", source, "--out", out, "--version", label, "-q")
        assert result.exit_code == 0, result.output
        clean = run_cli("build", source, "--out", tmp_path / "clean", "--version", label, "--no-cache", "-q")
        assert clean.exit_code == 0, clean.output
        assert files_of(out / label) == files_of(tmp_path / "clean" / label), label
        assert verify_version(out / label).ok
        published = b"".join(p.read_bytes() for p in (out / label).rglob("*") if p.is_file())
        assert b"an edited note" not in published and b"evil.example" not in published, label
        assert b"removed 1 repeated attribute(s) (fill)" in published, label  # made again from the SVG
        assert b"the SVG gives no size" in published, label


def embedded() -> bytes:
    png = base64.b64encode(svg._empty_png()).decode()
    return ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" '
            f'height="30"><image xlink:href="data:image/png;base64,{png}" width="9" height="9"/></svg>').encode()


def test_a_kept_render_gives_the_notes_the_renderer_gave(tmp_path: Path):
    drawn = (REPAIRED.encode(), UNSIZED.encode(), EXTERNAL.encode(), embedded(), svg_for("a").encode())
    items = {sha256(d): d for d in drawn}
    fresh = render_and_keep(items, SETTINGS, RenderCache(tmp_path / "cache"), processes=1)
    assert any("external reference(s) refused" in n for n in fresh[sha256(EXTERNAL.encode())].notes)
    assert any("embedded data: image(s) decoded" in n for n in fresh[sha256(embedded())].notes)
    again = RenderCache(tmp_path / "cache")
    for sha, data in items.items():
        kept = again.get(sha, SETTINGS, lambda: data)
        assert kept == fresh[sha]  # kept, with the renderer's own notes


def test_a_note_in_no_shape_the_renderer_writes_is_not_kept(tmp_path: Path):
    data = svg_for("a").encode()
    cache = RenderCache(tmp_path / "cache")
    cache.put(Render(sha256(data), None, None, None, None, ("not rendered: ValueError: whatever cairo said",)),
              SETTINGS, data)
    assert cache.get(sha256(data), SETTINGS, lambda: data) is None  # drawn again by the next build


def test_the_shapes_of_the_notes_drawing_adds():
    data = EXTERNAL.encode()
    assert drawn_notes_hold((svg.timeout_note(10.0),), data, SETTINGS)
    assert not drawn_notes_hold((svg.timeout_note(99.0),), data, SETTINGS)
    assert drawn_notes_hold(("2 embedded data: image(s) decoded and drawn: PNG 9×9, JPEG 3×4",), data, SETTINGS)
    assert not drawn_notes_hold(("2 embedded data: image(s) decoded and drawn: <script>",), data, SETTINGS)
    assert drawn_notes_hold((svg.refused_note(["https://example.org/a.png"] * 2),), data, SETTINGS)
    assert not drawn_notes_hold((svg.refused_note(["https://example.org/b.png"]),), data, SETTINGS)
    two = b'<svg><image href="a, b"/><image href="c"/></svg>'
    assert drawn_notes_hold((svg.refused_note(["a, b", "c"]),), two, SETTINGS)
    assert not drawn_notes_hold((svg.refused_note(["a, b", "d"]),), two, SETTINGS)
    assert not drawn_notes_hold(("anything else",), data, SETTINGS)
    assert drawn_notes_hold((svg.ENDLESS,), data, SETTINGS)
    assert not drawn_notes_hold(("not rendered: ValueError: <b>what cairo said</b>",), data, SETTINGS)
