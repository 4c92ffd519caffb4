"""Generate the demo report's pelican A/B experiment (content/experiments/pelican-ab).

The run follows the plan of the source article: 20 formal calls per service, 4 blocks
of 5 + 5 randomly interleaved, one fixed task, blind grading. Service A passes 16/20;
service B passes 8/20 and 4 of its calls time out. Every complete call has a raw
response (prose around an SVG, as a model replies) and the extracted SVG: a pelican
on a bicycle of varying quality, drawn here from a seeded random generator, plus two
malformed outputs so the render-failure path shows.

Run from the project root:  python scripts/make_demo.py
The output is deterministic; commit what it writes.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "content" / "experiments" / "pelican-ab"
PROMPT = "Generate an SVG of a pelican riding a bicycle"
JAKARTA = timezone(timedelta(hours=7))

# Per service and block: the outcome of each of the 5 calls, in call order.
#   P = complete and passed, F = complete and failed, T = timed out.
PLAN = {
    "A": ["PPPPP", "PPPFP", "FPPPF", "PPPFP"],  # 16 / 20 pass
    "B": ["PFTPP", "FPTFF", "PFFTP", "TPFPF"],  # 8 pass, 8 fail, 4 timeouts
}
# Flaws a failing drawing shows, and the grader's reason for each.
FLAWS = {
    "feet_off_pedals": "feet float beside the pedals: the pelican is not riding",
    "detached_wheel": "the rear wheel is detached from the frame",
    "no_bicycle": "no bicycle: the pelican stands on the ground",
    "extra_leg": "the pelican has three legs",
}
# Two failing calls whose SVG does not parse (a grader sees nothing, so they fail).
MALFORMED = {"B-09": "truncated", "B-18": "duplicate_attribute"}

# The relay answered two calls with a model other than the one requested: the audit
# shows this as a warning beside every claim about B.
RETURNED_MODEL = {"B-05": "pelican-large-2026-06", "B-13": "pelican-large-2026-06"}

SERVICES = {
    "A": {"group": "official-api", "model": "pelican-large-2026-09"},
    "B": {"group": "relay-east", "model": "pelican-large-2026-09"},
}


def request_body(service: str) -> dict:
    return {
        "model": SERVICES[service]["model"],
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": 4096,
        "temperature": 1.0,
        "stream": False,
    }


def canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def pelican_svg(rng: random.Random, flaw: str | None) -> str:
    """A pelican on a bicycle. Geometry jitters per call; a flaw breaks one relation."""
    j = lambda s: rng.uniform(-s, s)  # noqa: E731
    sky = rng.choice(["#dcefff", "#e8f4ff", "#fff4e0", "#eef7ee"])
    frame = rng.choice(["#c0392b", "#2c3e50", "#16a085", "#8e44ad", "#d35400"])
    rx, ry = 110 + j(8), 220 + j(4)  # rear wheel
    fx, fy = 290 + j(8), 220 + j(4)  # front wheel
    r = 48 + j(5)
    crank = ((rx + fx) / 2 + j(5), ry - 4 + j(3))
    seat = (rx + 55 + j(6), ry - 85 + j(5))
    bars = (fx - 20 + j(5), fy - 95 + j(5))
    bx, by = seat[0] + 5 + j(4), seat[1] - 40 + j(4)  # pelican body centre
    head = (bx + 70 + j(6), by - 60 + j(6))
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 300" width="400" height="300">',
        f'<rect width="400" height="300" fill="{sky}"/>',
        '<rect y="268" width="400" height="32" fill="#9ccc65"/>',
    ]
    if flaw != "no_bicycle":
        rear_x = rx - (35 if flaw == "detached_wheel" else 0)
        rear_y = ry + (12 if flaw == "detached_wheel" else 0)
        wheel = f'fill="none" stroke="#333" stroke-width="{5 + j(1):.1f}"'
        parts += [
            f'<circle cx="{rear_x:.1f}" cy="{rear_y:.1f}" r="{r:.1f}" {wheel}/>',
            f'<circle cx="{fx:.1f}" cy="{fy:.1f}" r="{r:.1f}" {wheel}/>',
            f'<circle cx="{rear_x:.1f}" cy="{rear_y:.1f}" r="4" fill="#333"/>',
            f'<circle cx="{fx:.1f}" cy="{fy:.1f}" r="4" fill="#333"/>',
            f'<path d="M{rx:.1f} {ry:.1f} L{crank[0]:.1f} {crank[1]:.1f} L{seat[0]:.1f} {seat[1]:.1f} Z '
            f'M{crank[0]:.1f} {crank[1]:.1f} L{bars[0]:.1f} {bars[1] + 20:.1f} L{seat[0]:.1f} {seat[1]:.1f} '
            f'M{bars[0]:.1f} {bars[1]:.1f} L{fx:.1f} {fy:.1f}" fill="none" stroke="{frame}" '
            f'stroke-width="7" stroke-linejoin="round"/>',
            f'<path d="M{seat[0] - 14:.1f} {seat[1] - 4:.1f} h28" stroke="#222" stroke-width="7" stroke-linecap="round"/>',
            f'<path d="M{bars[0] - 6:.1f} {bars[1]:.1f} q14 -8 24 4" fill="none" stroke="#222" stroke-width="5" '
            f'stroke-linecap="round"/>',
            f'<circle cx="{crank[0]:.1f}" cy="{crank[1]:.1f}" r="9" fill="none" stroke="#555" stroke-width="3"/>',
        ]
        pedals = [(crank[0] + 14, crank[1] + 10), (crank[0] - 14, crank[1] - 10)]
        parts += [f'<rect x="{px - 7:.1f}" y="{py - 2:.1f}" width="14" height="4" fill="#222"/>' for px, py in pedals]
    else:
        pedals = [(bx - 10, 268.0), (bx + 18, 268.0)]
        by = 180 + j(5)
        head = (bx + 70 + j(6), by - 60 + j(6))
    feet = [(px + (30 if flaw == "feet_off_pedals" else 0), py + (-25 if flaw == "feet_off_pedals" else 0))
            for px, py in pedals]
    if flaw == "extra_leg":
        feet.append((bx + 40, by + 70))
    for fx_, fy_ in feet:
        parts.append(f'<path d="M{bx:.1f} {by + 20:.1f} L{(bx + fx_) / 2 + 8:.1f} {(by + fy_) / 2:.1f} '
                     f'L{fx_:.1f} {fy_:.1f}" fill="none" stroke="#f39c12" stroke-width="5" '
                     'stroke-linejoin="round"/>')
    parts += [
        f'<ellipse cx="{bx:.1f}" cy="{by:.1f}" rx="{46 + j(4):.1f}" ry="{30 + j(3):.1f}" fill="#fdfefe" '
        'stroke="#7f8c8d" stroke-width="2"/>',
        f'<path d="M{bx - 30:.1f} {by - 6:.1f} q30 -22 58 4 q-26 12 -58 -4 z" fill="#d5dbdb"/>',
        f'<path d="M{bx + 30:.1f} {by - 15:.1f} Q{head[0] - 18:.1f} {by - 30:.1f} {head[0]:.1f} {head[1] + 8:.1f}" '
        'fill="none" stroke="#fdfefe" stroke-width="14" stroke-linecap="round"/>',
        f'<circle cx="{head[0]:.1f}" cy="{head[1]:.1f}" r="15" fill="#fdfefe" stroke="#7f8c8d" stroke-width="2"/>',
        f'<circle cx="{head[0] + 5:.1f}" cy="{head[1] - 4:.1f}" r="2.5" fill="#111"/>',
        f'<path d="M{head[0] + 10:.1f} {head[1] - 2:.1f} L{head[0] + 68 + j(6):.1f} {head[1] + 10:.1f} '
        f'L{head[0] + 12:.1f} {head[1] + 8:.1f} Z" fill="#f5b041" stroke="#b9770e" stroke-width="1.5"/>',
        f'<path d="M{head[0] + 12:.1f} {head[1] + 8:.1f} Q{head[0] + 35:.1f} {head[1] + 34 + j(4):.1f} '
        f'{head[0] + 60:.1f} {head[1] + 11:.1f}" fill="#f8c471" stroke="#b9770e" stroke-width="1.5"/>',
    ]
    if flaw != "no_bicycle":
        hand = (bars[0] + 4, bars[1] - 2)
        parts.append(f'<path d="M{bx + 22:.1f} {by - 4:.1f} Q{hand[0] - 10:.1f} {by - 10:.1f} {hand[0]:.1f} '
                     f'{hand[1]:.1f}" fill="none" stroke="#d5dbdb" stroke-width="8" stroke-linecap="round"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def malformed(svg: str, kind: str) -> str:
    if kind == "truncated":  # the stream ended mid-element although the API said "stop"
        return svg[: len(svg) // 2]
    # the same attribute twice: a real error of model-written XML
    return svg.replace('<ellipse cx=', '<ellipse fill="#fff" cx=', 1).replace(
        'rx=', 'fill="#eee" rx=', 1)


def response_text(rng: random.Random, svg: str) -> str:
    opener = rng.choice([
        "Here's an SVG of a pelican riding a bicycle:",
        "Sure! Below is an SVG illustration of a pelican on a bicycle.",
        "Here is a simple SVG drawing of a pelican riding a bike:",
    ])
    closer = rng.choice([
        "The pelican sits on the saddle with its feet on the pedals and its wing on the handlebars.",
        "I used simple shapes: circles for the wheels, paths for the frame, and an ellipse for the body.",
        "Feel free to adjust the colours or proportions.",
    ])
    return f"{opener}\n\n```svg\n{svg}```\n\n{closer}\n"


def build() -> None:
    rng = random.Random(20261001)
    # run.toml is written by hand (the contract comes first); only the run's output is generated.
    for generated in ("requests", "artifacts"):
        shutil.rmtree(OUT / generated, ignore_errors=True)
    (OUT / "requests").mkdir(parents=True)
    (OUT / "artifacts").mkdir()
    hashes = {}
    for service in SERVICES:
        body = request_body(service)
        digest = hashlib.sha256(canonical(body)).hexdigest()
        hashes[service] = f"sha256:{digest}"
        (OUT / "requests" / f"{digest}.json").write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")

    rows = []
    start = datetime(2026, 10, 1, 9, 0, tzinfo=JAKARTA)
    counters = {"A": 0, "B": 0}
    for block in range(4):
        order = ["A"] * 5 + ["B"] * 5
        rng.shuffle(order)
        position = {"A": 0, "B": 0}
        t = start + timedelta(hours=3 * block)
        # Concurrency 2, as registered: each call takes the first of two free slots.
        slots = [t, t]
        for service in order:
            outcome = PLAN[service][block][position[service]]
            position[service] += 1
            counters[service] += 1
            call_id = f"{service}-{counters[service]:02d}"
            if outcome == "T":
                latency = 120000
            else:
                latency = (24000 if service == "A" else 41000) + rng.randint(-6000, 14000)
            slot = min(range(2), key=lambda i: slots[i])
            started = slots[slot] + timedelta(seconds=rng.randint(1, 5))
            slots[slot] = started + timedelta(milliseconds=latency)
            row = {
                "run_id": "pelican-ab", "block_id": str(block + 1), "service": service,
                "service_group": SERVICES[service]["group"],
                "requested_model": SERVICES[service]["model"],
                "returned_model": RETURNED_MODEL.get(call_id, SERVICES[service]["model"]),
                "started_at": started.isoformat(timespec="seconds"),
                "request_hash": hashes[service], "status": "ok", "finish_reason": "stop",
                "latency_ms": "", "qualified": "", "failure_reason": "", "artifact_path": "",
                "call_id": call_id, "attempt": "1", "grader": "blind-1", "grade_reason": "",
            }
            if outcome == "T":
                row.update(status="timeout", finish_reason="", latency_ms=str(latency),
                           failure_reason="no response within the 120 s timeout")
            else:
                row["latency_ms"] = str(latency)
                flaw = None if outcome == "P" else rng.choice(sorted(FLAWS))
                svg = pelican_svg(rng, flaw)
                if call_id in MALFORMED:
                    assert outcome == "F", f"{call_id}: an unparseable SVG cannot pass"
                    svg = malformed(svg, MALFORMED[call_id])
                    flaw = "malformed"
                folder = OUT / "artifacts" / call_id
                folder.mkdir()
                (folder / "response.txt").write_text(response_text(rng, svg), encoding="utf-8")
                (folder / "image.svg").write_text(svg, encoding="utf-8")
                row["artifact_path"] = f"artifacts/{call_id}"
                row["qualified"] = "true" if outcome == "P" else "false"
                row["grade_reason"] = (
                    "pelican on the saddle, feet on the pedals, both wheels on the frame"
                    if outcome == "P" else
                    "the SVG does not parse, so nothing can be seen" if flaw == "malformed"
                    else FLAWS[flaw])
            rows.append(row)
    rows.sort(key=lambda r: r["started_at"])
    with (OUT / "calls.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    build()
