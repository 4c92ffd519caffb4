"""Model SVGs that embed data: images, or sit inside prose, or repeat an attribute.

Embedded PNG, GIF and JPEG images are drawn, within limits read from their own headers;
every other reference (files, URLs, embedded SVG) stays refused. A drawing wrapped in
text or with a repeated attribute is repaired, and the repair is named on the call page
beside the sha256 of what the model returned.
"""

from __future__ import annotations

import base64
import hashlib
import io
import struct
import zlib

import pytest

from reportgen.model.artifacts import RenderSettings
from reportgen.render import embedded_images
from reportgen.render.embedded_images import gif_size, jpeg_size, png_size
from reportgen.render.svg import render_one
from reportgen.render.svg_repair import drop_duplicate_attributes, prepare_svg, svg_element_span
from sitecheck import call_section, parse_text

SETTINGS = RenderSettings("CairoSVG", 64, 256, 5.0, (40.0, 30.0))
OPEN = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="30">'
BLUE, RED, GREEN = (0, 0, 255), (255, 0, 0), (0, 128, 0)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def make_png(width: int, height: int, rgb: tuple[int, int, int], rows: int | None = None) -> bytes:
    """An 8-bit RGB PNG of one colour; ``rows`` < height leaves the pixel data short
    (a header that claims more than the file holds)."""
    raw = b"".join(b"\0" + bytes(rgb) * width for _ in range(height if rows is None else rows))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw))
            + _chunk(b"IEND", b""))


def make_gif(rgb: tuple[int, int, int], screen: tuple[int, int] = (1, 1), frame: tuple[int, int] = (1, 1),
             comment: bytes = b"") -> bytes:
    """A GIF89a whose one frame is a single pixel of colour 0 (2-colour global table).
    ``frame`` is what the image descriptor declares; ``comment`` adds a comment extension."""
    head = b"GIF89a" + struct.pack("<HHBBB", *screen, 0x80, 0, 0) + bytes(rgb) + b"\0\0\0"
    extension = b"\x21\xfe" + bytes([len(comment)]) + comment + b"\0" if comment else b""
    # LZW, minimum code size 2: clear (4), index 0, end (5), packed from the low bit up.
    image = b"\x2c" + struct.pack("<HHHHB", 0, 0, *frame, 0) + b"\x02\x02\x44\x01\x00"
    return head + extension + image + b"\x3b"


