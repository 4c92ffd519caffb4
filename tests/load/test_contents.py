"""What a rebuild skips, and why that is safe: files hashed from an earlier build's
record only while unchanged, read only when needed, checked when read; contents known
to hold no credential not scanned again; PNGs written by the build decode as cairo's."""

from __future__ import annotations

import hashlib
import io
import os
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

import reportgen.load.contents as contents
from reportgen.errors import InputError
from reportgen.load.contents import FileHashes, read_run_files


@pytest.fixture
def reads(monkeypatch):
    """The paths the walker reads, in order."""
    seen: list[str] = []
    real = contents.read_bytes

    def counting(path):
        seen.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(contents, "read_bytes", counting)
    monkeypatch.setattr(contents, "RACY_SECONDS", -60.0)  # files written by the test count as settled
    return seen


def folder_of(tmp_path, **files):
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return tmp_path


def test_an_unchanged_file_keeps_its_recorded_hash_and_is_not_read(tmp_path, reads):
    folder = folder_of(tmp_path, a=b"alpha", b=b"beta")
    first = FileHashes()
    read_run_files(folder, first)
    assert sorted(reads) == ["a", "b"]
    again = FileHashes.from_text(first.to_text())
    reads.clear()
    files = read_run_files(folder, again)
    assert reads == []  # hashed from the record
    assert files.sha256 == {"a": hashlib.sha256(b"alpha").hexdigest(), "b": hashlib.sha256(b"beta").hexdigest()}
    assert files.data["a"] == b"alpha" and reads == ["a"]  # read when asked for, once
    assert files.data["a"] == b"alpha" and reads == ["a"]


def test_a_listing_that_keeps_no_bytes_hashes_the_same_and_reads_again_when_asked(tmp_path, reads):
    """A listing sent to the build by a forked copy (keep=False): the files it had to
    read are hashed as ever, their bytes not held; the build reads them when it needs them."""
    folder = folder_of(tmp_path, a=b"alpha", **{"b.svg": b"<svg/>"})
    kept = read_run_files(folder, FileHashes())
    told: list[object] = []
    unkept = read_run_files(folder, FileHashes(), told.append, keep=False)
    assert unkept.sha256 == kept.sha256 and unkept.data.sizes == kept.data.sizes
    assert [kept.data.kept(rel) for rel in kept.sha256] == [b"alpha", b"<svg/>"]
    assert [unkept.data.kept(rel) for rel in unkept.sha256] == [None, None] and told == []
    reads.clear()
    assert unkept.data["a"] == b"alpha" and reads == ["a"]  # read from the disk, checked against its hash


def test_a_changed_file_is_read_again(tmp_path, reads):
    folder = folder_of(tmp_path, a=b"alpha")
    record = FileHashes()
    read_run_files(folder, record)
    (folder / "a").write_bytes(b"omega")  # other bytes, other times
    reads.clear()
    files = read_run_files(folder, FileHashes.from_text(record.to_text()))
    assert reads == ["a"] and files.sha256["a"] == hashlib.sha256(b"omega").hexdigest()


