"""A run folder's files: every one hashed, read only when something needs its bytes.

A report of 100,000 calls has some 200,000 artifact files, and a build after a few
corrected grades needs the bytes of almost none of them: the digest, the artifact list,
the credential scan of a content seen before, the renders in the cache and the sheets
already in the store all go by sha256. So a file is hashed when it is listed, and read
when its bytes are asked for. A file whose size, times and inode are those an earlier
build recorded keeps the hash recorded then (``FileHashes``, kept in the cache folder,
as git's index keeps the hashes of unchanged files); any other file is read and hashed.

Bytes read later are checked against the hash taken at listing time: a file changed
during the build stops it, rather than publish bytes under another content's name.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Protocol

from reportgen.errors import InputError, Problem
from reportgen.load.artifacts import artifact_kind
from reportgen.load.file_record import SHA256_CHARS, stamp_text
from reportgen.load.files import FileStamps, FolderNames, Stamp, entry_prefix, list_folder, read_bytes
from reportgen.load.kept_bytes import KeptBytes
from reportgen.model.source import RunFiles

# A file changed within this many seconds of the moment its hash is recorded could be
# changed again within the same tick of the file system's clock: it is not recorded.
RACY_SECONDS = 2.0


class FileHashes:
    """sha256 of files by path, valid while each file's size, times and inode are those
    recorded with it; and the names in each folder (``FolderNames``).

    Kept between builds as text (``to_text``; read back by ``streamed``, or whole by
    ``from_text``):

    - one line per file: its absolute path, a tab, and its ``HashedFile`` record
      (``size mtime_ns ctime_ns inode sha256``, see ``HashedFile.line``), in the order
      the walk hashed the files, which is the order the next walk asks for them;
    - last, the folders: ``folders``, a tab, and one line of JSON mapping each folder's
      absolute path to ``[stamp, files, folders, links]``, each kind's names joined by
      NUL (see ``FolderNames``).

    A file's line that does not parse as a record, or whose record does not match the
    file as it is now, is ignored: the file is read and hashed again.
    """

    def __init__(self, entries: Mapping[str, str] | None = None, folders: FolderNames | None = None,
                 ahead: Iterator[tuple[str, str]] | None = None) -> None:
        # path -> its record's line (``HashedFile.line``), as read: a record is looked at
        # only when its file is listed, and let go of then (see ``get``).
        self.entries: dict[str, str] = dict(entries or {})
        # The earlier record's lines not read yet, (path, line) in the order it was saved
        # (``streamed``): read as the walk asks for them.
        self.ahead = ahead
        # This build's record, by the folder its files were listed below (``put_below``).
        self.made: dict[str, _MadeBelow] = {}
        self.folders = folders or FolderNames()

    def __len__(self) -> int:
        """The number of files this build's record keeps."""
        return sum(len(made.rels) for made in self.made.values())

    def get(self, path: str, st: Stamp) -> str | None:
        """The recorded sha256 of the file at ``path`` when ``st`` matches its record: what
        ``HashedFile.parse`` of its line and ``matches(st)`` would say, found by comparing
        the line as read, without parsing it (a rebuild asks this of every file, 200,000
        for 100,000 calls: parsing each first took a quarter more time).

        The line is let go of once looked at: whatever this build keeps of the file, it
        keeps through ``put_below``, as the names and hashes the listing holds anyway.
        Kept to the end of the listing, the earlier record's lines and paths (and this
        build's copy of each path) were 0.8 GB for a million calls."""
        line = self.entries.pop(path, None)
        if line is None and self.ahead is not None:
            line = self._read_up_to(path)
        if line is not None and line[:-SHA256_CHARS] == stamp_text(st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                                                                    st.st_ino):
            return line[-SHA256_CHARS:]
        return None

    def _read_up_to(self, path: str) -> str | None:
        """The line of ``path`` from the record's lines not read yet, those before it kept
        for later (files asked for out of order, or gone). A build saves its record in
        the order its walk hashes the files, the order the next walk asks for them: read
        so, the record of a million calls' files is never held whole (it was 1 GB of
        strings, and 0.8 GB more that the memory allocator kept once they were let go of).
        A path not among the next ``LOOK_AHEAD`` lines is taken as not recorded: the file
        is read and hashed, as a new one is."""
        assert self.ahead is not None
        for recorded, line in islice(self.ahead, LOOK_AHEAD):
            if recorded == path:
                return line
            self.entries[recorded] = line
        return None

    def read_through(self) -> None:
        """Drop what is left of the earlier build's record once the source is listed: the
        lines of files gone (or not read), and the folders the walk did not look at."""
        self.entries = {}
        self.ahead = None
        self.folders.folders = {}

    def put_below(self, root: str, rel: str, st: Stamp, sha: str) -> int:
        """Record the sha256 of the file ``rel`` (``/``-separated) that a walk of ``root``
        listed, unless it changed too recently (``RACY_SECONDS``); its place among the
        folder's records (for ``fill_below``), -1 when not recorded. A build records every
        file it lists, 200,000 for 100,000 calls: its record is held as numbers and the
        two strings the listing keeps anyway (the name and the sha256), and made into
        lines only when saved, by ``to_text`` (a line and an absolute path a file, held
        from the listing to the end of the build, cost 60 MB)."""
        if not _settled(st):
            return -1
        made = self.made.get(root)
        if made is None:
            made = self.made[root] = _MadeBelow([], FileStamps(), [])
        made.rels.append(rel)
        made.stamps.append(st)
        made.shas.append(sha)
        return len(made.shas) - 1

    def fill_below(self, root: str, place: int, sha: str) -> None:
        """The sha256 of a file recorded by ``put_below`` before it was read (at its place
        in the order of the walk, which the next walk asks in)."""
        self.made[root].shas[place] = sha

    def lines(self) -> Iterator[tuple[str, str]]:
        """Every file this build's record keeps: (absolute path, its record's line), each
        listed folder's in the order its files were hashed."""
        for root, made in self.made.items():
            start = entry_prefix(root)  # as the walk names the file: the next build looks it up so
            for rel, st, sha in zip(made.rels, made.stamps, made.shas):
                path = start + (rel if os.sep == "/" else rel.replace("/", os.sep))
                yield path, stamp_text(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) + sha

    def to_text(self) -> str:
        return b"".join(self.text_pieces()).decode("utf-8")

    def text_pieces(self, lines_a_piece: int = 4096) -> Iterator[bytes]:
        """``to_text``'s bytes (UTF-8), a few thousand lines a piece, each made as it is
        written: the record of a million calls is some 600 MB of text, and its lines made
        all at once (and sorted) took 1.2 GB beside the build."""
        lines = iter(self.lines())
        while piece := list(islice(lines, lines_a_piece)):
            yield "".join(f"{path}\t{line}\n" for path, line in piece).encode("utf-8")
        # The folders on one line of JSON (any name survives it); paths are absolute,
        # so no file's line starts with the folders' tag. One JSON object, written a
        # slice of folders at a time.
        folders = list(self.folders.kept().items())
        yield _FOLDERS.encode() + b"{"
        for start in range(0, len(folders), lines_a_piece):
            body = json.dumps(dict(folders[start:start + lines_a_piece]), ensure_ascii=False, separators=(",", ":"))
            yield (b"," if start else b"") + body[1:-1].encode("utf-8")
        yield b"}\n"

    @classmethod
    def from_text(cls, text: str) -> "FileHashes":
        return cls.from_lines(text.splitlines())

    @classmethod
    def streamed(cls, lines: Iterable[bytes], folders: bytes | None) -> "FileHashes":
        """The record whose file lines are ``lines`` (UTF-8, read as the walk asks for
        them: see ``get``) and whose folders are the line ``folders``."""
        body = _folders_of(folders.decode("utf-8", "replace")) if folders is not None else {}
        return cls(folders=FolderNames(body), ahead=_file_lines(lines))

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> "FileHashes":
        """``from_text`` of the text these are the lines of (``str.splitlines``)."""
        entries = {}
        folders: dict[str, list] = {}
        for line in lines:
            if line.startswith(_FOLDERS):
                folders = _folders_of(line)
                continue
            entry = _entry(line)
            if entry is not None:  # compared with its file once listed (get)
                entries[entry[0]] = entry[1]
        return cls(entries, FolderNames(folders))


