"""The one file walker: files in sorted-Path order, folders, and symbolic links listed
but never followed."""

from __future__ import annotations

import os

from reportgen.load.contents import read_run_files
from reportgen.load.files import list_folder, plain_files


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
