"""Versions that share a store: a published version never changes when another is added,
and a new version writes only what its changes touch."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import io
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import reportgen.render.sheets
from conftest import default_rows
from reportgen.render.packs import _header, _tarfile_header, read_pack, tar_gz
from sitecheck import broken_links, call_section, manifest_problems, sheet_of


@pytest.fixture
def small_sheets(monkeypatch):
    """Two calls to a sheet: the mini source's services get two sheets each."""
    monkeypatch.setattr(reportgen.render.sheets, "SHEET_CALLS", 2)


def corrected(rows, call_id):
    """The rows with one grade turned the other way, as a reviewer's correction."""
    out = [dict(r) for r in rows]
    row = next(r for r in out if r["call_id"] == call_id)
    row["qualified"] = "false" if row["qualified"] == "true" else "true"
    return out


def store_files(site):
    return {p.name: p.stat() for p in (site / "store").iterdir() if not p.name.startswith(".")}


def listed(version):
    return set(json.loads((version / "manifest.json").read_text())["store"])


def version_files(version):
    return {p.relative_to(version).as_posix(): p.read_bytes() for p in version.rglob("*") if p.is_file()}


def build(run_cli, source, out, *extra):
    result = run_cli("build", source, "--out", out, "-q", *extra)
    assert result.exit_code == 0, result.output
    return result.output


def test_a_published_version_is_untouched_by_the_next(make_source, run_cli, tmp_path, small_sheets):
    site = tmp_path / "site"
    build(run_cli, make_source(), site)
    v1 = version_files(site / "v1")
    shared = {name: (st.st_size, st.st_mtime_ns, st.st_ino) for name, st in store_files(site).items()}
    source = make_source(corrected(default_rows(), "X-3"), site='title = "Mini report"\nversion = "v2"\nprevious = "v1"\n')
    build(run_cli, source, site)
    assert version_files(site / "v1") == v1  # byte for byte
    after = store_files(site)
    for name, (size, mtime, ino) in shared.items():  # no store file rewritten, moved or removed
        assert (after[name].st_size, after[name].st_mtime_ns, after[name].st_ino) == (size, mtime, ino), name
    assert manifest_problems(site / "v1") == [] and manifest_problems(site / "v2") == []
    for label in ("v1", "v2"):
        assert run_cli("verify", site / label).exit_code == 0, label
    assert broken_links(site) == []
    assert (site / "diff" / "v1..v2" / "index.html").is_file()


def test_a_corrected_grade_writes_one_sheet_and_changes_the_pages_that_cite_it(
        make_source, run_cli, tmp_path, small_sheets):
    before, after = tmp_path / "before", tmp_path / "after"
    build(run_cli, make_source(), before)
    rows = corrected(default_rows(), "X-3")
    build(run_cli, make_source(rows), after)
    old_sheet, new_sheet = sheet_of(before / "v1", "mini", "X-3"), sheet_of(after / "v1", "mini", "X-3")
    # The store: the sheet of is new; every other file is the same file.
    assert set(store_files(after)) - set(store_files(before)) == {new_sheet.name}
    assert set(store_files(before)) - set(store_files(after)) == {old_sheet.name}
    assert sheet_of(after / "v1", "mini", "X-1").name == sheet_of(before / "v1", "mini", "X-1").name
    assert "<dt>Grade</dt><dd>pass</dd>" in call_section(after / "v1", "mini", "X-3")
    # The version: what changed are the pages that cite X-3 or show a number it enters.
    # (Every page names the source's digest in its footer: that is masked here.)
    def masked(version):
        digest = json.loads((version / "data/results.json").read_text())["source_digest"].encode()
        return {rel: data.replace(digest, b"sha256:<source>") for rel, data in version_files(version).items()}

    a, b = masked(before / "v1"), masked(after / "v1")
    assert set(a) == set(b)
    changed = {rel for rel in a if a[rel] != b[rel]}
    claims = json.loads(b["data/results.json"])["claims"]
    citing = {c["id"] for c in claims if "X-3" in c["evidence"]}
    for rel in changed:
        text = b[rel].decode("utf-8", "replace")
        assert (new_sheet.name in text or any(f"#{cid}\"" in text for cid in citing)
                or rel.startswith(("data/", "charts/")) or rel == "manifest.json"), rel
    for rel, data in a.items():
        if old_sheet.name in data.decode("utf-8", "replace"):
            assert rel in changed, rel  # every link to the old sheet now names the new one
    evidence = {rel for rel in b if rel.startswith("evidence/")}
    assert {rel for rel in evidence if rel in changed} == {rel for rel in evidence if "X-3" in b[rel].decode()}
    assert any("X-3" not in b[rel].decode() for rel in evidence)  # Y's lists: the same files
    assert run_cli("verify", after / "v1").exit_code == 0


