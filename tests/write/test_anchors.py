"""Every in-site #anchor of a version's pages leads to an element of the page it names:
a build whose pages link to an id that is not there publishes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from reportgen.write import anchors, version


def pages(**texts: str) -> dict[str, anchors.PageAnchors]:
    return {rel.replace("__", "/").replace("_html", ".html"): anchors.scan(text.encode()) for rel, text in texts.items()}


def test_links_are_followed_to_the_ids_of_the_pages_they_name():
    site = pages(
        index_html='<a href="claims.html#c-1">c</a> <a href="#top">t</a> <a href="experiments/run/#calls">x</a>',
        claims_html='<h2 id="c-1">c</h2> <a href="experiments/run/index.html#calls">x</a> <a href="#c-1">me</a>',
        experiments__run__index_html='<ul id="calls"></ul><a href="../../claims.html#c-1">back</a>'
                                     '<a href="../../../store/abc.html#call-X">sheet</a>'
                                     '<a href="https://example.org/#x">out</a>',
    )
    assert anchors.broken(site) == []


def test_a_missing_id_or_page_is_named():
    site = pages(
        index_html='<a href="claims.html#c-2">c</a> <a href="gone.html#a">g</a>',
        claims_html='<h2 id="c-1">c</h2><a href="#block%2Fa">b</a><p id="block/a"></p><a href="#nope">n</a>',
    )
    assert anchors.broken(site) == [
        "claims.html: link to #nope: claims.html has no element with this id",
        "index.html: link to claims.html#c-2: claims.html has no element with this id",
        "index.html: link to gone.html#a: no such page in the version",
    ]


@pytest.mark.slow
def test_a_build_with_a_broken_anchor_publishes_nothing(make_source, tmp_path: Path, run_cli, monkeypatch):
    real_add = version.VersionWriter.add

    def add(self, rel: str, data: bytes) -> None:
        if rel == "claims.html":
            data = data.replace(b"</body>", b'<a href="index.html#no-such-part">x</a></body>')
        real_add(self, rel, data)

    monkeypatch.setattr(version.VersionWriter, "add", add)
    out = tmp_path / "site"
    result = run_cli("build", make_source(), "--out", out, "--no-cache", "-q")
    assert result.exit_code == 1, result.output
    assert "claims.html: link to index.html#no-such-part: index.html has no element with this id" in result.output
    assert not (out / "v1").exists() and not list(out.glob(".v1.*"))
