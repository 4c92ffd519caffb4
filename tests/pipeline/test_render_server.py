"""The render server outlives the build's render thread: a process that builds twice (the
API, a test session) renders the second build's drawings too."""

from __future__ import annotations

import json

from reportgen.pipeline.pipeline import build_site


def test_a_second_build_in_one_process_still_renders(make_source, tmp_path):
    source = make_source()
    for n in (1, 2):  # a cache of its own each time: the second build must render again
        build_site(source, tmp_path / f"site{n}", cache=tmp_path / f"cache{n}")
        renders = json.loads((tmp_path / f"site{n}/v1/data/mini/artifacts.json").read_text())
        text = json.dumps(renders)
        assert "crashed" not in text and "not renderable" not in text, text[:400]
        assert list((tmp_path / f"site{n}/store").glob("*.png")), f"build {n} rendered nothing"
