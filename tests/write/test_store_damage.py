"""The store is content-addressed, so a build checks the content: a store file damaged
on disk is never reused by the next version, and --force repairs what verify names."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reportgen.published.verify import verify_version
from reportgen.write import store, version


def flip(path: Path, at: int = 100) -> None:
    data = bytearray(path.read_bytes())
    data[min(at, len(data) - 1)] ^= 1
    path.write_bytes(bytes(data))


def built(run_cli, *args) -> str:
    result = run_cli("build", *args, "-q")
    assert result.exit_code == 0, result.output
    return result.output


def mismatches(folder: Path) -> list[str]:
    return verify_version(folder).mismatches


@pytest.mark.parametrize("ext", ["png", "html", "tar.gz"])  # a render, a sheet of calls, its pack
def test_a_damaged_store_file_is_replaced_by_the_next_build(make_source, tmp_path, run_cli, ext):
    source, out = make_source(), tmp_path / "site"
    built(run_cli, source, "--out", out)
    assert not mismatches(out / "v1")
    used = sorted(p.name for p in (out / "store").glob(f"*.{ext}"))
    damaged = out / "store" / used[0]
    flip(damaged)
    assert any(used[0] in m for m in mismatches(out / "v1"))
    built(run_cli, source, "--out", out, "--version", "v2")
    assert not mismatches(out / "v2")
    assert not mismatches(out / "v1")  # the same file, repaired for both


def test_force_repairs_what_verify_names(make_source, tmp_path, run_cli):
    source, out = make_source(), tmp_path / "site"
    built(run_cli, source, "--out", out)
    sheet = sorted((out / "store").glob("*.html"))[0]
    flip(sheet)
    assert mismatches(out / "v1")
    output = built(run_cli, source, "--out", out, "--force")
    assert "up to date" not in output
    assert not mismatches(out / "v1")


def test_reuse_checks_the_content_not_only_the_size(tmp_path):
    data = b"a drawing"
    name = store.store_name(data, "svg")
    store.put(tmp_path, name, data)
    assert store.present(tmp_path, name, len(data))
    (tmp_path / name).write_bytes(b"a Drawing")  # same size, other bytes
    assert not store.present(tmp_path, name, len(data))
    store.put(tmp_path, name, data)
    assert (tmp_path / name).read_bytes() == data


def test_a_store_file_whose_stamp_is_unchanged_is_not_hashed_again(tmp_path, monkeypatch):
    data = b"a drawing"
    name = store.store_name(data, "svg")
    store.put(tmp_path, name, data)
    st = os.stat(tmp_path / name)
    hashed: list[str] = []
    real = store.intact
    monkeypatch.setattr(store, "intact", lambda path, n: hashed.append(n) or real(path, n))
    assert store.present(tmp_path, name, len(data), {name: store.stamp_of(st)})
    assert hashed == []
    moved = (st.st_size, st.st_mtime_ns - 1, st.st_ctime_ns, st.st_ino)
    assert store.present(tmp_path, name, len(data), {name: moved})
    assert hashed == [name]


def test_a_file_written_since_its_stamp_is_hashed_and_not_reused(tmp_path):
    data = b"a drawing"
    name = store.store_name(data, "svg")
    store.put(tmp_path, name, data)
    st = os.stat(tmp_path / name)
    stamps = {name: store.stamp_of(st)}
    (tmp_path / name).write_bytes(b"a Drawing")  # same size, other bytes
    os.utime(tmp_path / name, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # not within one tick of the clock
    assert not store.present(tmp_path, name, len(data), stamps)


def stamps_kept(cache: Path) -> dict[str, list[int]]:
    (path,) = cache.glob("store/*.json")
    return json.loads(path.read_bytes().partition(b"\n")[2])["stamps"]


def test_a_rebuild_hashes_only_the_store_files_changed_since_they_were_checked(
        make_source, tmp_path, run_cli, monkeypatch):
    monkeypatch.setattr(version, "RACY_SECONDS", -3600.0)  # every file counts as settled at once
    source, out, cache = make_source(), tmp_path / "site", tmp_path / "cache"
    built(run_cli, source, "--out", out, "--cache", cache, "--jobs", "1")
    stamps = stamps_kept(cache)
    used = json.loads((out / "v1" / "manifest.json").read_text())["store"]
    assert set(stamps) == set(used)
    sheet = sorted((out / "store").glob("*.html"))[0]
    flip(sheet)
    st = sheet.stat()
    os.utime(sheet, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    hashed: list[str] = []
    real = store.intact
    monkeypatch.setattr(store, "intact", lambda path, n: hashed.append(n) or real(path, n))
    built(run_cli, source, "--out", out, "--cache", cache, "--version", "v2", "--jobs", "1")
    assert hashed == [sheet.name]  # the damaged sheet only: the others were as checked
    assert not mismatches(out / "v2")
    assert not mismatches(out / "v1")  # repaired for both
    assert stamps_kept(cache)[sheet.name] == list(store.stamp_of(sheet.stat()))
