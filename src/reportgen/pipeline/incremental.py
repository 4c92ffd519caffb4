"""What a build remembers of the version it wrote, so that building the same inputs again
writes nothing.

A version's bytes depend only on its inputs: the source (its digest covers every input
file), the label, --redact, the theme's files, reportgen's own code, the versions of the
packages that write output, and each drawing's render as the render cache holds it. After
a build, a record in the cache folder (never in the site) keeps the key of those inputs,
the renders it used and each file it wrote (sha256, size, modification and change times).
A later build whose inputs have the same key, whose renders are still those in the
cache, and whose version folder holds exactly those files, untouched, is up to date: a
full build would write the same bytes, so it writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import zlib
from dataclasses import dataclass, field
from importlib import metadata, resources
from pathlib import Path
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO, Iterable, Mapping, TypeVar

from reportgen.atomic import write_atomic
from reportgen import __version__
from reportgen.load.contents import FOLDERS_TAG, FileHashes
from reportgen.load.files import plain_files
from reportgen.render import svg
from reportgen.render.render_cache import read_record
from reportgen.render.sheet_record import SheetRecord
from reportgen.render.svg import cache_key
from reportgen.write.store import StoreStamp, store_folder

RECORD_SCHEMA = "reportgen.built/3"

V = TypeVar("V")

# Packages whose output ends up in a version's files.
OUTPUT_PACKAGES = ("jinja2", "markupsafe", "markdown-it-py", "mdit-py-plugins", "numpy", "scipy", "pandas",
                   "altair", "vl-convert-python", "cairosvg", "defusedxml", "pyarrow")

if TYPE_CHECKING:
    from reportgen.render.report import RunReport


@dataclass(frozen=True)
class Remembered:
    """The summary of the build that wrote a version, as its record keeps it."""

    n_calls: int
    n_pages: int
    n_sheets: int
    n_drawings: int
    n_renders: int
    n_render_failures: int
    n_claims: int
    n_warnings: int
    built_at: str


def record_path(cache: Path, out: Path, version: str) -> Path:
    key = hashlib.sha256(f"{out.resolve()}\x1f{version}".encode()).hexdigest()
    return cache / "versions" / f"{key}.json"


def inputs_key(code: str, label: str, source_digest: str, redact: bool) -> str:
    """Everything but the renders that a version's bytes depend on (see the module text);
    ``code`` is ``code_key``."""
    return hashlib.sha256("\0".join((code, label, source_digest, str(redact))).encode()).hexdigest()


def code_key(source_root: Path, theme: str) -> str:
    """What the output depends on besides its inputs: reportgen's code and theme, the
    packages that write output, and the renderer's settings. A call sheet's name is
    keyed by this and its record (render.sheets.sheet_key)."""
    digest = hashlib.sha256()

    def add(text: str) -> None:
        digest.update(text.encode("utf-8") + b"\0")

    for item in (__version__, theme, f"zlib={zlib.ZLIB_RUNTIME_VERSION}"):  # zlib: the packs' bytes
        add(item)
    # The renderer's settings (the viewport comes from run.toml, which the digest covers).
    add(f"render={svg.RENDER_WIDTH}|{svg.MAX_RENDER_HEIGHT}|{svg.RENDER_SECONDS}|"
        f"{svg.RENDER_CODE_VERSION}")
    for name in OUTPUT_PACKAGES:
        try:
            add(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            add(f"{name}=none")
    # reportgen's own code and default theme: a changed template or module is a new build,
    # whether or not the version number moved.
    folders = [("reportgen", Path(str(resources.files("reportgen")))),
               ("theme", Path(str(resources.files("reportgen.themes") / "default")))]
    if theme != "default":
        folders.append(("user-theme", source_root / theme))
    for name, folder in folders:
        for rel, path in plain_files(folder) if folder.is_dir() else []:
            if rel.endswith((".pyc", ".pyo")):
                continue
            with open(path, "rb") as handle:
                add(f"{name}/{rel}:{hashlib.file_digest(handle, 'sha256').hexdigest()}")
    return digest.hexdigest()


def render_entries(runs: Iterable[RunReport]) -> dict[str, list]:
    """Each render a build used, by its cache key: what a cache record must still say."""
    entries: dict[str, list] = {}
    for run in runs:
        for sha, r in run.renders.items():
            entries[cache_key(sha, run.settings)] = [r.png_sha256, r.safe_svg_sha256, list(r.notes)]  # notes: see below
    return entries


def save_record(path: Path, key: str, renders: Mapping[str, list], summary: Remembered,
                stats: Mapping[str, tuple[int, int, int]], store_stats: Mapping[str, tuple[int, int, int]]
                ) -> str | None:
    """``stats``: each file's size, modification and change times, as it was written
    (its content is in the version's manifest.json, whose own times are recorded);
    ``store_stats`` the same of each store file the version uses."""
    files = {rel: list(stats[rel]) for rel in sorted(stats)}
    body = {"schema": RECORD_SCHEMA, "inputs": key, "renders": dict(sorted(renders.items())),
            "summary": summary.__dict__, "files": files,
            "store": {name: list(store_stats[name]) for name in sorted(store_stats)}}
    return keep(path, json.dumps(body, separators=(",", ":")).encode("utf-8"))


# Each cache file's first line: this tag and the sha256 of its name and the rest. A file
# whose rest does not hash to it (damaged, cut short, of another format, or moved from
# another name) is read as absent: the build does what it does without a cache.
CHECK_TAG = b"reportgen.cache/1 "


def _checker(path: Path) -> "hashlib._Hash":
    """The hash behind a cache file's check line, before its body is added."""
    return hashlib.sha256(path.name.encode() + b"\0")


def _check(path: Path, data: bytes) -> bytes:
    check = _checker(path)
    check.update(data)
    return check.hexdigest().encode()


def recall(path: Path) -> bytes | None:
    """The body of a cache file ``keep`` wrote, when it is whole and unchanged; else None."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    head, _, body = raw.partition(b"\n")
    if head != CHECK_TAG + _check(path, body):
        return None
    return body


def recall_open(path: Path, last_tag: bytes) -> tuple[BinaryIO, bytes | None] | None:
    """A cache file ``keep`` wrote, checked whole, open at its body's first line; with its
    last line that starts with ``last_tag`` (None when none does). None when the file is
    not whole or was changed. The file is read twice through the one handle: checked,
    then read by the caller, a line at a time (the record of a million calls' files is
    600 MB: read whole, decoded, then split, it was held three times over in the copy
    that lists the source, beside the build parsing its log). A file renamed over it
    meanwhile (another build's record) is not read: the handle stays on the one checked."""
    try:
        handle = open(path, "rb")
    except OSError:
        return None
    try:
        head = handle.readline()
        start = handle.tell()
        check = _checker(path)
        last = None
        for line in handle:
            check.update(line)
            if line.startswith(last_tag):
                last = line
        if head == CHECK_TAG + check.hexdigest().encode() + b"\n":
            handle.seek(start)
            return handle, last
    except OSError:
        pass
    handle.close()
    return None


def keep(path: Path, data: bytes | Iterable[bytes]) -> str | None:
    """Write a cache file whole (a temporary file renamed over it), with its check line;
    what went wrong, when the cache cannot be written (full, read-only): the cache is
    optional, the build is not. ``data``: the body, or its pieces in order (written as
    they come: the check line, which goes first, is written last, over a placeholder of
    its length)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    pieces = [data] if isinstance(data, bytes) else data
    check = _checker(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as out:
            out.write(CHECK_TAG + b"0" * check.digest_size * 2 + b"\n")
            for piece in pieces:
                check.update(piece)
                out.write(piece)
            out.seek(len(CHECK_TAG))
            out.write(check.hexdigest().encode())
        os.replace(tmp, path)
    except BaseException as exc:  # the pieces are made while written: whatever stops them, no file is left
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        if not isinstance(exc, OSError):
            raise
        return f"{exc.filename or path}: {exc.strerror or exc}"
    return None


def up_to_date(path: Path, key: str, cache: Path, folder: Path) -> Remembered | None:
    """The remembered summary when ``folder`` is what a build of these inputs would write
    again, byte for byte; None when anything differs or cannot be told."""
    try:
        body = json.loads(recall(path) or b"null")
        if body.get("schema") != RECORD_SCHEMA or body.get("inputs") != key:
            return None
        summary = Remembered(**body["summary"])
        if not _renders_unchanged(cache, body["renders"]) or not _files_unchanged(folder, body["files"]):
            return None
        if not _store_unchanged(store_folder(folder.parent), body["store"]):
            return None
        return summary
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _renders_unchanged(cache: Path, renders: Mapping[str, list]) -> bool:
    # A render that ran out of time is cached as such; were it gone, drawing it again
    # might come out differently, so the version would not be the same.
    # The notes the record keeps are those drawing added, the last of the render's (the
    # others are made again from the SVG, which the inputs' key covers).
    for key, (png, safe, notes) in renders.items():
        record = read_record(cache / f"{key}.json", key)
        if record is None or (record.png, record.safe_svg) != (png, safe):
            return False
        if record.drawn and tuple(notes[-len(record.drawn):]) != record.drawn:
            return False
    return True


def _files_unchanged(folder: Path, files: Mapping[str, list]) -> bool:
    """Exactly the recorded files, each a regular file with its recorded size and times
    (writing a file moves its change time, which no tool can set back)."""
    seen = 0

    def walk(directory: str, prefix: str) -> bool:
        nonlocal seen
        with os.scandir(directory) as entries:
            for entry in entries:
                rel = prefix + entry.name
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    if not walk(entry.path, rel + "/"):
                        return False
                    continue
                expected = files.get(rel)
                if (expected is None or not stat.S_ISREG(st.st_mode) or st.st_size != expected[0]
                        or st.st_mtime_ns != expected[1] or st.st_ctime_ns != expected[2]):
                    return False
                seen += 1
        return True

    return walk(str(folder), "") and seen == len(files)


def _store_unchanged(store: Path, files: Mapping[str, list]) -> bool:
    """Each store file the version uses, as it was when the version was built."""
    for name, (size, mtime, ctime) in files.items():
        try:
            st = os.stat(store / name)
        except OSError:
            return False
        if st.st_size != size or st.st_mtime_ns != mtime or st.st_ctime_ns != ctime:
            return False
    return True


SHEETS_SCHEMA = "reportgen.sheets/1"
MAX_SHEETS_KEPT = 500_000  # entries of the sheets record: some 100 bytes each


def load_sheets(cache: Path | None) -> dict[str, SheetRecord]:
    """The sheets earlier builds made, by key (an entry that is not a sheet's record is dropped)."""
    if cache is None:
        return {}
    try:
        body = json.loads(recall(cache / "sheets.json") or b"null")
        if body.get("schema") != SHEETS_SCHEMA:
            return {}
        read = ((key, SheetRecord.from_json(value)) for key, value in dict(body["sheets"]).items())
        return {key: record for key, record in read if record is not None and isinstance(key, str)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def save_sheets(cache: Path | None, earlier: Mapping[str, SheetRecord], now: Mapping[str, SheetRecord]
                ) -> str | None:
    """Keep the sheets of this build (last, so they are kept longest) and of earlier
    ones, up to MAX_SHEETS_KEPT."""
    if cache is None:
        return None
    items = _latest(earlier, now, MAX_SHEETS_KEPT)
    body = {"schema": SHEETS_SCHEMA, "sheets": {key: record.to_json() for key, record in items}}
    return keep(cache / "sheets.json", json.dumps(body, separators=(",", ":")).encode())


def _latest(earlier: Mapping[str, V], now: Mapping[str, V], limit: int) -> list[tuple[str, V]]:
    """The entries of ``earlier`` and ``now`` (this build's last, and winning), up to ``limit``
    of the latest."""
    kept = {k: v for k, v in earlier.items() if k not in now}
    kept.update(now)
    return list(kept.items())[-limit:]


STAMPS_SCHEMA = "reportgen.store-stamps/1"
MAX_STAMPS_KEPT = 2_000_000  # entries of the store's stamps: some 150 bytes each


def _stamps_path(cache: Path, out: Path) -> Path:
    return cache / "store" / f"{hashlib.sha256(str(store_folder(out).resolve()).encode()).hexdigest()}.json"


def load_store_stamps(cache: Path | None, out: Path) -> dict[str, StoreStamp]:
    """The stamps of the store files of ``out`` that earlier builds found whole or wrote
    (see ``write.store.present``); an entry that is not four whole numbers is dropped."""
    if cache is None:
        return {}
    try:
        body = json.loads(recall(_stamps_path(cache, out)) or b"null")
        if body.get("schema") != STAMPS_SCHEMA:
            return {}
        return {name: (v[0], v[1], v[2], v[3]) for name, v in dict(body["stamps"]).items()
                if isinstance(name, str) and isinstance(v, list) and len(v) == 4
                and all(type(n) is int for n in v)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def save_store_stamps(cache: Path | None, out: Path, earlier: Mapping[str, StoreStamp],
                      now: Mapping[str, StoreStamp]) -> str | None:
    """Keep this build's stamps (last, so they are kept longest) and earlier ones, up to
    MAX_STAMPS_KEPT."""
    if cache is None:
        return None
    items = _latest(earlier, now, MAX_STAMPS_KEPT)
    body = {"schema": STAMPS_SCHEMA, "stamps": {name: list(v) for name, v in items}}
    return keep(_stamps_path(cache, out), json.dumps(body, separators=(",", ":")).encode())


def _hashes_path(cache: Path, source: Path) -> Path:
    return cache / "files" / f"{hashlib.sha256(str(source.resolve()).encode()).hexdigest()}.tsv"


def load_file_hashes(cache: Path | None, source: Path) -> FileHashes | None:
    """The hashes of the source's files as the last build of it took them (see
    load.contents), read as the walk asks for them; None without a cache."""
    if cache is None:
        return None
    opened = recall_open(_hashes_path(cache, source), FOLDERS_TAG)
    if opened is None:
        return FileHashes()
    handle, folders = opened
    return FileHashes.streamed(_closing_lines(handle), folders)


def _closing_lines(handle: BinaryIO) -> Iterator[bytes]:
    """The lines of ``handle``, closed once read through, or once the reader lets go."""
    with handle:
        yield from handle


def file_hashes_size(cache: Path | None, source: Path) -> int:
    """The size in bytes of the record ``load_file_hashes`` would read (0 when there is none)."""
    if cache is None:
        return 0
    try:
        return _hashes_path(cache, source).stat().st_size
    except OSError:
        return 0


def save_file_hashes(cache: Path | None, source: Path, hashes: FileHashes | None) -> None:
    """Keep the hashes this build took (only those of files it listed)."""
    if cache is None or hashes is None:
        return
    keep(_hashes_path(cache, source), hashes.text_pieces())  # else hashed again next time


def load_clean(cache: Path | None, code: str) -> set[str] | None:
    """The sha256 of the artifact contents an earlier build found free of credentials,
    with this same code (a changed pattern scans everything again); None without a cache."""
    if cache is None:
        return None
    try:
        return set((recall(cache / "clean" / f"{code}.txt") or b"").decode("ascii").split())
    except (OSError, ValueError):
        return set()


def save_clean(cache: Path | None, code: str, clean: set[str]) -> str | None:
    if cache is None:
        return None
    folder = cache / "clean"
    try:
        for stale in folder.glob("*.txt"):  # another code's list is never read again
            if stale.name != f"{code}.txt":
                stale.unlink(missing_ok=True)
    except OSError:
        pass
    return keep(folder / f"{code}.txt", "\n".join(sorted(clean)).encode("ascii"))


@dataclass(frozen=True)
class IncrementalCheck:
    """The one door the pipeline goes through for incremental builds: is the version
    these inputs would write already there, untouched; and, after a build, what to
    remember of it. Without a cache, or before the source could be read, nothing is
    remembered and nothing is ever up to date."""

    record: Path | None  # where this version's record lives in the cache
    key: str | None  # the inputs' key
    cache: Path | None
    code: str = ""  # code_key: what sheets are keyed by besides their records
    unkept: list[str] = field(default_factory=list)  # what could not be kept in the cache, and why

    @classmethod
    def of(cls, source: Path, out: Path, label: str, theme: str, digest: str, redact: bool,
           cache: Path | None) -> "IncrementalCheck":
        if cache is None:
            return cls(None, None, None)
        code = code_key(source, theme)
        return cls(record_path(cache, out, label), inputs_key(code, label, digest, redact), cache, code)

    def earlier_build(self, folder: Path) -> Remembered | None:
        """The earlier build's summary when ``folder`` is what this build would write."""
        if self.record is None or self.key is None or self.cache is None:
            return None
        return up_to_date(self.record, self.key, self.cache, folder)

    def remember(self, runs: Iterable[RunReport], summary: Remembered, stats: Mapping[str, tuple[int, int, int]],
                 store_stats: Mapping[str, tuple[int, int, int]]) -> None:
        if self.record is not None and self.key is not None:
            self._unkept(save_record(self.record, self.key, render_entries(runs), summary, stats, store_stats))

    def _unkept(self, problem: str | None) -> None:
        if problem is not None and problem not in self.unkept:
            self.unkept.append(problem)

    def sheets(self) -> dict[str, SheetRecord]:
        """The sheets earlier builds made, by key (empty without a cache)."""
        return load_sheets(self.cache)

    def remember_sheets(self, earlier: Mapping[str, SheetRecord], now: Mapping[str, SheetRecord]) -> None:
        self._unkept(save_sheets(self.cache, earlier, now))

    def store_stamps(self, out: Path) -> dict[str, StoreStamp]:
        """The store files of ``out`` known whole, by their stamps (empty without a cache)."""
        return load_store_stamps(self.cache, out)

    def remember_store_stamps(self, out: Path, earlier: Mapping[str, StoreStamp],
                              now: Mapping[str, StoreStamp]) -> None:
        self._unkept(save_store_stamps(self.cache, out, earlier, now))

    def clean_contents(self) -> set[str] | None:
        """Artifact contents known to hold no credential (see ``load_clean``)."""
        return load_clean(self.cache, self.code)

    def remember_clean(self, clean: set[str] | None) -> None:
        if clean is not None:
            self._unkept(save_clean(self.cache, self.code, clean))


NO_CHECK = IncrementalCheck(None, None, None)
