"""site/store/: the files every version shares, each named by its content's sha256.

Raw artifacts, renders, request bodies, call sheets and packs are the bulk of a report,
and most of them are the same from one version to the next. Each is written once, beside
the versions, under the name ``<sha256>.<ext>``; a version lists the ones it uses, with
their hashes, in its manifest. A store file is never changed or removed by a build but to
repair it: the name says what its content is, so an older version that uses it keeps
working, a reader can check any store file with ``sha256sum`` alone, and a build checks
the content of each one it reuses (a file damaged on disk is written again, whole).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from reportgen.atomic import write_all, write_atomic

STORE = "store"  # the folder's name, beside the versions

# A version's pages reach the store from its root as "../store/".
FROM_VERSION_ROOT = f"../{STORE}/"


def store_name(data: bytes, ext: str) -> str:
    return f"{hashlib.sha256(data).hexdigest()}.{ext}"


def store_folder(out: Path) -> Path:
    return out / STORE


def put(folder: Path, name: str, data: bytes) -> None:
    """Make ``folder/name`` hold ``data`` (named by its hash), writing only when it is
    missing or its content is not that hash.

    A file already there with the right content is left untouched. A missing one is
    written in place: no version links it before the build that writes it is
    published, and one left short by a killed build does not hash to its name, so the
    next build writes it again. One with other content (damaged on disk) is replaced
    whole, never in place: a published version may link it."""
    path = os.path.join(folder, name)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return _create(folder, path, data)
    if st.st_size != len(data) or not _holds(path, data):
        _replace(folder, name, path, data)


def _holds(path: str, data: bytes) -> bool:
    """Whether the file at ``path`` holds ``data`` (compared, not trusted from its size)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(data) + 1) == data
    except OSError:
        return False


def _create(folder: Path, path: str, data: bytes) -> None:
    try:
        fd = os.open(path, _NEW, 0o666)
    except FileNotFoundError:  # the store's first file
        os.makedirs(folder, exist_ok=True)
        fd = os.open(path, _NEW, 0o666)
    except FileExistsError:  # another process writes it at this moment: the same bytes
        return
    try:
        write_all(fd, data, path)
    except OSError:  # a full disk: no short file left behind, and the error names it
        os.close(fd)
        Path(path).unlink(missing_ok=True)
        raise
    os.close(fd)


def _replace(folder: Path, name: str, path: str, data: bytes) -> None:
    write_atomic(path, data)


_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


# A store file's size, modification and change times (ns) and inode, as a build saw them
# once it knew the file's content hashes to its name (see ``present``).
StoreStamp = tuple[int, int, int, int]


def stamp_of(st: os.stat_result) -> StoreStamp:
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def present(folder: Path, name: str, size: int, checked: Mapping[str, StoreStamp] | None = None) -> bool:
    """Whether the store holds ``name`` with the size a build recorded for it, and its
    content hashes to its name: a damaged file is never reused (see ``intact``).

    ``checked``: the stamps of the store files earlier builds checked or wrote. A file
    whose stamp is still the one recorded has not been written since (writing a file
    moves its change time, which no tool sets back), so it is not hashed again: a
    rebuild of a million calls reuses gigabytes of sheets and packs, and hashed them all."""
    path = os.path.join(folder, name)
    try:
        st = os.stat(path)
    except OSError:
        return False
    if st.st_size != size:
        return False
    if checked is not None and checked.get(name) == stamp_of(st):
        return True
    return intact(path, name)


def intact(path: str, name: str) -> bool:
    """Whether the file at ``path`` hashes to ``name`` (``<sha256>.<ext>``)."""
    try:
        with open(path, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return False
    return digest == name.split(".", 1)[0]
