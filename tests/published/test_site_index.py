"""The site index is derived from the version folders: a damaged versions.json is rebuilt
from their manifests, never shortened; ``reportgen prune`` lists and removes the files
no version uses, and never while a build holds the site."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from reportgen.published.verify import verify_version

HOLD = ("import sys, time; from pathlib import Path; from reportgen.write.lock import SiteLock\n"
        "with SiteLock(Path(sys.argv[1])):\n"
        "    print('held', flush=True); time.sleep(30)\n")


def build(run_cli, *args) -> str:
    result = run_cli("build", *args)
    assert result.exit_code == 0, result.output
    return result.output


def listed(out: Path) -> list[str]:
    return [e["version"] for e in json.loads((out / "versions.json").read_text())]


@pytest.mark.parametrize("damage", ["truncated", "object", "42", "list of junk"])
def test_a_damaged_versions_json_is_rebuilt_from_the_version_folders(make_source, tmp_path, run_cli, damage):
    source, out = make_source(), tmp_path / "site"
    build(run_cli, source, "--out", out, "-q")
    text = (out / "versions.json").read_text()
    (out / "versions.json").write_text({"truncated": text[: len(text) // 2], "object": '{"v1": {}}', "42": "42",
                                        "list of junk": '[1, "v1", null]'}[damage])
    output = build(run_cli, source, "--out", out, "--version", "v2")
    assert f"warning: {out / 'versions.json'}" in output and "rebuilt from the version folders' manifests" in output
    assert "added: v1" in output
    assert sorted(listed(out)) == ["v1", "v2"]
    index = (out / "index.html").read_text()
    assert 'href="v1/' in index and 'href="v2/' in index
    entry = next(e for e in json.loads((out / "versions.json").read_text()) if e["version"] == "v1")
    results = json.loads((out / "v1" / "data" / "results.json").read_text())
    assert entry["source_digest"] == results["source_digest"] and entry["built_at"] == results["built_at"]
    for label in ("v1", "v2"):
        assert verify_version(out / label).ok


def test_a_version_missing_from_versions_json_is_added_back(make_source, tmp_path, run_cli):
    source, out = make_source(), tmp_path / "site"
    build(run_cli, source, "--out", out, "-q")
    build(run_cli, source, "--out", out, "--version", "v2", "-q")
    body = json.loads((out / "versions.json").read_text())
    (out / "versions.json").write_text(json.dumps([e for e in body if e["version"] != "v1"]))
    build(run_cli, source, "--out", out, "--version", "v3", "-q")
    assert sorted(listed(out)) == ["v1", "v2", "v3"]


def test_a_sound_versions_json_gives_no_warning(make_source, tmp_path, run_cli):
    source, out = make_source(), tmp_path / "site"
    build(run_cli, source, "--out", out)
    assert "warning" not in build(run_cli, source, "--out", out, "--version", "v2")


def test_prune_lists_then_removes_what_no_version_uses(make_source, tmp_path, run_cli):
    source, out = make_source(), tmp_path / "site"
    build(run_cli, source, "--out", out, "-q")
    kept = sorted(p.name for p in (out / "store").iterdir())
    orphan = out / "store" / ("0" * 64 + ".png")
    orphan.write_bytes(b"x" * 1000)
    half = out / "store" / ".abcdef0123456789.99.0a0b0c0d"
    half.write_bytes(b"half")
    leftover = out / ".v1.building-99-0a0b0c0d"
    (leftover / "data").mkdir(parents=True)
    listing = run_cli("prune", out)
    assert listing.exit_code == 0, listing.output
    for path in (orphan, half, leftover):
        assert str(path) in listing.output and path.exists()
    assert "3 files and folders" in listing.output and "--yes" in listing.output
    removed = run_cli("prune", out, "--yes")
    assert removed.exit_code == 0, removed.output
    assert not orphan.exists() and not half.exists() and not leftover.exists()
    assert sorted(p.name for p in (out / "store").iterdir()) == kept
    assert verify_version(out / "v1").ok
    assert "0 files and folders" in run_cli("prune", out).output


def test_prune_refuses_while_a_build_holds_the_site(make_source, tmp_path, run_cli):
    source, out = make_source(), tmp_path / "site"
    build(run_cli, source, "--out", out, "-q")
    orphan = out / "store" / ("0" * 64 + ".png")
    orphan.write_bytes(b"a build's new file, listed by no version yet")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        result = run_cli("prune", out, "--yes")
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 1
    assert f"error: {out}: a build in process {holder.pid} is writing this site" in result.output
    assert orphan.exists()


def test_prune_refuses_when_a_manifest_cannot_be_read(make_source, tmp_path, run_cli):
    source, out = make_source(), tmp_path / "site"
    build(run_cli, source, "--out", out, "-q")
    (out / "v1" / "manifest.json").write_text("{")
    result = run_cli("prune", out, "--yes")
    assert result.exit_code == 1
    assert f"{out / 'v1' / 'manifest.json'}: cannot be read" in result.output
    assert len(list((out / "store").iterdir())) > 5
