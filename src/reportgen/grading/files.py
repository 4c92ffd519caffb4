"""Files of grades/ written whole or not at all, and flushed to the disk before they
count: a temporary file beside the target, fsync, rename over it, fsync of the folder.
A process killed at any moment leaves the old file or the new one, never half of one."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from reportgen.atomic import named

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def write_durable(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` whole (on the disk, not only in the page cache), or is as it was."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(os.open(tmp, _NEW, 0o666), "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise named(exc, path) from None
        raise
    sync_folder(path.parent)


def replace(tmp: Path, path: Path) -> None:
    """The rename that makes the new bytes the file's (a step of its own, for the tests)."""
    os.replace(tmp, path)


def sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (where the system allows opening a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def leftover_temporaries(folder: Path) -> list[Path]:
    """Temporary files a killed writer left in ``folder`` (never read as grades)."""
    return sorted(folder.glob(".*.tmp")) if folder.is_dir() else []