def test_a_file_changed_during_the_build_stops_it(tmp_path, reads):
    folder = folder_of(tmp_path, a=b"alpha")
    record = FileHashes()
    read_run_files(folder, record)
    files = read_run_files(folder, FileHashes.from_text(record.to_text()))
    stat = os.stat(folder / "a")
    (folder / "a").write_bytes(b"ALPHA")  # same size, after it was listed
    os.utime(folder / "a", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(InputError, match="this file changed while the build was running"):
        files.data["a"]


def test_a_file_written_a_moment_ago_is_not_recorded(tmp_path, monkeypatch):
    monkeypatch.setattr(contents, "RACY_SECONDS", 2.0)
    folder = folder_of(tmp_path, fresh=b"new")
    record = FileHashes()
    read_run_files(folder, record)
    # Neither the file nor its folder: either could change again within the clock's tick.
    assert "fresh\t" not in record.to_text() and record.folders.now == {}
    later = time.time() + 3600
    monkeypatch.setattr(contents.time, "time", lambda: later)  # an hour on, the file has settled
    read_run_files(folder, record)
    assert "fresh\t" in record.to_text() and record.folders.kept()[str(folder)][1] == "fresh"


def test_a_known_clean_content_is_not_scanned_again(make_source, run_cli, tmp_path, monkeypatch):
    import reportgen.audit.credentials as credentials

    source, site = make_source(), tmp_path / "site"
    assert run_cli("build", source, "--out", site, "-q").exit_code == 0
    scanned: list[bytes] = []
    real = credentials.scan_text
    monkeypatch.setattr(credentials, "scan_text", lambda text, *a: scanned.append(text) or real(text, *a))
    assert run_cli("build", source, "--out", site, "--version", "v2", "-q").exit_code == 0
    assert not any("Here you go" in text for text in scanned)  # the responses: known clean
    # A new content is scanned, and a credential in it still stops the build.
    response = source / "experiments/mini/artifacts/X-1/response.txt"
    response.write_text(response.read_text() + "key: sk-proj-" + "s" * 40 + "\n")
    result = run_cli("build", source, "--out", site, "--version", "v3", "-q")
    assert result.exit_code == 1 and "looks like an OpenAI-style API key" in result.output


def test_a_written_png_decodes_as_the_drawing():
    import cairocffi

    from reportgen.render.png import opaque_png

    surface = cairocffi.ImageSurface(cairocffi.FORMAT_ARGB32, 5, 3)
    context = cairocffi.Context(surface)
    context.set_source_rgb(1, 1, 1)
    context.paint()
    context.set_source_rgb(0.2, 0.4, 0.6)
    context.rectangle(1, 1, 2, 1)
    context.fill()
    png = opaque_png(surface)
    back = cairocffi.ImageSurface.create_from_png(io.BytesIO(png))
    assert (back.get_width(), back.get_height()) == (5, 3)
    assert bytes(back.get_data()) == bytes(surface.get_data())  # every pixel, as drawn
    see_through = cairocffi.ImageSurface(cairocffi.FORMAT_ARGB32, 2, 2)  # transparent: cairo writes it
    assert opaque_png(see_through) is None


def test_a_call_folder_lists_its_files_in_path_order():
    """Files below a call's folder come in the order of their paths' parts, the order a
    sheet lists them in, also where string order differs ('a.txt' < 'a/b' as strings)."""
    from pathlib import PurePosixPath

    from reportgen.load.artifacts import _below

    names = sorted(["calls/1/a.txt", "calls/1/a/b.txt", "calls/1/z.txt", "calls/10/x", "calls/1-2/y",
                    "calls/2/only.txt"])
    assert _below(names, "calls/1") == sorted(["calls/1/a.txt", "calls/1/a/b.txt", "calls/1/z.txt"],
                                              key=lambda n: PurePosixPath(n).parts)
    assert _below(names, "calls/1")[0] == "calls/1/a/b.txt"
    assert _below(names, "calls/2") == ["calls/2/only.txt"]
    assert _below(names, "calls/3") == []


@given(st.lists(st.lists(st.sampled_from(["a", "b", "a.txt", "a-b", "1", "10", "z"]), min_size=1, max_size=4),
                max_size=30))
def test_files_below_a_folder_are_those_the_sorted_search_finds(paths):
    """Grouping a listing's files by folder gives, for every folder, what searching the
    sorted names gives, in the same order (folders with and without folders inside)."""
    from pathlib import PurePosixPath

    from reportgen.load.artifacts import _below, _FilesBelow

    files = {"/".join(parts) for parts in paths}
    dirs = {"/".join(parts[:i]) for parts in paths for i in range(1, len(parts))}
    files -= dirs  # a name is a file or a folder, never both
    listed = sorted(files, key=lambda n: PurePosixPath(n).parts)  # the walker's order
    below = _FilesBelow(listed, dirs)
    for folder in dirs | {"a", "zz"}:
        assert below(folder) == _below(sorted(files), folder)


def test_drawings_are_handed_on_before_the_other_files_are_read(tmp_path, reads):
    """A folder's SVGs are hashed first and handed to ``drawings`` (which starts their
    renders) before any other file is read; drawings all known from the record are not
    handed on (the build that recorded them rendered them)."""
    folder = folder_of(tmp_path, **{"a.txt": b"alpha", "b.svg": b"<svg/>", "c.SVG": b"<svg></svg>", "d.json": b"{}"})
    handed = []

    def drawings(files):
        handed.append((sorted(files.sha256), list(reads)))
        assert files.data["b.svg"] == b"<svg/>"

    record = FileHashes()
    files = read_run_files(folder, record, drawings)
    assert handed == [(["b.svg", "c.SVG"], ["b.svg", "c.SVG"])]  # only the drawings read so far
    assert list(files.sha256) == ["a.txt", "b.svg", "c.SVG", "d.json"]  # in listed order all the same
    assert files.sha256["d.json"] == hashlib.sha256(b"{}").hexdigest()
    handed.clear()
    read_run_files(folder, FileHashes.from_text(record.to_text()), drawings)
    assert handed == []
