"""Whether a language-model folder predicts a job the same alone and beside other jobs.

    python benchmarks/batch_invariance.py --model model/lm [--data ../shared/data/gha-runs]
        [--texts 300]

Draws ``--texts`` job texts of fold 0's repositories (as ``benchmarks/int8_check.py`` draws
them, with history where they have it), decodes them in one call and each alone, and
prints one JSON object: how many texts got other samples, how many of their samples
differed, and how many predictions (p10/p50/p90, after shrink and band) differed, with the
largest |ln p50 alone − ln p50 together|. A static int8 graph fixes its activation scales,
so what is left to differ is the floating-point order of the kernels onnxruntime picks for
each batch shape on this CPU. Needs the ``train`` extra (the examples' history).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.evaluation.folds import fold_of  # noqa: E402
from laser_ci.evaluation.regimes import example_text  # noqa: E402
from laser_ci.predictors.lm import LaserModel  # noqa: E402
from laser_ci.training.examples import load_examples  # noqa: E402


def cpu() -> str:
    """The CPU's model name and whether it has VNNI (onnxruntime's int8 kernels differ)."""
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.machine()
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines()
                 if line.startswith("model name")), platform.machine())
    return f"{name} ({'with' if 'vnni' in info else 'without'} VNNI)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="model/lm")
    ap.add_argument("--data", default="../shared/data/gha-runs")
    ap.add_argument("--texts", type=int, default=300)
    args = ap.parse_args()

    examples = [e for e in load_examples(args.data, history=True) if e.kind == "job"]
    held = [e for e in examples if fold_of(e.repo, 5) == 0]
    rng = np.random.default_rng(0)
    held = [held[i] for i in sorted(rng.choice(len(held), min(args.texts, len(held)),
                                               replace=False))]
    texts = [example_text(e, "prior") for e in held]
    lm = LaserModel(args.model)
    together = lm.sample(texts)
    alone = [lm.sample([t])[0] for t in texts]
    differ = [int((a != b).sum()) for a, b in zip(alone, together, strict=True)
              if not np.array_equal(a, b)]
    pred_together = lm.predict(texts)
    pred_alone = [lm.predict([t])[0] for t in texts]
    moved = [abs(math.log(a.p50 / b.p50)) for a, b in zip(pred_alone, pred_together,
                                                           strict=True) if a != b]
    print(json.dumps({
        "model": args.model, "texts": len(texts), "batch_jobs": lm.batch_jobs,
        "quantization": lm.config.get("model", {}).get("quantization"),
        "cpu": cpu(),
        "texts_with_other_samples": len(differ),
        "samples_differing_per_such_text": differ,
        "predictions_differing": len(moved),
        "largest_abs_log_p50_shift": round(max(moved), 4) if moved else 0.0,
        "command": "python benchmarks/batch_invariance.py " + " ".join(sys.argv[1:]),
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
