"""Reading a published version folder back: its manifest, claims, embedded inputs, and
the store files it lists.

verify and diff both start here, and need nothing but the version folder a reader
downloaded and the store files its manifest lists: data/ holds the contract and the
log, results.json the claims, data/<run>/artifacts.json where the run's request bodies,
sheets and packs are in the store; each pack's index lists its calls' artifacts.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from reportgen.errors import ReportgenError
from reportgen.json_stream import Item, StreamError, stream_members
from reportgen.load.artifacts import sized_drawing_digest
from reportgen.load.source import load_source
from reportgen.write.store import store_folder
from reportgen.model.source import ValidatedSource
from reportgen.render.packs import PackError, read_pack

MANIFEST_SCHEMA = "reportgen.manifest/2"
ARTIFACTS_SCHEMA = "reportgen.artifacts/3"


class PublishedError(ReportgenError):
    pass


@dataclass(frozen=True)
class PublishedRun:
    """data/<run>/artifacts.json: every name in it is a file of the store."""

    requests: dict[str, str]  # request hash -> the published body's store name
    # {"service", "page", "pack", "calls"}; read without evidence, "calls_digest" for "calls"
    sheets: list[dict[str, Any]]
    renders: dict[str, dict[str, Any]]  # SVG sha256 -> {"png", "sanitized_svg", "notes"}


@dataclass(frozen=True)
class PublishedVersion:
    folder: Path
    manifest: dict[str, str]  # the version's own files: relative path -> "sha256:..."
    stored: dict[str, str]  # the store files it uses: name -> "sha256:..."
    store: Path  # where they are read from (the folder beside the version, unless given)
    results: dict[str, Any]
    runs: dict[str, PublishedRun]
    # Packs read so far, by name: verify and diff read each one once.
    _packs: dict[str, tuple[dict, Mapping[str, bytes]]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def label(self) -> str:
        return str(self.results.get("version", self.folder.name))

    @property
    def claims(self) -> dict[str, dict[str, Any]]:
        return {c["id"]: c for c in self.results.get("claims", [])}

    def store_bytes(self, name: str) -> bytes:
        """A store file this version lists; PublishedError when it is missing."""
        if name not in self.stored or "/" in name or name.startswith("."):
            raise PublishedError(f"{name}: not a store file of version {self.label}'s manifest")
        try:
            return (self.store / name).read_bytes()
        except OSError:
            raise PublishedError(f"{self.store / name}: missing; a version needs the store files its "
                                 "manifest lists (download them beside the version, in store/)") from None

    def pack(self, name: str) -> tuple[dict, Mapping[str, bytes]]:
        """A pack's index and files; PublishedError when it cannot be read."""
        if name not in self._packs:
            try:
                self._packs[name] = read_pack(self.store_bytes(name))
            except PackError as exc:
                raise PublishedError(f"{self.store / name}: {exc}") from None
        return self._packs[name]

    @functools.cached_property
    def artifacts(self) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """run id -> call id -> its artifacts (name, sha256, kind, ...), from the packs."""
        out: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for rid, run in self.runs.items():
            calls = out.setdefault(rid, {})
            for sheet in run.sheets:
                if sheet.get("pack"):
                    calls.update(self.pack(sheet["pack"])[0]["calls"])
        return out


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PublishedError(f"{path}: not found; is this a version folder built by reportgen ({what})?") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PublishedError(f"{path}: not valid JSON ({exc})") from None


def read_version(folder: Path, store: Path | None = None, evidence: bool = True) -> PublishedVersion:
    """A published version as its files hold it. ``evidence=False`` leaves out each
    claim's list of calls (the diff of two versions does not compare them: it lists the
    calls that changed): at 100,000 calls they are 34 MB of JSON, and four times that held
    as strings. And each sheet's, which it holds as their digest ("calls_digest", see
    ``sheet_calls``): a million call ids held as strings were 90 MB a version."""
    if not folder.is_dir():
        raise PublishedError(f"{folder}: no such version folder")
    manifest = _read_json(folder / "manifest.json", "the sha256 of every file")
    if isinstance(manifest, dict) and manifest.get("schema") != MANIFEST_SCHEMA:
        raise PublishedError(f"{folder / 'manifest.json'}: schema {manifest.get('schema')!r}, not {MANIFEST_SCHEMA!r}: "
                             "built by another release of reportgen; verify it with that release")
    results = (_read_json(folder / "data" / "results.json", "every claim") if evidence
               else _results_without_evidence(folder / "data" / "results.json"))
    files = manifest.get("files") if isinstance(manifest, dict) else None
    stored = manifest.get("store") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not isinstance(stored, dict) or not isinstance(results, dict):
        raise PublishedError(f"{folder}: manifest.json or data/results.json is not in the expected format")
    runs = {}
    for path in sorted((folder / "data").glob("*/artifacts.json")):
        body = (_read_json(path, "where the run's files are published") if evidence
                else _streamed(path, "sheets", _with_calls_digested, "where the run's files are published"))
        if not isinstance(body, dict) or body.get("schema") != ARTIFACTS_SCHEMA:
            raise PublishedError(f"{path}: not a {ARTIFACTS_SCHEMA} file")
        runs[path.parent.name] = PublishedRun(dict(body.get("requests", {})), list(body.get("sheets", [])),
                                              dict(body.get("renders", {})))
    return PublishedVersion(folder, files, stored, store or store_folder(folder.parent), results, runs)


