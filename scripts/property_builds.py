"""Build many generated report sources and check every built site's invariants.

The generator and the checks are tests/source_strategies.py, the same ones
tests/pipeline/test_property_builds.py runs on a few examples in CI. Run from the project root:

    .venv/bin/python scripts/property_builds.py --examples 500
    .venv/bin/python scripts/property_builds.py --time-limit 900 --save /tmp/repros

Prints how many sources were built (by design) and how long it took, then every kind
of failure with how often it occurred and a minimal reproduction: the first failing
source shrunk (greedily: fewer services, blocks and rows, no extras) while the same
invariant still fails, printed as its run.toml and calls.csv (and, with --save, written
as a source folder that ``reportgen build`` takes as it is). Exit 1 if anything failed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from hypothesis import HealthCheck, Phase, given, seed, settings

import source_strategies as gen


def check(spec: gen.Spec) -> list[gen.Failure]:
    """Build and check one source in a fresh folder; a crash of the checks is a failure too."""
    with tempfile.TemporaryDirectory(prefix="property-build-") as folder:
        try:
            return gen.check_build(spec, Path(folder))
        except Exception:  # noqa: BLE001 - reported with its traceback, never hidden
            return [gen.Failure("checker-crashed", traceback.format_exc(limit=8))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=200, help="sources to generate and build (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    parser.add_argument("--design", choices=gen.DESIGNS, default=None, help="only this design")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="stop building new sources after this many seconds (shrinking comes after)")
    parser.add_argument("--shrink-budget", type=int, default=40,
                        help="builds spent shrinking each kind of failure (default 40; 0: no shrinking)")
    parser.add_argument("--save", type=Path, default=None,
                        help="write each minimal reproduction as a source folder under this folder")
    parser.add_argument("--verbose", "-v", action="store_true", help="one line per source built")
    args = parser.parse_args()

    started = time.monotonic()
    built: Counter[str] = Counter()
    failures: dict[str, list[tuple[gen.Spec, gen.Failure]]] = defaultdict(list)
    failing_sources = 0

    seen: set[str] = set()
    duplicates = 0

    def one(spec: gen.Spec) -> None:
        nonlocal failing_sources, duplicates
        if sum(built.values()) >= args.examples or (
                args.time_limit is not None and time.monotonic() - started > args.time_limit):
            return
        key = repr(spec)
        if key in seen:  # every batch starts from the simplest source; build each source once
            duplicates += 1
            return
        seen.add(key)
        t0 = time.monotonic()
        found = check(spec)
        built[spec.design] += 1
        if found:
            failing_sources += 1
        for failure in found:
            failures[failure.category].append((spec, failure))
        if args.verbose:
            mark = ", ".join(sorted({f.category for f in found})) or "ok"
            print(f"{sum(built.values()):5d} {gen.describe(spec)}: {time.monotonic() - t0:.2f} s: {mark}", flush=True)

    # Batches of 25 from successive seeds: Hypothesis explores around the sources it
    # has seen, so one long run builds many near-copies; fresh seeds spread the sources.
    batch = 0
    while sum(built.values()) < args.examples and batch < 10 * args.examples:
        if args.time_limit is not None and time.monotonic() - started > args.time_limit:
            break
        run = seed(args.seed * 100_003 + batch)(settings(
            max_examples=25, database=None, deadline=None, phases=[Phase.generate],
            suppress_health_check=list(HealthCheck))(given(spec=gen.sources(args.design))(one)))
        run()
        batch += 1
    build_seconds = time.monotonic() - started
    n = sum(built.values())
    print(f"\nbuilt {n} distinct generated sources ({duplicates} repeats skipped) in {build_seconds:.0f} s ({build_seconds / max(n, 1):.2f} s each): "
          + ", ".join(f"{d} {built[d]}" for d in gen.DESIGNS if built[d]))
    print(f"{failing_sources} sources broke at least one invariant; "
          f"{sum(len(v) for v in failures.values())} failures in {len(failures)} kinds")

    for category, found in sorted(failures.items()):
        sources = {id(spec) for spec, _ in found}
        print("\n" + "=" * 100)
        print(f"{category}: {len(found)} failures in {len(sources)} sources")
        shown = list(dict.fromkeys(f.message for _, f in found))
        for message in shown[:5]:
            print(f"  - {message}")
        if len(shown) > 5:
            print(f"  ... and {len(shown) - 5} more messages")
        # The smallest failing source, shrunk further while the same invariant fails.
        spec = min((s for s, _ in found), key=lambda s: (len(s.rows), len(s.services)))
        used = 0
        if args.shrink_budget:
            spec, used = gen.shrink(spec, lambda s, c=category: any(f.category == c for f in check(s)),
                                    args.shrink_budget)
        final = [f for f in check(spec) if f.category == category]
        print(f"\nminimal reproduction ({gen.describe(spec)}; {used} builds spent shrinking):")
        for failure in final:
            print(f"  ! {failure.message}")
        print(gen.reproduction(spec))
        print(f"spec: {spec!r}")
        if args.save is not None:
            target = args.save / category
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            gen.write_source(spec, target)
            print(f"saved: reportgen build {target / 'source'} --out {target / 'site'}")
    print(f"\ntotal time {time.monotonic() - started:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":  # the render workers start from a fresh interpreter: keep this guard
    sys.exit(main())
