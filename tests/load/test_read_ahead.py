"""Reading a source ahead of the build, from its far end: every regular file, never
through a symbolic link, in the reverse of the walker's order."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

import reportgen.load.read_ahead as read_ahead_module
from reportgen.load.files import list_folder
from reportgen.load.read_ahead import read_ahead, read_ahead_behind


def _tree(root, paths):
    for rel in paths:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_dir():
            path.write_bytes(rel.encode())


def _opened(monkeypatch) -> list[str]:
    opened: list[str] = []
    real = os.open

    def counting(path, *args, **kwargs):
        opened.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(read_ahead_module.os, "open", counting)
    return opened


def test_every_file_is_read_from_the_far_end_and_no_link_is_followed(tmp_path, monkeypatch):
    root = tmp_path / "run"
    _tree(root, ["a/b/z.txt", "a/y.txt", "a-b.txt", "c/d/e/f.txt"])
    _tree(tmp_path, ["outside/secret.txt"])
    os.symlink(tmp_path / "outside", root / "a" / "up")
    os.symlink(tmp_path / "outside" / "secret.txt", root / "c" / "secret.txt")
    os.mkfifo(root / "a" / "pipe")  # never opened: it would wait for a writer
    opened = _opened(monkeypatch)
    assert read_ahead(str(root), contents=True) == 4
    walked = [path for _, path in list_folder(root).files]
    assert opened == walked[::-1]
    assert not any("outside" in path or "secret" in path or "pipe" in path for path in opened)


def test_without_contents_no_file_is_opened(tmp_path, monkeypatch):
    _tree(tmp_path, ["a/b.txt", "c.txt"])
    opened = _opened(monkeypatch)
    assert read_ahead(str(tmp_path), contents=False) == 2
    assert opened == []


def test_a_missing_folder_is_left_to_the_build(tmp_path):
    assert read_ahead(str(tmp_path / "gone"), contents=True) == 0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "a-b", "a.b", "B", "é", "a b"]), min_size=1, max_size=4)
                .map("/".join), min_size=1, max_size=12, unique=True))
def test_the_order_is_the_walker_s_reversed_however_the_tree_is_named(tmp_path_factory, paths):
    root = tmp_path_factory.mktemp("tree")
    # A path that is also another's folder is a folder: only the leaves are files.
    leaves = [p for p in paths if not any(q.startswith(p + "/") for q in paths)]
    _tree(root, leaves)
    backwards = list(read_ahead_module._files_backwards(str(root), lstat=True))
    assert backwards == [path for _, path in list_folder(root).files][::-1]


def test_the_reader_ahead_runs_at_the_lowest_priority_in_its_own_process(tmp_path):
    """It takes a core only when the build leaves one; the process that starts it keeps its own."""
    import os

    from reportgen.fork import Forked

    (tmp_path / "a.txt").write_bytes(b"a")
    niceness = os.nice(0)
    copy = Forked(lambda: (read_ahead_behind(str(tmp_path), contents=True), os.nice(0)))
    assert copy.result() == (1, 19)
    assert os.nice(0) == niceness
