"""The sheets record of the cache is read as records of one shape: an entry that is not
one (a wrong type, a name that is not a store name, a negative size) is dropped, and
the build makes that sheet again."""

from __future__ import annotations

import json
from pathlib import Path

from reportgen.pipeline import incremental
from reportgen.render.sheet_record import SheetRecord

PAGE, PACK, TEXT = "a" * 64 + ".html", "b" * 64 + ".tar.gz", "c" * 64 + ".txt"


def test_a_record_reads_back_as_written():
    record = SheetRecord(PAGE, 10, PACK, 20, ((TEXT, 5),))
    assert SheetRecord.from_json(json.loads(json.dumps(record.to_json()))) == record
    assert SheetRecord.from_json([PAGE, 10, None, 0, []]) == SheetRecord(PAGE, 10, None, 0)


def test_what_is_not_a_record_is_dropped():
    for bad in ([PAGE, 10, PACK, 20], [PAGE, -1, PACK, 20, []], ["../../etc/passwd", 10, None, 0, []],
                [PAGE, 10, PACK, 20, [["x/../y.txt", 3]]], [PAGE, True, None, 0, []], {"page": PAGE}, None,
                [PAGE, 10, PACK, "20", []]):
        assert SheetRecord.from_json(bad) is None, bad


def test_the_cache_keeps_good_entries_and_drops_the_others(tmp_path: Path):
    good = SheetRecord(PAGE, 10, PACK, 20, ((TEXT, 5),))
    assert incremental.save_sheets(tmp_path, {}, {"k1": good}) is None
    assert incremental.load_sheets(tmp_path) == {"k1": good}
    body = json.loads(incremental.recall(tmp_path / "sheets.json") or b"")
    body["sheets"]["k2"] = [PAGE, 10, "not a name", 20, []]
    incremental.keep(tmp_path / "sheets.json", json.dumps(body).encode())
    assert incremental.load_sheets(tmp_path) == {"k1": good}
