"""Time what a user does, on one generated source: a cold build of v1, then v2 after 100
corrected grades, beside the bare floor of the stack; report the site both leave.

    python benchmarks/build.py --services 50 --calls 2000 --distinct-svgs 2000 [--drawings cheap]

--drawings cheap draws a few shapes per SVG (as most models' drawings are) instead of the
demo's pelicans; --calls 20000 makes 1,000,000 calls with 50 services.

The floor is what any tool on this stack must spend: read the log, render one page per
call with jinja2 and write it, and render each distinct SVG once with CairoSVG on every
core. The cold build of v1 starts with an empty render cache and no site. v2 is the same
source with 100 grades corrected (spread over the log), labelled v2 with `previous =
"v1"`, built into the same site, as a reviewer's corrections are published beside the
first version (its page of changes since v1 included). Then `verify` runs on both.

Disk caching moves these times by a third from one run to the next, so before each timed
step the disk is synced (no step pays for an earlier one's writes) and the source is read
once (every step reads it from memory). The machine's speed drifts too, so the floor is
timed before and after each round, and each round's cold ratio is the cold build over
the mean of the two floors around it. With --repeat N the rounds run N times; the
table's ratios are those of the medians, with each step's range beside them. Prints peak
memory (of the build and the processes it starts, together), and the size and file count of the site with both versions, against GitHub
Pages' limits (1 GB published).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import io
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import jinja2

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from make_leaderboard import add_size_arguments, source_in  # noqa: E402

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


def _tree(pid: int) -> list[int]:
    """``pid`` and every process it started, and theirs."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as handle:
                    todo += [int(c) for c in handle.read().split()]
    return found


def _kib(path: str, field: str) -> int:
    with contextlib.suppress(OSError), open(path) as handle:
        for line in handle:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


class TreeMemory:
    """The peak memory of a process and all its children together, sampled every 0.2 s:
    resident (RSS, which counts the pages forked copies share once per copy) and
    proportional (PSS: each shared page split between the processes sharing it)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.rss, self.pss = pid, 0, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(0.2):
            pids = _tree(self.pid)
            self.rss = max(self.rss, sum(_kib(f"/proc/{p}/status", "VmRSS:") for p in pids))
            self.pss = max(self.pss, sum(_kib(f"/proc/{p}/smaps_rollup", "Pss:") for p in pids))

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def timed_build(source: Path, out: Path, cache: Path, *extra: str) -> tuple[float, int, str]:
    """Wall time, peak memory (KiB: PSS of the build and its children together) and its summary line."""
    command = [sys.executable, "-m", "reportgen.cli", "build", str(source),
               "--out", str(out), "--cache", str(cache), "-q", *extra]
    started = time.perf_counter()
    build = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    memory = TreeMemory(build.pid)
    stdout, stderr = build.communicate()
    seconds = time.perf_counter() - started
    memory.stop()
    if build.returncode != 0:
        sys.exit(f"build failed:\n{stdout}\n{stderr}")
    print(f"  peak memory of the build and its children: {memory.pss / 1024:.0f} MiB proportional "
          f"(PSS), {memory.rss / 1024:.0f} MiB resident (RSS, shared pages counted in each process)", flush=True)
    return seconds, memory.pss, stdout.strip()


def warm(source: Path) -> int:
    """Read every file of the source once, so that no timed step pays for the disk."""
    total = 0
    for root, _, names in os.walk(source):
        for name in names:
            with open(os.path.join(root, name), "rb") as handle:
                total += len(handle.read())
    return total


@contextlib.contextmanager
def corrected(source: Path, n: int = 100) -> Iterator[None]:
    """The source as a reviewer's correction leaves it: ``n`` grades flipped, spread evenly
    over the log's graded calls, labelled v2 superseding v1; put back as it was after."""
    log = next((source / "experiments").iterdir()) / "calls.csv"
    config = source / "reportgen.toml"
    before, before_config = log.read_bytes(), config.read_bytes()
    lines = before.decode("utf-8").splitlines(keepends=True)
    column = next(csv.reader(lines[:1])).index("qualified")
    graded = [i for i in range(1, len(lines)) if next(csv.reader([lines[i]]))[column] in ("true", "false")]
    if len(graded) < n:
        sys.exit(f"{log}: fewer than {n} graded calls to correct")
    for i in graded[len(graded) // (2 * n)::len(graded) // n][:n]:
        row = next(csv.reader([lines[i]]))
        row[column] = "false" if row[column] == "true" else "true"
        with io.StringIO() as out:
            csv.writer(out, lineterminator=lines[i][len(lines[i].rstrip("\r\n")):]).writerow(row)
            lines[i] = out.getvalue()
    log.write_bytes("".join(lines).encode("utf-8"))
    text = before_config.decode("utf-8").replace('version = "v1"', 'version = "v2"\nprevious = "v1"')
    config.write_bytes(text.encode("utf-8"))
    try:
        yield
    finally:
        log.write_bytes(before)
        config.write_bytes(before_config)


def timed_verify(folder: Path) -> float:
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "reportgen.cli", "verify", str(folder)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"verify {folder} failed:\n{result.stdout}\n{result.stderr}")
    return time.perf_counter() - started


