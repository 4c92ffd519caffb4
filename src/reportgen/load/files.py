"""The one file walker: every regular file of a folder, symbolic links listed,
never followed; and the check that an artifact path stays inside its folder."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from reportgen.model.source import RunFiles


def artifact_problem(folder: Path, rel: str, files: RunFiles | None = None) -> str | None:
    """Why ``rel`` is not a safe, existing artifact path inside ``folder`` (None if it is).

    A path ``files`` lists as a regular file or folder was reached without a symbolic
    link, so it is inside the folder: no need to resolve it."""
    if files is not None and (rel in files.data or rel in files.dirs) and _plain_relative(rel):
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
    """A '/'-separated relative path with no '..', '.', empty part, backslash or drive."""
    return (not rel.startswith("/") and "\\" not in rel and ":" not in rel
            and all(part not in ("", ".", "..") for part in rel.split("/")))


@dataclass(frozen=True)
class Listing:
    """A folder as the one walker sees it. Paths are relative, '/'-separated; files in
    the order of sorted Paths. Symbolic links are listed, never followed: what a link
    may lead to is each caller's own check."""

    files: list[tuple[str, str]]  # (relative path, path) of each regular file
    dirs: list[str]
    links: list[tuple[str, str]]  # (relative path, path) of each symbolic link
    stats: list[os.stat_result] | None = None  # of each file, in the order of ``files``, when asked for


def list_folder(folder: Path | str, with_stat: bool = False) -> Listing:
    """Every regular file, folder and symbolic link below ``folder`` (plain strings: a
    Path object per file costs more than reading a small file)."""
    files: list[tuple[tuple[str, ...], str, os.stat_result | None]] = []
    dirs: list[str] = []
    links: list[tuple[str, str]] = []

    def walk(directory: str, prefix: tuple[str, ...]) -> None:
        with os.scandir(directory) as entries:
            for entry in entries:
                parts = (*prefix, entry.name)
                if entry.is_symlink():
                    links.append(("/".join(parts), entry.path))
                elif entry.is_dir(follow_symlinks=False):
                    dirs.append("/".join(parts))
                    walk(entry.path, parts)
                elif entry.is_file(follow_symlinks=False):
                    files.append((parts, entry.path, entry.stat(follow_symlinks=False) if with_stat else None))

    walk(str(folder), ())
    files.sort(key=lambda item: item[0])
    return Listing([("/".join(parts), path) for parts, path, _ in files], dirs, sorted(links),
                   [st for _, _, st in files] if with_stat else None)


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
