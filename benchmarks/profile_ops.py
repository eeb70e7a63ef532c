"""Where the language model's decoding time goes: onnxruntime's profiler, by operator.

Runs ``laser-ci estimate`` in this process on the same 100 synthetic jobs as
``benchmarks/estimate_100.py``, with the model's onnxruntime session profiled, and prints
the kernel time of each operator type (summed over every forward pass) and its share.

    taskset -c 0,1 python benchmarks/profile_ops.py [--model model/lm] [--top 15]

The profiler adds its own overhead, so the seconds are larger than ``estimate_100.py``'s;
the shares are what the figures are for.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from estimate_100 import synthetic  # noqa: E402


def profiled_session(prefix: str) -> Any:
    """A drop-in for :func:`laser_ci.predictors.lm.make_session` with profiling on."""
    import onnxruntime as ort

    from laser_ci.predictors import lm

    def make(path: Any, threads: int = lm.DEFAULT_THREADS) -> Any:
        opts = ort.SessionOptions()  # as lm.make_session sets it, profiling on
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        opts.enable_profiling = True
        opts.profile_file_prefix = prefix
        return ort.InferenceSession(str(path), sess_options=opts,
                                    providers=["CPUExecutionProvider"])

    return make


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="model/lm")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()

    from laser_ci.estimate import estimate_paths
    from laser_ci.predictors import lm

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        synthetic(root)
        lm.make_session = profiled_session(str(Path(tmp) / "ort"))
        model = lm.LaserModel(args.model)
        start = time.perf_counter()
        estimate_paths([str(root / ".github" / "workflows")], predictor=model)
        seconds = time.perf_counter() - start
        events = json.loads(Path(model.session.end_profiling()).read_text(encoding="utf-8"))
    by_op: collections.Counter[str] = collections.Counter()
    runs = 0
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            by_op[e["args"]["op_name"]] += e["dur"]
        elif e.get("cat") == "Session" and e["name"] == "model_run":
            runs += 1
    total = sum(by_op.values())
    stats = model.last_stats
    print(f"estimate (profiled): {seconds:.2f} s; {runs} forward passes, kernels "
          f"{total / 1e6:.2f} s")
    if stats is not None:
        print(f"last call: {stats.prefill_tokens} prompt tokens, {stats.step_tokens} step tokens")
    for op, us in by_op.most_common(args.top):
        print(f"  {op:30s} {us / 1e6:6.2f} s  {100 * us / total:5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
