"""Import one large generated Inspect log (a .json document, or an .eval zip) and report
the time and the peak memory beside a floor: reading the same log once with the standard
library's json (what any importer must at least spend, holding the whole log).

    python benchmarks/import_log.py --megabytes 1024 --format json

Each sample carries a long answer and an event transcript (as Inspect logs do: the
transcript is most of a real log's bytes). Both steps run in their own process so that
peak memory (max RSS) is theirs alone.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

SAMPLE_BYTES = 50_000  # one sample's answer and transcript


def sample(i: int) -> dict:
    answer = f"answer {i} " + "lorem ipsum " * (SAMPLE_BYTES // 24)
    return {"id": i + 1, "epoch": 1, "input": f"Question {i + 1}?", "target": "yes", "uuid": f"u{i}",
            "messages": [{"role": "user", "content": f"Question {i + 1}?"},
                         {"role": "assistant", "content": answer}],
            "output": {"model": "acme-1", "choices": [{"message": {"role": "assistant", "content": answer},
                                                       "stop_reason": "stop"}]},
            "scores": {"match": {"value": "C" if i % 3 else "I", "answer": "yes"}},
            "events": [{"event": "model", "output": "transcript " * (SAMPLE_BYTES // 22)}],
            "total_time": 1.5}


def header(n: int) -> dict:
    passed = sum(1 for i in range(n) if i % 3)
    return {"version": 2, "status": "success",
            "eval": {"created": "2026-01-05T10:00:00+00:00", "task": "quiz", "model": "acme/alpha",
                     "dataset": {"samples": n}, "config": {}, "packages": {"inspect_ai": "0.3.99"}},
            "plan": {"config": {"temperature": 0.0}},
            "results": {"scores": [{"name": "match", "metrics": {"accuracy": {"value": passed / n}}}]}}


def write_log(path: Path, megabytes: int, form: str) -> int:
    """Write about ``megabytes`` of samples' JSON (before compression, for an .eval); the count."""
    n = max(1, megabytes * 2**20 // len(json.dumps(sample(0), indent=2 if form == "json" else None)))
    if form == "json":
        with path.open("w", encoding="utf-8") as out:
            out.write(json.dumps(header(n), indent=2)[:-2] + ',\n  "samples": [\n')
            for i in range(n):
                out.write(("" if i == 0 else ",\n") + json.dumps(sample(i), indent=2))
            out.write("\n  ]\n}\n")
    else:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
            for i in range(n):
                archive.writestr(f"samples/{i + 1}_epoch_1.json", json.dumps(sample(i)))
            archive.writestr("header.json", json.dumps(header(n)))
    return n


def floor_step(path: str) -> None:
    """Read the whole log once, as any importer at least must."""
    if path.endswith(".json"):
        json.loads(Path(path).read_bytes())
    else:
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                json.loads(archive.read(name))


def import_step(path: str, into: str) -> None:
    from reportgen.importers.stage import import_logs

    import_logs("inspect", [Path(path)], Path(into))


def timed(*args: str) -> tuple[float, float]:
    """(seconds, peak MiB) of one step in a fresh process (which prints its own peak)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True)
    return time.perf_counter() - started, float(done.stdout.split()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("--floor-step", "--import-step"):
        floor_step(sys.argv[2]) if sys.argv[1] == "--floor-step" else import_step(sys.argv[2], sys.argv[3])
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=1024, help="size of the log (default 1024)")
    parser.add_argument("--format", choices=["json", "eval"], default="json")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reportgen-import-"))
    try:
        log = work / f"big.{args.format}"
        n = write_log(log, args.megabytes, args.format)
        size = args.megabytes
        seconds, peak = timed("--import-step", str(log), str(work / "source"))
        floor_seconds, floor_peak = timed("--floor-step", str(log))
        written = sum(p.stat().st_size for p in (work / "source").rglob("*") if p.is_file()) / 2**20
        print(f"log: {args.format}, {size:,} MiB of JSON ({log.stat().st_size / 2**20:,.0f} MiB on disk), {n:,} "
              f"samples; source written: {written:,.0f} MiB")
        print(f"{'step':<34}{'seconds':>9}{'peak MiB':>10}")
        print(f"{'floor (json.loads the whole log)':<34}{floor_seconds:>9.1f}{floor_peak:>10.0f}")
        print(f"{'reportgen import':<34}{seconds:>9.1f}{peak:>10.0f}")
        print(f"import / floor: {seconds / floor_seconds:.2f}x the time; peak memory {peak:.0f} MiB "
              f"({peak / size:.2f}x the log's size)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
