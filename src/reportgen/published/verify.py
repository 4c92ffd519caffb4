"""A published version against its manifest and against a recomputation of every claim."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reportgen.analysis.run import analyze_run
from reportgen.audit.protocol import audit_run
from reportgen.claims.build import build_claims
from reportgen.errors import InputError
from reportgen.published.compare import compare_claim
from reportgen.published.read import (
    PublishedVersion,
    load_embedded_source,
    published_artifact_hashes,
    published_drawings,
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


def verify_version(folder: Path) -> VerifyReport:
    version = read_version(folder)
    mismatches = check_manifest(version)
    mismatches += check_claims(version)
    return VerifyReport(version.label, len(version.manifest), len(version.claims), tuple(mismatches))


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


def recompute_claims(version: PublishedVersion) -> dict[str, dict[str, Any]]:
    source = load_embedded_source(version)
    claims = {}
    for run in source.runs:
        rid = run.contract.id
        findings = audit_run(run, published_artifact_hashes(version, rid), published_drawings(version, rid))
        for claim in build_claims(analyze_run(run), findings):
            claims[claim.id] = claim.to_json()
    return claims


def check_claims(version: PublishedVersion) -> list[str]:
    try:
        recomputed = recompute_claims(version)
    except InputError as exc:
        return [f"data/: the embedded inputs do not validate: {p}" for p in exc.problems]
    published = version.claims
    out = [f"claim {cid}: in results.json but not recomputed from data/" for cid in published if cid not in recomputed]
    out += [f"claim {cid}: recomputed from data/ but missing from results.json" for cid in recomputed if cid not in published]
    for cid, fresh in recomputed.items():
        if cid in published:
            out += [f"claim {cid}: {field} is {old!r} in results.json, recomputed {new!r}"
                    for field, old, new in compare_claim(published[cid], fresh)]
    return out


