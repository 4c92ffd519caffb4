"""The record of a file's hash kept between builds: written and read back unchanged, a
damaged line ignored (its file hashed again), a file whose size, times or inode moved
not taken for the one recorded."""

from __future__ import annotations

import hashlib
import os
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reportgen.load.contents as contents
from reportgen.load.contents import FileHashes, read_run_files
from reportgen.load.file_record import HashedFile

SHA = hashlib.sha256(b"alpha").hexdigest()
STAT = SimpleNamespace(st_size=5, st_mtime_ns=1_700_000_000_123456789, st_ctime_ns=1_700_000_001_000000000,
                       st_ino=424242)
LINE = f"5 1700000000123456789 1700000001000000000 424242 {SHA}"


@pytest.fixture
def settled(monkeypatch):
    monkeypatch.setattr(contents, "RACY_SECONDS", -60.0)  # files written by the test count as settled


def test_a_record_is_written_as_one_line_and_read_back():
    record = HashedFile.of(STAT, SHA)
    assert record == HashedFile(5, 1_700_000_000_123456789, 1_700_000_001_000000000, 424242, SHA)
    assert record.line() == LINE
    assert HashedFile.parse(LINE) == record and record.matches(STAT)
    with pytest.raises(AttributeError):
        record.size = 6  # type: ignore[misc]  # frozen


def test_the_record_of_a_folder_s_files_round_trips(tmp_path, settled):
    (tmp_path / "a").write_bytes(b"alpha")
    (tmp_path / "b c\tdé").write_bytes(b"beta")  # any name: the line ends with the record
    first = FileHashes()
    read_run_files(tmp_path, first)
    text = first.to_text()
    assert text.splitlines()[0] == f"{tmp_path / 'a'}\t{HashedFile.of(os.stat(tmp_path / 'a'), SHA).line()}"
    assert text.splitlines()[-1].startswith("folders\t{")
    looked_at = FileHashes.from_text(text)
    for name, data in (("a", b"alpha"), ("b c\tdé", b"beta")):
        path = str(tmp_path / name)
        assert looked_at.get(path, os.stat(path)) == hashlib.sha256(data).hexdigest()
        assert looked_at.get(path, os.stat(path)) is None  # a record is looked at once, then let go of
    again = FileHashes.from_text(text)
    files = read_run_files(tmp_path, again)
    assert [files.data.kept(rel) for rel in files.sha256] == [None, None]  # both taken from the record, unread
    assert again.to_text() == text


def test_a_first_build_records_every_file_below_the_folder_as_its_walk_names_it(tmp_path, settled):
    files = {"calls/a/response.txt": b"one", "calls/a/image.svg": b"<svg/>", "calls/b/response.txt": b"two",
             "deep/er/still/x.bin": b"\x00\x01", "top.txt": b"t"}
    for rel, data in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    record = FileHashes()
    read_run_files(tmp_path, record)
    assert len(record) == len(files)
    expected = {os.path.join(tmp_path, *rel.split("/")): HashedFile.of(os.lstat(os.path.join(tmp_path, *rel.split("/"))),
                                                                       hashlib.sha256(data).hexdigest()).line()
                for rel, data in files.items()}
    assert dict(record.lines()) == expected
    again = FileHashes.from_text(record.to_text())
    listed = read_run_files(tmp_path, again)
    assert all(listed.data.kept(rel) is None for rel in files)  # each taken from the record, none read again
    assert dict(again.lines()) == expected and again.entries == {}  # the earlier lines let go of as looked at


DAMAGED = [
    f"5 1700000000123456789 1700000001000000000 424242 {SHA[:-1]}",  # cut short
    f"5 1700000000123456789 1700000001000000000 424242 {SHA}0",  # a character more
    f"5 1700000000123456789 1700000001000000000 {SHA}",  # a field lost
    f"5  1700000000123456789 1700000001000000000 424242 {SHA}",  # a space more
    f"x 1700000000123456789 1700000001000000000 424242 {SHA}",  # not a number
    f"05 1700000000123456789 1700000001000000000 424242 {SHA}",  # not as written
    f"+5 1700000000123456789 1700000001000000000 424242 {SHA}",
    f"5 1700000000123456789 1700000001000000000 424242 {SHA} ",
    f"5 1700000000123456789 1700000001000000000 424242\t{SHA}",
    "",
    SHA,
]


@pytest.mark.parametrize("line", DAMAGED)
def test_a_damaged_line_is_ignored(line):
    assert HashedFile.parse(line) is None
    hashes = FileHashes.from_text(f"/src/a\t{line}\n/src/b\t{LINE}\nfolders\t{{}}\n")
    assert hashes.get("/src/a", STAT) is None
    assert hashes.get("/src/b", STAT) == SHA  # the lines around it are read as ever
    assert hashes.entries == {}  # both let go of: what is kept is what a walk records (next test)


