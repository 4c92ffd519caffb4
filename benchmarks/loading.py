"""How the call log is read: reportgen's reader against pandas with explicit dtypes.

    python benchmarks/loading.py --calls 100000

Validation looks at each row as a mapping of column -> text (every problem is reported
with its file, line and field), so each way of reading is timed up to those row mappings:
reportgen's reader (the csv module, with line numbers), pandas' C parser and its pyarrow
parser with every column read as text (dtype=str). Prints the medians of five runs after one
warm-up, as ratios against reportgen's reader.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bootstrap import RUNS, median_seconds  # noqa: E402
from make_leaderboard import generate  # noqa: E402

from reportgen.load.calllog import read_log
from reportgen.errors import Collector


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reportgen-loading-") as tmp:
        services = 50
        generate(Path(tmp), services, max(1, args.calls // services), 10, 4, 20261001)
        path = next(Path(tmp).glob("experiments/*/calls.csv"))
        data = path.read_bytes()
        ours = median_seconds(lambda: read_log(path, "calls.csv", Collector()).rows, RUNS)
        c_engine = median_seconds(lambda: pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
                                  .to_dict("records"), RUNS)
        arrow = median_seconds(lambda: pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False,
                                               engine="pyarrow").to_dict("records"), RUNS)
    print(f"{len(data) / 2**20:.1f} MiB, {args.calls} rows, medians of {RUNS} runs")
    print(f"{'reportgen read_log (csv module)':36}{ours:8.2f} s   1.00 x")
    print(f"{'pandas read_csv, C parser':36}{c_engine:8.2f} s{c_engine / ours:7.2f} x")
    print(f"{'pandas read_csv, pyarrow parser':36}{arrow:8.2f} s{arrow / ours:7.2f} x")


if __name__ == "__main__":
    main()