_FOLDERS = "folders\t"
FOLDERS_TAG = _FOLDERS.encode()  # how the record's line of folders starts
LOOK_AHEAD = 4096  # lines of the record read past, at most, for a path it does not hold there


def _folders_of(line: str) -> dict[str, list]:
    try:
        body = json.loads(line[len(_FOLDERS):])
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _file_lines(lines: Iterable[bytes]) -> Iterator[tuple[str, str]]:
    """(path, line) of each file's line of the record, up to its folders' line; a line
    that does not read is left out (its file is hashed again)."""
    for raw in lines:
        if raw.startswith(FOLDERS_TAG):
            return
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        # Split as str.splitlines splits the whole text (a '\n' byte is never inside a UTF-8 character).
        for part in text.splitlines():
            entry = _entry(part)
            if entry is not None:
                yield entry


def _entry(line: str) -> tuple[str, str] | None:
    """(path, record) of a file's line of the record; None for any other line."""
    path, _, record = line.rpartition("\t")
    return (path, record) if path and len(record) > SHA256_CHARS else None


def _settled(st: Stamp) -> bool:
    """Whether a file last changed long enough ago for its record to be kept (RACY_SECONDS)."""
    return max(st.st_mtime_ns, st.st_ctime_ns) < (time.time() - RACY_SECONDS) * 1e9


