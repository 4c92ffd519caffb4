"""The one file walker: every regular file of a folder, symbolic links listed,
never followed; and the check that an artifact path stays inside its folder."""

from __future__ import annotations

import os
import re
import stat
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, NamedTuple, Protocol, overload

from reportgen.model.source import RunFiles


def artifact_problem(folder: Path, rel: str, files: RunFiles | None = None) -> str | None:
    """Why ``rel`` is not a safe, existing artifact path inside ``folder`` (None if it is).

    A path ``files`` lists as a regular file or folder was reached without a symbolic
    link, so it is inside the folder: no need to resolve it."""
    if files is not None and (rel in files.sha256 or rel in files.dirs) and _plain_relative(rel):
        return None  # the usual case, without a Path object (100,000 rows)
    path = Path(rel)
    if path.is_absolute() or rel.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", rel):
        return f"{rel!r} is absolute; artifact paths are relative to the experiment folder"
    if ".." in path.parts or "\\" in rel:
        return f"{rel!r} leaves the experiment folder"
    if files is not None and ("/".join(path.parts) in files.data or "/".join(path.parts) in files.dirs):
        return None
    target = folder / path
    try:
        resolved = target.resolve(strict=True)
    except (FileNotFoundError, RuntimeError, OSError):
        return f"{rel!r} does not exist in the experiment folder"
    if not resolved.is_relative_to(folder.resolve()):
        return f"{rel!r} leaves the experiment folder (through a symbolic link)"
    if not (resolved.is_file() or resolved.is_dir()):
        return f"{rel!r} is neither a regular file nor a folder (a pipe or device is never read)"
    return None


def _plain_relative(rel: str) -> bool:
    """A '/'-separated relative path with no '..', '.', empty part, backslash or drive
    (as substrings of the path wrapped in '/': a split per call cost more, 100,000 times)."""
    wrapped = f"/{rel}/"
    return ("\\" not in rel and ":" not in rel and "//" not in wrapped and "/./" not in wrapped
            and "/../" not in wrapped)


class Stamp(Protocol):
    """What a build reads of a file's lstat: enough to tell the file unchanged."""

    @property
    def st_size(self) -> int: ...
    @property
    def st_mtime_ns(self) -> int: ...
    @property
    def st_ctime_ns(self) -> int: ...
    @property
    def st_ino(self) -> int: ...


class FileStamp(NamedTuple):
    st_size: int
    st_mtime_ns: int
    st_ctime_ns: int
    st_ino: int


class FileStamps(Sequence[FileStamp]):
    """Each listed file's ``Stamp``, as four numbers: an os.stat_result with the numbers
    it holds is some 500 bytes, a gigabyte for the files of a million calls held from
    the walk to the end of the listing."""

    def __init__(self) -> None:
        self.sizes_inodes = array("Q")
        self.times = array("q")  # modification and change times, ns (before 1970: negative)

    def append(self, st: Stamp) -> None:
        self.sizes_inodes.extend((st.st_size, st.st_ino))
        self.times.extend((st.st_mtime_ns, st.st_ctime_ns))

    def __len__(self) -> int:
        return len(self.times) // 2

    def __iter__(self) -> Iterator[FileStamp]:
        sizes_inodes, times = self.sizes_inodes, self.times
        for i in range(0, len(times), 2):
            yield FileStamp(sizes_inodes[i], times[i], times[i + 1], sizes_inodes[i + 1])

    def sizes(self) -> Iterator[int]:
        """Each file's size, in order."""
        return iter(self.sizes_inodes[::2])

    @overload
    def __getitem__(self, i: int) -> FileStamp: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[FileStamp]: ...

    def __getitem__(self, i: int | slice) -> FileStamp | Sequence[FileStamp]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        i %= len(self)
        sizes_inodes, times = self.sizes_inodes, self.times
        return FileStamp(sizes_inodes[2 * i], times[2 * i], times[2 * i + 1], sizes_inodes[2 * i + 1])