def test_a_second_build_writes_no_sheet_and_mends_a_missing_one(make_source, run_cli, tmp_path):
    source, site = make_source(), tmp_path / "site"
    build(run_cli, source, site)
    output = build(run_cli, source, site, "--version", "v2")
    assert "(0 written, 2 shared with earlier builds)" in output
    sheet = sheet_of(site / "v2", "mini", "X-1")
    sheet.unlink()  # a store file lost: the next build writes it again, the same bytes
    output = build(run_cli, source, site, "--version", "v3")
    assert "(1 written, 1 shared with earlier builds)" in output
    assert sheet.is_file() and sheet_of(site / "v3", "mini", "X-1") == sheet
    assert hashlib.sha256(sheet.read_bytes()).hexdigest() + ".html" == sheet.name
    for label in ("v1", "v2", "v3"):
        assert run_cli("verify", site / label).exit_code == 0, label


def test_a_store_file_of_the_wrong_size_is_mended(make_source, run_cli, tmp_path):
    source, site = make_source(), tmp_path / "site"
    build(run_cli, source, site)
    png = next((site / "store").glob("*.png"))
    good = png.read_bytes()
    png.write_bytes(good[:100])  # a copy cut short
    assert run_cli("verify", site / "v1").exit_code == 1
    build(run_cli, source, site, "--version", "v2")
    assert png.read_bytes() == good
    assert run_cli("verify", site / "v1").exit_code == 0


def test_the_page_of_changes_is_what_diff_prints(make_source, run_cli, tmp_path):
    site = tmp_path / "site"
    rows = default_rows()
    build(run_cli, make_source(rows), site)
    # v2: X-3 corrected, and a row moved to the end of the log (the same call, elsewhere).
    changed = corrected(rows, "X-3")
    changed.append(changed.pop(0))
    source = make_source(changed, site='title = "Mini report"\nversion = "v2"\nprevious = "v1"\n')
    (source / "experiments/mini/artifacts/Y-3/response.txt").write_text("Another reply.\n")
    build(run_cli, source, site)
    built = (site / "diff/v1..v2/index.html").read_text()
    result = run_cli("diff", site / "v1", site / "v2", "--html", tmp_path / "out")
    assert result.exit_code == 0, result.output
    # The same page; only its links differ, each relative to where the page was written.
    unlinked = re.compile(r'(href|src)="[^"]*"')
    assert unlinked.sub("", (tmp_path / "out/index.html").read_text()) == unlinked.sub("", built)
    text = run_cli("diff", site / "v1", site / "v2").output
    assert "~ mini/X-3 (sha256:" in text and "qualified: False -> True" in text
    assert "mini/X-1" not in text  # moved, not changed
    assert "~ mini/Y-3: response.txt:" in text


def test_packs_are_deterministic_tarballs_of_files_named_by_their_hash():
    members = [("index.json", b"{}"), ("a" * 64 + ".txt", b"x" * 700), ("b" * 64 + ".txt", b"")]
    data = tar_gz(members)
    assert tar_gz(members) == data
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        got = [(m.name, tar.extractfile(m).read(), m.mtime, m.uid, m.uname) for m in tar]
    assert got == [(name, body, 0, 0, "") for name, body in members]
    assert data[4:8] == b"\0\0\0\0"  # no time in the gzip header


def _made(make, name, size):
    try:
        return make(name, size)
    except ValueError as exc:  # a name tarfile cannot put in a ustar header
        return f"refused: {exc}"


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(min_size=0, max_size=160),
                 st.from_regex(r"[0-9a-f]{64}\.(txt|svg|json|png)", fullmatch=True),
                 st.text(alphabet="ab/é\udcff", max_size=260)),
       st.one_of(st.integers(0, 4096), st.integers(0, 8 ** 12), st.sampled_from([8 ** 11 - 1, 8 ** 11])))
