"""The ``identical-outputs`` audit check: one output counted as many independent draws.

It compares calls that sent the same request, by their whole response and by the
drawing that is graded (the ``<svg>`` element, whitespace aside), and says which of the
two was identical."""

from __future__ import annotations

import json
import shutil

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REQUEST, SVG, default_rows, request_hash
from reportgen.audit.stage import audit_source
from reportgen.load.artifacts import drawing_digest
from reportgen.load.source import load_source

DRAWING = ("X: 2 calls in 1 group got identical drawings inside different responses to the same request "
           "(for example X-1, X-2) but are counted as independent draws; what is graded is one drawing, "
           "counted as many")


def identical(source) -> list:
    return [f for a in audit_source(load_source(source)) for f in a.findings if f.code == "identical-outputs"]


def draw_same(source, call_ids=("X-1", "X-2"), svg_file=True, reindent=False) -> None:
    """The calls return one drawing, each wrapped in its own prose."""
    artifacts = source / "experiments/mini/artifacts"
    for n, call_id in enumerate(call_ids):
        svg = SVG.replace("><", ">\n    <") if reindent and n else SVG
        (artifacts / call_id / "response.txt").write_text(f"Answer {n}: here is my pelican.\n{svg}Enjoy!\n")
        if svg_file:
            (artifacts / call_id / "image.svg").write_text(svg)
        else:
            (artifacts / call_id / "image.svg").unlink()


def test_one_drawing_in_different_responses(make_source):
    source = make_source()
    draw_same(source)
    (finding,) = identical(source)
    assert finding.message == DRAWING
    assert (finding.line, finding.field, finding.services) == (3, "artifact_path", ("X",))


def test_a_drawing_extracted_from_the_response_and_reindented(make_source):
    source = make_source()
    draw_same(source, svg_file=False, reindent=True)
    (finding,) = identical(source)
    assert finding.message == DRAWING


def test_byte_identical_responses_are_named_as_such(make_source):
    source = make_source()
    artifacts = source / "experiments/mini/artifacts"
    shutil.rmtree(artifacts / "X-2")
    shutil.copytree(artifacts / "X-1", artifacts / "X-2")
    (finding,) = identical(source)
    assert finding.message == ("X: 2 calls in 1 group got identical responses (byte-identical artifacts) to the "
                               "same request (for example X-1, X-2) but are counted as independent draws")


def test_different_requests_answered_alike_are_not_a_cached_draw(make_source):
    other = {**REQUEST, "messages": [{"role": "user", "content": "Draw a heron riding a bicycle as SVG"}]}
    rows = default_rows()
    rows[1]["request_hash"] = request_hash(other)  # X-2 asked something else
    source = make_source(rows=rows)
    (source / "experiments/mini/requests" / f"{request_hash(other)[7:]}.json").write_text(json.dumps(other))
    artifacts = source / "experiments/mini/artifacts"
    shutil.rmtree(artifacts / "X-2")
    shutil.copytree(artifacts / "X-1", artifacts / "X-2")
    draw_same(source, call_ids=("X-3", "X-4"))  # the same request still counts
    (finding,) = identical(source)
    assert "(for example X-3, X-4)" in finding.message and "X-2" not in finding.message


def test_distinct_drawings_are_not_flagged(make_source):
    source = make_source()
    draw_same(source, call_ids=("X-1",))
    assert identical(source) == []


def test_drawing_digest_ignores_prose_and_layout_only():
    drawing = drawing_digest(SVG.encode())
    assert drawing_digest(b"Sure!\n```svg\n" + SVG.replace("><", ">\n  <").encode() + b"```\nBye") == drawing
    assert drawing_digest(SVG.replace("r=\"9\"", "r=\"8\"").encode()) != drawing


def test_a_built_site_with_one_drawing_verifies(make_source, run_cli, tmp_path):
    source = make_source()
    draw_same(source, svg_file=False)
    assert run_cli("build", source, "--out", tmp_path / "site", "-q").exit_code == 0
    site = tmp_path / "site" / "v1"
    body = json.loads((site / "data/results.json").read_text("utf-8"))
    (finding,) = [f for f in body["findings"] if f["code"] == "identical-outputs"]
    assert finding["message"] == DRAWING
    claim = next(c for c in body["claims"] if c["id"] == "mini.X.first_pass_rate")
    assert finding["id"] in claim["findings"]
    result = run_cli("verify", site)  # recomputed from the published drawings, the same finding
    assert result.exit_code == 0, result.output


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("rs"), st.sampled_from("abc"), st.booleans()), max_size=12))
def test_the_groups_are_the_calls_that_share_request_and_key(items):
    from types import SimpleNamespace

    from reportgen.audit.identical import _same_request_groups

    calls = {f"c{i}": SimpleNamespace(call_id=f"c{i}", request_hash=r, line=i) for i, (r, _, _) in enumerate(items)}
    keys = {f"c{i}": key for i, (_, key, keyed) in enumerate(items) if keyed}
    expected: dict[tuple[str, str], list[str]] = {}
    for cid, key in keys.items():
        expected.setdefault((calls[cid].request_hash, key), []).append(cid)
    got = _same_request_groups(calls, keys)
    assert sorted([c.call_id for c in g] for g in got) == sorted(g for g in expected.values() if len(g) > 1)


def test_a_service_with_one_call_in_a_shared_group_is_counted_in_the_singular():
    """A group holds one call of Y beside two of X: Y's finding counts one call, one group."""
    from types import SimpleNamespace

    from reportgen.audit.identical import _findings

    def call(cid: str, service: str, line: int) -> SimpleNamespace:
        return SimpleNamespace(call_id=cid, service=service, line=line, request_hash="r")

    group = [call("X-1", "X", 2), call("Y-1", "Y", 3), call("X-2", "X", 4)]
    run = SimpleNamespace(log=SimpleNamespace(file="experiments/mini/calls.csv"))
    found = {f.services[0]: f for f in _findings(run, [group], "identical responses", "the same request", "", "s")}
    assert found["Y"].message.startswith("Y: 1 call in 1 group got identical responses to the same request, "
                                         "some shared with other services (for example X-1, Y-1, X-2) "
                                         "but is counted as an independent draw")
    assert found["Y"].calls == ("Y-1",) and found["X"].calls == ("X-1", "X-2")
    assert found["X"].message.startswith("X: 2 calls in 1 group got") and " but are counted" in found["X"].message
