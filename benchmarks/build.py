"""Time a cold build, a --force rebuild and the bare floor of the stack on one source.

    python benchmarks/build.py --services 50 --calls 2000 --distinct-svgs 2000

The floor is what any tool on this stack must spend: read the log, render one page per
call with jinja2 and write it, and render each distinct SVG once with CairoSVG on every
core. The cold build starts with an empty render cache; the rebuild (--force) runs on
the same source with the cache the cold build left. Prints times, ratios against the
floor and the cold build, peak memory and the size of the site.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jinja2

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from make_leaderboard import generate  # noqa: E402

CALL_PAGE = jinja2.Environment(autoescape=True).from_string(
    "<!DOCTYPE html><html><head><meta charset=utf-8><title>{{ row.call_id }}</title></head><body>"
    "<h1>{{ row.call_id }}</h1><table>{% for k, v in row.items() %}<tr><th>{{ k }}</th><td>{{ v }}</td></tr>"
    "{% endfor %}</table><pre>{{ response }}</pre></body></html>")


def _png(data: bytes) -> int:
    import cairosvg

    return len(cairosvg.svg2png(bytestring=data, output_width=512))


def floor(source: Path, out: Path) -> float:
    started = time.perf_counter()
    folder = next((source / "experiments").iterdir())
    with (folder / "calls.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    out.mkdir(parents=True)
    svgs: dict[str, bytes] = {}
    for row in rows:
        response = ""
        if row["artifact_path"]:
            call_dir = folder / row["artifact_path"]
            response = (call_dir / "response.txt").read_text(encoding="utf-8")
            data = (call_dir / "image.svg").read_bytes()
            svgs.setdefault(hashlib.sha256(data).hexdigest(), data)
        (out / f"{row['call_id']}.html").write_text(CALL_PAGE.render(row=row, response=response), encoding="utf-8")
    with multiprocessing.get_context("forkserver").Pool(os.cpu_count()) as pool:
        pool.map(_png, list(svgs.values()), chunksize=8)
    return time.perf_counter() - started


def timed_build(source: Path, out: Path, cache: Path, *extra: str) -> tuple[float, int, str]:
    """Wall time, peak resident memory (KiB, the build process) and its summary line."""
    command = ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "reportgen.cli", "build", str(source),
               "--out", str(out), "--cache", str(cache), "-q", *extra]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"build failed:\n{result.stdout}\n{result.stderr}")
    peak = int(result.stderr.strip().splitlines()[-1])
    return seconds, peak, result.stdout.strip()


def size_of(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--services", type=int, default=50)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--distinct-svgs", type=int, default=2000)
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="reportgen-bench-"))
    source, site, cache = work / "source", work / "site", work / "cache"
    for folder in (site, cache, work / "floor"):
        shutil.rmtree(folder, ignore_errors=True)
    if not (source / "reportgen.toml").exists():
        t = time.perf_counter()
        generate(source, args.services, args.calls, args.distinct_svgs, 4, 20261001)
        print(f"generated {args.services} x {args.calls} calls in {time.perf_counter() - t:.1f} s")
    n = args.services * args.calls
    floor_s = floor(source, work / "floor")
    cold_s, cold_kib, summary = timed_build(source, site, cache)
    force_s, force_kib, _ = timed_build(source, site, cache, "--force")
    size, files = size_of(site / "v1")
    print(summary)
    print(f"\n{'':24}{'seconds':>10}{'ratio':>16}{'peak MiB':>11}")
    print(f"{'floor':24}{floor_s:10.1f}{'1.00 x floor':>16}{'':>11}")
    print(f"{'cold build':24}{cold_s:10.1f}{cold_s / floor_s:11.2f} x floor{cold_kib / 1024:11.0f}")
    print(f"{'--force rebuild':24}{force_s:10.1f}{force_s / cold_s:11.2f} x cold {force_kib / 1024:11.0f}")
    print(f"\nsite: {size / 2**20:.0f} MiB in {files} files ({size / n / 1024:.1f} KiB per call); "
          f"{n} calls, {args.distinct_svgs} distinct SVGs, {os.cpu_count()} cores")
    print("targets: cold <= 2.00 x floor, rebuild <= 0.50 x cold, peak < 4096 MiB, site < 1024 MiB")


if __name__ == "__main__":
    main()
