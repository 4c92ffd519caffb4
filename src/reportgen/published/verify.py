"""A published version against its manifest and against a recomputation of every claim."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reportgen.analysis.run import analyze_run
from reportgen.audit.protocol import audit_run
from reportgen.claims.make import build_claims
from reportgen.errors import InputError
from reportgen.published.compare import compare_claim
from reportgen.published.read import (
    PublishedError,
    PublishedVersion,
    load_embedded_source,
    published_artifact_hashes,
    published_drawings_and_graded,
    read_version,
)


@dataclass(frozen=True)
class VerifyReport:
    version: str
    n_files: int
    n_claims: int
    mismatches: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.mismatches


def verify_version(folder: Path, store: Path | None = None) -> VerifyReport:
    version = read_version(folder, store)
    mismatches = check_manifest(version)
    mismatches += check_store(version)
    mismatches += check_sheets(version)
    mismatches += check_claims(version)
    return VerifyReport(version.label, len(version.manifest) + len(version.stored), len(version.claims),
                        tuple(mismatches))


def check_manifest(version: PublishedVersion) -> list[str]:
    out = []
    root = version.folder
    for rel, digest in sorted(version.manifest.items()):
        path = root / rel
        if ".." in Path(rel).parts or not path.resolve().is_relative_to(root.resolve()):
            out.append(f"{rel}: manifest entry leaves the version folder")
        elif not path.is_file():
            out.append(f"{rel}: listed in manifest.json but missing")
        elif "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            out.append(f"{rel}: content differs from manifest.json ({digest})")
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel != "manifest.json" and rel not in version.manifest:
            out.append(f"{rel}: not listed in manifest.json")
    return out


def check_store(version: PublishedVersion) -> list[str]:
    """Each store file the manifest lists: there, and holding what its hash says."""
    out = []
    for name, digest in sorted(version.stored.items()):
        path = version.store / name
        if "/" in name or "\\" in name or name.startswith("."):
            out.append(f"store/{name}: manifest entry leaves the store folder")
        elif not path.is_file():
            out.append(f"store/{name}: listed in manifest.json but missing from {version.store}")
        else:
            with open(path, "rb") as handle:
                actual = "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()
            if actual != digest or not name.startswith(digest.removeprefix("sha256:") + "."):
                out.append(f"store/{name}: content differs from manifest.json ({digest})")
    return out


def check_sheets(version: PublishedVersion) -> list[str]:
    """Every call of each run's log on exactly one sheet; each pack readable, each of
    its files matching its name, each artifact it lists there or in the store."""
    out = []
    for rid, run in sorted(version.runs.items()):
        seen: set[str] = set()
        for sheet in run.sheets:
            for name in (sheet.get("page"), sheet.get("pack")):
                if name is not None and name not in version.stored:
                    out.append(f"data/{rid}/artifacts.json: {name} is not listed in manifest.json")
            for call_id in sheet.get("calls", []):
                if call_id in seen:
                    out.append(f"data/{rid}/artifacts.json: call {call_id} is on two sheets")
                seen.add(call_id)
            if sheet.get("pack"):
                out += _pack_problems(version, sheet)
    return out


def _pack_problems(version: PublishedVersion, sheet: dict) -> list[str]:
    name = sheet["pack"]
    try:
        index, files = version.pack(name)
    except PublishedError as exc:
        return [str(exc)]
    out = [f"store/{name}: {member} does not hold what its name says"
           for member, data in sorted(files.items())
           if hashlib.sha256(data).hexdigest() != member.split(".", 1)[0]]
    calls = set(sheet.get("calls", []))
    for call_id, entries in index["calls"].items():
        if call_id not in calls:
            out.append(f"store/{name}: lists call {call_id}, which is not on its sheet")
        for e in entries:
            where = f"store/{name}: call {call_id}, {e.get('name')}"
            if e.get("in") == "pack" and e.get("file") not in files:
                out.append(f"{where}: not in the pack")
            elif e.get("in") == "store" and e.get("file") not in version.stored:
                out.append(f"{where}: {e.get('file')} is not listed in manifest.json")
            elif not str(e.get("file", "")).startswith(f"{e.get('sha256')}."):
                out.append(f"{where}: published under another hash ({e.get('file')})")
    return out


def recompute_claims(version: PublishedVersion) -> dict[str, dict[str, Any]]:
    source = load_embedded_source(version)
    claims = {}
    for run in source.runs:
        rid = run.contract.id
        drawings, graded = published_drawings_and_graded(version, rid)  # each SVG read and hashed once
        findings = audit_run(run, published_artifact_hashes(version, rid), drawings, graded)
        for claim in build_claims(analyze_run(run), findings):
            claims[claim.id] = claim.to_json()
    return claims


def check_claims(version: PublishedVersion) -> list[str]:
    try:
        recomputed = recompute_claims(version)
    except InputError as exc:
        return [f"data/: the embedded inputs do not validate: {p}" for p in exc.problems]
    except PublishedError as exc:
        return [f"data/: the embedded inputs cannot be read: {exc}"]
    published = version.claims
    out = [f"claim {cid}: in results.json but not recomputed from data/" for cid in published if cid not in recomputed]
    out += [f"claim {cid}: recomputed from data/ but missing from results.json" for cid in recomputed if cid not in published]
    for cid, fresh in recomputed.items():
        if cid in published:
            out += [f"claim {cid}: {field} is {old!r} in results.json, recomputed {new!r}"
                    for field, old, new in compare_claim(published[cid], fresh)]
    return out