def test_a_pack_header_is_the_one_tarfile_writes(name, size):
    # The header is made from a template; tarfile, which reads the packs back, is the oracle:
    # every name (long, split at a slash, not ASCII, undecodable) and size gives its bytes.
    assert _made(_header, name, size) == _made(_tarfile_header, name, size)


def test_a_pack_reads_back_with_tarfile_member_by_member():
    members = [("index.json", b"{}"), *((f"{i:064x}.txt", bytes([i % 256]) * (i * 37 % 1500)) for i in range(60)),
               ("é" * 40 + ".txt", b"accented"), ("d" * 90 + "/" + "e" * 60, b"split at a slash")]
    with tarfile.open(fileobj=io.BytesIO(tar_gz(members)), mode="r:gz") as tar:
        got = [(m.name, m.size, m.mode, m.mtime, tar.extractfile(m).read()) for m in tar]
    assert got == [(name, len(body), 0o644, 0, body) for name, body in members]


def test_every_packed_file_is_the_raw_file_it_names(demo_site):
    store = demo_site.parent / "store"
    sheets = [s for p in (demo_site / "data").glob("*/artifacts.json") for s in json.loads(p.read_text())["sheets"]]
    assert sheets and any(s["pack"] for s in sheets)
    for sheet in sheets:
        if sheet["pack"]:
            index, files = read_pack((store / sheet["pack"]).read_bytes())
            assert set(index["calls"]) <= set(sheet["calls"])
            for name, body in files.items():
                assert hashlib.sha256(body).hexdigest() == name.split(".")[0]
            for entries in index["calls"].values():
                for e in entries:
                    assert (e["file"] in files) == (e["in"] == "pack")


def test_a_sheet_names_no_version(demo_site):
    store = demo_site.parent / "store"
    for sheet in store.glob("*.html"):
        text = sheet.read_text()
        links = re.findall(r'(?:href|src)="([^"]+)"', text)
        assert all("/" not in link or link == "../index.html" for link in links), sheet.name


def _a_sheet():
    from datetime import datetime, timezone

    from reportgen.model.calls import Call
    from reportgen.render.sheets import PublishedFile, Sheet, SheetCall

    call = Call("c-1", 2, "run", "b1", "A", "", "m", "m", datetime(2026, 1, 1, tzinfo=timezone.utc),
                "2026-01-01T00:00:00Z", "sha256:" + "0" * 64, "ok", "stop", 12.5, True, "", "calls/c-1", 1,
                False, False, "formal", {"note": "x"})
    file = PublishedFile("response.txt", "a" * 64, "response", 10, None, None, "a" * 64 + ".txt", None)
    entry = SheetCall(call, "call-c-1", "passed", "complete, passed", "r.json", None, (file,), "b" * 64, "p.png", "s.svg", ("n",), True)
    return Sheet("run", "A", 1, 1, 1, 1, "calls.csv", "line", "", "CairoSVG", "s.css", "i.svg", (entry,))


def _changed(value):
    """A different value of the same kind."""
    if isinstance(value, bool) or value is None:
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, tuple):
        return value + ("y",)
    if isinstance(value, dict):
        return {**value, "more": "y"}
    return value.replace(year=value.year + 1)  # a datetime


def _text_too(call, field):
    if field != "started_at":
        return {}
    return {"started_at_text": _changed(call.started_at).isoformat()}


