"""Reading a source folder ahead of the build, from its far end, so that the system holds
its files by the time the build comes to them.

A large source is mostly not in the system's memory: a million calls are two million
small files, and listing and hashing them costs a disk read each, one at a time, while
the disk could serve more. A second process that goes through the same files from the
other end meets the build half way: the build finds the second half of the folder
already read (measured on 100,000 calls whose files were not in memory: 27 s to list
and hash, 17 s with a reader ahead; in memory, 4.7 s either way).

Its process runs at the lowest priority (``read_ahead_behind``): with the files in
memory, a rebuild reads its source with two processes of its own on two cores (the build
parsing the logs, a copy listing the folder), and a reader ahead beside them only took
their time (a second of CPU to look at 100,000 calls' files: the copy's listing took
2.84 s with it at the same priority, 2.45 s at the lowest). Waiting on the disk, the
build's processes leave it the cores it needs.

What it reads is thrown away: the build's own listing and hashes are all that count,
so nothing here can change a site. Like the walker (``files.list_folder``), it lists
symbolic links and never follows them, and reads regular files only (never a pipe).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator


def read_ahead_behind(folder: str, contents: bool) -> int:
    """``read_ahead`` in a process of its own, at the lowest priority: the system gives
    it a core only when the build's processes leave one (see the module's docstring)."""
    with contextlib.suppress(OSError, AttributeError):  # no os.nice on Windows: then as it is
        os.nice(19)
    return read_ahead(folder, contents)


def read_ahead(folder: str, contents: bool) -> int:
    """Look at every folder and regular file below ``folder`` in the reverse of the walk's
    order; then, with ``contents``, go through them again reading each file's bytes
    (metadata first, as the build lists a folder before it reads a file: the second
    time through, the folders are in memory). The number of files."""
    n = sum(1 for _ in _files_backwards(folder, lstat=True))
    if contents:
        for path in _files_backwards(folder, lstat=False):
            _read_through(path)
    return n


def _files_backwards(folder: str, lstat: bool) -> Iterator[str]:
    """Every regular file below ``folder`` (each lstat'ed, when asked), in the reverse of
    the order ``files.list_folder`` lists them. A stack of folders being gone through,
    not recursion: a tree may be deeper than Python's recursion limit."""
    stack = [_entries_backwards(folder)]
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                stack.append(_entries_backwards(entry.path))
            elif entry.is_file(follow_symlinks=False):
                if lstat:
                    entry.stat(follow_symlinks=False)
                yield entry.path
        except OSError:
            continue


def _entries_backwards(directory: str) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as found:
            return iter(sorted(found, key=_name, reverse=True))
    except OSError:  # gone, or not readable: the build's own walk reports it
        return iter(())


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _read_through(path: str) -> None:
    """Read a file's bytes, unless it is no longer a regular file (a pipe put in its
    place since it was listed is opened without waiting for a writer, and left)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            while os.read(fd, 1 << 20):
                pass
    except OSError:
        pass
    finally:
        os.close(fd)
