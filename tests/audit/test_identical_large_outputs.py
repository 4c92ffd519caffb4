"""Identical outputs behind different requests: a large graded output that comes back
byte for byte is a cached copy whatever the request hashes (a per-call field makes
every body differ); a short answer repeated to different requests is not."""

from __future__ import annotations

import json

from conftest import REQUEST, SVG, default_rows, request_hash, svg_for
from reportgen.audit.identical import LARGE_OUTPUT
from reportgen.audit.stage import audit_source
from reportgen.load.artifacts import (collect_artifacts, drawing_digest, drawing_digests, drawings_and_graded,
                                      graded_outputs)
from reportgen.load.source import load_source
from sitecheck import text

# A drawing well over the threshold: the same 2 KB picture each time.
LARGE_SVG = SVG.replace("</svg>", "".join(f'<rect x="{i}" y="{i}" width="3" height="3" fill="#333"/>'
                                           for i in range(40)) + "</svg>")


def each_its_own_request(make_source):
    """Every call's body differs by a trace id, so no two calls share a request hash."""
    rows = default_rows()
    bodies = []
    for n, row in enumerate(rows):
        body = {**REQUEST, "metadata": {"trace": f"t-{n}"}}
        row["request_hash"] = request_hash(body)
        bodies.append(body)
    source = make_source(rows)
    for body in bodies:
        (source / "experiments/mini/requests" / f"{request_hash(body)[7:]}.json").write_text(json.dumps(body))
    return source


def answer(source, call_id, response, svg=None):
    folder = source / "experiments/mini/artifacts" / call_id
    (folder / "response.txt").write_text(response)
    if svg is None:
        (folder / "image.svg").unlink()
    else:
        (folder / "image.svg").write_text(svg)


def identical(source):
    findings = [f for a in audit_source(load_source(source)) for f in a.findings]
    assert not [f for f in findings if f.code == "request-missing"]
    return [f for f in findings if f.code == "identical-outputs"]


def test_the_drawing_is_large():
    assert len(LARGE_SVG) > 2 * LARGE_OUTPUT and len(SVG) < LARGE_OUTPUT


def test_large_identical_drawings_behind_different_requests_are_flagged(make_source, run_cli, tmp_path):
    source = each_its_own_request(make_source)
    for n, call_id in enumerate(("X-1", "X-2", "X-4")):
        answer(source, call_id, f"Take {n}:\n{LARGE_SVG}", LARGE_SVG)
    (finding,) = identical(source)
    assert finding.services == ("X",) and finding.calls == ("X-1", "X-2", "X-4")
    assert finding.message.startswith(f"X: 3 calls in 1 group got one graded output of at least {LARGE_OUTPUT} "
                                      "bytes, byte for byte, to different requests (for example X-1, X-2, X-4)")
    # The build publishes it, and verify recomputes the same finding from the published files.
    assert run_cli("build", source, "--out", tmp_path / "site", "-q").exit_code == 0
    version = tmp_path / "site/v1"
    (published,) = json.loads(text(version / "data/results.json"))["findings"]
    assert published["code"] == "identical-outputs" and published["message"] == finding.message
    assert run_cli("verify", version).exit_code == 0


def test_large_identical_responses_without_a_drawing_are_flagged(make_source):
    source = each_its_own_request(make_source)
    essay = "The pelican sits on the saddle and pedals. " * 10
    assert len(essay) >= LARGE_OUTPUT
    answer(source, "Y-1", essay)
    answer(source, "Y-3", essay)
    (finding,) = identical(source)
    assert finding.services == ("Y",) and finding.calls == ("Y-1", "Y-3")


def test_short_answers_repeated_to_different_requests_are_not_a_cache(make_source):
    source = each_its_own_request(make_source)
    for call_id in ("X-1", "X-2", "X-3", "X-4"):
        answer(source, call_id, "B\n")
    for call_id in ("Y-1", "Y-3"):
        answer(source, call_id, "42\n")
    assert identical(source) == []


def test_a_small_identical_drawing_behind_different_requests_is_not_flagged(make_source):
    source = each_its_own_request(make_source)
    for n, call_id in enumerate(("X-1", "X-2")):
        answer(source, call_id, f"Take {n}:\n{SVG}", SVG)
    assert identical(source) == []


def test_one_large_output_across_services_is_flagged_per_service_only(make_source):
    """The rule is about one service's calls: X and Y each drawing it once is not a repeat."""
    source = each_its_own_request(make_source)
    answer(source, "X-1", LARGE_SVG, LARGE_SVG)
    answer(source, "Y-1", LARGE_SVG, LARGE_SVG)
    assert identical(source) == []


def test_drawings_and_graded_agree_with_their_separate_forms(make_source):
    source = make_source()
    answer(source, "X-1", "no drawing here, only prose\n")
    run = load_source(source).runs[0]
    artifacts = collect_artifacts(run)
    drawings, graded = drawings_and_graded(artifacts)
    assert drawings == drawing_digests(artifacts) and graded == graded_outputs(artifacts)
    assert "X-1" in graded and "X-1" not in drawings
    assert graded["X-3"] == (drawing_digest(svg_for("X-3").encode()), len(svg_for("X-3").strip()))
