"""How much of each job's text a prompt budget keeps, with a model folder's tokenizer and prompt.

For every labeled example of a data folder (its text as ``--history prior`` reads it, with
the prompt lines the model's prompts end with), prints the tokens of the body the
``shared-prefix`` layout feeds once per workflow (:meth:`laser_ci.text.tokenize.PromptCodec.
encode_segments`) with no budget, and for each budget the body tokens kept and the share of
bodies cut. The figures of the model card's "Lever 5" section.

    python benchmarks/prompt_lengths.py [--data ../shared/data/gha-runs] [--model model/lm]
        [--budget 256 --budget 512]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.predictors.lm import LaserModel  # noqa: E402
from laser_ci.text.tokenize import PromptCodec  # noqa: E402
from laser_ci.training.examples import KINDS, load_examples  # noqa: E402
from laser_ci.training.history import example_text  # noqa: E402

UNCUT = 1_000_000  # a budget no text reaches


def _bodies(prompt: PromptCodec, texts: list[str], n: int) -> np.ndarray:
    """The body tokens each text's prompt feeds with a budget of ``n`` tokens."""
    codec = dataclasses.replace(prompt, max_prompt_tokens=n)
    return np.array([len(shared) - 1 for shared, _ in codec.encode_segments(texts)])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"
                                          / "gha-runs"))
    ap.add_argument("--model", default="model/lm")
    ap.add_argument("--budget", type=int, action="append", default=None)
    args = ap.parse_args(argv)
    budgets = args.budget or [256, 512]
    prompt = LaserModel(args.model).prompt
    if prompt.layout != "shared-prefix":
        raise SystemExit(f"{args.model}: layout {prompt.layout!r}; the body is measured in the "
                         "shared-prefix layout")
    examples = load_examples(args.data, history=True)
    print(f"{args.model}: prompts of {prompt.max_prompt_tokens} tokens; budgets {budgets}")
    for kind in KINDS:
        texts = [prompt.with_prompt_lines(example_text(e, "prior"), reference=60.0)
                 for e in examples if e.kind == kind]
        if not texts:
            continue

        full = _bodies(prompt, texts, UNCUT)
        p10, p50, p90, p99 = np.percentile(full, [10, 50, 90, 99])
        print(f"{kind}: {len(texts)} texts; body tokens uncut p10 {p10:.0f}, median {p50:.0f}, "
              f"p90 {p90:.0f}, p99 {p99:.0f}")
        for n in budgets:
            kept = _bodies(prompt, texts, n)
            print(f"  budget {n}: body tokens kept median {np.median(kept):.0f} "
                  f"(p10 {np.percentile(kept, 10):.0f}, p90 {np.percentile(kept, 90):.0f}); "
                  f"bodies cut {100 * np.mean(kept < full):.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
