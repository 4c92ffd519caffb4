"""Lazy Samples (records.Sample.payload): the writer loads each sample's request and
artifacts when it writes that sample, and writes the same bytes as for a held one."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from reportgen.importers.assemble import assemble
from reportgen.importers.lm_eval import read_lm_eval
from reportgen.importers.records import HarnessLog, Sample
from reportgen.importers.write import write_run
from test_import_lm_eval import lm_eval_run


def _held(log: HarnessLog) -> HarnessLog:
    """The log with every sample's request and artifacts held (the eager path)."""
    def held(sample: Sample) -> Sample:
        request, artifacts = sample.materialize()
        return dataclasses.replace(sample, request=request, artifacts=artifacts, payload=None)

    return dataclasses.replace(log, samples=tuple(held(s) for s in log.samples))


def _counted(log: HarnessLog, loads: list[str]) -> HarnessLog:
    def loader(sample: Sample):
        def load():
            loads.append(sample.unit)
            return sample.materialize()
        return load

    return dataclasses.replace(log, samples=tuple(dataclasses.replace(s, payload=loader(s)) for s in log.samples))


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_lazy_sample_writes_the_same_bytes_as_a_held_one(tmp_path: Path) -> None:
    logs = read_lm_eval([lm_eval_run(tmp_path / "run", {"acc": [1, 0, 1, 1]})])
    loads: list[str] = []
    assert all(s.payload is not None and s.request == {} and s.artifacts == () for log in logs for s in log.samples)
    [eager] = assemble([_held(log) for log in logs])
    [lazy] = assemble([_counted(log, loads) for log in logs])
    written_eager = _files(write_run(eager, tmp_path / "eager"))
    written_lazy = _files(write_run(lazy, tmp_path / "lazy"))
    assert written_lazy == written_eager
    assert sorted(loads) == sorted(c.sample.unit for c in lazy.calls)  # each loaded once, when written


def test_materialize_gives_the_held_fields_of_an_eager_sample() -> None:
    sample = Sample("1", 1, {"input": "x"}, "ok", passed=True, artifacts=(("output.txt", b"y"),))
    assert sample.materialize() == ({"input": "x"}, (("output.txt", b"y"),))


def test_a_large_lm_eval_samples_file_imports_in_bounded_memory(tmp_path: Path) -> None:
    import json
    import tracemalloc

    from reportgen.importers.stage import import_logs
    from test_import_lm_eval import STAMP

    n, filler = 4_000, "x" * 20_000  # ~80 MB of samples: each line carries a ~20 KB prompt
    folder = lm_eval_run(tmp_path / "run", {"acc": [i % 2 for i in range(3)]})
    samples = folder / f"samples_toy_{STAMP}.jsonl"
    results = json.loads((folder / f"results_{STAMP}.json").read_text(encoding="utf-8"))
    results["n-samples"]["toy"] = {"original": n, "effective": n}
    (folder / f"results_{STAMP}.json").write_text(json.dumps(results), encoding="utf-8")
    with samples.open("w", encoding="utf-8") as handle:
        for i in range(n):
            handle.write(json.dumps({"doc_id": i, "target": str(i), "arguments": {"gen_args_0": {
                "arg_0": f"{i} {filler}"}}, "filtered_resps": [f" {i}"], "filter": "none", "metrics": ["acc"],
                "acc": i % 2, "doc_hash": f"{i:064x}"}) + "\n")
    size = samples.stat().st_size
    tracemalloc.start()
    try:
        _, [imported] = import_logs("lm-eval", [folder], tmp_path / "src")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(imported.run.calls) == n
    assert peak < size * 0.25, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB samples file"
    print(f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB samples file")