def test_a_file_whose_record_is_damaged_is_hashed_again(tmp_path, settled, monkeypatch):
    (tmp_path / "a").write_bytes(b"alpha")
    first = FileHashes()
    read_run_files(tmp_path, first)
    path = str(tmp_path / "a")
    damaged = first.to_text().replace(f"{path}\t", f"{path}\tx")
    reads: list[str] = []
    real = contents.read_bytes
    monkeypatch.setattr(contents, "read_bytes", lambda p: reads.append(p) or real(p))
    again = FileHashes.from_text(damaged)
    files = read_run_files(tmp_path, again)
    assert reads == [path] and files.sha256["a"] == SHA
    assert again.to_text() == first.to_text()  # recorded afresh


@pytest.mark.parametrize("field", ["st_size", "st_mtime_ns", "st_ctime_ns", "st_ino"])
def test_a_changed_stat_does_not_match(field):
    changed = SimpleNamespace(**{**vars(STAT), field: getattr(STAT, field) + 1})
    assert not HashedFile.parse(LINE).matches(changed)
    assert FileHashes({"/src/a": LINE}).get("/src/a", changed) is None
    assert FileHashes({"/src/a": LINE}).get("/src/a", STAT) == SHA


numbers = st.integers(min_value=0, max_value=2**64)
stats = st.builds(SimpleNamespace, st_size=numbers, st_mtime_ns=numbers, st_ctime_ns=numbers, st_ino=numbers)


@settings(max_examples=60, deadline=None)
@given(stats, stats, st.text(alphabet="0123456789abcdef x\t", min_size=62, max_size=66),
       st.sampled_from(["", " ", "0", "+"]))
def test_the_record_s_text_is_compared_as_parsing_it_would(recorded, now, sha, prefix):
    # FileHashes.get compares the line as read, without parsing it: it must say what
    # parsing it and matching the record would, on any line, and find a file unchanged.
    for line in (prefix + HashedFile.of(recorded, sha).line(), prefix + HashedFile.of(now, sha).line()):
        record = HashedFile.parse(line)
        expected = record.sha256 if record is not None and record.matches(now) else None
        assert FileHashes({"/f": line}).get("/f", now) == expected
    if len(sha) == 64:
        assert FileHashes({"/f": HashedFile.of(now, sha).line()}).get("/f", now) == sha


def test_the_record_is_saved_a_piece_at_a_time_and_read_back_whole(tmp_path, settled):
    from reportgen.pipeline.incremental import keep, load_file_hashes, recall, save_file_hashes, _check, _hashes_path

    source = tmp_path / "source"
    for i in range(7):
        (source / f"c{i}").mkdir(parents=True)
        (source / f"c{i}" / "response.txt").write_bytes(b"answer %d" % i)
        (source / f"c{i}" / "d\u00e9j\u00e0 \"vu\".txt").write_bytes(b"x")  # JSON and UTF-8 in the folder names
    record = FileHashes()
    read_run_files(source, record)
    whole = b"".join(record.text_pieces(lines_a_piece=10**6))
    assert len(list(record.text_pieces(lines_a_piece=3))) > 3
    for size in (1, 2, 3, 5, 100):
        assert b"".join(record.text_pieces(lines_a_piece=size)) == whole
    cache = tmp_path / "cache"
    save_file_hashes(cache, source, record)
    path = _hashes_path(cache, source)
    assert recall(path) == whole and path.read_bytes().split(b"\n", 1)[0].endswith(_check(path, whole))
    again = load_file_hashes(cache, source)
    assert again is not None and again.folders.folders == record.folders.kept()
    listed = read_run_files(source, again)
    assert all(listed.data.kept(rel) is None for rel in listed.sha256)  # every file from the record, none read
    assert dict(again.lines()) == dict(record.lines())
    assert keep(path, [b"a", b"", b"bc"]) is None and recall(path) == b"abc"
    path.write_bytes(path.read_bytes().replace(b"abc", b"abd"))
    assert recall(path) is None  # a changed body fails its check


def test_pieces_that_fail_while_written_leave_no_file(tmp_path):
    from reportgen.pipeline.incremental import keep, recall

    path = tmp_path / "cache" / "record.txt"
    assert keep(path, b"kept") is None

    def failing():
        yield b"first piece"
        raise RuntimeError("stopped while making the record")

    with pytest.raises(RuntimeError):
        keep(path, failing())
    assert sorted(p.name for p in path.parent.iterdir()) == ["record.txt"]  # no temporary file left
    assert recall(path) == b"kept"  # and the file kept before is whole
    (tmp_path / "full").write_bytes(b"")  # a folder that cannot be made: an OSError, said, not raised
    assert keep(tmp_path / "full" / "x.txt", [b"a"]) is not None


