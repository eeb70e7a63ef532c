"""How many runs a ratio codec's floor cuts off, from ``--predictions`` files.

A ratio model writes √10 × runtime / reference; with a codec whose lowest exponent is 0 it
cannot write a runtime below reference / √10 (0.32×). The reference is the history median
warm (``history-median``'s prior p50) and the tabular p50 cold (``tabular``'s none p50), so
both must be in the files (``benchmarks/one_fold.py`` writes them beside the model).

    python benchmarks/ratio_floor.py runs/gemma_fold0.jsonl runs/gemma_fold1.jsonl

Prints, per regime, the runs below the floor and ln(floor / runtime) summed over them and
divided by every run of the regime: the least log-MAE those runs cost a clamped model.
"""

from __future__ import annotations

import argparse
import json
import math

FLOOR = 1 / math.sqrt(10)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    rows: dict[str, dict[str, dict]] = {}
    for path in args.files:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                rows.setdefault(r["key"], {})[r["predictor"]] = r
    for regime, ref_name, column, warm_only in (("warm", "history-median", "prior", True),
                                                ("cold", "tabular", "none", False)):
        n = below = 0
        cost = 0.0
        for by_name in rows.values():
            ref_row = by_name[ref_name]
            if warm_only and ref_row["subset"] == "cold":
                continue
            floor = FLOOR * ref_row[column][1]
            n += 1
            if ref_row["runtime_s"] < floor:
                below += 1
                cost += math.log(floor / ref_row["runtime_s"])
        print(f"{regime}: {below} of {n} runs ({below / max(n, 1):.1%}) below 0.32x the "
              f"reference; least log-MAE they cost: {cost / max(n, 1):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