@dataclass(frozen=True, slots=True)
class _MadeBelow:
    """The files of one listed folder that this build hashed: names and sha256s as the
    build holds them, and each file's stamp as four numbers."""

    rels: list[str]
    stamps: FileStamps
    shas: list[str]


class FileContents(Mapping[str, bytes]):
    """A run folder's files by relative path: the bytes of each, read on first access
    and kept, and checked against the sha256 taken when the folder was listed. Each
    file's absolute path is made when it is read, from the folder's (``root``): a
    report of 100,000 calls lists some 200,000 files, and their paths, held, cost 40 MB
    (and as much again to send from a copy of the build that listed them)."""

    def __init__(self, root: str, sha256: Mapping[str, str], sizes: Mapping[str, int],
                 kept: KeptBytes | None = None) -> None:
        self.root, self.sha256, self.sizes = root, sha256, sizes
        self.kept_bytes = kept if kept is not None else KeptBytes()  # what the listing read
        self._read: dict[str, bytes] = {}  # what was read since
        self._keeps = True  # what is read is kept (until ``let_go``)

    def path(self, rel: str) -> str:
        """The absolute path of the listed file ``rel`` (KeyError for any other name)."""
        if rel not in self.sha256:
            raise KeyError(rel)
        return os.path.join(self.root, rel)

    def __getitem__(self, rel: str) -> bytes:
        data = self.kept_bytes.get(rel)
        if data is None:
            data = self._read.get(rel)
        if data is None:
            path = self.path(rel)
            data = read_bytes(path)
            if hashlib.sha256(data).hexdigest() != self.sha256[rel]:
                raise InputError([Problem(path, 0, "", "this file changed while the build was "
                                          "running; build again once nothing is writing to the source")])
            if self._keeps:
                self._read[rel] = data
        return data

    def __iter__(self) -> Iterator[str]:
        return iter(self.sha256)

    def __len__(self) -> int:
        return len(self.sha256)

    def __contains__(self, rel: object) -> bool:
        return rel in self.sha256

    def kept(self, rel: str) -> bytes | None:
        """The bytes of ``rel`` if this listing read and kept them (None otherwise: nothing is read)."""
        return self.kept_bytes.get(rel)

    def let_go(self) -> None:
        """Let go of the bytes the listing kept and those read since: a later read goes to
        the disk (checked against the sha256 again) and is not kept."""
        self.kept_bytes, self._read, self._keeps = KeptBytes(), {}, False

    def ref(self, rel: str) -> "FileRef":
        return FileRef(self, rel)


