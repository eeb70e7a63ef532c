"""Issue 53's new jobs by the evidence each had: the learned folders of
``benchmarks/finetune_depth.py`` (one per held-out group of job names) against the default
(issue 49's evidence), log-MAE of the p50 on the successful test runs of the held-out
names, per ``history_source`` the default gave them. Descriptive: it explains the pooled
table, it picks nothing.

    python benchmarks/finetune_depth_sources.py \
        0=runs/finetune_depth_v2/size-all/model,1=runs/finetune_depth_g1/size-all/model,...
"""

from __future__ import annotations

import collections
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import finetune_depth as fd  # noqa: E402

from laser_ci.predictors.choice import load_predictor  # noqa: E402


def main() -> None:
    models = dict(part.split("=", 1) for part in sys.argv[1].split(","))
    default = load_predictor()
    total: dict[str, list] = collections.defaultdict(lambda: [0, 0.0, 0.0, set()])
    print("| group | evidence | runs | names | learned | default |")
    print("|---|---|---:|---:|---:|---:|")
    for group, folder in models.items():
        split = fd.make_split(fd.DEPTH, 3.0, 5, int(group))
        learned = fd.predictions(split, load_predictor(folder), own_runs=True)
        evidence = fd.predictions(split, default, own_runs=True)
        per: dict[str, list] = collections.defaultdict(lambda: [0, 0.0, 0.0, set()])
        for key in split.held:
            if key not in learned or key not in evidence:
                continue
            source = str(evidence[key]["source"])
            for seconds, ok in split.truth[key]:
                if not ok:
                    continue
                truth = math.log(max(seconds, 1.0))
                for row in (per[source], total[source]):
                    row[0] += 1
                    row[1] += abs(math.log(max(learned[key]["p50"], 1.0)) - truth)
                    row[2] += abs(math.log(max(evidence[key]["p50"], 1.0)) - truth)
                    row[3].add(key)
        for source, (n, a, b, names) in sorted(per.items()):
            print(f"| {group} | {source} | {n:,} | {len(names)} | {a / n:.3f} | {b / n:.3f} |")
    for source, (n, a, b, names) in sorted(total.items()):
        print(f"| all | {source} | {n:,} | {len(names)} | {a / n:.3f} | {b / n:.3f} |")


if __name__ == "__main__":
    main()
