"""What loading keeps in memory: no reference cycle left for a paused collector, a
content many files share held once (small files packed in one buffer), a repeated log
value held once."""

from __future__ import annotations

import gc
import hashlib
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reportgen.errors import Collector, InputError
from reportgen.load.calllog import csv_lines, read_log
from reportgen.load.contents import read_run_files
from reportgen.load.files import list_folder
from reportgen.load.kept_bytes import KeptBytes


def test_listing_a_folder_leaves_no_reference_cycle(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f.txt").write_text("x", encoding="utf-8")
    gc.collect()
    gc.disable()  # as during a build: a cycle would keep the walk's lstat results to the end
    try:
        listing = list_folder(tmp_path, with_stat=True)
        assert [rel for rel, _ in listing.files] == ["a/b/f.txt"]
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_content_many_files_share_is_held_once(tmp_path):
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "image.svg").write_bytes(b"<svg xmlns='http://www.w3.org/2000/svg'/>")
    (tmp_path / "three.txt").write_bytes(b"other")
    files = read_run_files(tmp_path)
    assert files.data["one/image.svg"] == files.data["two/image.svg"] == (tmp_path / "one/image.svg").read_bytes()
    assert files.data["three.txt"] == b"other"
    # The small files are packed in one buffer, the shared drawing once.
    assert sum(map(len, files.data.kept_bytes.buffers)) == len(files.data["one/image.svg"]) + len(b"other")


def test_kept_bytes_are_never_handed_out_as_the_buffer():
    kept = KeptBytes()
    kept.add("a.txt", "1" * 64, b"alpha")
    kept.add("b.txt", "2" * 64, b"")
    kept.add("c.txt", "1" * 64, b"alpha")  # the same content under another name: held once
    first, again = kept.get("a.txt"), kept.get("a.txt")
    assert first == again == kept.get("c.txt") == b"alpha" and first is not again
    assert type(first) is bytes and kept.get("b.txt") == b"" and kept.get("nothing") is None
    assert bytes(kept.buffers[0]) == b"alpha" and len(kept) == 3 and "b.txt" in kept
    shared = kept.share()  # for a reader in another thread: its buffer is never grown again
    sealed = shared.buffers[0]
    assert sealed is kept.buffers[0]  # shared, not copied
    kept.add("d.txt", "5" * 64, b"delta")
    assert bytes(sealed) == b"alpha" and kept.get("d.txt") == b"delta" and shared.get("d.txt") is None
    assert shared.get("c.txt") == kept.get("c.txt") == b"alpha"


def test_a_large_file_is_kept_as_read(monkeypatch):
    import reportgen.load.kept_bytes as kept_bytes

    monkeypatch.setattr(kept_bytes, "WHOLE_FROM", 4)
    kept = KeptBytes()
    data = b"a log of some size"
    kept.add("calls.csv", "3" * 64, data)
    kept.add("small", "4" * 64, b"abc")
    assert kept.get("calls.csv") is data and bytes(kept.buffers[0]) == b"abc"


def test_a_repeated_log_value_is_held_once(tmp_path):
    header = ("run_id,block_id,service,service_group,requested_model,returned_model,started_at,"
              "request_hash,status,finish_reason,latency_ms,qualified,failure_reason,artifact_path\n")
    row = "r,1,{s},g,m,m,2026-10-01T09:0{i}:00+00:00,sha256:{h},ok,stop,10{i},true,,\n"
    text = header + "".join(row.format(s="relay-" + "ab"[i % 2] * 3, i=i, h="0" * 64) for i in range(4))
    log_path = tmp_path / "calls.csv"
    log_path.write_text(text, encoding="utf-8")
    log = read_log(log_path, "calls.csv", Collector())
    assert log is not None and len(log.rows) == 4
    first, _, third, fourth = (row.values for row in log.rows)
    assert first["service"] == third["service"] == "relay-aaa"
    assert first["service"] is third["service"] and first["request_hash"] is fourth["request_hash"]
    assert first["started_at"] != third["started_at"]  # values that differ stay as written


def test_the_log_is_held_once_when_the_listing_read_it_too(make_source, monkeypatch):
    from reportgen.load.source import load_source

    import reportgen.load.kept_bytes as kept_bytes

    monkeypatch.setattr(kept_bytes, "WHOLE_FROM", 1)  # the demo's log is small; a large one is kept as read
    source = make_source()
    (run,) = load_source(source).runs
    kept = run.files.data.kept(run.log.name)  # a first build reads every file to hash it
    assert kept is not None and kept == (run.folder / run.log.name).read_bytes()
    assert run.log_bytes is kept and run.log.data is kept


