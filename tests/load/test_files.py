"""The one file walker: files in sorted-Path order, folders, and symbolic links listed
but never followed."""

from __future__ import annotations

import json
import os
import time

from hypothesis import given, settings
from hypothesis import strategies as st

import reportgen.load.files as files_module
from reportgen.load.contents import read_run_files
from reportgen.load.files import FolderNames, list_folder, plain_files


def test_the_walker_lists_links_without_following_them(tmp_path):
    root = tmp_path / "run"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "z.txt").write_bytes(b"z")
    (root / "a" / "y.txt").write_bytes(b"y")
    (root / "a-b.txt").write_bytes(b"-")
    (tmp_path / "outside.txt").write_bytes(b"secret")
    os.symlink(tmp_path / "outside.txt", root / "a" / "link.txt")
    os.symlink(tmp_path, root / "up")
    listing = list_folder(root)
    # Sorted as Paths sort (by parts), not as strings: "a/..." before "a-b.txt".
    assert [rel for rel, _ in listing.files] == ["a/b/z.txt", "a/y.txt", "a-b.txt"]
    assert sorted(listing.dirs) == ["a", "a/b"]
    assert [rel for rel, _ in listing.links] == ["a/link.txt", "up"]
    files = read_run_files(root)
    assert list(files.data) == ["a/b/z.txt", "a/y.txt", "a-b.txt"] and b"secret" not in files.data.values()
    assert files.links == ("a/link.txt", "up")
    assert plain_files(root) == listing.files


def _settled_walk(root, known):
    """The walker with a record of folder names, every folder counting as settled."""
    return list_folder(root, with_stat=True, known=known, settled_before=time.time() + 3600)


def _reads(monkeypatch) -> list[str]:
    """The folders the walker reads (rather than taking their names from the record)."""
    seen: list[str] = []
    real = os.scandir

    def counting(path):
        seen.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(files_module.os, "scandir", counting)
    return seen


def _names(listing):
    return [rel for rel, _ in listing.files], sorted(listing.dirs), [rel for rel, _ in listing.links]


def test_an_unchanged_folder_is_not_read_again_but_its_files_are_looked_at(tmp_path, monkeypatch):
    root = tmp_path / "run"
    (root / "calls" / "c1").mkdir(parents=True)
    (root / "calls" / "c1" / "response.txt").write_bytes(b"first")
    (root / "log.csv").write_bytes(b"x")
    os.symlink(tmp_path, root / "up")
    first = FolderNames()
    before = _settled_walk(root, first)
    again = FolderNames(json.loads(json.dumps(first.kept())))  # as the cache keeps it
    seen = _reads(monkeypatch)
    after = _settled_walk(root, again)
    assert seen == [] and _names(after) == _names(before)
    assert again.kept() == first.kept()  # kept for the next build
    # A file written in place leaves its folder's times alone: its own stat shows it.
    (root / "calls" / "c1" / "response.txt").write_bytes(b"second, longer")
    changed = _settled_walk(root, FolderNames(first.now))
    assert changed.stats[0].st_size == len(b"second, longer")


def test_a_folder_whose_entries_changed_is_read_again(tmp_path, monkeypatch):
    root = tmp_path / "run"
    (root / "c1").mkdir(parents=True)
    (root / "c1" / "a.txt").write_bytes(b"a")
    (root / "c2").mkdir()
    (root / "c2" / "b.txt").write_bytes(b"b")
    record = FolderNames()
    _settled_walk(root, record)
    (root / "c1" / "new.svg").write_bytes(b"<svg/>")  # added
    (root / "c2" / "b.txt").unlink()  # removed, and its name now a folder
    (root / "c2" / "b.txt").mkdir()
    seen = _reads(monkeypatch)
    listing = _settled_walk(root, FolderNames(record.now))
    assert sorted(seen) == ["b.txt", "c1", "c2"]  # the changed folders (and the new one), not the root
    assert _names(listing) == (["c1/a.txt", "c1/new.svg"], ["c1", "c2", "c2/b.txt"], [])


