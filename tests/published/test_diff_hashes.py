"""``reportgen diff`` names a changed call with the request it sent, as it names added
and removed calls: in the text output, the --html page and the page the build links."""

from __future__ import annotations


from conftest import REQUEST, default_rows, request_hash
from sitecheck import text

HASH = request_hash(REQUEST)


def version(tmp_path, run_cli, make_source, label, rows, previous=None):
    site = f'title = "Mini report"\nversion = "{label}"\n' + (f'previous = "{previous}"\n' if previous else "")
    result = run_cli("build", make_source(rows=rows, site=site), "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    return tmp_path / "site" / label


def test_a_changed_call_shows_its_request_hash(tmp_path, run_cli, make_source):
    old = version(tmp_path, run_cli, make_source, "v1", default_rows())
    rows = default_rows()
    rows[6]["qualified"] = "true"  # Y-3: fail -> pass
    new = version(tmp_path, run_cli, make_source, "v2", rows, previous="v1")
    result = run_cli("diff", old, new, "--html", tmp_path / "diff-page")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    changed = lines[lines.index("Calls changed (1)") + 1]
    assert changed == f"  ~ mini/Y-3 ({HASH}): qualified: False -> True"
    for page in (tmp_path / "diff-page/index.html", tmp_path / "site/diff/v1..v2/index.html"):
        assert (f'<th scope="row"><code>mini/Y-3</code><br><small><code class="hash">{HASH}</code></small></th>'
                '<td><ul class="changes"><li><code>qualified</code>: False → True</li></ul></td>') in text(page)


def test_a_call_that_sent_another_request_shows_both_hashes(tmp_path, run_cli, make_source):
    old = version(tmp_path, run_cli, make_source, "v1", default_rows())
    other = request_hash({**REQUEST, "temperature": 0})
    rows = default_rows()
    rows[0]["request_hash"] = other
    new = version(tmp_path, run_cli, make_source, "v2", rows)
    output = run_cli("diff", old, new).output
    assert f"  ~ mini/X-1 ({HASH} -> {other}): request_hash: {HASH!r} -> {other!r}" in output.splitlines()


def test_added_and_changed_calls_read_alike(tmp_path, run_cli, make_source):
    old = version(tmp_path, run_cli, make_source, "v1", default_rows())
    rows = default_rows()
    rows[1]["grade_reason"] = "clean lines"
    rows.append({**rows[0], "call_id": "X-5", "block_id": "2", "started_at": "2026-10-01T10:00:00+00:00",
                 "artifact_path": "artifacts/X-5"})
    new = version(tmp_path, run_cli, make_source, "v2", rows)
    output = run_cli("diff", old, new, "--html", tmp_path / "diff-page").output
    assert f"  + mini/X-5 ({HASH})" in output.splitlines()
    assert f"  ~ mini/X-2 ({HASH}): grade_reason: 'ok' -> 'clean lines'" in output.splitlines()
    page = text(tmp_path / "diff-page/index.html")
    shown = '<code>mini/{}</code>{}<small><code class="hash">{}</code></small>'
    assert shown.format("X-5", " ", HASH) in page  # added: the same call and hash ...
    assert shown.format("X-2", "<br>", HASH) in page  # ... as a changed call shows
