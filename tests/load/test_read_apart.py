"""A first build reads half of the files it must read in a forked copy: the same hashes,
the same bytes kept, the same record (in the order the next build's walk asks for it)
as a folder read by the build alone; a copy that fails leaves the reading to the build."""

from __future__ import annotations

import hashlib
import os

import pytest

import reportgen.load.contents as contents
from reportgen.fork import Forked
from reportgen.load.contents import FileHashes, read_run_files
from reportgen.load.kept_bytes import WHOLE_FROM


@pytest.fixture(autouse=True)
def settled(monkeypatch):
    monkeypatch.setattr(contents, "RACY_SECONDS", -60.0)  # files written by the test count as settled


def forked(step, size):
    copy = Forked(step)
    assert copy.pid is not None, "forked: the test runs no other thread"
    return copy.result


def failing(step, size):
    return lambda: None  # started, then failed: the build reads the copy's half itself


def not_started(step, size):
    return None


def a_folder(root):
    """Drawings and other files, some sharing a content (within and across the halves),
    one large enough to be kept as its own object, empty ones, in nested folders."""
    files = {"calls/a/image.svg": b"<svg>a</svg>", "calls/b/image.svg": b"<svg>shared</svg>",
             "calls/c/image.svg": b"<svg>shared</svg>", "calls/d/image.SVG": b"", "calls/e/image.svg": b"<svg>e</svg>",
             "calls/a/response.txt": b"alpha", "calls/b/response.txt": b"same", "calls/c/response.txt": b"same",
             "calls/d/response.txt": b"", "calls/e/transcript.json": b"{" + b"x" * WHOLE_FROM + b"}",
             "calls.csv": b"call_id\na\n", "run.toml": b"id = 'x'\n", "z/late.txt": b"same"}
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return files


def read(folder, record, apart, drawings=None):
    return read_run_files(folder, record, drawings, apart=apart)


@pytest.mark.parametrize("apart", [forked, failing, not_started])
def test_a_folder_read_half_apart_is_the_folder_read_alone(tmp_path, apart):
    files = a_folder(tmp_path / "run")
    alone_record, split_record = FileHashes(), FileHashes()
    alone = read(tmp_path / "run", alone_record, None)
    split = read(tmp_path / "run", split_record, apart)
    assert list(split.sha256.items()) == list(alone.sha256.items())  # the same hashes, in listed order
    assert split.sha256 == {rel: hashlib.sha256(data).hexdigest() for rel, data in files.items()}
    assert {rel: split.data.kept(rel) for rel in files} == files  # every byte kept, none read again
    assert list(split_record.lines()) == list(alone_record.lines())  # the record in the walk's order


@pytest.mark.parametrize("apart", [forked, failing])
def test_drawings_read_apart_are_handed_on_whole_before_the_other_files(tmp_path, apart):
    files = a_folder(tmp_path / "run")
    handed = []

    def drawings(listed):
        handed.append({rel: listed.data[rel] for rel in listed.sha256})

    read(tmp_path / "run", FileHashes(), apart, drawings)
    assert handed == [{rel: data for rel, data in files.items() if rel.lower().endswith(".svg")}]


def test_a_rebuild_reads_apart_only_what_changed_and_records_it_in_place(tmp_path):
    """Files changed since the record are read (by the build and the copy); the record
    this build keeps lists every file where the next walk looks for it."""
    files = a_folder(tmp_path / "run")
    first = FileHashes()
    read(tmp_path / "run", first, None)
    changed = {"calls/b/image.svg": b"<svg>b2</svg>", "calls/e/image.svg": b"<svg>e2</svg>",
               "calls/a/response.txt": b"alpha, again", "z/late.txt": b"late, again"}
    for rel, data in changed.items():
        path = tmp_path / "run" / rel
        path.write_bytes(data)
        os.utime(path, ns=(1, 1))  # an old time: only the size and change time tell it moved
    files |= changed
    asked = []

    def counting(step, size):
        asked.append(size)
        return forked(step, size)

    alone_record, split_record = FileHashes.from_text(first.to_text()), FileHashes.from_text(first.to_text())
    alone = read(tmp_path / "run", alone_record, None)
    split = read(tmp_path / "run", split_record, counting)
    assert asked == [1, 1]  # two drawings, then two other files to read: one of each apart
    assert split.sha256 == alone.sha256 == {rel: hashlib.sha256(data).hexdigest() for rel, data in files.items()}
    assert {rel: split.data.kept(rel) for rel in changed} == changed
    assert all(split.data.kept(rel) is None for rel in set(files) - set(changed))  # taken from the record
    assert list(split_record.lines()) == list(alone_record.lines())
    assert [path for path, _ in split_record.lines()] == [path for path, _ in first.lines()]
