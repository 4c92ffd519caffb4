"""Raster images embedded in a model's SVG as ``data:`` URIs, decoded only within limits.

A ``data:`` image needs no file or network access, and real model drawings use them, so
the renderer draws them. But its bytes are as untrusted as the SVG: a few kilobytes of
PNG, GIF or JPEG can declare billions of pixels. So each image's dimensions are read
from its own header, by the small parsers below, before CairoSVG (and the Pillow it
uses for GIF and JPEG) decodes anything, and a render whose images exceed a limit is
refused with a note naming the limit. Only PNG, JPEG and GIF are accepted: an embedded
SVG could itself reference files or URLs.
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib

# One image: far more than a 512 px wide render can show (its largest output is 1 megapixel),
# small enough that decoding it (Pillow's copy, the PNG it re-encodes, cairo's 4 bytes a
# pixel) stays a few tens of MB, well inside a render worker's memory limit.
MAX_IMAGE_BYTES = 4_000_000
MAX_IMAGE_PIXELS = 4_000_000
# One drawing: CairoSVG decodes an image again for each <use> of it, so the limits also
# apply to the sum over every image it decodes in one render.
MAX_TOTAL_BYTES = 16_000_000
MAX_TOTAL_PIXELS = 16_000_000

MEDIA_TYPES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF"}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# JPEG frame headers (SOFn) that carry the image's size; C4, C8 and CC are other markers.
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# JPEG markers that stand alone, with no length field: TEM and the restart markers.
_JPEG_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})


class EmbeddedImageRefused(Exception):
    """An embedded image that is not drawn; the message is shown on the call page."""


def _megabytes(count: int) -> str:
    return f"{count / 1_000_000:.3g} MB"


def _megapixels(count: int) -> str:
    return f"{count / 1_000_000:.3g} megapixels"


def decode_data_uri(url: str) -> tuple[str, bytes]:
    """The image format and decoded bytes of a base64 ``data:`` URI of PNG, JPEG or GIF."""
    header, comma, payload = url[len("data:"):].partition(",")
    if not comma:
        raise EmbeddedImageRefused("an embedded data: URI is malformed (no comma before its data)")
    params = [part.strip() for part in header.split(";")]
    media = params[0].lower()
    if media not in MEDIA_TYPES:
        shown = media[:40] or "text/plain (none given)"
        raise EmbeddedImageRefused(f"an embedded data: URI of type {shown} is refused: "
                                   "only PNG, JPEG and GIF images are decoded")
    if len(params) < 2 or params[-1].lower() != "base64":
        raise EmbeddedImageRefused(f"an embedded {media} data: URI is not base64-encoded")
    try:
        compact = b"".join(payload.encode("ascii").split())  # attribute values may wrap lines
    except UnicodeEncodeError:
        raise EmbeddedImageRefused(f"an embedded {media} data: URI holds characters that are not base64") from None
    # Checked before decoding: 4 base64 characters carry 3 bytes.
    if len(compact) // 4 * 3 > MAX_IMAGE_BYTES + 3:
        raise EmbeddedImageRefused(f"an embedded {MEDIA_TYPES[media]} image is about "
                                   f"{_megabytes(len(compact) // 4 * 3)} (limit {_megabytes(MAX_IMAGE_BYTES)} per image)")
    if b"=" not in compact:
        compact += b"=" * (-len(compact) % 4)  # some encoders leave the padding out
    try:
        data = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise EmbeddedImageRefused(f"an embedded {media} data: URI is not valid base64") from None
    return MEDIA_TYPES[media], data


def image_size(kind: str, data: bytes) -> tuple[int, int]:
    """Width and height from the image's own header, without decoding its pixels."""
    if kind == "PNG":
        size = png_size(data)
    elif kind == "GIF":
        size = gif_size(data)
    else:
        size = jpeg_size(data)
    if size is None:
        raise EmbeddedImageRefused(f"an embedded image declared as {kind} has no valid {kind} header")
    if size[0] <= 0 or size[1] <= 0:
        raise EmbeddedImageRefused(f"an embedded {kind} image declares no pixels ({size[0]}×{size[1]})")
    return size


def png_size(data: bytes) -> tuple[int, int] | None:
    """From the IHDR chunk, which the PNG format requires first, checked by its CRC."""
    if len(data) < 33 or not data.startswith(PNG_SIGNATURE):
        return None
    length, kind = struct.unpack_from(">I4s", data, 8)
    (crc,) = struct.unpack_from(">I", data, 29)
    if length != 13 or kind != b"IHDR" or zlib.crc32(data[12:29]) != crc:
        return None
    width, height = struct.unpack_from(">II", data, 16)
    return width, height


