"""What a build or an import tells a person while it works.

The pipeline and the importers take a :class:`Progress`; the default, :class:`QuietProgress`,
says nothing (library use, tests); the CLI passes one that writes to the terminal.
"""

from __future__ import annotations

from types import TracebackType
from typing import Protocol


class ProgressBar(Protocol):
    """A bar for one long step, used as ``with progress.bar(label, total) as bar: bar.update(1)``."""

    def __enter__(self) -> ProgressBar: ...

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None: ...

    def update(self, n_steps: int) -> None: ...


class Progress(Protocol):
    """Stage messages, and a bar for the long steps when a person is watching a terminal."""

    def stage(self, message: str) -> None: ...

    def bar(self, label: str, total: int) -> ProgressBar: ...


class QuietProgress:
    """Says nothing."""

    def stage(self, message: str) -> None:
        pass

    def bar(self, label: str, total: int) -> ProgressBar:
        return _NoBar()


class _NoBar:
    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        pass

    def update(self, n_steps: int = 1) -> None:
        pass
