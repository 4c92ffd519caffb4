"""site/store/: the files every version shares, each named by its content's sha256.

Raw artifacts, renders, request bodies, call sheets and packs are the bulk of a report,
and most of them are the same from one version to the next. Each is written once, beside
the versions, under the name ``<sha256>.<ext>``; a version lists the ones it uses, with
their hashes, in its manifest. A store file is never changed or removed by a build: the
name says what its content is, so an older version that uses it keeps working, and a
reader can check any store file with ``sha256sum`` alone.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from reportgen.atomic import write_atomic

STORE = "store"  # the folder's name, beside the versions

# A version's pages reach the store from its root as "../store/".
FROM_VERSION_ROOT = f"../{STORE}/"


def store_name(data: bytes, ext: str) -> str:
    return f"{hashlib.sha256(data).hexdigest()}.{ext}"


def store_folder(out: Path) -> Path:
    return out / STORE


def put(folder: Path, name: str, data: bytes) -> None:
    """Make ``folder/name`` hold ``data`` (named by its hash), writing only when it is
    missing or has the wrong size.

    A file already there with the right size is left untouched: its name is its
    content's hash, so rewriting it could only write the same bytes (a damaged one is
    what ``verify`` reports). A missing one is written in place: no version links it
    before the build that writes it is published, and one left short by a killed build
    has the wrong size, so the next build writes it again. One of the wrong size is
    replaced whole, never in place: a published version may link it."""
    path = os.path.join(folder, name)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return _create(folder, path, data)
    if st.st_size != len(data):
        _replace(folder, name, path, data)


def _create(folder: Path, path: str, data: bytes) -> None:
    try:
        fd = os.open(path, _NEW, 0o666)
    except FileNotFoundError:  # the store's first file
        os.makedirs(folder, exist_ok=True)
        fd = os.open(path, _NEW, 0o666)
    except FileExistsError:  # another process writes it at this moment: the same bytes
        return
    try:
        rest = memoryview(data)
        while rest:
            rest = rest[os.write(fd, rest):]
    finally:
        os.close(fd)


def _replace(folder: Path, name: str, path: str, data: bytes) -> None:
    write_atomic(path, data)


def present(folder: Path, name: str, size: int) -> bool:
    """Whether the store holds ``name`` with the size a build recorded for it."""
    try:
        return os.stat(os.path.join(folder, name)).st_size == size
    except OSError:
        return False


_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
