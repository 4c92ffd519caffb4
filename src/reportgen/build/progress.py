"""What a build tells a person while it works."""

from __future__ import annotations


class Progress:
    """Stage messages, and a bar for the long steps when a person is watching a terminal.
    The default says nothing (library use, tests); the CLI passes its own."""

    def stage(self, message: str) -> None:
        pass

    def bar(self, label: str, total: int):
        return _NoBar()


class _NoBar:
    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def update(self, n: int = 1) -> None:
        pass