def test_every_field_of_a_sheet_record_names_the_sheet():
    """The key stands for the sheet's content: a change to any field of the record, of a
    call on it, or of a file it lists, gives another key."""
    from reportgen.render.sheets import sheet_key

    sheet = _a_sheet()
    assert sheet._fields[-1] == "calls"  # the key takes every other field as the header
    base = sheet_key("code", sheet)
    assert sheet_key("code", _a_sheet()) == base and sheet_key("other code", sheet) != base
    variants = [sheet._replace(**{f: _changed(getattr(sheet, f))}) for f in sheet._fields if f != "calls"]
    entry = sheet.calls[0]
    entries = [entry._replace(**{f: _changed(getattr(entry, f))}) for f in entry._fields if f not in ("call", "files")]
    # A call's start time is read from its text: the two change together.
    entries += [entry._replace(call=dataclasses.replace(entry.call, **{f.name: _changed(getattr(entry.call, f.name))},
                                                        **_text_too(entry.call, f.name)))
                for f in dataclasses.fields(entry.call)]
    file = entry.files[0]
    entries += [entry._replace(files=(file._replace(**{f: _changed(getattr(file, f))}),)) for f in file._fields]
    variants += [sheet._replace(calls=(e,)) for e in entries]
    keys = [sheet_key("code", v) for v in variants]
    assert base not in keys and len(set(keys)) == len(keys)


def _graded(sheet, grade):
    """``sheet`` with its call's blind grades (a record marshal does not write)."""
    from datetime import datetime, timezone

    from reportgen.model.grading import CallGrades, GradeRow

    row = GradeRow("g1", "item-1", grade, "", datetime(2026, 1, 2, tzinfo=timezone.utc), "2026-01-02T00:00:00Z",
                   "r1", "grades/g1.csv", 2)
    entry = sheet.calls[0]
    call = dataclasses.replace(entry.call, grades=CallGrades("item-1", (row,), grade, "one grader"))
    return sheet._replace(calls=(entry._replace(call=call),))


_KEYS_OF = """
import sys
sys.path[:0] = [{here!r}, {tests!r}]
from test_store import _a_sheet, _graded
from reportgen.render.sheets import sheet_key
print(sheet_key("code", _a_sheet()), sheet_key("code", _graded(_a_sheet(), "pass")))
"""


def test_a_sheet_has_the_same_key_in_every_process():
    """A later build reuses a sheet only if its process keys the record as this one did:
    the key does not depend on the process (its string hashing, say), for a record marshal
    writes and for one it does not (blind grades: keyed by the record's repr)."""
    from reportgen.render.sheets import sheet_key

    plain, graded = sheet_key("code", _a_sheet()), sheet_key("code", _graded(_a_sheet(), "pass"))
    assert len({plain, graded, sheet_key("code", _graded(_a_sheet(), "fail"))}) == 3
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        script = _KEYS_OF.format(here=str(Path(__file__).parent), tests=str(Path(__file__).parents[1]))
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.split() == [plain, graded]


def _strings_as(value, made):
    """``value`` with each string in it replaced by ``made(string)``, the rest as it is."""
    if type(value) is str:
        return made(value)
    if isinstance(value, tuple):
        items = [_strings_as(v, made) for v in value]
        return type(value)(*items) if hasattr(value, "_replace") else tuple(items)
    if isinstance(value, dict):
        return {_strings_as(k, made): _strings_as(v, made) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: _strings_as(getattr(value, f.name), made)
                                             for f in dataclasses.fields(value) if f.init})
    return value


def test_a_sheet_s_key_is_of_its_values_not_of_how_its_strings_are_held():
    """The log's reader keeps one string object for each distinct value of a repeated
    column, and the interpreter interns some strings: the key of a record whose equal
    strings are one object, interned or not, is the key of one whose strings are each
    their own copy (a marshal format with references would write these apart)."""
    import marshal

    from reportgen.render.sheets import key_record, sheet_key

    sheet = _a_sheet()
    entry = sheet.calls[0]
    # One object for several fields, as the log's reader shares a repeated value.
    service = "relay-" + str(len(sheet.calls))  # made at run time: not interned
    shared = entry._replace(call=dataclasses.replace(entry.call, service=service, service_group=service,
                                                     phase=sys.intern("formal")))
    as_one = sheet._replace(service=service, calls=(shared,))
    as_copies = _strings_as(as_one, lambda text: "".join(list(text)))  # equal, each its own, not interned
    assert as_copies.calls[0].call.service is not as_one.calls[0].call.service
    records = [as_one, as_copies, _strings_as(as_one, sys.intern)]
    assert len({sheet_key("code", r) for r in records}) == 1
    for record in records:  # keyed by marshal, not by the repr it falls back to
        marshal.dumps(key_record(record), 2)
