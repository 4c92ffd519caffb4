"""Screenshots of the main page types at a phone's and a desktop's width, for a person to
look at (saved in REPORTGEN_SCREENSHOTS, else a temporary folder), and no page wider than
the screen it is shown on."""

from __future__ import annotations

import struct

import pytest

import pagecheck


@pytest.mark.parametrize("size", list(pagecheck.VIEWPORTS))
@pytest.mark.parametrize("kind", pagecheck.SCREENSHOT_PAGES)
def test_screenshot_and_no_sideways_scrolling(layout, screenshot_dir, kind, size):
    problems = layout(kind, size)
    shot = screenshot_dir / f"{kind}-{size}.png"
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{shot} is not a PNG"
    width, height = struct.unpack(">II", header[16:24])
    scale = pagecheck.VIEWPORTS[size].get("device_scale_factor", 1)
    assert width >= pagecheck.VIEWPORTS[size]["viewport"]["width"] * scale and height > 300, \
        (shot, width, height)
    problems = pagecheck.unexpected(problems, "layout")
    assert problems == [], "\n".join(problems)
