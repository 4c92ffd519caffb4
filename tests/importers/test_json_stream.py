"""The streaming JSON reader gives exactly what json.loads gives, in pieces, whatever the
chunk boundaries cut; and where json.loads refuses a document, it refuses it at the same place."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen.json_stream import Item, StreamError, stream_items, stream_members

scalars = st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=True) \
    | st.text(max_size=12)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)


def _same(a: object, b: object) -> bool:
    """Equal as JSON values, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _collect(file: Path, streamed: str, chunk: int) -> dict[str, object]:
    found: dict[str, object] = {}
    for key, value in stream_members(file, streamed, chunk):
        if isinstance(value, Item):
            found.setdefault(key, []).append(value.value)  # type: ignore[union-attr]
        else:
            found[key] = value
    return found


@settings(max_examples=150, deadline=None)
@given(document=st.dictionaries(st.text(max_size=6), values, max_size=5), items=st.lists(values, max_size=6),
       chunk=st.sampled_from([1, 2, 3, 7, 64, 1 << 20]), indent=st.sampled_from([None, 1, 2]))
def test_members_and_items_are_what_json_loads_reads(tmp_path_factory, document, items, chunk, indent) -> None:
    document = {**document, "samples": items}
    file = tmp_path_factory.mktemp("doc") / "log.json"
    file.write_text(json.dumps(document, indent=indent, ensure_ascii=False), encoding="utf-8")
    expected = json.loads(file.read_text(encoding="utf-8"))
    got = _collect(file, "samples", chunk)
    if not items:  # an empty array yields no items: its key is simply absent
        expected.pop("samples")
    assert _same(got, expected)
    array = file.with_name("items.json")
    array.write_text(json.dumps(items, indent=indent), encoding="utf-8")
    assert _same(list(stream_items(array, chunk)), items)


@pytest.mark.parametrize("text", [
    '{\n  "version": 2,\n  "eval": [,\n}',
    '{"a": 1 "b": 2}',
    '{"a": 1,}',
    '{"samples": [1, 2,, 3]}',
    '{"samples": [1, 2\n\n ',
    '{"a": "unterminated',
    '{"a": 1} trailing',
    '{1: 2}',
    'hello',
])
@pytest.mark.parametrize("chunk", [1, 4, 1 << 20])
def test_invalid_json_is_refused_at_the_line_json_loads_names(tmp_path: Path, text: str, chunk: int) -> None:
    file = tmp_path / "bad.json"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(StreamError) as got:
        list(stream_members(file, "samples", chunk))
    assert got.value.lineno == expected.value.lineno
    assert not got.value.not_object


def test_a_long_single_line_document_keeps_exact_columns(tmp_path: Path) -> None:
    text = '{"samples": [' + ", ".join(f'"{i:05d}"' for i in range(2000)) + ', oops]}'
    file = tmp_path / "one-line.json"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(StreamError) as got:
        list(stream_members(file, "samples", 64))
    assert (got.value.lineno, got.value.colno) == (expected.value.lineno, expected.value.colno)


def test_valid_json_of_another_shape_is_told_apart_from_invalid_json(tmp_path: Path) -> None:
    file = tmp_path / "list.json"
    file.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(StreamError) as got:
        list(stream_members(file, "samples"))
    assert got.value.not_object
    file.write_text('{"a": 1}', encoding="utf-8")
    with pytest.raises(StreamError) as got:
        list(stream_items(file))
    assert got.value.not_object


def test_text_that_is_not_utf8_raises_a_decode_error(tmp_path: Path) -> None:
    file = tmp_path / "latin1.json"
    file.write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(UnicodeDecodeError):
        list(stream_members(file, "samples"))


def test_a_multibyte_character_cut_by_a_chunk_boundary_is_read_whole(tmp_path: Path) -> None:
    file = tmp_path / "utf8.json"
    text = json.dumps({"samples": ["ї" * 50, "😀" * 30]}, ensure_ascii=False)
    file.write_text(text, encoding="utf-8")
    assert _collect(file, "samples", 3) == json.loads(text)