@dataclass(frozen=True)
class Listing:
    """A folder as the one walker sees it. Paths are relative, '/'-separated; files in
    the order of sorted Paths. Symbolic links are listed, never followed: what a link
    may lead to is each caller's own check."""

    files: list[tuple[str, str]]  # (relative path, path) of each regular file
    dirs: list[str]
    links: list[tuple[str, str]]  # (relative path, path) of each symbolic link
    stats: FileStamps | None = None  # of each file, in the order of ``files``, when asked for


class FolderNames:
    """The names in each folder an earlier walk read, valid while the folder's own
    modification and change times and inode are those recorded with them.

    Creating, removing or renaming an entry moves its folder's times, so an unchanged
    folder holds the names it held; its files are still each looked at (a file written
    in place leaves its folder's times alone). A report of 100,000 calls has some
    90,000 folders: reading each costs three system calls and a list, looking at its
    times one (a rebuild walks the source in a third of the time)."""

    def __init__(self, folders: Mapping[str, list] | None = None) -> None:
        # path -> [stamp, files, folders, links], each kind's names as one string joined
        # by NUL (which no name holds), as kept between builds and as ``put`` holds them:
        # a first build reads every folder, 90,000 for 100,000 calls, and a list and a
        # string a name cost 30 MB held to the end of the build, and twice that read back.
        self.folders: dict[str, list] = dict(folders or {})
        self.now: dict[str, list] = {}  # this walk's, to keep (``kept``)

    def get(self, path: str, st: os.stat_result) -> list[list[str]] | None:
        """The names of each kind (files, folders, links) recorded for the folder at
        ``path``, when its times and inode are still those recorded with them. The earlier
        record of the folder is let go of once looked at (this walk's keeps it when it holds)."""
        entry = self.folders.pop(path, None)
        if type(entry) is not list or len(entry) != 4 or entry[0] != _folder_stamp(st):
            return None
        names = _unjoined(entry[1:])
        if names is not None:
            self.now[path] = entry
        return names

    def put(self, path: str, st: os.stat_result, names: list[list[str]], settled_before: float) -> None:
        """Record a folder read just now, unless it changed so recently that a change
        within the same tick of the file system's clock could follow unseen."""
        if max(st.st_mtime_ns, st.st_ctime_ns) < settled_before * 1e9:
            self.now[path] = [_folder_stamp(st), *("\0".join(kind) for kind in names)]

    def kept(self) -> dict[str, list]:
        """This walk's record, to keep: path -> [stamp, files, folders, links]."""
        return self.now


def _unjoined(kinds: list) -> list[list[str]] | None:
    """Each kind's names, split; None for a record in any other form (an older build's,
    or one tampered with): the folder is then read."""
    if not all(type(joined) is str for joined in kinds):
        return None
    return [joined.split("\0") if joined else [] for joined in kinds]


def _folder_stamp(st: os.stat_result) -> str:
    return f"{st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}"


def list_folder(folder: Path | str, with_stat: bool = False, known: FolderNames | None = None,
                settled_before: float = 0.0) -> Listing:
    """Every regular file, folder and symbolic link below ``folder`` (plain strings: a
    Path object per file costs more than reading a small file). ``known``: the names an
    earlier walk found, taken for each folder whose times have not moved since, and
    where this walk's are recorded (those of folders changed before ``settled_before``,
    a time.time())."""
    files: list[tuple[str, str]] = []
    stats = FileStamps()
    dirs: list[str] = []
    links: list[tuple[str, str]] = []

    def walk(directory: str, prefix: str, st: os.stat_result | None) -> None:
        recorded = known.get(directory, st) if known is not None and st is not None else None
        entries = _looked_at(directory, recorded) if recorded is not None else None
        if entries is None:
            entries = _read_folder(directory, with_stat, known is not None)
            if known is not None and st is not None:
                known.put(directory, st, [[e[0] for e in entries if e[1] == kind] for kind in "fdl"], settled_before)
        # Each folder's entries by name, a folder's own before the next name's: the files
        # come out in the order of sorted Paths, with no sort of them all (and no key per
        # file: at a million calls those keys and the list sorted were a gigabyte).
        entries.sort(key=_name)
        for name, kind, entry_st, path in entries:
            rel = prefix + name
            if kind == "l":
                links.append((rel, path))
            elif kind == "d":
                dirs.append(rel)
                walk(path, rel + "/", entry_st)
            else:
                files.append((rel, path))
                if with_stat:
                    stats.append(entry_st)  # type: ignore[arg-type]  # taken when asked for (an lstat)

    root = str(folder)
    try:
        walk(root, "", os.stat(root) if known is not None else None)  # the folder itself may be reached by a link
    finally:
        # A recursive closure is a reference cycle (walk -> its cell -> walk): with the
        # collector paused for the build, it would keep every file's lstat to the end.
        del walk
    return Listing(files, dirs, sorted(links), stats if with_stat else None)