def test_a_tampered_folder_record_never_leads_out_of_the_folder(tmp_path):
    root = tmp_path / "run"
    root.mkdir()
    (root / "a.txt").write_bytes(b"a")
    (tmp_path / "secret.txt").write_bytes(b"secret")
    record = FolderNames()
    _settled_walk(root, record)
    for bad in ("../secret.txt", "..", ".", "a.txt\0", "a.txt\0\0", "a.txt\0../secret.txt", "/etc/passwd"):
        for form in (bad, [bad]):  # as kept (names joined by NUL), and as an older build kept them
            tampered = {path: [entry[0], form, "", ""] for path, entry in record.now.items()}
            listing = _settled_walk(root, FolderNames(tampered))
            assert _names(listing) == (["a.txt"], [], [])
    stamp = record.now[str(root)][0]
    for broken in ("nonsense", [stamp], [stamp, 5, [], []], [stamp, ["a.txt"], [], []], [stamp, [7], [], []],
                   [stamp, "a.txt", "", 5], [stamp, "a.txt", ""], {"a.txt": 1}):
        assert _names(_settled_walk(root, FolderNames({str(root): broken}))) == (["a.txt"], [], [])


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("a./\\:")), max_size=10))
def test_a_plain_relative_path_is_checked_as_its_parts_say(rel):
    from reportgen.load.files import _plain_relative

    by_parts = (not rel.startswith("/") and "\\" not in rel and ":" not in rel
                and all(part not in ("", ".", "..") for part in rel.split("/")))
    assert _plain_relative(rel) == by_parts


_NAMES = st.text(alphabet="ab-.0_", min_size=1, max_size=3).filter(lambda n: n not in (".", ".."))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(_NAMES, min_size=1, max_size=3), min_size=1, max_size=12))
def test_files_come_in_the_order_of_sorted_paths_however_the_tree_is_named(tmp_path_factory, paths):
    """Folder by folder, by name, is the order of sorted Paths: "a/b" before "a-b" and
    "a.txt" (as Paths compare parts), whatever the names and depths."""
    from pathlib import PurePosixPath

    root = tmp_path_factory.mktemp("tree")
    made: set[str] = set()
    for parts in paths:
        target = root.joinpath(*parts)
        if any(str(PurePosixPath(*parts[:i])) in made for i in range(1, len(parts) + 1)) or target.exists():
            continue  # a file where a folder would go, or the other way round
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"x")
        made.add(str(PurePosixPath(*parts)))
    listed = [rel for rel, _ in list_folder(root, with_stat=True).files]
    assert listed == [p.as_posix() for p in sorted(PurePosixPath(m) for m in made)]


@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.integers(-2**63, 2**63 - 1),
                          st.integers(-2**63, 2**63 - 1), st.integers(0, 2**64 - 1)), max_size=20))
def test_file_stamps_give_back_each_file_s_numbers(stamps):
    from reportgen.load.files import FileStamp, FileStamps

    kept = FileStamps()
    for size, mtime, ctime, inode in stamps:
        kept.append(FileStamp(size, mtime, ctime, inode))
    assert len(kept) == len(stamps) and list(kept) == stamps
    assert [kept[i] for i in range(-len(stamps), len(stamps))] == stamps + stamps
    assert kept[1:3] == stamps[1:3] and list(kept.sizes()) == [s[0] for s in stamps]
    assert all(kept[i].st_ino == s[3] and kept[i].st_mtime_ns == s[1] for i, s in enumerate(stamps))


def test_a_listing_stamps_each_file_as_its_lstat_does(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_bytes(b"abc")
    (tmp_path / "g.txt").write_bytes(b"")
    listing = list_folder(tmp_path, with_stat=True)
    for (rel, path), stamp in zip(listing.files, listing.stats):
        st = os.lstat(path)
        assert tuple(stamp) == (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
