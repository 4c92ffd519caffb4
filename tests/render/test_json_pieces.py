"""The data files with one item per line (results.json, artifacts.json), written a
piece at a time: the same bytes whatever the pieces, and JSON that reads back."""

from __future__ import annotations

import hashlib
import json

from hypothesis import given, settings, strategies as st

from reportgen.render import pages
from reportgen.write.version import VersionWriter

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8),
                    st.floats(allow_nan=False, allow_infinity=False))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                           max_size=3), max_leaves=8)
heads = st.dictionaries(st.text(max_size=6), values, max_size=3)
longs = st.dictionaries(st.text(max_size=6), st.lists(values, max_size=5) | st.dictionaries(st.text(max_size=4), values,
                                                                                            max_size=4), max_size=3)


@settings(max_examples=100, deadline=None)
@given(heads, longs, st.integers(min_value=1, max_value=64))
def test_pieces_of_any_size_make_the_same_json_one_item_a_line(head, long, piece_chars):
    whole = pages.json_lines(head, long)
    old = pages.PIECE_CHARS
    pages.PIECE_CHARS = piece_chars
    try:
        # The long lists handed over as one-pass iterators, as results.json hands its claims.
        lazy = {k: (v if isinstance(v, dict) else iter(v)) for k, v in long.items()}
        pieces = list(pages.json_pieces(head, lazy))
    finally:
        pages.PIECE_CHARS = old
    assert b"".join(pieces) == whole
    if not set(head) & set(long):  # (a key in both: JSON keeps the last)
        assert json.loads(whole) == {**head, **long}
    lines = whole.decode("utf-8").split("\n")
    for key, items in long.items():
        listed = [f"  {json.dumps(k, ensure_ascii=False)}: " for k in items] if isinstance(items, dict) else []
        for n, item in enumerate(items):
            dumped = json.dumps(items[item] if isinstance(items, dict) else item, ensure_ascii=False,
                                separators=(",", ":"))
            expected = (listed[n] if listed else "  ") + dumped
            assert expected in lines or expected + "," in lines


def test_a_file_written_in_pieces_is_listed_with_the_hash_of_its_bytes(tmp_path):
    pieces = [b'{"a": [\n', b"1,\n" * 1000, b"2\n]}\n"]
    with VersionWriter(tmp_path / "site", "v1", processes=1) as writer:
        writer.add_pieces("data/results.json", iter(pieces))
        writer.commit()
    written = (tmp_path / "site" / "v1" / "data" / "results.json").read_bytes()
    assert written == b"".join(pieces)
    manifest = json.loads((tmp_path / "site" / "v1" / "manifest.json").read_text())
    assert manifest["files"]["data/results.json"] == "sha256:" + hashlib.sha256(written).hexdigest()
