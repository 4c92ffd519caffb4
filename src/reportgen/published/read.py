"""Reading a published version folder back: its manifest, claims and embedded inputs.

verify and diff both start here, and need nothing but the version folder a reader
downloaded: data/ holds the contract, the log and the requests; results.json the claims.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reportgen.errors import ReportgenError
from reportgen.load.artifacts import drawing_digest
from reportgen.load.source import load_source
from reportgen.model.source import ValidatedSource


class PublishedError(ReportgenError):
    pass


@dataclass(frozen=True)
class PublishedVersion:
    folder: Path
    manifest: dict[str, str]  # relative path -> "sha256:..."
    results: dict[str, Any]
    artifacts: dict[str, dict[str, list[dict[str, Any]]]]  # run id -> call id -> entries

    @property
    def label(self) -> str:
        return str(self.results.get("version", self.folder.name))

    @property
    def claims(self) -> dict[str, dict[str, Any]]:
        return {c["id"]: c for c in self.results.get("claims", [])}


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PublishedError(f"{path}: not found; is this a version folder built by reportgen ({what})?") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PublishedError(f"{path}: not valid JSON ({exc})") from None


def read_version(folder: Path) -> PublishedVersion:
    if not folder.is_dir():
        raise PublishedError(f"{folder}: no such version folder")
    manifest = _read_json(folder / "manifest.json", "the sha256 of every file")
    results = _read_json(folder / "data" / "results.json", "every claim")
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not isinstance(results, dict):
        raise PublishedError(f"{folder}: manifest.json or data/results.json is not in the expected format")
    artifacts = {}
    for path in sorted((folder / "data").glob("*/artifacts.json")):
        body = _read_json(path, "artifact hashes")
        artifacts[path.parent.name] = body.get("calls", {}) if isinstance(body, dict) else {}
    return PublishedVersion(folder, files, results, artifacts)


def load_embedded_source(version: PublishedVersion) -> ValidatedSource:
    """Rebuild a source folder from data/ and validate it (artifacts are published apart,
    under their hashes, and checked through the manifest instead).

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
            shutil.copytree(run_dir, target, symlinks=False,
                            ignore=shutil.ignore_patterns("artifacts.json"))
        return load_source(root, check_artifacts=False)


def published_artifact_hashes(version: PublishedVersion, run_id: str) -> dict[str, tuple[str, ...]]:
    """As ``artifacts.artifact_hashes``, read back from data/<run>/artifacts.json."""
    return {cid: tuple(e["sha256"] for e in entries if not e.get("derived"))
            for cid, entries in version.artifacts.get(run_id, {}).items()}


def published_drawings(version: PublishedVersion, run_id: str) -> dict[str, str]:
    """As ``artifacts.drawing_digests``, from each call's first SVG as published
    (artifacts/<sha256>.txt); a file that is missing is left to the manifest check."""
    out = {}
    for cid, entries in version.artifacts.get(run_id, {}).items():
        svg = next((e for e in entries if e.get("kind") == "svg"), None)
        if svg is None:
            continue
        try:
            out[cid] = drawing_digest((version.folder / "artifacts" / f"{svg['sha256']}.txt").read_bytes())
        except (OSError, KeyError, TypeError):
            continue
    return out
