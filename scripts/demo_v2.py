"""Write a second version of the demo source: one call relabelled after review.

    python scripts/demo_v2.py content-v2      # then: reportgen build content-v2

Call B-02 was graded "fail" in v1; a second blind grader, under the contract's dispute
rule, settled it as a pass. v2 records that (disputed = true, qualified = true) and
declares that it supersedes v1, so its pages link to the changes since v1.
"""

from __future__ import annotations

import csv
import io
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(target: Path) -> None:
    if target.exists():
        sys.exit(f"{target} already exists; remove it or choose another folder")
    shutil.copytree(ROOT / "content", target)
    config = target / "reportgen.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('version = "v1"', 'version = "v2"\nprevious = "v1"'),
                      encoding="utf-8")
    log = target / "experiments" / "pelican-ab" / "calls.csv"
    rows = list(csv.DictReader(io.StringIO(log.read_text(encoding="utf-8"))))
    columns = list(rows[0]) + ["disputed"]
    for row in rows:
        row["disputed"] = ""
        if row["call_id"] == "B-02":
            row.update(qualified="true", disputed="true",
                       grade_reason="disputed; second blind grader: feet reach the pedals, pass")
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    log.write_text(out.getvalue(), encoding="utf-8")
    print(f"wrote {target}: version v2, call B-02 relabelled fail -> pass")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "content-v2"))
