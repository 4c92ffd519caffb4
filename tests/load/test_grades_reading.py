"""The grades folder is found by name: a run's files are read lazily, and reading the
grades must not read the rest of them (a large run holds a hundred thousand)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from reportgen.errors import Collector
from reportgen.load.grades import read_blind_grades


class Watched(Mapping[str, bytes]):
    """A run's files that records which were read."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self._files = files
        self.read: list[str] = []

    def __getitem__(self, name: str) -> bytes:
        self.read.append(name)
        return self._files[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


def test_only_the_grades_folder_is_read():
    files = Watched({
        "calls.csv": b"...", "artifacts/A-01/response.txt": b"...", "requests/ab.json": b"{}",
        "grades/key.csv": b"item,call_id\n", "grades/nested/x.csv": b"",
    })
    read_blind_grades(files, "experiments/x/grades", [], "majority", Collector())
    assert sorted(files.read) == ["grades/key.csv"]


def test_a_run_without_grades_reads_no_file():
    files = Watched({"calls.csv": b"...", "artifacts/A-01/response.txt": b"..."})
    assert read_blind_grades(files, "experiments/x/grades", [], "majority", Collector()) is None
    assert files.read == []
