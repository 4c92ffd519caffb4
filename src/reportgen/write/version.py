"""Atomic write of site/<version>/ plus manifest.json, versions.json, index.html, 404.html.

A version is written into a temporary folder beside its final place and renamed into
place only when complete, so a failed or interrupted build never leaves a half-written
version. A published version is immutable: rebuilding a label from a different source
fails unless forced.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import tempfile
import time
from functools import partial
import tomllib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import jinja2

from reportgen.atomic import write_all, write_atomic
from reportgen.errors import ReportgenError
from reportgen.fork import Forked, may_fork
from reportgen.load.contents import RACY_SECONDS
from reportgen.model.config import parse_timestamp

from reportgen.write import anchors, store
from reportgen.write.task_queue import TaskQueue, window_jobs

MANIFEST_SCHEMA = "reportgen.manifest/2"

# GitHub refuses a pushed file over 100 MB (and GitHub Pages sites over 1 GB): a larger
# store file is published, with a warning that names the call it comes from.
LARGE_FILE_BYTES = 100 * 1000 * 1000


class PublishError(ReportgenError):
    pass


@dataclass(frozen=True)
class VersionEntry:
    version: str
    title: str
    built_at: str
    source_digest: str
    aliases: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"version": self.version, "title": self.title, "built_at": self.built_at,
                "source_digest": self.source_digest, "aliases": list(self.aliases)}


def manifest_from_hashes(version: str, hashes: Mapping[str, str], stored: Mapping[str, str] = {}) -> bytes:
    """The version's own files under "files"; under "store", the shared files it uses,
    named as in ``../store/`` (what a reader who downloads one version fetches besides)."""
    body = {
        "schema": MANIFEST_SCHEMA, "version": version,
        "files": {path: "sha256:" + hashes[path] for path in sorted(hashes)},
        "store": {name: "sha256:" + stored[name] for name in sorted(stored)},
    }
    return (json.dumps(body, indent=1) + "\n").encode("utf-8")


def _existing_digest(folder: Path) -> str | None:
    try:
        return json.loads((folder / "data" / "results.json").read_text("utf-8")).get("source_digest")
    except (OSError, ValueError, AttributeError):
        return None


def check_publishable(out: Path, version: str, digest: str, force: bool) -> None:
    """Refuse, before any work, to overwrite a published version with other content."""
    existing = out / version
    if existing.exists() and not force:
        old = _existing_digest(existing)
        if old != digest:
            raise PublishError(
                f"{existing}: version {version!r} is already published from another source "
                f"({old or 'unknown digest'}; this source is {digest}). Published versions are "
                "immutable: choose a new label with --version, or replace it with --force.")


def remove_leftovers(out: Path, version: str) -> None:
    """What a killed build of ``version`` left: never part of the site, safe to remove."""
    for stale in out.glob(f".{version}.building-*"):
        shutil.rmtree(stale, ignore_errors=True)


class VersionWriter:
    """out/<version>/, written file by file as the build makes them, atomically, and the
    shared files it uses in out/store/.

    Files go into a temporary folder beside the final place as they come (nothing is
    held in memory but their hashes); ``commit`` adds manifest.json and renames the
    folder into place. Leaving the ``with`` block without committing (an error, an
    interrupt) removes the temporary folder, so no half-written version is ever seen.
    Store files (``share``) appear one by one, each whole: a store file no version lists
    yet is never seen by a reader, who follows links from a version."""

    def __init__(self, out: Path, version: str, processes: int | None = None, calls: int = 0,
                 checked_store: Mapping[str, store.StoreStamp] | None = None) -> None:
        self.out = out
        self.version = version
        self.processes = processes or os.cpu_count() or 1  # that write pages, the build's own included
        self.calls = calls  # the version's: how many windows its jobs are run in (``run_tasks``)
        self.hashes: dict[str, str] = {}
        # Each file's size and modification and change times as written: what a later
        # build checks to tell that the version is untouched (no second pass of stat calls).
        self.stats: dict[str, tuple[int, int, int]] = {}
        self.stored: dict[str, str] = {}  # store file name -> sha256, for the manifest
        # Each store file's size and times once the version is committed (taken then:
        # helpers may write the same new file at once, and the last one's is what stays).
        self.store_stats: dict[str, tuple[int, int, int]] = {}
        # The store files earlier builds found whole (``store.present``), and those this
        # version uses, as ``commit`` finds them: what the next build need not hash again.
        self.checked_store = checked_store or {}
        self.store_stamps: dict[str, store.StoreStamp] = {}
        self.notes: dict[str, object] = {}  # what jobs hand back to the build (see ``note``)
        self.anchors: dict[str, anchors.PageAnchors] = {}  # each page's ids and links to fragments
        self.store = store.store_folder(out)
        self.tmp: Path | None = None
        self.parent: int | None = None  # in a forked helper: the build's process id

    def __enter__(self) -> "VersionWriter":
        self.out.mkdir(parents=True, exist_ok=True)
        remove_leftovers(self.out, self.version)
        # Made as any folder the build makes (0777 less the umask), not mkdtemp's 0700: the
        # version is renamed from it, and a web server must be able to list it.
        self.tmp = self.out / f".{self.version}.building-{os.getpid()}-{secrets.token_hex(4)}"
        self.tmp.mkdir()
        return self

    def add(self, rel: str, data: bytes) -> None:
        assert self.tmp is not None, "add() outside the with block"
        if self.parent is not None and os.getppid() != self.parent:
            os._exit(1)  # a helper whose build was killed: write nothing more
        digest = hashlib.sha256(data).hexdigest()
        if self.hashes.get(rel) == digest:
            return  # the same content-addressed file from another run
        self.stats[rel] = _write_file(self.tmp, rel, data)
        self.hashes[rel] = digest
        if rel.endswith(".html"):
            self.anchors[rel] = anchors.scan(data)

    def add_pieces(self, rel: str, pieces: Iterable[bytes]) -> None:
        """``add`` for a data file made a piece at a time and written as it is made, never
        held whole: results.json lists every claim's calls, some 300 MB for a million
        calls, which as one string, its pieces and its bytes took three times that."""
        assert self.tmp is not None and not rel.endswith(".html"), "add_pieces() is for data files"
        if self.parent is not None and os.getppid() != self.parent:
            os._exit(1)
        self.stats[rel], self.hashes[rel] = _write_pieces(self.tmp, rel, pieces)

    def share(self, name: str, data: bytes) -> str:
        """Put ``data`` in the store as ``name`` (``<sha256>.<ext>``, from ``store_name``)
        and list it in this version's manifest; the name, for links."""
        if self.parent is not None and os.getppid() != self.parent:
            os._exit(1)
        if name not in self.stored:
            store.put(self.store, name, data)
            self.stored[name] = name.split(".", 1)[0]
            if len(data) > LARGE_FILE_BYTES:  # said by the build, naming the call (see ``large_files``)
                self.note(f"large:{name}", len(data))
        return name

    def large_files(self) -> dict[str, int]:
        """Store files this version wrote over LARGE_FILE_BYTES, by name: their sizes."""
        return {key[6:]: int(size) for key, size in self.notes.items()  # type: ignore[call-overload]
                if key.startswith("large:")}

    def reuse(self, name: str, size: int) -> bool:
        """List a store file an earlier build wrote, when it is there with its size."""
        if name in self.stored:
            return True
        if not store.present(self.store, name, size, self.checked_store):
            return False
        self.stored[name] = name.split(".", 1)[0]
        return True

    def note(self, key: str, value: object) -> None:
        """Hand a JSON value back to the build from a job of ``run_tasks``, wherever it ran."""
        self.notes[key] = value

    def ticks(self, tick: Callable[[], None]) -> Callable[[], None]:
        """``tick`` as the jobs of ``run_tasks`` may call it: only the build's own
        process moves the progress bar (a forked helper's copy of it goes nowhere)."""
        owner = os.getpid()
        return lambda: tick() if os.getpid() == owner else None

    def run_tasks(self, tasks: Sequence[Callable[[], None]]) -> None:
        """Run jobs that ``add`` files, shared with forked copies of this process on
        every core: pages are CPU-bound and independent. Each process takes the next
        job not yet taken, so all finish together however uneven the jobs (the first
        ones are the large pages); each writes its files into the temporary folder, and
        a helper (a forked copy: ``reportgen.fork``) sends back only their hashes.

        Helpers live for one window of jobs (``window_jobs``) and a new one is forked for
        the next. A forked copy shares the build's memory until either process touches a
        page of it, and reading a Python object touches it (its reference count): a
        helper that lived through every job would end up with a copy of each page the
        jobs read, every call of a million-call run once over (a gigabyte and more).
        A helper that ends frees the pages it copied, so the copies at any time are
        those of one window's calls."""
        n = min(self.processes, len(tasks))
        if n < 2 or not may_fork():
            for task in tasks:
                task()
            return
        queue = TaskQueue(tasks)
        window = window_jobs(len(tasks), self.calls)
        for end in range(window, len(tasks) + window, window):
            queue.end = min(end, len(tasks))
            if not may_fork():  # a thread started meanwhile: this process takes the rest alone
                queue.end = len(tasks)
                queue.run()
                return
            self._run_window(queue, n)

    def _run_window(self, queue: TaskQueue, n: int) -> None:
        """Jobs up to ``queue.end``, taken by this process and ``n - 1`` helpers forked for them."""
        helpers: list[Forked[_Written]] = []
        try:
            parent = os.getpid()
            helpers = [Forked(partial(self._helper, queue, parent), report=True) for _ in range(1, n)]
            queue.run()
            for helper in helpers:
                share = helper.result()
                if share is None:
                    raise PublishError("a page-writing process failed; nothing was published")
                if share.error is not None:  # a full disk, say: the same one line as in the build's own process
                    raise OSError(*share.error)
                self.hashes.update(share.hashes)
                self.stats.update(share.stats)
                self.stored.update(share.stored)
                self.notes.update(share.notes)
                self.anchors.update(share.anchors)
            helpers = []
        finally:
            if helpers:  # after a failure here, the helpers take no more jobs
                queue.stop()
            for helper in helpers:  # and are stopped
                helper.stop()

    def _helper(self, queue: TaskQueue, parent: int) -> _Written:
        """In a forked helper: take jobs until none is left in the window; what they wrote."""
        self.parent, self.hashes, self.stats = parent, {}, {}
        self.stored, self.notes, self.anchors = {}, {}, {}
        try:
            queue.run()
        except OSError as exc:  # sent back, not printed: the build says it as its own, in one line
            queue.stop()  # no process takes another job
            if exc.errno is None:
                raise
            return _Written({}, {}, {}, {}, {}, (exc.errno, exc.strerror or os.strerror(exc.errno), exc.filename))
        return _Written(self.hashes, self.stats, self.stored, self.notes, self.anchors)

    def commit(self) -> Path:
        assert self.tmp is not None, "commit() outside the with block"
        dead = anchors.broken(self.anchors)
        if dead:  # a page's link to a part of a page that is not there: never published
            shown = "; ".join(dead[:5]) + (f"; and {len(dead) - 5} more" if len(dead) > 5 else "")
            raise PublishError(f"{len(dead)} link(s) to an anchor that no page of {self.version} holds "
                               f"(nothing was published; please report it): {shown}")
        manifest = manifest_from_hashes(self.version, self.hashes, self.stored)
        settled = (time.time() - RACY_SECONDS) * 1e9
        for name in self.stored:
            st = os.stat(self.store / name)
            self.store_stats[name] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            # Each one was written by this build or found whole by it: its stamp is kept,
            # unless it changed so recently that a change in the same tick could follow unseen.
            if max(st.st_mtime_ns, st.st_ctime_ns) < settled:
                self.store_stamps[name] = store.stamp_of(st)
        self.stats["manifest.json"] = _write_file(self.tmp, "manifest.json", manifest)
        self.hashes["manifest.json"] = hashlib.sha256(manifest).hexdigest()  # every file of the version
        final = self.out / self.version
        if final.exists():
            # Two renames: the old version stays whole until the new one is complete.
            old = Path(tempfile.mkdtemp(prefix=f".{self.version}.replaced-", dir=self.out))
            old.rmdir()
            final.rename(old)
            self.tmp.rename(final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            self.tmp.rename(final)
        self.tmp = None
        return final

    def __exit__(self, *exc) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


@dataclass(frozen=True)
class _Written:
    """What a page-writing helper sends back: each file's hash and stat, the store files, the notes."""

    hashes: dict[str, str]
    stats: dict[str, tuple[int, int, int]]
    stored: dict[str, str]
    notes: dict[str, object]
    anchors: dict[str, anchors.PageAnchors]
    error: tuple[int, str, str | None] | None = None  # a system error (errno, message, path) that stopped it


def _write_file(root: Path, rel: str, data: bytes) -> tuple[int, int, int]:
    """Write one file; its size, modification and change times (ns) as written."""
    fd, path = _created(root, rel)
    try:
        write_all(fd, data, path)
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _write_pieces(root: Path, rel: str, pieces: Iterable[bytes]) -> tuple[tuple[int, int, int], str]:
    """Write one file from its pieces, in order: its size and times as ``_write_file``
    gives them, and its sha256."""
    fd, path = _created(root, rel)
    digest = hashlib.sha256()
    try:
        for piece in pieces:
            digest.update(piece)
            write_all(fd, piece, path)
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns), digest.hexdigest()


