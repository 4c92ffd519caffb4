"""Parts of a log held on disk until they are written: a streaming reader reads each
sample once, keeps its small fields, and puts the sample itself here, so that memory is
bounded by the samples' metadata while the writer can still have each one back.

The spool is a private temporary file (deleted when closed or collected) holding only
what this process put in it, so pickle is safe here."""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Callable
from functools import partial
from typing import Any


class Spool:
    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as its loaders

    def put(self, value: Any) -> Callable[[], Any]:
        """Store ``value``; the loader returned gives a fresh copy of it each time it is called."""
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        offset = self._file.seek(0, 2)
        self._file.write(data)
        return partial(self._get, offset, len(data))

    def _get(self, offset: int, size: int) -> Any:
        self._file.seek(offset)
        return pickle.loads(self._file.read(size))  # noqa: S301 - our own bytes, see the module doc