def test_the_record_s_lines_are_made_as_they_are_written(tmp_path, settled, monkeypatch):
    """Saving the record of a first build holds a piece of its lines at a time, never
    every line (600 MB of text at a million calls)."""
    import reportgen.load.contents as contents

    for i in range(10):
        (tmp_path / f"c{i}").mkdir()
        (tmp_path / f"c{i}" / "response.txt").write_bytes(b"answer %d" % i)
    record = FileHashes()
    read_run_files(tmp_path, record)
    made: list[int] = []
    real = contents.stamp_text
    monkeypatch.setattr(contents, "stamp_text", lambda *a: made.append(1) or real(*a))
    pieces = record.text_pieces(lines_a_piece=2)
    first = next(pieces)
    assert first.count(b"\n") == 2 and len(made) == 2
    assert len(b"".join(pieces).split(b"\n")) > 8 and len(made) == 10


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=6), st.data())
def test_a_cache_file_read_a_line_at_a_time_is_checked_as_when_read_whole(tmp_path_factory, lines, data):
    """``recall_open`` gives what ``recall`` gives, as lines to read, when the file is
    whole (and its last line with the tag asked for); None when a byte of it changed."""
    from reportgen.pipeline.incremental import keep, recall, recall_open

    path = tmp_path_factory.mktemp("cache") / "record.txt"
    body = b"".join(line + b"\n" for line in lines)
    assert keep(path, body) is None
    opened = recall_open(path, b"x")
    assert opened is not None
    with opened[0] as handle:
        assert handle.read() == recall(path) == body
    assert opened[1] == next((line + b"\n" for line in reversed(lines) if line.startswith(b"x")), None)
    raw = bytearray(path.read_bytes())
    at = data.draw(st.integers(0, len(raw) - 1))
    raw[at] ^= data.draw(st.integers(1, 255))
    path.write_bytes(bytes(raw))
    assert recall_open(path, b"x") is None
    assert recall(path) is None
    assert recall_open(tmp_path_factory.mktemp("none") / "gone.txt", b"x") is None


def _streamed(*paths: str) -> FileHashes:
    return FileHashes.streamed(iter([f"{p}\t{LINE}\n".encode() for p in paths] + [b"folders\t{}\n"]), b"folders\t{}\n")


def test_a_streamed_record_is_read_as_far_as_the_walk_asks():
    hashes = _streamed("/s/a", "/s/b", "/s/c", "/s/d")
    assert hashes.get("/s/a", STAT) == SHA and hashes.entries == {}  # in order: nothing held
    assert hashes.get("/s/c", STAT) == SHA and list(hashes.entries) == ["/s/b"]  # passed over: kept for later
    assert hashes.get("/s/b", STAT) == SHA and hashes.entries == {}
    assert hashes.get("/s/new", STAT) is None and list(hashes.entries) == ["/s/d"]  # not recorded: read to the end
    assert hashes.get("/s/d", STAT) == SHA and hashes.get("/s/d", STAT) is None
    hashes.read_through()
    assert hashes.ahead is None and hashes.entries == {}


def test_a_path_far_ahead_in_the_record_is_hashed_again(monkeypatch):
    """A walk asks for the files in the order the record holds them: a path more than
    LOOK_AHEAD lines further on is taken as not recorded (hashed again: safe), so that a
    run of new files does not make the build hold the whole record."""
    monkeypatch.setattr(contents, "LOOK_AHEAD", 2)
    hashes = _streamed("/s/a", "/s/b", "/s/c", "/s/d")
    assert hashes.get("/s/d", STAT) is None and list(hashes.entries) == ["/s/a", "/s/b"]
    assert hashes.get("/s/c", STAT) == SHA and hashes.get("/s/a", STAT) == SHA
    assert hashes.get("/s/d", STAT) == SHA  # still there, once the walk gets to it


def test_a_rebuild_reads_the_record_in_step_with_its_walk(tmp_path, settled, monkeypatch):
    """Saved by one build, the record is read by the next as its walk goes: not one line
    held beyond the one asked for, and every file taken from the record."""
    from reportgen.pipeline.incremental import load_file_hashes, save_file_hashes

    source, cache = tmp_path / "source", tmp_path / "cache"
    for i in range(30):
        (source / f"c{i:02d}").mkdir(parents=True)
        (source / f"c{i:02d}" / "response.txt").write_bytes(b"answer %d" % i)
        (source / f"c{i:02d}" / "image.svg").write_bytes(b"<svg>%d</svg>" % i)
    first = FileHashes()
    read_run_files(source, first)
    save_file_hashes(cache, source, first)
    again = load_file_hashes(cache, source)
    assert again is not None and again.entries == {}
    held: list[int] = []
    real = again.get
    monkeypatch.setattr(again, "get", lambda path, st: held.append(len(again.entries)) or real(path, st))
    listed = read_run_files(source, again)
    assert len(held) == 60 and max(held) == 0
    assert all(listed.data.kept(rel) is None for rel in listed.sha256)  # none read


def test_the_record_read_is_the_one_checked_even_if_another_is_saved_over_it(tmp_path):
    from reportgen.pipeline.incremental import keep, recall_open

    path = tmp_path / "record.txt"
    assert keep(path, b"first\nfolders\t{}\n") is None
    opened = recall_open(path, b"folders\t")
    assert opened is not None
    assert keep(path, b"second\nfolders\t{}\n") is None  # another build's, renamed over it
    with opened[0] as handle:
        assert handle.read() == b"first\nfolders\t{}\n"