def _name(entry: tuple[str, str, os.stat_result | None, str]) -> str:
    return entry[0]


# (name, "f" | "d" | "l", its lstat when taken, its path)
Entries = list[tuple[str, str, os.stat_result | None, str]]


def _read_folder(directory: str, stat_files: bool, stat_dirs: bool) -> Entries:
    entries: Entries = []
    with os.scandir(directory) as found:
        for entry in found:
            if entry.is_symlink():
                entries.append((entry.name, "l", None, entry.path))
            elif entry.is_dir(follow_symlinks=False):
                entries.append((entry.name, "d", entry.stat(follow_symlinks=False) if stat_dirs else None, entry.path))
            elif entry.is_file(follow_symlinks=False):
                entries.append((entry.name, "f", entry.stat(follow_symlinks=False) if stat_files else None,
                                entry.path))
    return entries


def _plain_names(names: object) -> bool:
    """A list of names, each of one part: no separator, no NUL, not '.' or '..'
    (checked on the list as a whole: per name, it cost as much as the lstat)."""
    if type(names) is not list:
        return False
    try:
        joined = "".join(names)
    except TypeError:  # not all strings
        return False
    return (_SEPARATORS.search(joined) is None and "" not in names and "." not in names
            and ".." not in names)


_SEPARATORS = re.compile("[" + re.escape(os.sep + (os.altsep or "") + "\0") + "]")
_ENDS = tuple(filter(None, (os.sep, os.altsep)))


def entry_prefix(directory: str) -> str:
    """What the walk puts before a name to make the path of an entry of ``directory``, as
    os.scandir names its entries (os.path.join costs more than the lstat, 270,000 times)."""
    return directory if directory.endswith(_ENDS) else directory + os.sep
_KINDS = {"f": stat.S_ISREG, "d": stat.S_ISDIR, "l": stat.S_ISLNK}


def _looked_at(directory: str, recorded: list[list[str]]) -> Entries | None:
    """A folder's recorded names, each looked at again; None when one is gone, is no
    longer of its kind, or is not a plain name (the folder is then read)."""
    entries: Entries = []
    start = entry_prefix(directory)
    for kind, names in zip("fdl", recorded):
        if not _plain_names(names):
            return None  # a record that was tampered with never leads out of the folder
        is_kind = _KINDS[kind]
        for name in names:
            path = start + name
            try:
                st = os.lstat(path)
            except (OSError, ValueError):
                return None
            if not is_kind(st.st_mode):
                return None
            entries.append((name, kind, st, path))
    return entries


def read_bytes(path: str) -> bytes:
    """A file's bytes, in as few system calls as it takes (open() would add a buffer, an
    isatty check and a seek: twice the time, 200,000 small files over)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, size + 1)
        if len(data) == size:  # asked one byte more than there is and got the rest: the end
            return data
        chunks = [data]  # a file that grew meanwhile, or larger than one read returns
        while chunk := os.read(fd, 1 << 24):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def plain_files(folder: Path) -> list[tuple[str, str]]:
    """(path relative to ``folder``, path) of every regular file below it, in the order
    of sorted Paths; symbolic links are neither listed nor followed."""
    return list_folder(folder).files
