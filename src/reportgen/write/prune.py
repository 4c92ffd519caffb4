"""``reportgen prune``: the files of a site folder that no version uses.

A build never removes a store file (an older version may link it), so a store only
grows; and a build that failed half-way (a full disk, a kill) may leave store files that
no version lists, and its temporary folder. Those are found here: store files listed in
no version's manifest.json, half-written temporary files, and the temporary folders of
builds that did not finish. They are only looked for while no build holds the site
(a running build's new store files are listed by no version yet), and only when every
version's manifest reads: otherwise what a version uses cannot be told.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from reportgen.errors import ReportgenError
from reportgen.write import store


class PruneError(ReportgenError):
    pass


@dataclass(frozen=True)
class Unused:
    paths: tuple[Path, ...]
    size: int  # bytes, of the files alone (a leftover folder counts what it holds)
    n_versions: int


def unused_files(out: Path) -> Unused:
    """What no version of the site ``out`` uses (call it while holding the site's lock)."""
    if not out.is_dir():
        raise PruneError(f"{out}: no such site folder")
    listed: set[str] = set()
    versions = 0
    for folder in sorted(out.iterdir()):
        manifest_path = folder / "manifest.json"
        if folder.name.startswith(".") or folder.name == store.STORE or not manifest_path.is_file():
            continue
        try:
            manifest = json.loads(manifest_path.read_text("utf-8"))
            listed.update(manifest.get("store", {}))
        except (OSError, ValueError, AttributeError, TypeError) as exc:
            raise PruneError(f"{manifest_path}: cannot be read ({exc}), so what this version uses cannot be told; "
                             "rebuild the version with --force, or remove its folder, then prune again") from None
        versions += 1
    # (pathlib's "*" matches hidden names too: a temporary file is "." and part of a name)
    found = [p for p in sorted(store.store_folder(out).glob("*")) if p.name not in listed]
    found += [p for p in sorted(out.glob(".*")) if ".building-" in p.name or ".replaced-" in p.name]
    return Unused(tuple(found), sum(_size(p) for p in found), versions)


def _size(path: Path) -> int:
    if path.is_dir() and not path.is_symlink():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    try:
        return path.lstat().st_size
    except OSError:
        return 0


def remove(paths: tuple[Path, ...]) -> None:
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)

