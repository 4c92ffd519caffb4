"""Writing a version from several processes: every file in the manifest, or nothing."""

from __future__ import annotations

import hashlib
import json
import os
from functools import partial

import pytest

from reportgen.write import PublishError, VersionWriter


def test_files_written_by_every_process_are_in_the_manifest(tmp_path):
    with VersionWriter(tmp_path, "v1") as writer:
        writer.run_tasks([partial(writer.add, f"calls/{i}.html", b"page %d" % i) for i in range(50)])
        folder = writer.commit()
    manifest = json.loads((folder / "manifest.json").read_text())["files"]
    assert manifest == {f"calls/{i}.html": "sha256:" + hashlib.sha256(b"page %d" % i).hexdigest()
                        for i in range(50)}
    assert all((folder / rel).read_bytes() == b"page %s" % rel[6:-5].encode() for rel in manifest)


def failing_task(writer: VersionWriter, i: int) -> None:
    if i % 2:
        raise RuntimeError("disk on fire")
    writer.add(f"calls/{i}.html", b"page")


@pytest.mark.skipif(not hasattr(os, "fork") or (os.cpu_count() or 1) < 2, reason="one process only")
def test_a_failing_helper_publishes_nothing(tmp_path):
    with pytest.raises(PublishError, match="a page-writing process failed"):
        with VersionWriter(tmp_path, "v1") as writer:
            writer.run_tasks([partial(failing_task, writer, i) for i in range(10)])
            writer.commit()
    assert list(tmp_path.iterdir()) == []
