"""int8 against fp32 for a language-model folder with weights: dynamic and static int8.

    python benchmarks/int8_check.py --model model/lm --data ../shared/data/gha-runs
        [--texts 300] [--calibration 128] [--write static|dynamic]

Exports the folder's weights again (fp32, dynamic int8, and static int8 whose activation
scales are calibrated on ``--calibration`` items of training repositories, folds 1-4 of
:func:`laser_ci.evaluation.folds.fold_of`, drawn as training draws them:
:func:`laser_ci.training.loops.calibration_ids`), then predicts ``--texts`` job texts of fold 0's
repositories (cold, and with history where they have it) with each graph and prints one JSON
object: per graph, how far its p50 is from fp32's (mean and 90th percentile of
``|log(p50 / p50_fp32)|``), its log-MAE against the recorded runtimes, whether a job's
samples are the same alone and beside the others, and the seconds the texts took (each graph
with its batch policy: dynamic one job per batch, static and fp32 side by side). ``--write``
puts that graph in the folder as ``model.onnx`` (``laser.json``: its sha256 and
``model.quantization``; the check under ``checks.int8``). Needs the ``train`` extra.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.evaluation.folds import fold_of  # noqa: E402
from laser_ci.evaluation.regimes import example_text  # noqa: E402
from laser_ci.predictors.lm import (  # noqa: E402
    CONFIG_NAME,
    MODEL_FILE,
    LaserModel,
    prompt_references,
    read_config,
)
from laser_ci.text.numbers import NumberCodec  # noqa: E402
from laser_ci.training.examples import load_examples  # noqa: E402
from laser_ci.training.export import (  # noqa: E402
    STATIC_WEIGHTS,
    export_model,
    quantize_int8,
    sha256_file,
)
from laser_ci.training.finetune import LabeledText  # noqa: E402
from laser_ci.training.loops import calibration_ids, make_items  # noqa: E402
from laser_ci.training.network import load_model  # noqa: E402

GRAPHS = {"fp32": "model.fp32.onnx", "dynamic": "model.dynamic.onnx", "static": "model.static.onnx"}


def install_graph(folder: Path, graph: Path, quantization: str, weights: str,
                  report: dict | None = None) -> None:
    """``graph`` as ``folder``'s model, its ``laser.json`` saying how it was quantized (and
    its sha256), with ``report`` as its int8 check when given."""
    shutil.copyfile(graph, folder / MODEL_FILE)
    cfg = json.loads((folder / CONFIG_NAME).read_text(encoding="utf-8"))
    cfg["model"]["quantization"] = quantization
    if quantization == "static":
        cfg["model"]["static_weights"] = weights
    else:
        cfg["model"].pop("static_weights", None)
    cfg["files"][MODEL_FILE] = sha256_file(folder / MODEL_FILE)
    if report is not None:
        cfg.setdefault("checks", {})["int8"] = report
    (folder / CONFIG_NAME).write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="model/lm")
    ap.add_argument("--data", default="../shared/data/gha-runs")
    ap.add_argument("--texts", type=int, default=300)
    ap.add_argument("--calibration", type=int, default=128)
    ap.add_argument("--write", choices=["static", "dynamic"], default=None)
    ap.add_argument("--static-weights", choices=STATIC_WEIGHTS, default="u8",
                    help="the static graph's weights (laser_ci.training.export.quantize_int8)")
    ap.add_argument("--save-static", default=None,
                    help="also copy the model folder with the static graph to this folder")
    args = ap.parse_args()

    src = Path(args.model)
    if args.save_static and Path(args.save_static).exists():
        ap.error(f"--save-static {args.save_static}: already exists")
    config = read_config(src)
    prompt = config["prompt"]
    examples = [e for e in load_examples(args.data, history=True) if e.kind == "job"]
    rng = np.random.default_rng(0)
    held = [e for e in examples if fold_of(e.repo, 5) == 0]
    train = [e for e in examples if fold_of(e.repo, 5) != 0]
    held = [held[i] for i in sorted(rng.choice(len(held), min(args.texts, len(held)), replace=False))]
    texts = [example_text(e, "prior") for e in held]
    truth = np.log([max(e.runtime_s, 1e-3) for e in held])

    with tempfile.TemporaryDirectory(prefix="laser-int8-") as tmp:
        work = Path(tmp) / "model"
        shutil.copytree(src, work)
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(work / "tokenizer.json"))
        export = Path(tmp) / "export"
        export_model(load_model(src), tok, export, max_prompt_tokens=int(prompt["max_prompt_tokens"]),
                     codec=NumberCodec(**config["codec"]), keep_fp32=True, include_weights=False,
                     validate=False,
                     layout=str(prompt.get("layout", "serial")))
        shutil.copyfile(export / "model.fp32.onnx", work / GRAPHS["fp32"])
        shutil.copyfile(export / MODEL_FILE, work / GRAPHS["dynamic"])
        # calibrated as laser_ci.training.export calibrates a static graph: the
        # token ids (prompt and output) of training items
        reader = LaserModel(work, verify=False)
        texts_tr = [example_text(e, "prior") for e in train]
        refs = prompt_references(reader.reference_model, texts_tr)
        items = make_items([LabeledText(t, e.runtime_s, e.kind, e.conclusion, e.repo, r)
                            for t, e, r in zip(texts_tr, train, refs, strict=True)], reader.prompt)
        calibration = calibration_ids(items, args.calibration, 0)
        t = time.perf_counter()
        quantize_int8(work / GRAPHS["fp32"], work / GRAPHS["static"], calibration=calibration,
                      weights=args.static_weights)
        calibrate_s = time.perf_counter() - t

        out: dict[str, dict[str, float]] = {}
        p50s: dict[str, np.ndarray] = {}
        for name, file in GRAPHS.items():
            lm = LaserModel(work, model_file=file, verify=False,
                            batch_jobs=1 if name == "dynamic" else 64)
            t = time.perf_counter()
            together = lm.sample(texts)
            seconds = time.perf_counter() - t
            alone = [lm.sample([x])[0] for x in texts[:50]]
            p50 = np.log([max(float(np.median(s)), 1e-3) for s in together])
            p50s[name] = p50
            out[name] = {"seconds": round(seconds, 2), "batch_jobs": lm.batch_jobs,
                         "log_mae": round(float(np.mean(np.abs(p50 - truth))), 4),
                         "same_alone_and_batched": round(float(np.mean(
                             [np.array_equal(a, b) for a, b in zip(alone, together, strict=False)])), 3),
                         "bytes": (work / file).stat().st_size}
        for name in ("dynamic", "static"):
            d = np.abs(p50s[name] - p50s["fp32"])
            out[name]["vs_fp32_mean_abs_log"] = round(float(d.mean()), 4)
            out[name]["vs_fp32_p90_abs_log"] = round(float(np.quantile(d, 0.9)), 4)
        report = {"model": str(src), "texts": len(texts), "calibration_prompts": len(calibration),
                  "static_weights": args.static_weights,
                  "calibrate_seconds": round(calibrate_s, 1), "graphs": out,
                  "command": "python benchmarks/int8_check.py " + " ".join(sys.argv[1:])}
        print(json.dumps(report, indent=2))
        if args.save_static:
            dst = Path(args.save_static)
            shutil.copytree(src, dst)
            install_graph(dst, work / GRAPHS["static"], "static", args.static_weights)
            print(f"wrote a copy with the static graph to {dst}", file=sys.stderr)
        if args.write:
            install_graph(src, work / GRAPHS[args.write], args.write, args.static_weights, report)
            print(f"wrote {args.write} int8 to {src / MODEL_FILE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
