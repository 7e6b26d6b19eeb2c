"""The calibration table: every case of tests/data/calibration/ with gpuplan's figure over the
published one, then the median and worst ratio per kind (dense, MoE, FP8, serving) for the fit
cases, the held-out cases and both (the split rule is in tests/data/calibration/README.md).

Run: python bench/calibration_table.py            (the summary per kind and split)
     python bench/calibration_table.py --cases    (each case first, then the summary)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_calibration_data import CASES, ratios, table_lines  # noqa: E402


def main(argv: list[str]) -> None:
    lines = table_lines(ratios(CASES))
    if "--cases" not in argv:
        lines = lines[lines.index("") + 1 :]
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
