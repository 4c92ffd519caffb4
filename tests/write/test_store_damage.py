"""The store is content-addressed, so a build checks the content: a store file damaged
on disk is never reused by the next version, and --force repairs what verify names."""

from __future__ import annotations

from pathlib import Path

import pytest

from reportgen.published.verify import verify_version
from reportgen.write import store


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
