"""Versions, verify, diff and serve: a report readers can re-check and reviewers can compare."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import CONTRACT, ROOT, default_rows
from reportgen.preview import make_server
from sitecheck import broken_links, text, tree_bytes

GOLDEN = Path(__file__).parents[1] / "golden" / "diff"


@pytest.fixture
def built(built_demo_copy):
    """This test's own copy of the session's built demo (site/v1): it may change it."""
    return built_demo_copy


def test_verify_passes_on_a_fresh_build(demo_site, run_cli):
    result = run_cli("verify", demo_site)  # verify only reads: the shared build will do
    assert result.exit_code == 0, result.output
    manifest = json.loads((demo_site / "manifest.json").read_text("utf-8"))
    n_files = len(manifest["files"]) + len(manifest["store"])
    n_claims = len(json.loads((demo_site / "data" / "results.json").read_text("utf-8"))["claims"])
    assert (f"ok: {n_files} files (the version's and the store's it lists) match manifest.json; {n_claims} claims "
            "recomputed from data/ and equal to results.json") in result.output
    assert n_claims > 300  # every design of the demo, paired and longitudinal included


def download(version: Path, into: Path) -> Path:
    """What a reader fetches of one version: its folder, and the store files its manifest
    lists (nothing else of the site)."""
    shutil.copytree(version, into / version.name)
    (into / "store").mkdir()
    for name in json.loads((version / "manifest.json").read_text())["store"]:
        shutil.copyfile(version.parent / "store" / name, into / "store" / name)
    return into / version.name


def test_verify_works_on_a_downloaded_version_folder(demo_site, tmp_path, run_cli):
    alone = download(demo_site, tmp_path / "download")
    assert run_cli("verify", alone).exit_code == 0
    # The store may be kept elsewhere: --store names it.
    (tmp_path / "download" / "store").rename(tmp_path / "shared")
    assert run_cli("verify", alone, "--store", tmp_path / "shared").exit_code == 0
    missing = run_cli("verify", alone)
    assert missing.exit_code == 1
    assert f"listed in manifest.json but missing from {tmp_path / 'download' / 'store'}" in missing.output


def test_verify_catches_a_relabelled_call(built, run_cli):
    log = built / "data/pelican-ab/calls.csv"
    lines = log.read_text().splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if ",A-01," in line)
    lines[index] = lines[index].replace(",true,", ",false,", 1)
    log.write_text("".join(lines))
    result = run_cli("verify", built)
    assert result.exit_code == 1
    assert "mismatch: data/pelican-ab/calls.csv: content differs from manifest.json" in result.output
    assert ("mismatch: claim pelican-ab.A.first_pass_rate: numerator is 16 in results.json, recomputed 15"
            in result.output)


def test_verify_catches_a_changed_png(built, run_cli):
    png = next((built.parent / "store").glob("*.png"))
    data = bytearray(png.read_bytes())
    data[-20] ^= 0xFF
    png.write_bytes(bytes(data))
    result = run_cli("verify", built)
    assert result.exit_code == 1
    assert f"mismatch: store/{png.name}: content differs from manifest.json" in result.output


@pytest.mark.parametrize("kind", ["html", "tar.gz", "json", "txt", "css"])
def test_verify_catches_a_changed_byte_in_any_shared_file(built, run_cli, kind):
    shared = next(p for p in sorted((built.parent / "store").iterdir()) if p.name.endswith(f".{kind}"))
    data = bytearray(shared.read_bytes())
    data[len(data) // 2] ^= 0x01
    shared.write_bytes(bytes(data))
    result = run_cli("verify", built)
    assert result.exit_code == 1
    assert f"mismatch: store/{shared.name}: content differs from manifest.json" in result.output


def test_verify_catches_an_edited_number(built, run_cli):
    results = built / "data/results.json"
    body = json.loads(results.read_text())
    body["claims"][0]["estimate"] = 0.85
    results.write_text(json.dumps(body, indent=1))
    result = run_cli("verify", built)
    assert result.exit_code == 1
    assert "mismatch: data/results.json: content differs from manifest.json" in result.output
    assert "mismatch: claim pelican-ab.A.first_pass_rate: estimate is 0.85 in results.json, recomputed 0.8" in result.output


def test_verify_catches_an_added_file(built, run_cli):
    (built / "extra.html").write_text("<p>not from the build</p>")
    result = run_cli("verify", built)
    assert result.exit_code == 1
    assert "mismatch: extra.html: not listed in manifest.json" in result.output


def test_verify_of_something_else(tmp_path, run_cli):
    result = run_cli("verify", tmp_path)
    assert result.exit_code == 1
    assert f"error: {tmp_path / 'manifest.json'}: not found; is this a version folder built by reportgen" in result.output


def test_newer_version_banner_and_versions_json(built_demo_copy, demo_source, run_cli):
    out = built_demo_copy.parent  # v1 already built (a copy of the session's build)
    assert run_cli("build", demo_source, "--out", out, "--version", "v2", "-q").exit_code == 0
    versions = json.loads(text(out / "versions.json"))
    # Newest first. Both versions have the same built_at (the newest call of the same
    # source), so the label breaks the tie: v2 before v1, and only v2 is "latest".
    assert [v["version"] for v in versions] == ["v2", "v1"]
    assert [v["aliases"] for v in versions] == [["latest"], []]
    css = text(out / "versions.css")
    assert ".version-v1 .newer-version { display: block; }" in css
    assert ".version-v2 .newer-version" not in css
    assert '<body class="version-v1">' in text(out / "v1" / "index.html")
    assert broken_links(out) == []


def mini_site(tmp_path, run_cli, make_source, version, rows=None, contract=CONTRACT, previous=None, **log):
    site = f'title = "Mini report"\nversion = "{version}"\n' + (f'previous = "{previous}"\n' if previous else "")
    source = make_source(rows=rows, contract=contract, site=site, **log)
    result = run_cli("build", source, "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    return tmp_path / "site" / version


def relabelled_rows():
    rows = default_rows()
    rows[6]["qualified"] = "true"  # Y-3: fail -> pass
    return rows


def added_block_rows():
    rows = default_rows()
    for service in ("X", "Y"):
        rows.append({**rows[0], "service": service, "block_id": "3", "call_id": f"{service}-5",
                     "started_at": f"2026-10-01T10:00:{'00' if service == 'X' else '30'}+00:00",
                     "artifact_path": f"artifacts/{service}-5"})
    return rows


DIFF_CASES = {
    "relabelled-call": dict(rows=relabelled_rows()),
    "added-block": dict(rows=added_block_rows(),
                        contract=CONTRACT.replace('blocks = ["1", "2"]', 'blocks = ["1", "2", "3"]')
                        .replace("planned_calls = 4", "planned_calls = 5")),
    "changed-contract": dict(contract=CONTRACT.replace("alpha = 0.05", "alpha = 0.10\nmin_useful_effect = 0.2")),
}


@pytest.mark.parametrize("case", sorted(DIFF_CASES))
def test_diff_golden(case, tmp_path, make_source, run_cli):
    old = mini_site(tmp_path, run_cli, make_source, "v1")
    new = mini_site(tmp_path, run_cli, make_source, "v2", previous="v1", **DIFF_CASES[case])
    result = run_cli("diff", old, new, "--html", tmp_path / "diff-page")
    assert result.exit_code == 0, result.output
    golden = GOLDEN / f"{case}.txt"
    if os.environ.get("REPORTGEN_REGEN_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(result.output)
    assert result.output == golden.read_text()
    # The build wrote the same changes as a page, linked from the newer version.
    page = tmp_path / "site/diff/v1..v2/index.html"
    assert page.is_file() and 'href="../../v1/index.html"' in text(page)
    assert 'href="../diff/v1..v2/index.html"' in text(new / "index.html")
    assert broken_links(tmp_path / "site") == []


@pytest.mark.parametrize("variant", ["jsonl", "counted-blocks", "quoted-newline"])
def test_diff_finds_the_changed_call_whatever_the_log_looks_like(variant, tmp_path, make_source, run_cli):
    """Logs are compared as records (CSV and JSONL), or row by row where the whole log is
    needed (a contract registering only a number of blocks): the same change either way."""
    log = {"log_name": "calls.jsonl"} if variant == "jsonl" else {}
    contract = CONTRACT.replace('blocks = ["1", "2"]', "blocks = 2") if variant == "counted-blocks" else CONTRACT
    rows, changed = default_rows(), relabelled_rows()
    if variant == "quoted-newline":  # a value spanning lines, in a row that stays and in the one that changes
        rows[2]["grade_reason"] = changed[2]["grade_reason"] = 'said "no",\nthen yes'
        rows[6]["grade_reason"] = changed[6]["grade_reason"] = "two\nlines"
    old = mini_site(tmp_path, run_cli, make_source, "v1", rows=rows, contract=contract, **log)
    new = mini_site(tmp_path, run_cli, make_source, "v2", rows=changed, contract=contract, previous="v1", **log)
    result = run_cli("diff", old, new)
    assert result.exit_code == 0, result.output
    calls = result.output[result.output.index("Calls changed"):].split("\n\n")[0].splitlines()[1:]
    assert len(calls) == 1 and "mini/Y-3 " in calls[0] and "qualified: False -> True" in calls[0], result.output
    # The build's own page of changes (from the log it had just parsed, its rows read again) says the same.
    page = (new.parent / "diff" / "v1..v2" / "index.html").read_text(encoding="utf-8")
    assert "Y-3" in page and "X-1" not in page.split("Calls changed", 1)[-1].split("</section>", 1)[0]


def test_diff_of_identical_versions(tmp_path, make_source, run_cli):
    old = mini_site(tmp_path, run_cli, make_source, "v1")
    new = mini_site(tmp_path, run_cli, make_source, "v2")
    result = run_cli("diff", old, new)
    assert result.output == "reportgen diff v1 -> v2\nno changes in contract, calls, artifacts or claims\n"


def test_verdict_flips_come_first(tmp_path, make_source, run_cli):
    rows = default_rows()
    for row in rows:
        if row["service"] == "Y":
            row.update(status="ok", qualified="false", artifact_path="artifacts/X-1", failure_reason="",
                       finish_reason="stop", latency_ms="1000")
    flat = CONTRACT.replace("planned_calls = 4", "planned_calls = 4\nmin_useful_effect = 0.1")
    old = mini_site(tmp_path, run_cli, make_source, "v1", contract=flat)
    more = [dict(r) for r in rows]
    more += [{**rows[0], "call_id": f"X-{i}", "started_at": f"2026-10-01T11:{i:02d}:00+00:00"} for i in range(5, 25)]
    more += [{**rows[4], "call_id": f"Y-{i}", "started_at": f"2026-10-01T11:{i:02d}:30+00:00"} for i in range(5, 25)]
    new = mini_site(tmp_path, run_cli, make_source, "v2", rows=more,
                    contract=flat.replace("planned_calls = 4", "planned_calls = 24"))
    output = run_cli("diff", old, new).output
    assert output.splitlines()[2] == "Decisions: 1 flipped, 0 with a changed interval, 0 unchanged"
    assert output.splitlines()[4] == "Verdicts that changed (1)"
    assert "mini.Y_vs_X.verdict: no_difference_shown -> candidate_worse" in output


def test_serve_binds_to_loopback(demo_site):
    server = make_server(demo_site.parent, 0)
    host, port = server.server_address[:2]
    assert host == "127.0.0.1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/index.html", timeout=5) as response:
            assert response.status == 200 and b"Pelican test, October 2026" in response.read()
    finally:
        server.shutdown()
        server.server_close()


KILLED_BUILD = """
import sys, time
import reportgen.write.version as write
original = write._write_file
def slow(root, rel, data):
    time.sleep(0.02)
    return original(root, rel, data)
