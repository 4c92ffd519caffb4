"""A sheet's pack: the raw files its calls' sheet shows whole, and the list of every
artifact of those calls, in one deterministic tar.gz.

Short raw files (a model's reply around its drawing, a grader's note) are most of a
large run's files and little of its bytes: published one file each, they would be
100,000 files. A pack keeps them as they were written, named by sha256, with
``index.json`` first: for each call, each artifact's name, sha256, kind, size and where
it is published (``"in": "pack"``, or ``"store"`` for a file published on its own).
``tar -xzf`` gives the files back; ``sha256sum`` checks them against their names.

Same input, same bytes: members in a fixed order, with no time, owner or mode of the
machine that built them, and a gzip header without time or name.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import zlib
from typing import Iterable, Mapping

from reportgen.model.artifacts import CallArtifacts
from reportgen.render.sheets import Sheet

PACK_SCHEMA = "reportgen.pack/1"
INDEX = "index.json"


def pack_index(sheet: Sheet) -> dict:
    return {"schema": PACK_SCHEMA, "run": sheet.run_id, "service": sheet.service,
            "calls": {entry.call.call_id: [f.to_json() for f in entry.files]
                      for entry in sheet.calls if entry.files}}


def make_pack(sheet: Sheet, artifacts: Mapping[str, CallArtifacts]) -> bytes | None:
    """The sheet's pack, or None when none of its calls has an artifact; ``artifacts``:
    the run's, by call id (the bytes the sheet's records name)."""
    if not any(entry.files for entry in sheet.calls):
        return None
    members: dict[str, bytes] = {}
    for entry in sheet.calls:
        if not entry.files:
            continue
        by_sha = {a.sha256: a.data for a in artifacts[entry.call.call_id].files}
        for f in entry.files:
            if f.packed:
                members.setdefault(f.file, by_sha[f.sha256])
    index = json.dumps(pack_index(sheet), ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return tar_gz([(INDEX, index.encode("utf-8")), *sorted(members.items())])


COMPRESS_LEVEL = 3  # a third faster than gzip's default, for a fifth more bytes


def tar_gz(members: Iterable[tuple[str, bytes]]) -> bytes:
    """A ustar archive of ``members``, gzipped: each member's header as tarfile writes it,
    its data padded to 512 bytes, two zero blocks at the end (what TarFile.addfile and
    close write, without a file object per member: 20,000 packs of 50 files each)."""
    parts = []
    for name, data in members:
        parts += [_header(name, len(data)), data, b"\0" * (-len(data) % tarfile.BLOCKSIZE)]
    parts.append(b"\0" * (2 * tarfile.BLOCKSIZE))
    archive = b"".join(parts)
    archive += b"\0" * (-len(archive) % tarfile.RECORDSIZE)
    # mtime=0 and no file name: the gzip header says nothing of when or where.
    return gzip.compress(archive, compresslevel=COMPRESS_LEVEL, mtime=0)


def _tarfile_header(name: str, size: int) -> bytes:
    """A member's ustar header as tarfile writes it: no time, owner or machine's mode."""
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = size, 0, 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info.tobuf(tarfile.USTAR_FORMAT, tarfile.ENCODING, "surrogateescape")


# A header differs from member to member only in its name, its size and their checksum:
# tarfile's own header, made once, with those three put in (making each with tarfile was
# a seventh of the time the sheets of a million calls took). The checksum is the sum of
# the header's bytes with its own field read as spaces.
_NAME, _SIZE, _CHKSUM = slice(0, 100), slice(124, 136), slice(148, 156)
_TEMPLATE = bytearray(_tarfile_header("", 0))
_TEMPLATE[_NAME], _TEMPLATE[_SIZE], _TEMPLATE[_CHKSUM] = bytes(100), bytes(12), b" " * 8
_TEMPLATE_SUM = sum(_TEMPLATE)
_LARGEST = 8 ** 11 - 1  # what 11 octal digits hold: tarfile refuses a larger size in ustar


def _header(name: str, size: int) -> bytes:
    """``_tarfile_header(name, size)``, made from the template when the name fits the
    header's name field whole (packs name files by sha256); by tarfile otherwise."""
    encoded = name.encode(tarfile.ENCODING, "surrogateescape")
    if not 0 < len(encoded) <= 100 or size > _LARGEST:
        return _tarfile_header(name, size)
    digits = b"%011o\0" % size
    header = bytearray(_TEMPLATE)
    header[:len(encoded)] = encoded
    header[_SIZE] = digits
    header[148:155] = b"%06o\0" % (_TEMPLATE_SUM + sum(encoded) + sum(digits))
    return bytes(header)


class PackError(ValueError):
    pass


def read_pack(data: bytes) -> tuple[dict, Mapping[str, bytes]]:
    """A pack's index and its files, by name; PackError when it is not one."""
    files: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for member in tar:
                if not member.isfile() or "/" in member.name or member.name.startswith("."):
                    raise PackError(f"unexpected member {member.name!r}")
                handle = tar.extractfile(member)
                assert handle is not None
                files[member.name] = handle.read()
        index = json.loads(files.pop(INDEX))
    except (tarfile.TarError, OSError, EOFError, KeyError, ValueError, zlib.error) as exc:
        raise PackError(f"not a readable pack ({exc})") from None
    if not isinstance(index, dict) or index.get("schema") != PACK_SCHEMA or not isinstance(index.get("calls"), dict):
        raise PackError(f"index.json is not a {PACK_SCHEMA} index")
    return index, files
