"""Time cold builds of this tree against a baseline commit, in turn, on one source.

    python benchmarks/compare.py --baseline HEAD~3 --services 50 --calls 2000 --distinct-svgs 2000

This machine's speed drifts by a third over minutes, so the two trees build in turn
(baseline, current, baseline, current, ...) with the disk synced and the source read
before each build; the ratio is that of the medians, with each tree's range beside it.
The baseline is checked out with `git worktree` into a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from build import settle  # noqa: E402
from make_leaderboard import add_size_arguments, source_in  # noqa: E402


def cold_build(src: Path, source: Path, work: Path) -> float:
    """One cold build (no site, no render cache) with the reportgen of ``src``."""
    site, cache = work / "site", work / "cache"
    for folder in (site, cache):
        shutil.rmtree(folder, ignore_errors=True)
    settle(source)
    env = dict(os.environ, PYTHONPATH=str(src))
    command = [sys.executable, "-m", "reportgen.cli", "build", str(source), "--out", str(site),
               "--cache", str(cache), "-q"]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=work)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"build with {src} failed:\n{result.stdout}\n{result.stderr}")
    return seconds


def checkout(ref: str, into: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), ref],
                   check=True, capture_output=True)
    # The default theme is package data mapped from themes/ (pyproject): make it importable.
    (into / "src" / "reportgen" / "themes").symlink_to(into / "themes", target_is_directory=True)
    return into / "src"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="git commit to compare with (e.g. HEAD~1, main)")
    add_size_arguments(parser)
    parser.add_argument("--repeat", type=int, default=3, help="builds of each tree")
    args = parser.parse_args()
    work, source = source_in(args, "reportgen-compare-")
    current = ROOT / "src"
    with tempfile.TemporaryDirectory(prefix="reportgen-baseline-") as tmp:
        baseline = checkout(args.baseline, Path(tmp) / "tree")
        times: dict[str, list[float]] = {"baseline": [], "current": []}
        try:
            for round_ in range(1, args.repeat + 1):
                for name, src in (("baseline", baseline), ("current", current)):
                    times[name].append(cold_build(src, source, work))
                print(f"round {round_}: baseline {times['baseline'][-1]:.1f} s, current {times['current'][-1]:.1f} s",
                      flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(Path(tmp) / "tree")],
                           capture_output=True)
    base, cur = (statistics.median(times[k]) for k in ("baseline", "current"))
    n = args.services * args.calls
    print(f"\ncold build of {n} calls, {args.distinct_svgs} distinct SVGs, {os.cpu_count()} cores, "
          f"{args.repeat} round(s)")
    print(f"{'':10}{'median s':>10}{'range s':>14}")
    for name, median in (("baseline", base), ("current", cur)):
        values = times[name]
        print(f"{name:10}{median:10.1f}{min(values):8.1f}-{max(values):.1f}")
    print(f"current / baseline: {cur / base:.2f} x ({args.baseline})")


if __name__ == "__main__":
    main()