write._write_file = slow
from reportgen.cli import main
# --no-cache: every file is written again (slowly), none reused from the earlier build.
main(["build", sys.argv[1], "--out", sys.argv[2], "--force", "--no-cache", "-q"])
"""


def test_a_killed_build_leaves_no_half_written_version(built_demo_copy, demo_source, run_cli):
    out = built_demo_copy.parent  # v1 already built (a copy of the session's build)
    before = tree_bytes(out)
    process = subprocess.Popen([sys.executable, "-c", KILLED_BUILD, str(demo_source), str(out)],
                               env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    deadline = time.monotonic() + 60
    while not list(out.glob(".v1.building-*/experiments")) and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert list(out.glob(".v1.building-*")), "the build was not caught while writing"
    after = {k: v for k, v in tree_bytes(out).items() if not k.startswith(".v1.building-")}
    assert after == before
    # The next build removes the leftovers.
    assert run_cli("build", demo_source, "--out", out, "-q").exit_code == 0
    assert not list(out.glob(".v1.building-*"))


def test_diff_lists_exactly_the_artifacts_whose_content_changed(tmp_path, make_source, run_cli, monkeypatch):
    """Sheets both versions hold with the same pack are passed over whole; a call whose
    response changed is listed, with the old and new hash of that one file."""
    import hashlib

    import reportgen.render.sheets

    monkeypatch.setattr(reportgen.render.sheets, "SHEET_CALLS", 2)  # several sheets per service
    old = mini_site(tmp_path, run_cli, make_source, "v1")
    site = 'title = "Mini report"\nversion = "v2"\nprevious = "v1"\n'
    source = make_source(site=site)
    response = source / "experiments/mini/artifacts/Y-3/response.txt"
    before = hashlib.sha256(response.read_bytes()).hexdigest()
    response.write_text(response.read_text() + "\n(edited)\n")
    after = hashlib.sha256(response.read_bytes()).hexdigest()
    result = run_cli("build", source, "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    result = run_cli("diff", old, tmp_path / "site" / "v2")
    assert result.exit_code == 0, result.output
    section = result.output[result.output.index("Artifacts whose content changed"):].split("\n\n")[0]
    assert section.splitlines()[1:] == [f"  ~ mini/Y-3: response.txt: '{before}' -> '{after}'"], result.output


def test_a_version_read_for_the_diff_holds_its_sheets_calls_as_a_digest(tmp_path, make_source, run_cli, monkeypatch):
    """The diff reads both versions without the sheets' lists of calls (a million ids a
    version): each sheet keeps their digest, and the lists of the sheets it asks for are
    read again, exactly as artifacts.json holds them."""
    import json

    import reportgen.render.sheets
    from reportgen.published.read import read_version, sheet_calls

    monkeypatch.setattr(reportgen.render.sheets, "SHEET_CALLS", 2)
    version = mini_site(tmp_path, run_cli, make_source, "v1")
    whole = json.loads((version / "data/mini/artifacts.json").read_text())["sheets"]
    light = read_version(version, evidence=False).runs["mini"].sheets
    assert len(whole) == len(light) > 2
    assert all("calls" not in s and s["calls_digest"] for s in light)
    assert len({s["calls_digest"] for s in light}) == len(light)  # each sheet's own calls
    assert [{k: v for k, v in s.items() if k != "calls_digest"} for s in light] == \
        [{k: v for k, v in s.items() if k != "calls"} for s in whole]
    last = len(whole) - 1
    assert sheet_calls(read_version(version, evidence=False), "mini", {0, last}) == {0: whole[0]["calls"],
                                                                                       last: whole[last]["calls"]}
    assert read_version(version).runs["mini"].sheets == whole  # verify reads them whole
