"""Request bodies: the canonical JSON a request hash is taken over, and the
check of each logged hash against its file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Mapping

from reportgen.errors import Collector
from reportgen.model.calls import Call


def canonical_json(value: object) -> bytes:
    """The canonical form a request hash is taken over (SPEC 2.3)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def request_hash(value: object) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(value)).hexdigest()


def _check_requests(calls: list[Call], folder: Path, rel_folder: str, log_file: str,
                    problems: Collector, redacted: Mapping[str, str]) -> dict[str, bytes]:
    """Recompute each request hash from requests/<hex>.json; a mismatch is an error.
    A body redacted before publishing is checked against the hash recorded for it."""
    found: dict[str, bytes] = {}
    requests_dir = folder / "requests"
    for call in calls:
        hexdigest = call.request_hex
        if hexdigest in found:
            continue
        path = requests_dir / f"{hexdigest}.json"
        if not path.is_file():
            continue  # the call page says the request body was not published
        if not path.resolve().is_relative_to(folder.resolve()):
            problems.add(log_file, call.line, "request_hash",
                         f"requests/{hexdigest}.json leaves the experiment folder (symbolic link)")
            continue
        data = path.read_bytes()
        rel = f"{rel_folder}/requests/{hexdigest}.json"
        try:
            body = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            problems.add(rel, 0, "", f"not valid UTF-8 JSON: {exc}")
            continue
        actual = request_hash(body)
        expected = redacted.get(hexdigest, call.request_hash)
        if actual != expected:
            problems.add(log_file, call.line, "request_hash",
                         f"{expected} does not match requests/{hexdigest}.json, "
                         f"whose canonical JSON hashes to {actual}")
            continue
        found[hexdigest] = data
    return found
