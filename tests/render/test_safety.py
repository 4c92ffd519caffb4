"""Untrusted input never harms the site, the reader or the evaluator."""

from __future__ import annotations

import socket
from pathlib import Path

import markupsafe
from markupsafe import Markup

from conftest import default_rows
from reportgen.render import escaping
from reportgen.render import theme as render
from reportgen.model.artifacts import RenderSettings
from reportgen.render.svg import render_one
from sitecheck import call_section, parse, sheet_of

SETTINGS = RenderSettings("CairoSVG", 64, 256, 5.0, (40.0, 30.0))
HOSTILE_TEXT = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def test_model_text_and_log_fields_are_escaped(make_source, run_cli, tmp_path):
    rows = default_rows()
    rows[0]["grade_reason"] = '"><script>alert(1)</script>'
    rows[0]["returned_model"] = "m-1<b onmouseover=alert(1)>"
    source = make_source(rows)
    (source / "experiments/mini/artifacts/X-1/response.txt").write_text(f"Sure! {HOSTILE_TEXT}\n")
    result = run_cli("build", source, "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    page = sheet_of(tmp_path / "site/v1", "mini", "X-1")
    body = call_section(tmp_path / "site/v1", "mini", "X-1")
    # In element content only &, < and > need escaping (quotes only in attributes).
    assert '&lt;script&gt;alert("x")&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;' in body
    assert "&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "m-1&lt;b onmouseover=alert(1)&gt;" in body
    parsed = parse(page)
    assert "script" not in parsed.tags and "b" not in parsed.tags
    assert all(not str(img.get("src")).startswith("x") for img in parsed.images)


def test_hostile_svg_is_published_inert(make_source, run_cli, tmp_path):
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30" onload="alert(1)">'
           '<script>alert(2)</script><rect width="40" height="30" fill="red" onclick="alert(3)"/>'
           '<foreignObject><p>hi</p></foreignObject></svg>')
    source = make_source()
    (source / "experiments/mini/artifacts/X-1/image.svg").write_text(svg)
    assert run_cli("build", source, "--out", tmp_path / "site", "-q").exit_code == 0
    artifacts = tmp_path / "site/store"
    assert list(artifacts.glob("*.svg"))
    for published in artifacts.glob("*.svg"):
        body = published.read_text()
        assert "script" not in body and "onload" not in body and "onclick" not in body
        assert "foreignObject" not in body
    # The raw SVG is kept, as text only.
    raw = [p for p in artifacts.glob("*.txt") if "alert(2)" in p.read_text()]
    assert raw


def test_render_refuses_local_files(tmp_path):
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"not for publication")
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
           f'width="40" height="30"><image xlink:href="file://{secret}" width="40" height="30"/></svg>').encode()
    result = render_one(svg, SETTINGS)
    # The drawing renders; the reference is drawn as nothing and named on the call page.
    assert result.png is not None
    assert result.notes[-1] == f"1 external reference(s) refused and drawn as nothing: file://{secret}"
    assert b"not for publication" not in result.png


def test_render_never_connects_to_a_loopback_port():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.settimeout(0.5)
        port = server.getsockname()[1]
        svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30">'
               f'<image href="http://127.0.0.1:{port}/x.png" width="40" height="30"/>'
               f'<rect width="4" height="4" fill="url(http://127.0.0.1:{port}/p)"/></svg>').encode()
        result = render_one(svg, SETTINGS)
        try:
            connection, _ = server.accept()
        except socket.timeout:
            connection = None
        assert connection is None, "the renderer opened a connection"
    assert "external reference(s) refused and drawn as nothing" in result.notes[-1]


def test_entities_are_refused_before_expansion():
    svg = (b'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
           b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><text>&b;</text></svg>')
    result = render_one(svg, SETTINGS)
    assert result.png is None and "DTD or entities" in result.notes[-1]


def test_oversized_drawing_is_bounded():
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="200000"></svg>'
    result = render_one(svg, SETTINGS)
    assert result.png is None and "limit 256" in result.notes[-1]


def test_sizeless_svg_renders_in_the_task_viewport():
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><rect width="10" height="10"/></svg>'
    result = render_one(svg, SETTINGS)
    assert result.png is not None
    assert "rendered in the task's viewport 40\u00d730" in result.notes[0]


def test_missing_xlink_namespace_is_a_recorded_repair():
    svg = (b'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"><defs><rect id="r" '
           b'width="4" height="4"/></defs><use xlink:href="#r"/></svg>')
    result = render_one(svg, SETTINGS)
    assert result.png is not None
    assert result.notes[0].startswith("repaired: declared the missing xlink namespace (original sha256 ")


def test_empty_output_is_a_note():
    assert render_one(b"", SETTINGS).notes == ("not rendered: the SVG is empty",)


def test_render_time_budget(monkeypatch):
    # A fan-out of <use> references burns CPU in the renderer (6**6 = 46,656 uses, under
    # CairoSVG's own limit on referenced elements): the budget stops it first.
    levels = ['<rect id="l0" width="1" height="1"/>']
    for i in range(1, 7):
        uses = "".join(f'<use xlink:href="#l{i - 1}" x="{k}"/>' for k in range(6))
        levels.append(f'<g id="l{i}">{uses}</g>')
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
           f'width="40" height="30"><defs>{"".join(levels)}</defs><use xlink:href="#l6"/></svg>').encode()
    quick = RenderSettings("CairoSVG", 64, 256, 0.2, (40.0, 30.0))
    result = render_one(svg, quick)
    assert result.png is None
    assert "did not finish in 0.2 s" in result.notes[-1]


class _Safe:
    def __html__(self) -> str:
        return "<b>already safe</b>"


class _Text(str):
    pass


ESCAPE_CASES = ["", "plain", "<script>alert('x')</script>", 'a "quoted" & <tagged> \'word\'', "ünïcödé ✓ <",
                Markup("<em>markup</em>"), Markup("&amp; <b>"), _Safe(), _Text("<i>sub</i>"), 42, 3.5, None, True,
                b"<bytes>", ("<tuple>",)]


def test_the_page_escaper_is_markupsafes():
    for value in ESCAPE_CASES:
        ours, theirs = escaping.escape(value), markupsafe.escape(value)
        assert type(ours) is Markup and ours == theirs, value


def test_templates_escape_through_it():
    env = render.theme_environment(Path("."), "default")
    template = env.from_string("{{ text }}|{{ safe }}|{{ html }}|{{ number }}")
    if escaping._escape_inner is not None:  # markupsafe 2's own escape is C already
        assert template.root_render_func.__globals__["escape"] is escaping.escape
    out = template.render(text="<a href='x'>&</a>", safe=Markup("<br>"), html=_Safe(), number=7)
    assert out == "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;|<br>|<b>already safe</b>|7"


def test_templates_read_globals_from_a_plain_dict():
    # jinja2's default (a ChainMap over the environment's globals) is copied key by key
    # at every render; the page templates hold a dict with the same globals instead.
    env = render.theme_environment(Path("."), "default")
    template = env.get_template("sheet.html")
    assert type(template.globals) is dict
    assert template.globals == dict(env.globals)
    page = env.from_string("{{ csp }}|{{ status_labels['ok'] }}|{{ milliseconds(1500) }}").render()
    assert page.startswith(str(markupsafe.escape(render.CSP)) + "|")
    assert page.endswith(f"|{render.STATUS_LABELS['ok']}|{render.present.milliseconds(1500)}")
