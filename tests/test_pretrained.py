"""Lever 4's code (laser_ci.training.pretrained) on a tiny random Gemma 3: the GGUF tokenizer
repair, the torch decoder under the shipped decoding loop, and the LoRA fine-tune.

Needs the ``train`` extra and peft; skipped without them. No pretrained weights are read.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("peft")

from labeled import Ex  # noqa: E402
from tokenizers import Tokenizer, models, normalizers  # noqa: E402

from laser_ci.predictors.decode import causal_bias, left_pad  # noqa: E402
from laser_ci.text.numbers import DEFAULT_CODEC  # noqa: E402
from laser_ci.text.tokenize import PromptCodec, train_tokenizer  # noqa: E402
from laser_ci.training.pretrained import (  # noqa: E402
    LoraSettings,
    PretrainedRecipe,
    TorchDecoder,
    TorchLaserModel,
    bpe_from_unigram,
    finetune_lora,
    number_batch,
    number_loss,
)
from laser_ci.training.train import make_items  # noqa: E402

# ---- the tokenizer repair ----------------------------------------------------------------

# SentencePiece BPE scores: a piece's score is minus its merge rank, so whole words score
# lower than their parts and a Unigram model over these scores cuts words into parts.
PIECES = [("<pad>", 0.0), ("<eos>", 0.0), ("<bos>", 0.0), ("<unk>", 0.0), ("a", -1.0),
          ("b", -2.0), ("c", -3.0), ("▁", -4.0), ("ab", -5.0), ("abc", -50.0),
          ("▁abc", -60.0), ("a", -70.0)]  # "a" twice: the first id wins


@pytest.fixture()
def unigram_json(tmp_path: Path) -> Path:
    tok = Tokenizer(models.Unigram(PIECES, unk_id=3, byte_fallback=False))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.add_special_tokens(["<pad>", "<eos>", "<bos>"])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    return path


@pytest.mark.parametrize(("text", "unigram", "bpe"), [
    ("abc", ["ab", "c"], ["abc"]),
    ("abc abc", ["ab", "c", "▁", "ab", "c"], ["abc", "▁abc"]),
    ("cab", ["c", "ab"], ["c", "ab"]),
    ("ba", ["b", "a"], ["b", "a"]),
])
def test_bpe_from_unigram_keeps_whole_words(unigram_json: Path, text: str, unigram: list[str],
                                            bpe: list[str]):
    old = Tokenizer.from_file(str(unigram_json))
    new = bpe_from_unigram(unigram_json)
    assert old.encode(text, add_special_tokens=False).tokens == unigram
    enc = new.encode(text, add_special_tokens=False)
    assert enc.tokens == bpe
    assert "".join(new.id_to_token(i) for i in enc.ids).replace("▁", " ") == text
    assert new.token_to_id("a") == 4  # the first of the two ids of "a"
    assert [new.token_to_id(s) for s in ("<pad>", "<eos>", "<bos>")] == [0, 1, 2]


def test_bpe_from_unigram_refuses_a_bpe_file(tmp_path: Path):
    tok = train_tokenizer(["runs-on: ubuntu-latest\n"] * 3, vocab_size=300)
    tok.save(str(tmp_path / "tokenizer.json"))
    with pytest.raises(ValueError, match="not a Unigram"):
        bpe_from_unigram(tmp_path / "tokenizer.json")


def test_prompt_codec_specials_must_exist():
    tok = train_tokenizer(["task: job\nrun: sleep 1\n"] * 3, vocab_size=300)
    assert PromptCodec(tok, DEFAULT_CODEC).eos_id == 1
    with pytest.raises(ValueError, match="special tokens"):
        PromptCodec(tok, DEFAULT_CODEC, specials=("<pad>", "<bos>", "<sep>"))


def test_recipe_prompt_is_the_shipped_models():
    """The fold recipe's prompt writes numbers with the shipped model's codec (ratios below
    1 need negative exponents) and reads its prompt lines and layout."""
    from laser_ci.predictors.lm import read_config
    from laser_ci.text.numbers import NumberCodec

    shipped = read_config(Path(__file__).parent.parent / "model" / "lm", verify=False)
    tok = train_tokenizer(["task: job\nrun: sleep 1\n"] * 3, vocab_size=300)
    prompt = PretrainedRecipe(Path("base"), specials=("<pad>", "<eos>", "<sep>")).prompt(tok)
    assert prompt.codec == NumberCodec(**shipped["codec"])
    assert prompt.codec.to_string(0.05) == "5.00e-02"
    assert (prompt.layout, prompt.outcome, prompt.cold_reference, prompt.max_prompt_tokens) == (
        shipped["prompt"]["layout"], True, True, shipped["prompt"]["max_prompt_tokens"])


# ---- a tiny Gemma 3 ------------------------------------------------------------------------


def synthetic() -> list[Ex]:
    """Runtime decided by the text: a ``sleep N`` step."""
    return [Ex(f"task: job\nworkflow: CI {j}\njob: build\nruns-on: ubuntu-latest\nsteps:\n"
               f"- run: sleep {s}\n", s * (1 + 0.02 * (j - 3)))
            for s in (12, 300, 2400) for j in range(6)]


@pytest.fixture(scope="module")
def tiny():
    tok = train_tokenizer([e.text for e in synthetic()] * 3, vocab_size=320)
    prompt = PromptCodec(tok, DEFAULT_CODEC, max_prompt_tokens=64, layout="shared-prefix")
    cfg = transformers.Gemma3TextConfig(
        vocab_size=tok.get_vocab_size(), hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
        max_position_embeddings=256, sliding_window=128, initializer_range=0.3,
        layer_types=["sliding_attention", "full_attention"], pad_token_id=0, bos_token_id=1,
        eos_token_id=1)
    torch.manual_seed(0)
    model = transformers.Gemma3ForCausalLM(cfg).eval()
    model.config._attn_implementation = "sdpa"
    return tok, prompt, model


def full_logits(model, ids: list[int], columns: list[int]) -> np.ndarray:
    with torch.inference_mode():
        h = model.model(input_ids=torch.tensor([ids])).last_hidden_state[0]
        return (h @ model.lm_head.weight[columns].T).numpy()


def test_torch_decoder_matches_a_plain_forward(tiny):
    """Left-padded prompts of two lengths in one batch, then two branches side by side in
    one row through the cache (tree attention): each position's logits equal a plain
    forward over that branch's own sequence."""
    _tok, prompt, model = tiny
    columns = [prompt.token_ids[t] for t in prompt.token_ids]
    dec = TorchDecoder(model, columns)
    prompts = [p + prompt.skeleton_prefix()
               for p in prompt.encode_texts([synthetic()[0].text, "task: job\nrun: sleep 3\n"])]
    ids, mask = left_pad(prompts, prompt.pad_id)
    pos = np.maximum(mask.cumsum(1) - 1, 0)
    logits, past = dec.forward(ids, pos, causal_bias(mask), dec.empty_past(len(ids)))
    assert logits.shape == (2, ids.shape[1], len(columns))
    assert len(past) == 4 and past[0].shape == (2, 1, ids.shape[1], 16)
    for r, p in enumerate(prompts):
        np.testing.assert_allclose(logits[r, -len(p):], full_logits(model, p, columns),
                                   atol=1e-4)
    four, seven = prompt.token_ids["4"], prompt.token_ids["7"]
    t = ids.shape[1]
    step = np.array([[four, seven]] * 2)
    seen = mask.sum(1, keepdims=True)
    bias = np.full((2, 1, 2, t + 2), -1e9, dtype=np.float32)
    bias[:, 0, :, :t] = np.where(mask.astype(bool), 0, -1e9)[:, None, :]
    bias[:, 0, 0, t] = bias[:, 0, 1, t + 1] = 0  # each branch sees the prompt and itself
    logits2, past2 = dec.forward(step, np.concatenate([seen, seen], axis=1), bias, past)
    assert past2[0].shape[2] == t + 2
    for r, p in enumerate(prompts):
        for b, token in enumerate((four, seven)):
            np.testing.assert_allclose(logits2[r, b], full_logits(model, p + [token], columns)[-1],
                                       atol=1e-4)