class FileRef:
    """One file of a run folder, for an artifact: its size now, its bytes when asked."""

    __slots__ = ("contents", "rel")

    def __init__(self, contents: FileContents, rel: str) -> None:
        self.contents, self.rel = contents, rel

    @property
    def size(self) -> int:
        return self.contents.sizes[self.rel]

    def read(self) -> bytes:
        return self.contents[self.rel]


class Apart(Protocol):
    """Starts ``step`` in a forked copy of the build when ``size`` files to read are enough
    for it to pay; gives the function that waits for the step's result (None when the copy
    failed), or None when the step was not started (the build reads every file itself)."""

    def __call__(self, step: Callable[[], "ReadPart"], size: int) -> Callable[[], "ReadPart | None"] | None: ...


@dataclass(frozen=True)
class ReadPart:
    """Files read and hashed by a forked copy of the build: the sha256 of each, in the
    order asked, and (when kept) their bytes end to end with each one's length: one
    buffer to send back, not an object a file."""

    shas: list[str]
    data: bytearray
    lengths: array[int]


def read_run_files(folder: Path, hashes: FileHashes | None = None,
                   drawings: Callable[[RunFiles], None] | None = None, keep: bool = True,
                   apart: Apart | None = None) -> RunFiles:
    """Every regular file below ``folder``, hashed: from ``hashes`` when a file is as it
    was recorded there, else read (and its bytes kept, unless ``keep`` is False: a listing
    handed to another process, which reads what it needs again; ``drawings``, which
    takes the bytes read, is then never called). ``drawings``: called
    with the folder's SVG files alone, once they are hashed and before any other file is
    read, when some of them had to be read (new or changed since the hashes were
    recorded), so that rendering them can start while the rest is read. ``apart``: where
    half of the files to read may be read by a forked copy of the build (a first build
    reads every file: 1.8 million for a million calls, on one core otherwise)."""
    known = hashes.folders if hashes is not None else None  # recorded hashes and names go by absolute path
    root = os.path.abspath(folder)
    listing = list_folder(root, with_stat=True, known=known, settled_before=time.time() - RACY_SECONDS)
    assert listing.stats is not None, "asked for with_stat"
    # Keyed in listed order, as every reader of the folder expects it, before the SVGs
    # are hashed first: no copy of either mapping to put it back in order.
    sizes: dict[str, int] = dict(zip((rel for rel, _ in listing.files), listing.stats.sizes()))
    sha256: dict[str, str] = dict.fromkeys(sizes, "")
    read = KeptBytes()  # a content many calls share (a drawing) is kept once
    drawn = [artifact_kind(rel) == "svg" for rel, _ in listing.files]
    hashing = _Hashing(root, listing.files, listing.stats, drawn, hashes, sha256, read if keep else None, apart)
    hashing.finish(hashing.start(drawings=True))
    others = hashing.start(drawings=False)
    if drawings is not None and read:  # new or changed drawings: an earlier build rendered the others
        svgs = {rel: sha256[rel] for rel, svg in zip(sha256, drawn) if svg}
        drawings(RunFiles(FileContents(root, svgs, {rel: sizes[rel] for rel in svgs}, read.share()), frozenset(), (),
                          svgs))
    hashing.finish(others)
    return RunFiles(FileContents(root, sha256, sizes, read.done()), frozenset(listing.dirs),
                    tuple(rel for rel, _ in listing.links), sha256)


