"""Writing a file whole or not at all: the one helper every stage uses (the version's
site files, the store, the render cache, the records a build keeps for the next one)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write ``path`` whole or not at all: a temporary file beside it, renamed over it (a
    reader sees the old bytes or the new, never half). Created as any file the build
    writes (0666 less the umask), not mkstemp's 0600: a web server must be able to read it."""
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name[:16]}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        with open(os.open(tmp, _NEW, 0o666), "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):  # a full disk says which file it could not write
            raise named(exc, path) from None
        raise


def named(exc: OSError, path: str | Path) -> OSError:
    """``exc`` with the path it is about (os.write's errors name none)."""
    if exc.filename is not None or exc.errno is None:
        return exc
    return type(exc)(exc.errno, exc.strerror, str(path))


def write_all(fd: int, data: bytes, path: str | Path) -> None:
    """Write ``data`` whole to the open file ``fd`` (os.write may write less than asked);
    an error names ``path`` (a full disk says which file)."""
    rest = memoryview(data)
    try:
        while rest:
            rest = rest[os.write(fd, rest):]
    except OSError as exc:
        raise named(exc, path) from None