def settle(source: Path) -> None:
    """Before each timed step: no earlier step's writes still going to disk, and the
    source in memory (this machine's page cache does not keep it between steps)."""
    os.sync()
    warm(source)


def size_of(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_size_arguments(parser)
    parser.add_argument("--repeat", type=int, default=1, help="rounds of cold v1 and v2")
    parser.add_argument("--corrections", type=int, default=100, help="grades corrected for v2")
    args = parser.parse_args()
    work, source = source_in(args, "reportgen-bench-")
    site, cache = work / "site", work / "cache"
    n = args.services * args.calls
    t = time.perf_counter()
    read = warm(source)
    print(f"read the source ({read / 2**20:.0f} MiB) in {time.perf_counter() - t:.1f} s")

    def timed_floor() -> float:
        shutil.rmtree(work / "floor", ignore_errors=True)
        settle(source)
        seconds = floor(source, work / "floor")
        shutil.rmtree(work / "floor", ignore_errors=True)
        return seconds

    floors = [timed_floor()]  # timed before and after each round
    colds, seconds, peaks, ratios, verifies = [], [], [], [], []
    for round_ in range(1, args.repeat + 1):
        for folder in (site, cache):
            shutil.rmtree(folder, ignore_errors=True)
        settle(source)
        cold_s, cold_kib, summary = timed_build(source, site, cache)
        with corrected(source, args.corrections):
            settle(source)
            v2_s, v2_kib, v2_summary = timed_build(source, site, cache)
        verifies.append((timed_verify(site / "v1"), timed_verify(site / "v2")))
        floors.append(timed_floor())
        colds.append(cold_s)
        seconds.append(v2_s)
        peaks.append(max(cold_kib, v2_kib))
        ratios.append(cold_s / statistics.mean(floors[-2:]))
        print(f"round {round_}: cold v1 {cold_s:.1f} s ({cold_kib / 1024:.0f} MiB) = {ratios[-1]:.2f} x the floor "
              f"around it ({floors[-2]:.1f} s before, {floors[-1]:.1f} s after); v2 after {args.corrections} "
              f"corrected grades {v2_s:.1f} s ({v2_kib / 1024:.0f} MiB) = {v2_s / cold_s:.2f} x cold; "
              f"verify v1 {verifies[-1][0]:.1f} s, v2 {verifies[-1][1]:.1f} s", flush=True)
    print(summary)
    print(v2_summary)
    floor_s, cold_s, v2_s = (statistics.median(x) for x in (floors, colds, seconds))

    def spread(values: list[float]) -> str:
        return f"{min(values):.1f}-{max(values):.1f}" if len(values) > 1 else ""

    print(f"\n{'':22}{'median s':>10}{'range s':>13}{'ratio':>16}")
    print(f"{'floor':22}{floor_s:10.1f}{spread(floors):>13}{'1.00 x floor':>16}")
    print(f"{'cold build, v1':22}{cold_s:10.1f}{spread(colds):>13}{cold_s / floor_s:11.2f} x floor")
    print(f"{'v2, 100 grades fixed':22}{v2_s:10.1f}{spread(seconds):>13}{v2_s / cold_s:11.2f} x cold")
    print("cold build over the mean of the floors timed just before and after it, round by round: "
          + ", ".join(f"{r:.2f}" for r in ratios) + f" (highest {max(ratios):.2f})")
    total, files = size_of(site)
    print(f"\npeak memory of a build (PSS, the build and its children): {max(peaks) / 1024:.0f} MiB "
          f"= {max(peaks) * 1024 / n:.0f} bytes per call")
    print(f"\n| drawings | calls | floor s | cold s | cold/floor | v2 s | v2/cold | peak MiB | site MB | load |")
    print(f"|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {args.drawings} | {n:,} | {floor_s:.1f} | {cold_s:.1f} | {cold_s / floor_s:.2f} | {v2_s:.1f} | "
          f"{v2_s / cold_s:.2f} | {max(peaks) / 1024:,.0f} | {total / 1e6:,.0f} in {files:,} files | "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} |")
    for part in ("v1", "v2", "store"):
        size, count = size_of(site / part)
        print(f"  {part + '/':8}{size / 1e6:8.1f} MB in {count} files")
    print(f"site with both versions: {total / 1e6:.1f} MB = {total / 1e9:.3f} GB in {files} files "
          f"({total / n / 1024:.2f} KiB per call); {n} calls, {args.distinct_svgs} distinct SVGs, "
          f"{os.cpu_count()} cores, {args.repeat} round(s)")
    print("targets: cold <= 2.00 x floor (aim 1.3), v2 <= 0.50 x cold (aim 0.1), peak < 4096 MiB, "
          "both versions <= 1 GB (aim 0.5 GB) and under 100,000 files")


if __name__ == "__main__":
    main()