def test_lora_fine_tune_learns_and_decodes(tiny, tmp_path: Path):
    """A few LoRA steps lower the number loss on the training items; the adapter saved and
    loaded again gives the same loss; merged, the shipped loop decodes it (a longer sleep,
    a longer runtime) with valid bands."""
    from peft import PeftModel

    tok, prompt, base = tiny
    model = transformers.Gemma3ForCausalLM(base.config)
    model.load_state_dict(base.state_dict())
    items = make_items(synthetic(), prompt)
    columns = {prompt.token_ids[t]: c for c, t in enumerate(prompt.token_ids)}
    head_ids = [prompt.token_ids[t] for t in prompt.token_ids]
    batch = number_batch(items, prompt.pad_id, columns)
    assert len(batch["target"]) == 6 * len(items)  # d d d sign d d per item
    head = model.lm_head.weight[head_ids].detach()
    with torch.no_grad():
        before = float(number_loss(model, batch, head))
    log: dict = {}
    peft_model = finetune_lora(model, items, prompt,
                               LoraSettings(rank=8, alpha=16, lr=1e-2, batch_size=6,
                                            max_steps=100), log)
    assert log["finetune"]["steps"] == 100 and log["finetune"]["train_items"] == len(items)
    with torch.no_grad():
        after = float(number_loss(peft_model, batch, head))
    assert after < 0.6 * before, (before, after)
    peft_model.save_pretrained(tmp_path / "adapter")
    fresh = transformers.Gemma3ForCausalLM(base.config)
    fresh.load_state_dict(base.state_dict())
    again = PeftModel.from_pretrained(fresh, tmp_path / "adapter").eval()
    with torch.no_grad():
        assert float(number_loss(again, batch, head)) == pytest.approx(after, rel=1e-5)
    merged = again.merge_and_unload().eval()
    lm = TorchLaserModel(merged, prompt, num_samples=8)
    texts = [synthetic()[0].text, synthetic()[-1].text]  # sleep 12, sleep 2400
    preds = lm.predict(texts)
    assert all(r.p10 <= r.p50 <= r.p90 for r in preds)
    assert preds[0].p50 < preds[1].p50
    assert json.dumps(log["finetune"])  # the log is JSON
