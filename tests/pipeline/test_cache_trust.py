"""The cache speeds builds up; it never decides what is published. Each kind of cache
file, damaged, is read as absent: the build equals a build without a cache. A render's
notes come from the renderer (an edited note is dropped with its record), and an earlier
"clean" verdict holds only for content this build hashed itself."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from reportgen.pipeline import incremental
from reportgen.published.verify import verify_version

KINDS = {  # each kind of file the cache holds, by where it is
    "render record": "*.json",
    "render png": "*.png",
    "render svg": "*.svg",
    "version record": "versions/*.json",
    "sheets record": "sheets.json",
    "file hashes": "files/*.tsv",
    "clean list": "clean/*.txt",
    "store stamps": "store/*.json",
}


def damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "flip":
        data[len(data) // 2] ^= 0x20
        path.write_bytes(bytes(data))
    elif how == "truncate":
        path.write_bytes(bytes(data[: len(data) // 2]))
    else:
        path.write_bytes(b'{"schema": 42, "sheets": [1], "png": null}')


def build(run_cli, *args) -> str:
    result = run_cli("build", *args, "-q")
    assert result.exit_code == 0, result.output
    return result.output


def files_of(folder: Path) -> dict[str, str]:
    return json.loads((folder / "manifest.json").read_text())["files"]


@pytest.fixture
def clean_v2(make_source, tmp_path, run_cli) -> tuple[Path, dict[str, str]]:
    """The small source, and its v2 as a build without any cache writes it."""
    source = make_source()
    build(run_cli, source, "--out", tmp_path / "clean-site", "--version", "v2", "--no-cache")
    return source, files_of(tmp_path / "clean-site" / "v2")


@pytest.mark.parametrize("how", ["flip", "truncate", "replace"])
def test_each_damaged_cache_file_kind_gives_the_clean_build(clean_v2, tmp_path, run_cli, render_cache, how):
    source, expected = clean_v2
    out = tmp_path / "site"
    build(run_cli, source, "--out", out)
    for kind, pattern in KINDS.items():
        found = sorted(render_cache.glob(pattern))
        assert found, f"no {kind} in the cache"
        for path in found:
            damage(path, how)
    build(run_cli, source, "--out", out, "--version", "v2")
    assert verify_version(out / "v2").ok
    assert files_of(out / "v2") == expected
    # and again, from what that build kept
    build(run_cli, source, "--out", out, "--version", "v3")
    assert verify_version(out / "v3").ok


def test_an_edited_render_note_is_not_published(clean_v2, tmp_path, run_cli, render_cache):
    source, expected = clean_v2
    out = tmp_path / "site"
    build(run_cli, source, "--out", out)
    for path in render_cache.glob("*.json"):
        if path.name == "sheets.json":
            continue
        record = json.loads(path.read_text())
        record["notes"] = ["an edited note"]
        path.write_text(json.dumps(record))
    build(run_cli, source, "--out", out, "--version", "v2")
    assert files_of(out / "v2") == expected
    assert not any("an edited note" in p.read_text(errors="replace")
                   for p in (out / "v2").rglob("*.html"))


def test_an_entry_added_to_the_clean_list_does_not_let_a_key_through(make_source, tmp_path, run_cli, render_cache):
    source = make_source()
    out = tmp_path / "site"
    build(run_cli, source, "--out", out)
    response = source / "experiments" / "mini" / "artifacts" / "X-1" / "response.txt"
    response.write_text("Authorization: Bearer sk-live-0123456789abcdefghijABCDEFGHIJ0123456789\n")
    (clean,) = render_cache.glob("clean/*.txt")
    with clean.open("a") as handle:  # the cache says this content holds no credential
        handle.write("\n" + hashlib.sha256(response.read_bytes()).hexdigest())
    result = run_cli("build", source, "--out", out, "--version", "v2", "-q")
    assert result.exit_code == 1, result.output
    assert "looks like a" in result.output and "X-1" in result.output
    assert not (out / "v2").exists()
    assert not any(b"sk-live-0123456789" in p.read_bytes() for p in out.rglob("*") if p.is_file())