@dataclass(frozen=True)
class _Hashing:
    """A listed folder's files being hashed into ``sha256``, the drawings first, then the
    others (``start``, then ``finish``): from the record when it holds them; else read,
    by the build and, for half of them when ``apart`` says it pays, by a forked copy.
    Asked of the record and recorded in that order: the order the next build's walk
    asks for them."""

    root: str
    files: list[tuple[str, str]]
    stats: FileStamps
    drawn: list[bool]  # whether each file is a drawing (an SVG)
    hashes: FileHashes | None
    sha256: dict[str, str]
    kept: KeptBytes | None
    apart: Apart | None

    def start(self, drawings: bool) -> "_Reading":
        """Hash the drawings (``drawings``) or every other file: those the record holds at
        once; the others being read, half of them by a forked copy when ``apart`` says so
        (forked here, before the build starts a thread: see ``fork.may_fork``)."""
        hashes, sha256 = self.hashes, self.sha256
        named: list[tuple[str, str]] = []  # the files to read, (relative path, path)
        places: list[int] = []  # where each is recorded, filled in once read (see ``finish``)
        for (rel, path), st, svg in zip(self.files, self.stats, self.drawn):
            if svg is not drawings:
                continue
            sha = hashes.get(path, st) if hashes is not None else None
            if sha is None:
                named.append((rel, path))
                places.append(hashes.put_below(self.root, rel, st, "") if hashes is not None else -1)
            else:
                hashes.put_below(self.root, rel, st, sha)  # type: ignore[union-attr]  # sha came from it
                sha256[rel] = sha
        half = len(named) // 2
        theirs = self.apart(partial(_read_apart, named[half:], self.kept is not None), len(named) - half) \
            if self.apart is not None and half else None
        return _Reading(named, places, half if theirs is not None else len(named), theirs)

    def finish(self, reading: "_Reading") -> None:
        """The files ``start`` left to read, read: the build's own, then the copy's."""
        shas = _read_into(reading.named[:reading.mine], self.kept)
        rest = reading.named[reading.mine:]
        theirs = reading.theirs() if reading.theirs is not None else None
        if theirs is None:  # none was read apart, or the copy failed: read here, meeting whatever it met
            shas += _read_into(rest, self.kept)
        else:
            if self.kept is not None:
                with memoryview(theirs.data) as data:
                    start = 0
                    for (rel, _), sha, length in zip(rest, theirs.shas, theirs.lengths):
                        self.kept.add(rel, sha, data[start:start + length].tobytes())
                        start += length
            shas += theirs.shas
        for (rel, _), place, sha in zip(reading.named, reading.places, shas):
            self.sha256[rel] = sha
            if place >= 0:
                self.hashes.fill_below(self.root, place, sha)  # type: ignore[union-attr]  # placed by it


@dataclass(frozen=True)
class _Reading:
    """Files being read (``_Hashing.start``): the build reads the first ``mine``, and the
    copy (``theirs`` waits for it) the rest."""

    named: list[tuple[str, str]]
    places: list[int]
    mine: int
    theirs: Callable[[], ReadPart | None] | None


def _read_into(named: list[tuple[str, str]], kept: KeptBytes | None) -> list[str]:
    """The sha256 of each (relative path, path) file, read; its bytes added to ``kept``."""
    shas = []
    for rel, path in named:
        data = read_bytes(path)
        sha = hashlib.sha256(data).hexdigest()
        if kept is not None:
            kept.add(rel, sha, data)
        shas.append(sha)
    return shas


def _read_apart(named: list[tuple[str, str]], keep: bool) -> ReadPart:
    """``_read_into`` in a forked copy: what it read, to send back."""
    shas, data, lengths = [], bytearray(), array("Q")
    for _, path in named:
        body = read_bytes(path)
        shas.append(hashlib.sha256(body).hexdigest())
        if keep:
            data += body
            lengths.append(len(body))
    return ReadPart(shas, data, lengths)