def gif_size(data: bytes) -> tuple[int, int] | None:
    """The logical screen, grown to hold every frame: Pillow enlarges the canvas to fit
    a frame that lies outside it, so a small screen alone bounds nothing."""
    if len(data) < 13 or data[:6] not in (b"GIF87a", b"GIF89a"):
        return None
    width, height, flags = struct.unpack_from("<HHB", data, 6)
    pos = 13 + _color_table_size(flags)
    frames = 0
    while pos < len(data) and data[pos] != 0x3B:  # 0x3B: the trailer
        if data[pos] == 0x21:  # an extension: label, then data sub-blocks
            pos = _skip_sub_blocks(data, pos + 2)
        elif data[pos] == 0x2C and pos + 10 <= len(data):  # an image descriptor
            left, top, frame_w, frame_h, frame_flags = struct.unpack_from("<HHHHB", data, pos + 1)
            width, height = max(width, left + frame_w), max(height, top + frame_h)
            frames += 1
            # After the descriptor: a local color table, the LZW code size, the data.
            pos = _skip_sub_blocks(data, pos + 10 + _color_table_size(frame_flags) + 1)
        else:
            return None
    return (width, height) if frames else None


def _color_table_size(flags: int) -> int:
    return 3 << ((flags & 7) + 1) if flags & 0x80 else 0


def _skip_sub_blocks(data: bytes, pos: int) -> int:
    """The position after a chain of GIF data sub-blocks (each led by its length, the
    chain ended by a zero length)."""
    while pos < len(data):
        size = data[pos]
        pos += 1 + size
        if size == 0:
            break
    return pos


def jpeg_size(data: bytes) -> tuple[int, int] | None:
    """From the frame headers (SOFn) met before the first scan; the largest counts, as
    a decoder may take any of them."""
    if not data.startswith(b"\xff\xd8"):
        return None
    pos, best = 2, None
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # a fill byte before the marker
            pos += 1
            continue
        if marker in _JPEG_STANDALONE:
            pos += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image, or the first scan: no header follows
            break
        (length,) = struct.unpack_from(">H", data, pos + 2)
        if length < 2:
            return None
        if marker in _JPEG_FRAMES:
            if length < 8 or pos + 9 > len(data):
                return None
            height, width = struct.unpack_from(">HH", data, pos + 5)
            if best is None or width * height > best[0] * best[1]:
                best = (width, height)
        pos += 2 + length
    return best


class EmbeddedImages:
    """The data: images of one render: decoded within the limits, and listed for its note."""

    def __init__(self) -> None:
        self.drawn: list[str] = []
        self.total_bytes = 0
        self.total_pixels = 0

    def fetch(self, url: str, resource_type: str) -> bytes:
        # CairoSVG asks for "image/*" only for <image>; other uses (<use>, style sheets)
        # would parse the bytes as SVG or CSS.
        if resource_type != "image/*":
            raise EmbeddedImageRefused(f"an embedded data: URI is refused where {resource_type[:40]} is read; "
                                       "only <image> may embed PNG, JPEG or GIF")
        kind, data = decode_data_uri(url)
        if len(data) > MAX_IMAGE_BYTES:
            raise EmbeddedImageRefused(f"an embedded {kind} image is {_megabytes(len(data))} "
                                       f"(limit {_megabytes(MAX_IMAGE_BYTES)} per image)")
        width, height = image_size(kind, data)
        if width * height > MAX_IMAGE_PIXELS:
            raise EmbeddedImageRefused(f"an embedded {kind} image is {width}×{height} pixels "
                                       f"(limit {_megapixels(MAX_IMAGE_PIXELS)} per image)")
        if kind != "PNG" and b"<svg" in data:
            # CairoSVG parses any non-PNG image holding "<svg" as an SVG document.
            raise EmbeddedImageRefused(f"an embedded {kind} image holds SVG text")
        self.total_bytes += len(data)
        self.total_pixels += width * height
        if self.total_bytes > MAX_TOTAL_BYTES or self.total_pixels > MAX_TOTAL_PIXELS:
            raise EmbeddedImageRefused(f"the embedded images exceed {_megabytes(MAX_TOTAL_BYTES)} or "
                                       f"{_megapixels(MAX_TOTAL_PIXELS)} in all (limits per drawing)")
        self.drawn.append(f"{kind} {width}×{height}")
        return data

    def note(self) -> str | None:
        if not self.drawn:
            return None
        kinds = ", ".join(dict.fromkeys(self.drawn))
        return f"{len(self.drawn)} embedded data: image(s) decoded and drawn: {kinds}"