def _results_without_evidence(path: Path) -> Any:
    """results.json without each claim's list of calls, read a claim at a time: each
    list is dropped as soon as its claim is read. Read whole, the claims of a million
    calls are 330 MB of JSON, held as text and as objects at once."""
    return _streamed(path, "claims", _without_evidence, "every claim")


def _streamed(path: Path, member: str, each: Callable[[Any], Any], what: str) -> Any:
    """The JSON object in ``path``, each element of its array ``member`` as ``each``
    makes it when it is read; None when the file holds valid JSON that is not an object."""
    body: dict[str, Any] = {}
    items: list[Any] = []
    try:
        for key, value in stream_members(path, member):
            if isinstance(value, Item):
                items.append(each(value.value))
            else:
                body[key] = value
    except FileNotFoundError:
        raise PublishedError(f"{path}: not found; is this a version folder built by reportgen ({what})?") from None
    except StreamError as exc:
        if exc.not_object:
            return None  # valid JSON, not an object: said by the caller, as for a file read whole
        raise PublishedError(f"{path}: not valid JSON ({exc})") from None
    except UnicodeDecodeError as exc:
        raise PublishedError(f"{path}: not valid JSON ({exc})") from None
    if items or member not in body:
        body[member] = items
    return body


def _with_calls_digested(sheet: Any) -> Any:
    """A sheet of artifacts.json with its list of calls replaced by their digest (of
    whatever the file holds there: two sheets have the same digest only when they hold
    the same calls)."""
    if isinstance(sheet, dict) and "calls" in sheet:
        sheet["calls_digest"] = hashlib.sha256(json.dumps(sheet.pop("calls")).encode("utf-8")).hexdigest()
    return sheet


def sheet_calls(version: PublishedVersion, rid: str, wanted: set[int]) -> dict[int, Any]:
    """The lists of calls of the run's sheets ``wanted``, by their place in its
    artifacts.json: read again, a sheet at a time, for a version read without them."""
    found: dict[int, Any] = {}
    if not wanted:
        return found
    path = version.folder / "data" / rid / "artifacts.json"
    place = 0
    try:
        for _, value in stream_members(path, "sheets"):
            if isinstance(value, Item):
                if place in wanted and isinstance(value.value, dict):
                    found[place] = value.value.get("calls", ())
                place += 1
    except (OSError, StreamError, UnicodeDecodeError) as exc:  # changed since it was first read
        raise PublishedError(f"{path}: cannot be read again ({exc})") from None
    return found


def _without_evidence(item: Any) -> Any:
    """A claim of results.json without its list of calls."""
    if isinstance(item, dict) and "evidence" in item and "id" in item and "verdict" in item:
        del item["evidence"]
    return item


def load_embedded_source(version: PublishedVersion) -> ValidatedSource:
    """Rebuild a source folder from data/ and the request bodies in the store, and
    validate it (artifacts are checked through the packs and the manifest instead).

    The folder is temporary: the returned runs carry everything they need in memory
    (contract, calls, requests); their ``folder`` no longer exists."""
    data = version.folder / "data"
    with tempfile.TemporaryDirectory(prefix="reportgen-verify-") as tmp:
        root = Path(tmp)
        if not (data / "reportgen.toml").is_file():
            raise PublishedError(f"{data / 'reportgen.toml'}: not found; the version does not embed its site config")
        shutil.copyfile(data / "reportgen.toml", root / "reportgen.toml")
        for run_dir in sorted(p for p in data.iterdir() if p.is_dir()):
            target = root / "experiments" / run_dir.name
            shutil.copytree(run_dir, target, symlinks=False, ignore=shutil.ignore_patterns("artifacts.json"))
            run = version.runs.get(run_dir.name)
            if run is None:
                continue
            (target / "requests").mkdir(exist_ok=True)
            for hexdigest, name in run.requests.items():
                if len(hexdigest) == 64 and all(c in "0123456789abcdef" for c in hexdigest):
                    (target / "requests" / f"{hexdigest}.json").write_bytes(version.store_bytes(name))
        return load_source(root, check_artifacts=False)


def published_artifact_hashes(version: PublishedVersion, run_id: str) -> dict[str, tuple[str, ...]]:
    """As ``artifacts.artifact_hashes``, read back from the run's packs."""
    return {cid: tuple(e["sha256"] for e in entries if not e.get("derived"))
            for cid, entries in version.artifacts.get(run_id, {}).items()}


def published_drawings_and_graded(version: PublishedVersion, run_id: str
                                  ) -> tuple[dict[str, str], dict[str, tuple[str, int]]]:
    """``artifacts.drawings_and_graded`` read back: each call's first SVG as published
    (a store file), read and hashed once, gives its drawing's digest and what it is
    graded on; a call without one is graded on its own files' entries (sha256 and
    bytes) in its pack's index. An SVG that is missing or wrong is left to the manifest
    check."""
    drawings: dict[str, str] = {}
    graded: dict[str, tuple[str, int]] = {}
    for cid, entries in version.artifacts.get(run_id, {}).items():
        svg = next((e for e in entries if e.get("kind") == "svg"), None)
        if svg is None:
            own = [e for e in entries if not e.get("derived")]
            if own:
                graded[cid] = ("+".join(sorted(str(e.get("sha256")) for e in own)),
                               sum(int(e.get("bytes", 0)) for e in own))
            continue
        try:
            data = version.store_bytes(str(svg["file"]))
        except (PublishedError, KeyError, TypeError):
            continue
        if hashlib.sha256(data).hexdigest() == svg.get("sha256"):
            graded[cid] = sized_drawing_digest(data)
            drawings[cid] = graded[cid][0]
    return drawings, graded