def _created(root: Path, rel: str) -> tuple[int, str]:
    """``rel`` below ``root`` created empty and open for writing, and its path."""
    # Paths come from our own renderer, but a name is never allowed to climb out.
    # (Plain strings: pathlib's parsing costs more than writing a small page.)
    if rel.startswith(("/", "\\")) or ".." in rel.replace("\\", "/").split("/"):
        raise PublishError(f"refusing to write {rel!r}: it leaves the site folder")
    path = os.path.join(root, rel)
    # Four system calls a file; open() would add a buffer, an isatty check, a seek and
    # a second fstat, 200,000 times over on a large site.
    try:
        return os.open(path, _CREATE, 0o666), path
    except FileNotFoundError:  # the first file of its folder: one mkdir, not one per file
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return os.open(path, _CREATE, 0o666), path


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)


def write_site_index(out: Path, entry: VersionEntry, env: jinja2.Environment, base_url: str,
                     previous: str | None = None, warn: Callable[[str], None] = lambda _: None) -> None:
    """versions.json (merged with earlier versions), index.html, 404.html, .nojekyll.
    ``previous``: the version ``entry`` supersedes, whose page of changes is linked.

    versions.json is derived from the version folders: one that does not read as a list
    of versions, or that misses a version folder, is rebuilt from their manifests, and
    ``warn`` is told; never shortened because it was damaged."""
    versions_path = out / "versions.json"
    entries = listed_versions(out, entry.title, warn, entry.version)
    entries = [e for e in entries if e.get("version") != entry.version and (out / str(e.get("version"))).is_dir()]
    entries.append(entry.to_json())
    entries.sort(key=_newest_first, reverse=True)
    for index, e in enumerate(entries):
        e["aliases"] = ["latest"] if index == 0 else []
    write_atomic(versions_path, (json.dumps(entries, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    latest = str(entries[0]["version"])
    title = str(entries[0].get("title", ""))
    shown = [dict(e, **own_date(out, str(e.get("version")), str(e.get("built_at", "")))) for e in entries]
    html = env.get_template("versions.html").render(title=title, latest=latest, versions=shown,
                                                    changes=diff_pages(out, entry.version, previous))
    write_atomic(out / "index.html", html.encode("utf-8"))
    base = base_url if not base_url or base_url.endswith("/") else base_url + "/"
    write_atomic(out / "404.html", env.get_template("404.html").render(base_url=base).encode("utf-8"))
    (out / ".nojekyll").touch()
    # Versions are immutable, so "a newer version exists" is said from outside them.
    rules = "".join(f".version-{_css_escape(str(e['version']))} .newer-version {{ display: block; }}\n"
                    for e in entries[1:])
    write_atomic(out / "versions.css", f"/* versions older than {latest} */\n{rules}".encode("utf-8"))


def _newest_first(entry: Mapping[str, object]) -> tuple[datetime, str]:
    """A version's place in versions.json: by the instant it was built (timestamps with
    different UTC offsets compare as times, not as text), then by label; a version whose
    time cannot be read counts as the oldest."""
    instant = parse_timestamp(str(entry.get("built_at", "")))
    return (instant.astimezone(timezone.utc) if instant is not None else _NO_TIME, str(entry.get("version", "")))


_NO_TIME = datetime.min.replace(tzinfo=timezone.utc)


def own_date(out: Path, version: str, listed: str) -> dict[str, str]:
    """A version's date as the version itself records it (data/results.json), and what
    it was taken from: the built_at its reportgen.toml sets, else its newest call."""
    folder = out / version / "data"
    built_at = listed
    try:
        with open(folder / "results.json", "rb") as handle:  # the head: a few short lines
            head = handle.read(4096).decode("utf-8", "replace")
        found = re.search(r'^ *"built_at": *("(?:[^"\\]|\\.)*")', head, re.M)
        built_at = json.loads(found.group(1)) if found else listed
    except (OSError, ValueError):
        pass
    try:
        dated_by = "reportgen.toml" if "built_at" in tomllib.loads((folder / "reportgen.toml").read_text("utf-8")) \
            else "newest call"
    except (OSError, ValueError):
        dated_by = ""
    return {"built_at": built_at, "dated_by": dated_by}


def diff_pages(out: Path, version: str, previous: str | None) -> dict[str, list[str]]:
    """For each version, the versions whose pages of changes to it are on the site
    (diff/<old>..<new>/index.html); with ``previous``, the one this build writes."""
    pages: dict[str, list[str]] = {}
    if previous and (out / previous / "manifest.json").is_file():
        pages[version] = [previous]
    for page in sorted((out / "diff").glob("*..*/index.html")):
        old, _, new = page.parent.name.partition("..")
        if old and new and old not in pages.setdefault(new, []):
            pages[new].append(old)
    return pages


def listed_versions(out: Path, title: str, warn: Callable[[str], None], adding: str) -> list[dict]:
    """The entries of versions.json, with every version folder it does not list but
    ``adding`` (read from the folder's own files: ``title`` stands for a title that is
    not recorded there)."""
    path = out / "versions.json"
    entries: list[dict] = []
    problem = None
    try:
        body = json.loads(path.read_text("utf-8"))
        if not isinstance(body, list):
            problem = f"it holds a JSON {type(body).__name__}, not a list of versions"
        else:
            entries = [e for e in body if isinstance(e, dict) and isinstance(e.get("version"), str)]
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        problem = f"it does not read as JSON ({exc})"
    listed = {e["version"] for e in entries}
    found = [e for e in (_folder_entry(out / name, title) for name in _version_folders(out)
                                                     if name not in listed and name != adding)
             if e is not None]
    if problem or found:
        names = ", ".join(str(e["version"]) for e in found) or "none"
        warn(f"warning: {path}: {problem or 'it missed versions whose folders are here'}; rebuilt from the "
             f"version folders' manifests (added: {names})")
    return entries + found


def _version_folders(out: Path) -> list[str]:
    try:
        return sorted(p.name for p in out.iterdir()
                      if not p.name.startswith(".") and p.name != store.STORE and (p / "manifest.json").is_file())
    except OSError:
        return []


def _folder_entry(folder: Path, title: str) -> dict | None:
    """A version's entry as its own files say it, when it is a version reportgen wrote."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
        results = json.loads((folder / "data" / "results.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("version") != folder.name or not isinstance(results, dict):
        return None
    return VersionEntry(folder.name, title, str(results.get("built_at", "")),
                        str(results.get("source_digest", ""))).to_json()


def _css_escape(label: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "\\" + ch for ch in label)
