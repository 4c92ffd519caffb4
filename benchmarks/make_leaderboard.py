"""Generate a valid leaderboard source of any size: many relays serving one model.

    python benchmarks/make_leaderboard.py OUT --services 50 --calls 2000 --distinct-svgs 2000

Each service gets ``--calls`` planned first submissions spread over ``--blocks`` blocks,
with its own pass probability and a realistic failure mix (timeouts, API errors, cut
streams, length limits, a harness error now and then). Drawings are taken from a pool
of ``--distinct-svgs`` distinct pelicans, so rendering can be deduplicated; every call
keeps its own raw response. The output is deterministic for a given --seed.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from make_demo import pelican_svg  # noqa: E402  (the demo's drawing generator)

FAILURES = [("timeout", 0.05), ("api_error", 0.02), ("stream_cut", 0.01), ("length_limit", 0.01),
            ("harness_error", 0.002)]
FLAWS = ["feet_off_pedals", "detached_wheel", "no_bicycle", "extra_leg"]
MODEL = "pelican-large-2026-09"
PROMPT = "Generate an SVG of a pelican riding a bicycle"


OPENERS = ["Here is the SVG:", "Sure! Here's a pelican riding a bicycle:", "Below is an SVG drawing.",
           "Here's my attempt:", "This SVG shows a pelican on a bike:"]
CLOSERS = ["Let me know if you want changes.", "The wheels are circles and the frame is a path.",
           "I kept the shapes simple.", "Colours can be adjusted in the fill attributes.", ""]


def response(rng: random.Random, svg: str) -> str:
    """Prose around the SVG, as models reply; a note of the drawing time makes it vary."""
    return (f"{rng.choice(OPENERS)}\n\n```svg\n{svg}```\n\n{rng.choice(CLOSERS)} "
            f"(took {rng.randint(5, 90)} s)\n")


def cheap_svg(rng: random.Random, passes: bool) -> str:
    """A small drawing of a few shapes, as most models' SVGs are: it renders in a fraction
    of a pelican's time (the drawings that dominate real logs)."""
    j = lambda s: rng.uniform(-s, s)  # noqa: E731
    body = "#fdfefe" if passes else "#f5b041"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 300" width="400" height="300">\n'
            f'<rect width="400" height="300" fill="#e8f4ff"/>\n'
            f'<circle cx="{130 + j(10):.1f}" cy="{220 + j(4):.1f}" r="{45 + j(4):.1f}" fill="none" stroke="#333" '
            f'stroke-width="5"/>\n'
            f'<circle cx="{270 + j(10):.1f}" cy="{220 + j(4):.1f}" r="{45 + j(4):.1f}" fill="none" stroke="#333" '
            f'stroke-width="5"/>\n'
            f'<ellipse cx="{200 + j(8):.1f}" cy="{120 + j(6):.1f}" rx="{50 + j(4):.1f}" ry="{30 + j(3):.1f}" '
            f'fill="{body}"/>\n</svg>\n')


DRAWINGS = {"pelicans": lambda rng, flaw: pelican_svg(rng, flaw), "cheap": lambda rng, flaw: cheap_svg(rng, flaw is None)}


def canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def generate(out: Path, services: int, calls: int, distinct_svgs: int, blocks: int, seed: int,
             run_id: str = "relay-leaderboard", title: str | None = None, drawings: str = "pelicans") -> None:
    rng = random.Random(seed)
    folder = out / "experiments" / run_id
    (folder / "requests").mkdir(parents=True, exist_ok=True)
    (folder / "artifacts").mkdir(exist_ok=True)
    ids = [f"relay-{i:02d}" for i in range(1, services + 1)]
    pass_rate = {sid: rng.uniform(0.35, 0.9) for sid in ids}
    body = {"model": MODEL, "messages": [{"role": "user", "content": PROMPT}], "max_tokens": 4096,
            "temperature": 1.0}
    rhash = hashlib.sha256(canonical(body)).hexdigest()
    (folder / "requests" / f"{rhash}.json").write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")

    pool = []  # (svg text, passes?) drawn once, reused across calls
    for i in range(distinct_svgs):
        flaw = None if i % 2 == 0 else FLAWS[(i // 2) % len(FLAWS)]
        pool.append((DRAWINGS[drawings](rng, flaw), flaw is None))
    passing = [i for i, (_, ok) in enumerate(pool) if ok]
    failing = [i for i, (_, ok) in enumerate(pool) if not ok]

    start = datetime(2026, 10, 1, 9, 0, tzinfo=timezone.utc)
    per_block = calls // blocks
    handle = (folder / "calls.csv").open("w", newline="", encoding="utf-8")
    writer: csv.DictWriter[str] | None = None  # rows are written as made: a million would not fit
    for block in range(blocks):
        order = [sid for sid in ids for _ in range(per_block + (1 if block < calls % blocks else 0))]
        rng.shuffle(order)
        counters: dict[str, int] = {}
        t = start + timedelta(hours=block)
        for slot, sid in enumerate(order):
            counters[sid] = counters.get(sid, 0) + 1
            call_id = f"{sid}-b{block + 1}-{counters[sid]:05d}"
            started = t + timedelta(milliseconds=250 * slot)
            row = {"run_id": run_id, "block_id": str(block + 1), "service": sid, "service_group": "relay",
                   "requested_model": MODEL, "returned_model": MODEL,
                   "started_at": started.isoformat(timespec="milliseconds"),
                   "request_hash": f"sha256:{rhash}", "status": "ok", "finish_reason": "stop",
                   "latency_ms": str(rng.randint(15000, 60000)), "qualified": "", "failure_reason": "",
                   "artifact_path": "", "call_id": call_id}
            roll, failure = rng.random(), None
            for status, p in FAILURES:
                if roll < p:
                    failure = status
                    break
                roll -= p
            if failure:
                row.update(status=failure, finish_reason="", qualified="", failure_reason=failure.replace("_", " "),
                           latency_ms="120000" if failure == "timeout" else str(rng.randint(200, 5000)))
            else:
                ok = rng.random() < pass_rate[sid]
                index = rng.choice(passing if ok else failing)
                call_dir = folder / "artifacts" / "calls" / sid / call_id
                call_dir.mkdir(parents=True)
                svg = pool[index][0]
                (call_dir / "response.txt").write_text(response(rng, svg), encoding="utf-8")
                (call_dir / "image.svg").write_text(svg, encoding="utf-8")
                row.update(qualified="true" if ok else "false", artifact_path=f"artifacts/calls/{sid}/{call_id}")
            if writer is None:
                writer = csv.DictWriter(handle, fieldnames=list(row), lineterminator="\n")
                writer.writeheader()
            writer.writerow(row)
    handle.close()
    services_toml = "".join(
        f'\n[[service]]\nid = "{sid}"\ngroup = "relay"\nrequested_model = "{MODEL}"\nsnapshot = "unknown"\n'
        f'[service.params]\ntemperature = 1.0\nmax_tokens = 4096\n' for sid in ids)
    (folder / "run.toml").write_text(f'''[run]
id = "{run_id}"
title = "{title or f'{services} relays of one model'}"
question = "Which relays serve this model's pelican drawings as reliably as the reference relay?"
phase = "formal"
registered_at = "2026-09-30T12:00:00+00:00"
design = "leaderboard"
primary_metric = "first_pass_rate"
baseline = "{ids[0]}"
candidates = [{", ".join(f'"{sid}"' for sid in ids[1:])}]
alpha = 0.05
min_useful_effect = 0.10
noninferiority_margin = 0.10
planned_calls = {calls}
blocks = [{", ".join(f'"{b + 1}"' for b in range(blocks))}]
order = "randomized-interleaved within each block"
timeout_s = 120
retry = "none"
exclusion_rules = []
bootstrap = {{resamples = 10000, seed = {seed}}}

[task]
id = "pelican-bicycle"
prompt = "{PROMPT}"
grading_rule = "a recognisable pelican on a recognisable bicycle, feet at the pedals"
render_viewport = "400x300"
{services_toml}''', encoding="utf-8")
    config = out / "reportgen.toml"
    if not config.exists():
        config.write_text(f'title = "{title or "Relay leaderboard"}"\nversion = "v1"\n', encoding="utf-8")


def add_size_arguments(parser: argparse.ArgumentParser) -> None:
    """The size of the generated source and the scratch folder, as the timing
    benchmarks (build.py, compare.py) take them."""
    parser.add_argument("--services", type=int, default=50)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--distinct-svgs", type=int, default=2000)
    parser.add_argument("--drawings", choices=sorted(DRAWINGS), default="pelicans",
                        help="pelicans (today's drawings) or cheap (a few shapes, as most models draw)")
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temporary one)")


def source_in(args: argparse.Namespace, prefix: str) -> tuple[Path, Path]:
    """The scratch folder and the source in it, generated unless it is there already."""
    work = args.work or Path(tempfile.mkdtemp(prefix=prefix))
    source = work / "source"
    if not (source / "reportgen.toml").exists():
        started = time.perf_counter()
        generate(source, args.services, args.calls, args.distinct_svgs, 4, 20261001, drawings=args.drawings)
        print(f"generated {args.services} x {args.calls} calls in {time.perf_counter() - started:.1f} s")
    return work, source


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--services", type=int, default=50)
    parser.add_argument("--calls", type=int, default=2000, help="planned first submissions per service")
    parser.add_argument("--distinct-svgs", type=int, default=2000)
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--seed", type=int, default=20261001)
    parser.add_argument("--drawings", choices=sorted(DRAWINGS), default="pelicans")
    args = parser.parse_args()
    generate(args.out, args.services, args.calls, args.distinct_svgs, args.blocks, args.seed, drawings=args.drawings)
    print(f"wrote {args.out}: {args.services} services x {args.calls} calls, {args.distinct_svgs} distinct SVGs")


if __name__ == "__main__":
    main()
