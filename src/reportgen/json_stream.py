"""One large JSON document, read piece by piece: the members of its top-level object, with
the elements of one array member handed over one at a time (Inspect's ``samples``, HELM's
``request_states``), or the elements of a top-level array. Memory is bounded by the largest
single element, not by the file.

Each value is decoded by the standard library's own decoder (``raw_decode``), so values
are exactly what ``json.loads`` gives, NaN and Infinity included (Inspect writes them,
and streaming parsers built on yajl refuse them). A value cut by the end of the buffer
fails to decode or ends at the buffer's end: the reader then reads more (doubling what it
holds, so that a long value costs at most twice its decoding) and decodes it again.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHUNK = 1 << 20  # characters read at a time
_WHITESPACE = " \t\n\r"
_NUMBER = "0123456789.eE+-"


class StreamError(ValueError):
    """Not valid JSON (or not the shape asked for), at a line and column of the file."""

    def __init__(self, msg: str, lineno: int, colno: int, not_object: bool = False) -> None:
        super().__init__(f"{msg}: line {lineno} column {colno}")
        self.msg, self.lineno, self.colno = msg, lineno, colno
        self.not_object = not_object  # valid JSON, but the top level is not what was asked for


@dataclass(frozen=True, slots=True)
class Item:
    """One element of the streamed array (so that it is never taken for the member itself)."""

    value: Any


def stream_members(file: Path, streamed: str, chunk: int = CHUNK) -> Iterator[tuple[str, Any]]:
    """(key, value) for each member of the top-level object, in the file's order; the array
    under ``streamed`` comes as one (streamed, Item(element)) per element. Raises
    StreamError (``not_object`` when the document is valid JSON but not an object)."""
    with _Reader(file, chunk) as reader:
        if reader.peek() != "{":
            reader.value()
            reader.end()
            raise reader.error("expected a JSON object", not_object=True)
        reader.take()
        if reader.peek() == "}":
            reader.take()
        else:
            while True:
                key = reader.value()
                if not isinstance(key, str):
                    raise reader.error("Expecting property name enclosed in double quotes")
                reader.expect(":", "Expecting ':' delimiter")
                if key == streamed and reader.peek() == "[":
                    for element in reader.elements():
                        yield key, Item(element)
                else:
                    yield key, reader.value()
                if reader.take_one_of(",}", "Expecting ',' delimiter") == "}":
                    break
        reader.end()


def stream_items(file: Path, chunk: int = CHUNK) -> Iterator[Any]:
    """Each element of a top-level array, in order (StreamError ``not_object`` for anything else)."""
    with _Reader(file, chunk) as reader:
        if reader.peek() != "[":
            reader.value()
            reader.end()
            raise reader.error("expected a JSON array", not_object=True)
        yield from reader.elements()
        reader.end()


class _Reader:
    """A window on the file's text: ``buffer[pos:]`` is what is not consumed yet."""

    def __init__(self, file: Path, chunk: int) -> None:
        self.handle = file.open("rb")
        self.decoder = codecs.getincrementaldecoder("utf-8")()  # raises UnicodeDecodeError
        self.json = json.JSONDecoder()
        self.chunk = chunk
        self.buffer, self.pos, self.eof = "", 0, False
        self.lines_before = 0  # newlines before the buffer's start
        self.columns_before = 0  # characters of the buffer's first line that were dropped

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()

    def _read(self, at_least: int) -> bool:
        """Append at least ``at_least`` characters (fewer at the end); False at the end of the file."""
        if self.eof:
            return False
        if self.pos > self.chunk:  # drop what is consumed, keeping count of lines and columns
            cut, newline = self.pos, self.buffer.rfind("\n", 0, self.pos)
            self.lines_before += self.buffer.count("\n", 0, cut)
            self.columns_before = cut - newline - 1 if newline >= 0 else self.columns_before + cut
            self.buffer, self.pos = self.buffer[cut:], 0
        size = max(at_least, self.chunk)
        data = self.handle.read(size)
        text = self.decoder.decode(data, final=not data)
        self.eof = not data
        self.buffer += text
        return bool(data)

    def peek(self) -> str:
        """The next character that is not whitespace ("" at the end), not consumed."""
        while True:
            while self.pos < len(self.buffer) and self.buffer[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.buffer) or not self._read(self.chunk):
                return self.buffer[self.pos:self.pos + 1]

    def take(self) -> None:
        self.pos += 1

    def expect(self, char: str, message: str) -> None:
        if self.peek() != char:
            raise self.error(message)
        self.take()

    def take_one_of(self, chars: str, message: str) -> str:
        found = self.peek()
        if not found or found not in chars:
            raise self.error(message)
        self.take()
        return found

    def value(self) -> Any:
        """The next JSON value, read whole (more of the file is read until it is)."""
        self.peek()
        while True:
            try:
                value, end = self.json.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as exc:
                if self._read(len(self.buffer) - self.pos):
                    continue
                raise self.error(exc.msg, exc.pos) from None
            # A value that ends where the buffer ends (a number, true...) may go on in the
            # file; so may a number cut after "0" of "0.5" or "1" of "1e3".
            cut = end == len(self.buffer) or (self.buffer[end] in _NUMBER and isinstance(value, int | float))
            if cut and self._read(len(self.buffer) - self.pos):
                continue
            self.pos = end
            return value

    def elements(self) -> Iterator[Any]:
        """The elements of the array that starts here, one at a time."""
        self.expect("[", "Expecting '['")
        if self.peek() == "]":
            self.take()
            return
        while True:
            yield self.value()
            if self.take_one_of(",]", "Expecting ',' delimiter") == "]":
                return

    def end(self) -> None:
        if self.peek():
            raise self.error("Extra data")

    def error(self, message: str, at: int | None = None, not_object: bool = False) -> StreamError:
        at = self.pos if at is None else at
        newline = self.buffer.rfind("\n", 0, at)
        column = at - newline if newline >= 0 else self.columns_before + at + 1
        return StreamError(message, self.lines_before + self.buffer.count("\n", 0, at) + 1, column, not_object)