def jpeg_header(width: int, height: int) -> bytes:
    """The markers of a baseline JPEG up to its first scan: SOI, APP0 (JFIF), fill
    bytes, SOF0 with three components, then SOS. Enough to read the size from."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, height, width, 3) + b"\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    sos = b"\xff\xda" + struct.pack(">H", 12) + b"\x03\x01\x00\x02\x11\x03\x11\x00\x3f\x00"
    return b"\xff\xd8" + app0 + b"\xff\xff" + sof0 + sos + b"\x00" * 16 + b"\xff\xd9"


def data_uri(media: str, data: bytes) -> str:
    return f"data:{media};base64,{base64.b64encode(data).decode()}"


def image_svg(href: str, extra: str = "") -> bytes:
    return f'{OPEN}<image href="{href}" width="40" height="30"/>{extra}</svg>'.encode()


def pixel(png: bytes, x: int, y: int) -> tuple[int, int, int]:
    import cairocffi

    surface = cairocffi.ImageSurface.create_from_png(io.BytesIO(png))
    offset = y * surface.get_stride() + 4 * x
    blue, green, red = bytes(surface.get_data()[offset:offset + 3])  # ARGB32, little-endian
    return red, green, blue


def close_to(actual: tuple[int, int, int], expected: tuple[int, int, int], tolerance: int = 12) -> bool:
    return all(abs(a - e) <= tolerance for a, e in zip(actual, expected))


# Embedded images -------------------------------------------------------------------------

def test_embedded_png_is_drawn():
    result = render_one(image_svg(data_uri("image/png", make_png(2, 2, BLUE))), SETTINGS)
    assert result.png is not None, result.notes
    assert close_to(pixel(result.png, 32, 24), BLUE)
    assert result.notes == ("1 embedded data: image(s) decoded and drawn: PNG 2×2",)


def test_embedded_gif_is_drawn():
    result = render_one(image_svg(data_uri("image/gif", make_gif(RED))), SETTINGS)
    assert result.png is not None, result.notes
    assert close_to(pixel(result.png, 32, 24), RED)
    assert result.notes == ("1 embedded data: image(s) decoded and drawn: GIF 1×1",)


def test_embedded_jpeg_is_drawn():
    image = pytest.importorskip("PIL.Image")  # only to make a real JPEG; reportgen reads the header itself
    buffer = io.BytesIO()
    image.new("RGB", (8, 8), GREEN).save(buffer, "JPEG")
    assert jpeg_size(buffer.getvalue()) == (8, 8)
    result = render_one(image_svg(data_uri("image/jpeg", buffer.getvalue())), SETTINGS)
    assert result.png is not None, result.notes
    assert close_to(pixel(result.png, 32, 24), GREEN)
    assert result.notes == ("1 embedded data: image(s) decoded and drawn: JPEG 8×8",)


def test_base64_wrapped_over_lines_and_unpadded_is_decoded():
    encoded = base64.b64encode(make_png(3, 1, BLUE)).decode().rstrip("=")
    wrapped = "\n".join(encoded[i:i + 20] for i in range(0, len(encoded), 20))
    result = render_one(image_svg(f"data:image/png;base64,\n{wrapped}"), SETTINGS)
    assert result.png is not None and close_to(pixel(result.png, 32, 24), BLUE), result.notes


def test_headers_are_read_without_decoding():
    assert png_size(make_png(7, 5, BLUE)) == (7, 5)
    assert gif_size(make_gif(RED)) == (1, 1)
    assert jpeg_size(jpeg_header(640, 480)) == (640, 480)
    # A GIF frame outside its logical screen grows the canvas a decoder allocates.
    assert gif_size(make_gif(RED, screen=(1, 1), frame=(300, 200))) == (300, 200)
    broken_crc = bytearray(make_png(7, 5, BLUE))
    broken_crc[20] ^= 1
    for bad in (b"", b"\x89PNG\r\n\x1a\n", bytes(broken_crc)):
        assert png_size(bad) is None
    for bad in (b"GIF89a", b"GIF90a" + make_gif(RED)[6:], make_gif(RED)[:-9] + b"\x99"):
        assert gif_size(bad) is None
    for bad in (b"\xff\xd8", b"\xff\xd8\x00\x00\x00\x00", b"\xff\xd8\xff\xda\x00\x02"):
        assert jpeg_size(bad) is None


@pytest.mark.parametrize("media,data,expected", [
    ("image/png", make_png(3000, 3000, BLUE, rows=1),
     "an embedded PNG image is 3000×3000 pixels (limit 4 megapixels per image)"),
    ("image/jpeg", jpeg_header(5000, 5000), "an embedded JPEG image is 5000×5000 pixels (limit 4 megapixels per image)"),
    ("image/gif", make_gif(RED, screen=(1, 1), frame=(4000, 4000)),
     "an embedded GIF image is 4000×4000 pixels (limit 4 megapixels per image)"),
])
def test_too_many_pixels_is_refused_before_decoding(media, data, expected):
    result = render_one(image_svg(data_uri(media, data)), SETTINGS)
    assert result.png is None
    assert result.notes[-1] == f"not rendered: {expected}"


def test_too_many_decoded_bytes_is_refused(monkeypatch):
    monkeypatch.setattr(embedded_images, "MAX_IMAGE_BYTES", 1000)
    small = make_png(2, 2, BLUE)
    assert render_one(image_svg(data_uri("image/png", small)), SETTINGS).png is not None
    padded = small[:-12] + _chunk(b"tEXt", b"c\0" + b"x" * 1100) + small[-12:]  # same image, more bytes
    result = render_one(image_svg(data_uri("image/png", padded)), SETTINGS)
    assert result.png is None and result.notes[-1].endswith("(limit 0.001 MB per image)")
    # A payload that cannot fit is refused before it is decoded at all.
    huge = "data:image/png;base64," + "A" * 8000
    result = render_one(image_svg(huge), SETTINGS)
    assert result.notes[-1] == "not rendered: an embedded PNG image is about 0.006 MB (limit 0.001 MB per image)"


def test_images_of_one_drawing_are_limited_in_all(monkeypatch):
    monkeypatch.setattr(embedded_images, "MAX_TOTAL_PIXELS", 1000)
    href = data_uri("image/png", make_png(20, 20, BLUE))  # 400 pixels: three are too many
    once = render_one(image_svg(href), SETTINGS)
    assert once.png is not None
    thrice = render_one(image_svg(href, f'<image href="{href}" width="4" height="4"/>' * 2), SETTINGS)
    assert thrice.png is None
    assert "exceed 16 MB or 0.001 megapixels in all (limits per drawing)" in thrice.notes[-1]


@pytest.mark.parametrize("href,expected", [
    (data_uri("image/svg+xml", OPEN.encode() + b"</svg>"),
     "an embedded data: URI of type image/svg+xml is refused: only PNG, JPEG and GIF images are decoded"),
    (f"data:image/svg+xml,{OPEN}</svg>".replace('"', "'").replace("<", "&lt;"),
     "an embedded data: URI of type image/svg+xml is refused"),
    ("data:text/html;base64,PGI+", "an embedded data: URI of type text/html is refused"),
    ("data:;base64,AAAA", "an embedded data: URI of type text/plain (none given) is refused"),
    ("data:image/png,rawbytes", "an embedded image/png data: URI is not base64-encoded"),
    ("data:image/png;base64,!!!!", "an embedded image/png data: URI is not valid base64"),
    ("data:image/png;base64", "an embedded data: URI is malformed (no comma before its data)"),
    (data_uri("image/png", make_gif(RED)), "an embedded image declared as PNG has no valid PNG header"),
    (data_uri("image/gif", make_gif(RED, comment=b"<svg onload='x'>")), "an embedded GIF image holds SVG text"),
    (data_uri("image/gif", make_gif(RED, screen=(0, 0), frame=(0, 0))), "an embedded GIF image declares no pixels"),
])
def test_other_data_uris_are_refused(href, expected):
    result = render_one(image_svg(href), SETTINGS)
    assert result.png is None
    assert result.notes[-1].startswith(f"not rendered: {expected}")


def test_data_uri_outside_an_image_is_refused():
    svg = f'{OPEN}<use xlink:href="{data_uri("image/png", make_png(2, 2, BLUE))}"/></svg>'.encode()
    result = render_one(svg, SETTINGS)
    assert result.png is None
    assert "an embedded data: URI is refused where image/svg+xml is read" in result.notes[-1]


def test_files_and_urls_stay_refused_beside_embedded_images(tmp_path):
    secret = tmp_path / "secret.png"
    secret.write_bytes(make_png(2, 2, RED))
    refs = ["http://127.0.0.1:9/a.png", "https://example.invalid/b.png", f"file://{secret}", "c.png",
            "//example.invalid/d.png", str(secret)]
    extra = "".join(f'<image href="{r}" width="40" height="30"/>' for r in refs)
    result = render_one(image_svg(data_uri("image/png", make_png(2, 2, BLUE)), extra), SETTINGS)
    assert result.png is not None
    assert close_to(pixel(result.png, 32, 24), BLUE)  # every reference was drawn as nothing over it
    assert result.notes[-1].startswith(f"{len(refs)} external reference(s) refused and drawn as nothing: ")
    for ref in ("http://127.0.0.1:9/a.png", "https://example.invalid/b.png", f"file://{secret}", "c.png",
                "example.invalid/d.png"):
        assert ref in result.notes[-1]


# A drawing inside prose, a repeated attribute ---------------------------------------------

DRAWING = f'{OPEN}<rect width="40" height="30" fill="#ff0000"/></svg>'


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_svg_inside_prose_renders_and_the_extraction_is_recorded():
    data = f"Here is the drawing:\n```svg\n{DRAWING}\n```\nI hope you like it! <3".encode()
    result = render_one(data, SETTINGS)
    assert result.png is not None, result.notes
    assert close_to(pixel(result.png, 32, 24), RED)
    start = data.index(b"<svg")
    end = data.index(b"</svg>") + len(b"</svg>")
    assert result.svg_sha256 == sha(data)
    assert result.notes == ((f"repaired: rendered only the <svg> element, bytes {start}–{end} of {len(data)}, "
                             f"without the text around it (original sha256 {sha(data)})"),)
    assert result.safe_svg is not None and b"I hope" not in result.safe_svg and b"Here is" not in result.safe_svg


@pytest.mark.parametrize("data,colour", [
    # A reasoning block before the drawing (it parses as the document's root element).
    (f"<think>A red box. Use <b>fill</b>.</think>\n{DRAWING}", RED),
    # Two drawings: the first one, not the prose between them.
    (f"First:\n{DRAWING}\nSecond:\n{DRAWING.replace('#ff0000', '#0000ff')}\nDone.", RED),
    # A nested <svg> element, and a closing tag quoted in the prose after it.
    ((f"Sure.\n{OPEN}<svg width='40' height='30'><rect width='40' height='30' fill='#0000ff'/></svg><svg/></svg>"
      "\nEach drawing ends with </svg>."), BLUE),
    # The drawing wrapped in an HTML page.
    (f"<html><body>{DRAWING}</body></html>", RED),
    # Text before the drawing that starts like markup, or follows an XML declaration.
    (f"<3 Here it is:\n{DRAWING}", RED),
    (f'<?xml version="1.0"?>\nHere it is:\n{DRAWING}', RED),
])
def test_the_drawing_is_found_in_what_surrounds_it(data, colour):
    result = render_one(data.encode(), SETTINGS)
    assert result.png is not None, result.notes
    assert close_to(pixel(result.png, 32, 24), colour)
    assert result.notes[0].startswith("repaired: rendered only the <svg> element")


def test_repeated_attribute_is_repaired_keeping_the_first():
    data = (f'{OPEN}<rect width="40" height="30" fill="#ff0000" stroke="none" fill="#0000ff" '
            "fill = '#00ff00'/></svg>").encode()
    result = render_one(data, SETTINGS)
    assert result.png is not None, result.notes
    assert close_to(pixel(result.png, 32, 24), RED)
    assert result.notes == (("repaired: removed 2 repeated attribute(s) (fill), keeping the first of each "
                             f"(original sha256 {sha(data)})"),)


def test_repairs_combine_each_recorded_once():
    data = (b'Okay!\n```xml\n<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30" width="99">'
            b'<defs><rect id="r" width="40" height="30" fill="#0000ff"/></defs><use xlink:href="#r"/></svg>\n```\n'
            b"Note: I used <use>.")
    result = render_one(data, SETTINGS)
    assert result.png is not None, result.notes
    assert close_to(pixel(result.png, 32, 24), BLUE)
    # In the order the parser met the problems: the text before, the <svg> tag, the <use>.
    repairs = ("rendered only the <svg> element", "removed 1 repeated attribute(s) (width)",
               "declared the missing xlink namespace")
    assert len(result.notes) == len(repairs)
    for note, repair in zip(result.notes, repairs):
        assert note.startswith(f"repaired: {repair}") and note.endswith(f"(original sha256 {sha(data)})")


@pytest.mark.parametrize("data,expected", [
    ("Sorry, I can't draw that.", "not rendered: not well-formed XML: syntax error"),
    ("<p>Sorry, I can't draw an <b>svg</b>.</p>", "not rendered: the root element is not <svg>"),
    (f"Here:\n{DRAWING[:-20]}", "not rendered: not well-formed XML"),
    ('Here:\n<!DOCTYPE svg [<!ENTITY a "b">]>' + DRAWING.replace("</svg>", "<text>&a;</text></svg>"),
     "not rendered: not well-formed XML: undefined entity"),
    ('<!DOCTYPE svg [<!ENTITY a "b">]>' + DRAWING + " trailing", "not rendered: refused: the SVG declares a DTD"),
])
def test_what_is_not_a_drawing_stays_unrendered(data, expected):
    result = render_one(data.encode(), SETTINGS)
    assert result.png is None
    assert result.notes[-1].startswith(expected), result.notes


def test_a_clean_drawing_is_not_touched():
    data = f'<?xml version="1.0" encoding="UTF-8"?>\n<!-- by a model -->\n{DRAWING}\n'.encode()
    prepared = prepare_svg(data, sha(data))
    assert prepared.root is not None and prepared.data == data and prepared.notes == ()


def test_element_span_and_attribute_scan():
    assert svg_element_span(b"x <svg/> <svg></svg>") == (2, 8)
    assert svg_element_span(b"<svg><svg/></svg>tail</svg >") == (0, 17)
    assert svg_element_span(b"<svg><!-- <svg> --></svg> more </svg>") == (0, 37)  # count never closes
    assert svg_element_span(b"</svg> <svgx> <svg") is None
    fixed, names = drop_duplicate_attributes(
        b'<!-- <a b="1" b="2"> --><a b="1" c=\'>\' b="2"><![CDATA[<a b="1" b="2">]]></a>')
    assert fixed == b'<!-- <a b="1" b="2"> --><a b="1" c=\'>\'><![CDATA[<a b="1" b="2">]]></a>'
    assert names == ["b"]


# Through a whole build ---------------------------------------------------------------------

def test_call_page_shows_the_repairs_and_the_embedded_image(make_source, run_cli, tmp_path):
    source = make_source()
    png = make_png(2, 2, BLUE)
    drawing = (f'{OPEN}<image href="{data_uri("image/png", png)}" width="40" height="30" width="1"/></svg>')
    data = f"Here is the drawing:\n```svg\n{drawing}\n```\nI hope it helps.".encode()
    (source / "experiments/mini/artifacts/X-1/image.svg").write_bytes(data)
    (source / "experiments/mini/artifacts/X-2/image.svg").write_text(
        image_svg("data:image/svg+xml;base64,PHN2Zy8+").decode())
    result = run_cli("build", source, "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    page = call_section(tmp_path / "site/v1", "mini", "X-1")
    parsed = parse_text(page)
    shown = [img["src"] for img in parsed.images if str(img["src"]).endswith(".png")]
    assert shown, "the drawing should be shown as a PNG"
    assert pixel((tmp_path / "site/store" / shown[0]).read_bytes(), 256, 192) == BLUE
    assert f"without the text around it (original sha256 {sha(data)})" in page
    assert "removed 1 repeated attribute(s) (width), keeping the first of each" in page
    assert "1 embedded data: image(s) decoded and drawn: PNG 2×2" in page
    refused = call_section(tmp_path / "site/v1", "mini", "X-2")
    assert "No picture: not rendered: an embedded data: URI of type image/svg+xml is refused" in refused