def test_the_log_goes_with_the_listings_bytes_and_is_read_again_checked(make_source, monkeypatch):
    import sys

    from reportgen.load.source import load_source

    import reportgen.load.kept_bytes as kept_bytes

    monkeypatch.setattr(kept_bytes, "WHOLE_FROM", 1)
    source = make_source()
    (run,) = load_source(source).runs
    on_disk = (run.folder / run.log.name).read_bytes()
    kept = run.log.data
    assert kept is run.files.data.kept(run.log.name)  # held once: the listing's copy
    run.files.data.let_go()  # as the build does once the sheets are written
    gc.collect()
    assert sys.getrefcount(kept) == 2  # nothing but ``kept`` (and this call) holds it now
    assert run.log_bytes == run.log.data == on_disk  # read again when published
    (run.folder / run.log.name).write_bytes(on_disk.replace(b"relay", b"RELAY", 1))
    with pytest.raises(InputError, match="changed while the build was running"):
        run.log_bytes


def test_calls_without_further_columns_share_one_empty_mapping(make_source):
    from reportgen.load.source import load_source

    from tests.conftest import default_rows

    rows = default_rows()
    for row in rows:  # a column of the log's own, empty on every row but the first
        del row["grade_reason"]
        row["note"] = ""
    rows[0]["note"] = "retried by hand"
    (run,) = load_source(make_source(rows)).runs
    bare = [c for c in run.calls if not c.extra]
    assert len(bare) >= 2 and all(c.extra is bare[0].extra for c in bare)
    assert all(c.extra is not bare[0].extra for c in run.calls if c.extra)


@given(st.lists(st.tuples(st.binary(max_size=40), st.booleans()), max_size=30), st.integers(1, 64))
def test_kept_bytes_give_back_what_was_added_whatever_the_sharing(files, whole_from):
    import reportgen.load.kept_bytes as kept_bytes

    old, kept_bytes.WHOLE_FROM = kept_bytes.WHOLE_FROM, whole_from  # large files kept whole, the rest packed
    try:
        kept, added, shared = KeptBytes(), {}, []
        for i, (data, share_after) in enumerate(files):
            kept.add(f"f{i}", hashlib.sha256(data).hexdigest(), data)
            added[f"f{i}"] = data
            if share_after:
                shared.append((kept.share(), dict(added)))
        kept.done()
        assert {rel: kept.get(rel) for rel in added} == added and len(kept) == len(added)
        for view, seen in shared:  # each reader sees what was there when it was shared, unchanged since
            assert {rel: view.get(rel) for rel in seen} == seen
            assert all(view.get(rel) is None for rel in added if rel not in seen)
        # A content is packed once, however many files hold it.
        packed = {data for data in added.values() if len(data) < whole_from}
        assert sum(map(len, kept.buffers)) == sum(map(len, packed))
    finally:
        kept_bytes.WHOLE_FROM = old


def test_artifacts_of_the_same_name_share_it(make_source):
    from collections import defaultdict

    from reportgen.load.artifacts import collect_artifacts
    from reportgen.load.source import load_source

    (run,) = load_source(make_source()).runs
    by_name = defaultdict(list)
    for bundle in collect_artifacts(run).values():
        for artifact in bundle.files:
            by_name[artifact.name].append(artifact.name)
    repeated = [names for names in by_name.values() if len(names) > 1]
    assert repeated  # the demo's calls hold files of the same names
    assert all(name is names[0] for names in repeated for name in names)


def test_file_bytes_let_go_of_are_read_again_and_not_kept(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"alpha")
    (tmp_path / "b.txt").write_bytes(b"beta")
    contents = read_run_files(tmp_path).data
    assert contents.kept("a.txt") == b"alpha"
    contents.let_go()
    assert contents.kept("a.txt") is None
    assert contents["a.txt"] == b"alpha" and contents["b.txt"] == b"beta"  # from the disk, checked
    assert contents.kept("a.txt") is None and contents._read == {}
    (tmp_path / "a.txt").write_bytes(b"omega")
    with pytest.raises(InputError, match="changed while the build was running"):
        contents["a.txt"]


@given(st.text(alphabet=st.sampled_from(list("a,\"\r\n\x0b\x85\u2028 ")), max_size=40))
def test_a_csv_log_is_split_into_lines_as_a_text_file_would_be(text):
    # Held as four bytes a character, a StringIO of a million calls' log took 1 GB.
    assert list(csv_lines(text)) == list(io.StringIO(text, newline=""))


def test_a_csv_log_names_the_line_of_each_row_across_quoted_line_breaks(tmp_path):
    header = "call_id,run_id,block_id,service,service_group,requested_model,returned_model,started_at," \
             "request_hash,status,finish_reason,latency_ms,qualified,failure_reason,artifact_path"
    lines = [header, 'A-1,r,b1,s,g,m,m,2026-01-01T00:00:00Z,"h\r\nh",ok,stop,1,true,,a',
             "A-2,r,b1,s,g,m,m,2026-01-01T00:00:00Z,h,ok,stop,1,true,,a"]
    path = tmp_path / "calls.csv"
    path.write_bytes(("\r".join(lines[:2]) + "\r\n" + lines[2] + "\n").encode("utf-8"))
    log = read_log(path, "calls.csv", Collector())
    assert log is not None and [row.line for row in log.rows] == [2, 4]
    assert log.rows[0].values["request_hash"] == "h\r\nh"
