"""Export and decode end to end: a tiny model trained here, exported with optimum, quantized,
loaded with onnxruntime alone and decoded with the constrained loop.

Needs the ``train`` extra (torch, transformers, optimum-onnx); skipped without it.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

import bench
import numpy as np
import pytest
from labeled import Ex

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("optimum.exporters.onnx")

from laser_ci.predictors.decode import (  # noqa: E402
    NEG,
    DecodeStats,
    OnnxDecoder,
    causal_bias,
    left_pad,
)
from laser_ci.predictors.lm import LaserModel, ModelFileError, make_session, read_config  # noqa: E402
from laser_ci.text.numbers import DEFAULT_CODEC  # noqa: E402
from laser_ci.text.tokenize import PromptCodec, train_tokenizer  # noqa: E402
from laser_ci.training.config import TrainConfig  # noqa: E402
from laser_ci.training.export import export_model  # noqa: E402
from laser_ci.training.loops import _accelerator, calibration_ids, finetune_loop, make_items  # noqa: E402
from laser_ci.training.network import build_model  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
sample_naive = bench.load("naive_decoding").sample_naive


def synthetic_examples() -> list[Ex]:
    """Runtime decided by the text: a `sleep N` step, on one of two task kinds."""
    out = []
    for seconds, kind in [(s, kind) for s in (12, 45, 300, 2400) for kind in ("job", "workflow")]:
        for j in range(6):
            text = (
                f"task: {kind}\nworkflow: CI {j}\njob: build\nruns-on: ubuntu-latest\n"
                f"steps:\n- uses: actions/checkout@v4\n- run: sleep {seconds}\n"
            )
            out.append(Ex(text, seconds * (1 + 0.02 * (j - 3)), kind))
    return out


@pytest.fixture(scope="module")
def artifact(tmp_path_factory) -> Path:
    examples = synthetic_examples()
    corpus = [e.text for e in examples] * 3 + ["name: CI\non: [push]\njobs:\n  a:\n    runs-on: x\n"]
    tok = train_tokenizer(corpus, vocab_size=320)
    prompt = PromptCodec(tok, DEFAULT_CODEC, max_prompt_tokens=64)
    torch.manual_seed(0)
    model = build_model(tok.get_vocab_size(), "tiny", max_positions=256)
    cfg = TrainConfig(epochs=30, batch_size=8, lr=1e-2, patience=100, seed=0, warmup_frac=0.02)
    acc = _accelerator(cfg, "cpu")
    log: dict = {}
    best = finetune_loop(model, make_items(examples, prompt), make_items(examples[:8], prompt),
                         cfg, acc, prompt.pad_id, log)
    model.load_state_dict(best)
    out = tmp_path_factory.mktemp("artifact")
    export_model(model, tok, out, max_prompt_tokens=64, keep_fp32=True, full_vocab_graph=True)
    model.eval()
    torch.save(model, out / "torch_model.pt")
    (out / "train_log.json").write_text(json.dumps(log["finetune"]["history"]))
    return out


def torch_model(artifact: Path):
    return torch.load(artifact / "torch_model.pt", weights_only=False)


def test_artifact_files_and_sha256(artifact: Path, tmp_path: Path):
    config = read_config(artifact)
    assert set(config["files"]) >= {"model.onnx", "tokenizer.json", "weights.safetensors",
                                     "hf_config.json", "model.fp32.onnx", "model.full.onnx"}
    assert config["head_tokens"] == DEFAULT_CODEC.all_tokens()
    assert config["decoding"] == {"num_samples": 16, "temperature": 1.0, "seed": 0,
                                  "sampling": "stratified", "exact_last": True}
    bad = tmp_path / "bad"
    shutil.copytree(artifact, bad)
    data = bytearray((bad / "model.onnx").read_bytes())
    data[-1] ^= 1
    (bad / "model.onnx").write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="sha256"):
        LaserModel(bad)
    (bad / "model.onnx").unlink()
    with pytest.raises(ModelFileError, match="missing"):
        LaserModel(bad)


def test_onnx_matches_torch_with_padding_cache_and_tree_attention(artifact: Path):
    """The exported graph (fp32, attention bias input, digits-only head) equals torch:
    prompts of different lengths left-padded in one batch; then, through the KV cache, two
    branches side by side in one row (tree attention), each seeing only the prompt and
    itself, with positions that continue the prompt."""
    model = torch_model(artifact)
    lm = LaserModel(artifact, model_file="model.fp32.onnx")
    head = read_config(artifact)["head_token_ids"]
    texts = ["task: job\nrun: sleep 12\n", "task: workflow\nsteps:\n- run: sleep 2400\n", "x"]
    prompts = [p + lm.skeleton.prefix() for p in lm.prompt.encode_texts(texts)]
    dec = OnnxDecoder(make_session(artifact / "model.fp32.onnx"))
    ids, mask = left_pad(prompts, 0)
    pos = np.maximum(mask.cumsum(1) - 1, 0)
    logits, past = dec.forward(ids, pos, causal_bias(mask), dec.empty_past(len(ids)))
    t = ids.shape[1]
    dot = lm.prompt.tokenizer.token_to_id(".")
    four, seven = lm.prompt.token_ids["4"], lm.prompt.token_ids["7"]
    branches = [[four, dot], [seven, dot]]
    step = np.array([branches[0] + branches[1]] * len(ids))
    seen = mask.sum(1, keepdims=True)
    pos2 = np.concatenate([seen + np.arange(2), seen + np.arange(2)], axis=1)
    bias = np.full((len(ids), 1, 4, t + 4), NEG, dtype=np.float32)
    bias[:, 0, :, :t] = np.where(mask.astype(bool), 0, NEG)[:, None, :]
    for o in (0, 2):  # each branch: causal over its own two tokens only
        bias[:, 0, o, t + o] = 0
        bias[:, 0, o + 1, t + o : t + o + 2] = 0
    logits2, _ = dec.forward(step, pos2, bias, past)
    assert logits.shape == (len(ids), t, len(head)) and logits2.shape == (len(ids), 4, len(head))
    with torch.no_grad():
        for r, p in enumerate(prompts):
            ref = model(torch.tensor([p])).logits[0, -1, head].numpy()
            np.testing.assert_allclose(logits[r, -1], ref, atol=2e-4, rtol=1e-4)
            for k, br in enumerate(branches):
                ref2 = model(torch.tensor([p + br])).logits[0, -2:, head].numpy()
                np.testing.assert_allclose(logits2[r, 2 * k : 2 * k + 2], ref2, atol=2e-4,
                                           rtol=1e-4)


def test_model_learned_the_runtimes(artifact: Path):
    lm = LaserModel(artifact)
    examples = synthetic_examples()
    preds = lm.predict([e.text for e in examples])
    err = [abs(np.log(p.p50 / e.runtime_s)) for p, e in zip(preds, examples, strict=True)]
    assert np.median(err) < 0.3, err
    for p in preds:
        assert DEFAULT_CODEC.min_value <= p.p10 <= p.p50 <= p.p90 <= DEFAULT_CODEC.max_value
    assert lm.last_stats.forward_passes == 4 * lm.last_stats.batches


def test_int8_close_to_fp32(artifact: Path):
    texts = [e.text for e in synthetic_examples()[::5]]
    i8 = LaserModel(artifact).predict(texts)
    f32 = LaserModel(artifact, model_file="model.fp32.onnx").predict(texts)
    for a, b in zip(i8, f32, strict=True):
        assert abs(np.log(a.p50 / b.p50)) < 0.25
    assert (artifact / "model.onnx").stat().st_size < (artifact / "model.fp32.onnx").stat().st_size


@pytest.mark.parametrize("model_file", ["model.fp32.onnx", "model.onnx"])
def test_seeded_and_batch_independent(artifact: Path, model_file: str):
    """Same input and seed, same samples, alone or beside other jobs: with fp32 because the
    loop's padding and tree attention leave a job's logits alone; with int8, whose
    activations are quantized with one scale per batch, because each job is decoded in a
    batch of its own. Batching int8 jobs together would break it (checked)."""
    texts = [e.text for e in synthetic_examples()[::3]]
    lm = LaserModel(artifact, model_file=model_file)
    a = lm.sample(texts)
    b = LaserModel(artifact, model_file=model_file).sample(texts)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    for i in range(len(texts)):
        np.testing.assert_array_equal(a[i], lm.sample(texts[i : i + 1])[0])
    if model_file == "model.onnx":
        assert lm.batch_jobs == 1
        batched = LaserModel(artifact, model_file=model_file, batch_jobs=64)
        together = batched.sample(texts)
        assert any(not np.array_equal(together[i], batched.sample(texts[i : i + 1])[0])
                   for i in range(len(texts)))
    other = LaserModel(artifact, seed=1, model_file=model_file).sample(texts)
    assert any(not np.array_equal(x, y) for x, y in zip(a, other, strict=True))


@pytest.fixture(scope="module")
def static_artifact(artifact: Path, tmp_path_factory) -> Path:
    """The same weights exported static int8 (scales calibrated on the training prompts) in
    the shared-prefix layout."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(artifact / "tokenizer.json"))
    prompt = PromptCodec(tok, DEFAULT_CODEC, max_prompt_tokens=64, layout="shared-prefix")
    out = tmp_path_factory.mktemp("static")
    calibration = calibration_ids(make_items(synthetic_examples(), prompt), 16, 0)
    export_model(torch_model(artifact), tok, out, max_prompt_tokens=64, keep_fp32=True,
                 layout="shared-prefix", calibration=calibration, include_weights=False)
    return out


def runner_variants() -> list[str]:
    """Jobs on three runners each: one body per job, its instance lines apart."""
    return [f"task: job\nworkflow: CI\njob: build\nruns-on: {runner}\n"
            f"steps:\n- uses: actions/checkout@v4\n- run: sleep {seconds}\n"
            for seconds in (12, 300) for runner in ("ubuntu-latest", "windows-latest", "macos-14")]


def test_static_int8_decodes_jobs_side_by_side_and_shares_their_prefix(static_artifact: Path):
    """A static int8 graph fixes its activation scales, so jobs decode side by side (and
    after a shared prefix) with the samples each gets alone; a body its runner variants
    share is computed once; static int8 stays close to fp32."""
    config = read_config(static_artifact)
    assert config["model"]["quantization"] == "static"
    assert config["prompt"]["layout"] == "shared-prefix"
    lm = LaserModel(static_artifact, threads=1)  # one thread: every job in one batch
    assert lm.batch_jobs == 64 and lm.prompt.layout == "shared-prefix"
    texts = runner_variants() + [e.text for e in synthetic_examples()[::3]]
    together = lm.sample(texts)
    stats = lm.last_stats
    bodies = {tuple(h) for h, _ in lm.prompt.encode_segments(lm.prompt_texts(texts))}
    assert stats.prefixes == len(bodies) < len(texts)
    assert stats.shared_tokens > 0 and stats.batches == 1
    for i, text in enumerate(texts):
        np.testing.assert_array_equal(together[i], lm.sample([text])[0])
    # two threads cut them into two batches, one a thread: the same samples again
    two = LaserModel(static_artifact, threads=2)
    np.testing.assert_array_equal(np.stack(two.sample(texts)), np.stack(together))
    assert two.last_stats.batches == 2
    # the toy model's distributions are broad: enough samples that the medians are steady
    f32 = LaserModel(static_artifact, model_file="model.fp32.onnx", num_samples=256).predict(texts)
    for a, b in zip(LaserModel(static_artifact, num_samples=256).predict(texts), f32, strict=True):
        assert abs(np.log(a.p50 / b.p50)) < 0.25


@pytest.mark.parametrize(("weights", "dtype", "low", "high"), [
    ("u8", np.uint8, 0, 255),
    ("s8", np.int8, -128, 127),
    ("s7", np.int8, -64, 64),  # reduce_range: pairs of u8 x s8 products fit int16 sums
])
def test_static_int8_weight_types(static_artifact: Path, tmp_path: Path, weights: str,
                                  dtype: type, low: int, high: int):
    """Each static weight type quantizes every weight MatMul's matrix to its type and range,
    and decodes jobs side by side with the samples each gets alone."""
    import shutil

    import onnx
    from onnx import numpy_helper

    from laser_ci.training.export import quantize_int8
    lm = LaserModel(static_artifact)
    folder = tmp_path / "m"
    shutil.copytree(static_artifact, folder)
    calibration = calibration_ids(make_items(synthetic_examples(), lm.prompt), 16, 0)
    quantize_int8(folder / "model.fp32.onnx", folder / "w.onnx", calibration=calibration,
                  weights=weights)
    graph = onnx.load(str(folder / "w.onnx")).graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    mats = [inits[n.input[3]] for n in graph.node if n.op_type == "QLinearMatMul"
            and n.input[3] in inits]
    assert mats and all(m.dtype == dtype for m in mats)
    assert min(int(m.min()) for m in mats) >= low and max(int(m.max()) for m in mats) <= high
    assert max(int(np.abs(m.astype(np.int16)).max()) for m in mats) > high // 2  # range used
    model = LaserModel(folder, model_file="w.onnx", verify=False, batch_jobs=64)
    texts = runner_variants() + [e.text for e in synthetic_examples()[::3]]
    together = model.sample(texts)
    for i, text in enumerate(texts):
        np.testing.assert_array_equal(together[i], model.sample([text])[0])


def test_static_int8_weight_type_is_checked(artifact: Path, tmp_path: Path):
    from laser_ci.training.export import quantize_int8

    with pytest.raises(ValueError, match="weights 'u4'"):
        quantize_int8(artifact / "model.fp32.onnx", tmp_path / "x.onnx", calibration=[[1]],
                      weights="u4")


def test_static_int8_needs_calibration_prompts(artifact: Path, tmp_path: Path):
    from laser_ci.training.export import quantize_int8

    with pytest.raises(ValueError, match="calibration prompt"):
        quantize_int8(artifact / "model.fp32.onnx", tmp_path / "x.onnx", calibration=[])


def test_unknown_sampling_is_a_model_file_error(artifact: Path, tmp_path: Path):
    bad = tmp_path / "bad"
    shutil.copytree(artifact, bad)
    config = json.loads((bad / "laser.json").read_text())
    config["decoding"]["sampling"] = "beam"
    (bad / "laser.json").write_text(json.dumps(config))
    with pytest.raises(ModelFileError, match="sampling 'beam'"):
        LaserModel(bad)
    assert LaserModel(artifact, sampling="independent").sampling == "independent"


def test_constrained_loop_needs_the_digits_graph(artifact: Path):
    """The full-vocabulary graph (naive baseline) gives last-position logits only, which tree
    attention cannot use: LaserModel refuses it instead of decoding wrongly."""
    with pytest.raises(ModelFileError, match="every position"):
        LaserModel(artifact, model_file="model.full.onnx")


def test_naive_decoding_on_the_full_graph(artifact: Path):
    lm = LaserModel(artifact)
    full = OnnxDecoder(make_session(artifact / "model.full.onnx"))
    texts = [e.text for e in synthetic_examples()[::7]]
    stats = DecodeStats()

    def parse(ids):
        return DEFAULT_CODEC.parse(lm.prompt.decode_output(ids))

    out = sample_naive(full, lm.prompt.encode_texts(texts), parse=parse,
                       eos_id=lm.prompt.eos_id, max_new_tokens=24, num_samples=8, stats=stats)
    assert len(out) == len(texts)
    valid = sum(np.isfinite(s).sum() for s in out)
    assert valid + stats.invalid == 8 * len(texts)
    assert valid >= 0.5 * 8 * len(texts)  # mostly spells the skeleton; not always valid
    # one pass per output token (16 tokens + <eos>) instead of 4 passes
    assert stats.forward_passes >= 17 * stats.batches


@pytest.mark.parametrize(("anchor", "anchor_s"), [(None, 300.0), ("median", 300.0),
                                                 ("recent", 250.0)])
def test_ratio_model_scales_warm_samples_by_the_history_median(artifact: Path, tmp_path: Path,
                                                               anchor: str | None,
                                                               anchor_s: float):
    """A ``warm_target: ratio`` folder: a warm text's samples are the loop's numbers times
    the history median (``prompt.warm_anchor`` ``recent``: its recent median) over √10; a
    cold text's are the loop's numbers. Items train on the ratio."""
    from laser_ci.predictors.decode import sample_numbers

    ratio = tmp_path / "ratio"
    shutil.copytree(artifact, ratio)
    config = json.loads((ratio / "laser.json").read_text())  # not a hashed file
    config["prompt"]["warm_target"] = "ratio"
    if anchor is not None:
        config["prompt"]["warm_anchor"] = anchor
    config["codec"]["min_exponent"] = -2
    (ratio / "laser.json").write_text(json.dumps(config))
    lm = LaserModel(ratio, num_samples=8)
    warm = ("task: job\nworkflow: CI 1\njob: build\nhistory: n=4 median=3.00e+02 "
            "p10=2.00e+02 p90=4.00e+02 latest=3.10e+02 recent=2.50e+02\n"
            "history-config: unchanged\nruns-on: ubuntu-latest\nsteps:\n- run: sleep 300\n")
    cold = synthetic_examples()[0].text
    got = lm.sample([warm, cold])
    raw = sample_numbers(lm.decoder, lm.prompt.encode_texts([warm, cold]), lm.skeleton,
                         num_samples=8, seed=lm.seed, pad_id=lm.prompt.pad_id,
                         stratified=lm.sampling == "stratified", exact_last=lm.exact_last,
                         max_batch_jobs=lm.batch_jobs)
    ref = anchor_s / 10**0.5
    np.testing.assert_allclose(got[0], raw[0] * ref)
    np.testing.assert_allclose(got[1], raw[1])
    assert lm.predict([warm, cold])[0].p50 == pytest.approx(float(np.median(raw[0])) * ref)
    (item,) = make_items([Ex(warm, 150.0)], lm.prompt)
    digits = [lm.prompt.id_to_token[item.labels[i]] for i in item.number_positions]
    assert digits == list("158+00" if anchor_s == 300.0 else "190+00")  # √10 * 150 / anchor
    config["prompt"]["warm_anchor"] = "mean"
    (ratio / "laser.json").write_text(json.dumps(config))
    with pytest.raises(ModelFileError, match="warm_anchor"):
        LaserModel(ratio)


def test_train_and_finetune_commands(tmp_path: Path):
    """`laser-ci train` (the label-free base), the recipe's fine-tune from it, and `laser-ci
    finetune` of that model, end to end on the tiny fixture folder."""
    from click.testing import CliRunner
    from gha_mini import MINI as data

    from laser_ci.training.config import FOLD_CONFIG, PRETRAIN_MARKER
    from laser_ci.training.examples import load_examples
    from laser_ci.training.finetune import finetune_examples
    from laser_ci.training.train import finetune_command, train_command

    out = tmp_path / "base"
    r = CliRunner().invoke(train_command, [
        "--data", str(data), "--out", str(out), "--size", "tiny", "--pretrain-steps", "3",
        "--vocab-size", "300", "--pretrain-seq-len", "64", "--threads", "1"])
    assert r.exit_code == 0, r.output
    report = json.loads((out / "train_report.json").read_text())
    assert report["pretrain"]["steps"] == 3
    config = report["config"]  # the shipped base's settings, with the options given overriding them
    assert (config["size"], config["pretrain_seq_len"], config["threads"]) == ("tiny", 64, 1)
    assert (config["pretrain_batch_size"], config["pretrain_minutes"]) == (8, 22.0)
    assert json.loads((out / "pretrained" / PRETRAIN_MARKER).read_text())["labels"] is False
    # the recipe's stage 2 without its tabular reference (too few repositories here)
    examples = load_examples(data, cache=False)
    cfg = replace(FOLD_CONFIG, size="tiny", max_prompt_tokens=64, cold_reference=None,
                  threads=1)
    model = tmp_path / "model"
    finetune_examples(out / "pretrained", examples[:-4], examples[-4:], model, cfg,
                      device="cpu", include_weights=True)
    LaserModel(model).predict(["task: job\n"])
    ft = tmp_path / "ft"
    r = CliRunner().invoke(finetune_command, [
        "--data", str(data), "--base", str(model), "--out", str(ft), "--epochs", "1",
        "--repo", "tiny/collected", "--threads", "1"])
    assert r.exit_code == 0, r.output
    assert read_config(ft)["files"]["model.onnx"]
    for folder in (model, ft):  # the base's prompt and output semantics carry over
        prompt = read_config(folder)["prompt"]
        assert (prompt["warm_target"], prompt["layout"]) == ("ratio", "shared-prefix")
        assert (prompt["warm_anchor"], prompt["outcome"]) == ("recent", True)
        assert read_config(folder)["codec"]["min_exponent"] == -2


def test_train_data_parallel_on_two_cpu_processes(tmp_path: Path):
    """The same command under ``torchrun`` (2 processes, gloo on CPU): shards the rows and
    writes one report and one base."""
    import subprocess

    from gha_mini import MINI as data

    torchrun = shutil.which("torchrun")
    if torchrun is None:
        pytest.skip("torchrun not installed")
    out = tmp_path / "ddp"
    r = subprocess.run(
        [torchrun, "--standalone", "--nproc-per-node", "2", "-m", "laser_ci", "train", "--data", str(data),
         "--out", str(out), "--size", "tiny", "--pretrain-steps", "4", "--vocab-size", "300",
         "--pretrain-seq-len", "64", "--pretrain-batch-size", "2", "--threads", "1",
         "--device", "cpu"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads((out / "train_report.json").read_text())
    assert report["processes"] == 2
    assert report["pretrain"]["steps"] == 4
    assert report["pretrain"]["tokens"] == 4 * 2 * 2 * 64
    assert r.stdout.count('"parameters"') == 1
    assert (out / "pretrained" / "config.json").is_file()


def test_time_limits_stop_training(tmp_path: Path):
    """With a time limit the loops re-fit their schedule and stop on a step count that every
    data-parallel process agrees on (here: 30 steps measured, then the first step after)."""
    from gha_mini import MINI as data

    from laser_ci.training.examples import load_examples
    from laser_ci.training.finetune import finetune_examples
    from laser_ci.training.pretrain import run_pretrain

    cfg = TrainConfig(size="tiny", vocab_size=300, max_prompt_tokens=64, pretrain_steps=500,
                      pretrain_seq_len=64, pretrain_minutes=1e-5, epochs=50, batch_size=8,
                      patience=100, finetune_minutes=1e-5, cold_reference=None, threads=1)
    log = run_pretrain(data, tmp_path / "b", cfg, device="cpu")
    assert log["pretrain"]["steps"] == 31
    examples = load_examples(data, cache=False)
    log = finetune_examples(tmp_path / "b" / "pretrained", examples[:-4], examples[-4:],
                            tmp_path / "m", cfg, device="cpu")
    assert log["finetune"]["steps"] == 31


# ---- prompt lines: outcome and a cold reference (laser_ci.training.references) ---------------


def _tiny_tabular(examples):
    from laser_ci.predictors.baselines import TabularPredictor
    from laser_ci.training.baselines import Tabular, text_features

    tab = Tabular(examples, text_features(examples))
    names, model = tab.fit({"objective": "regression_l1", "num_leaves": 3, "rounds": 20,
                            "min_repos": 1})
    return TabularPredictor(names, model, -0.5, 0.5, info={"params": {}})


WARM_JOB = ("task: job\nworkflow: CI 1\njob: build\nhistory: n=4 median=3.00e+02 "
            "p10=2.00e+02 p90=4.00e+02 latest=3.10e+02\nhistory-config: unchanged\n"
            "runs-on: ubuntu-latest\nsteps:\n- run: sleep 300\n")


def _ratio_folder(artifact: Path, folder: Path):
    """A copy of the artifact as a ratio model reading the prompt lines, a tiny tabular
    reference attached; returns the folder, that reference and a cold text."""
    from laser_ci.training.references import attach_reference

    examples = [replace_repo(e, f"o/r{i % 4}") for i, e in enumerate(synthetic_examples())]
    tabular = _tiny_tabular(examples)
    shutil.copytree(artifact, folder)
    config = json.loads((folder / "laser.json").read_text())
    config["prompt"]["warm_target"] = "ratio"
    config["codec"]["min_exponent"] = -2
    (folder / "laser.json").write_text(json.dumps(config))
    attach_reference(folder, outcome=True, reference=tabular)
    return folder, tabular, examples[0].text


def _loop_numbers(lm: LaserModel, texts: list[str]) -> list[np.ndarray]:
    """The constrained loop's own numbers for ``texts`` (prompt lines included), decoded as
    ``lm`` decodes, before any reference multiplies them."""
    from laser_ci.predictors.decode import sample_numbers

    return sample_numbers(lm.decoder, lm.prompt.encode_texts(texts), lm.skeleton,
                          num_samples=lm.num_samples, seed=lm.seed, pad_id=lm.prompt.pad_id,
                          stratified=lm.sampling == "stratified", exact_last=lm.exact_last,
                          max_batch_jobs=lm.batch_jobs)


def test_reference_model_folder_writes_ratios_to_the_tabular_p50(artifact: Path, tmp_path: Path):
    """With ``cold_reference``: a cold text's prompt ends with the tabular p50 and its samples
    are the loop's numbers times that p50 over √10; a warm text keeps the history median;
    every prompt asks for ``outcome: success``; the reference files are hashed."""
    folder, tabular, cold = _ratio_folder(artifact, tmp_path / "ref")
    lm = LaserModel(folder, num_samples=8)
    assert lm.prompt.outcome and lm.prompt.cold_reference
    p50 = tabular.predict([cold])[0].p50
    texts = lm.prompt_texts([cold, WARM_JOB])
    assert texts[0].endswith(f"outcome: success\nreference: {lm.codec.to_string(p50)}\n")
    assert texts[1].endswith("outcome: success\n") and "reference:" not in texts[1]
    got = lm.sample([cold, WARM_JOB])
    raw = _loop_numbers(lm, texts)
    ref = float(lm.codec.to_string(p50)) / 10**0.5  # the reference as the prompt writes it
    np.testing.assert_allclose(got[0], raw[0] * ref)
    np.testing.assert_allclose(got[1], raw[1] * 300.0 / 10**0.5)
    # a tampered reference model is refused, like any hashed file of the folder
    with open(folder / "reference" / "tabular.json", "a") as f:
        f.write(" ")
    with pytest.raises(ModelFileError, match="tabular.json"):
        LaserModel(folder)


def replace_repo(e: Ex, repo: str) -> Ex:
    return Ex(e.text, e.runtime_s, e.kind, e.conclusion, repo)


def test_out_of_fold_references_never_see_their_own_label():
    from laser_ci.training.references import grid_point, out_of_fold_references, reference_key

    @dataclass(frozen=True)
    class Lab:
        text: str
        runtime_s: float
        repo: str
        workflow_path: str = ".github/workflows/ci.yml"
        run_id: str = "1"
        kind: str = "job"
        job_name: str | None = "build"
        text_warm: str | None = None

    base = synthetic_examples()
    examples = [Lab(e.text, e.runtime_s, f"o/r{i % 4}", run_id=str(i)) for i, e in enumerate(base)]
    groups = [i % 4 for i in range(len(examples))]
    params = {"objective": "regression_l1", "num_leaves": 3, "rounds": 20, "min_repos": 1,
              "learning_rate": 0.05}
    refs = out_of_fold_references(examples, groups, params, seeds=1)
    assert set(refs) == {reference_key(e) for e in examples}
    assert all(r > 0 for r in refs.values())
    # change group 0's labels: its own references stay, the others move
    changed = [Lab(e.text, e.runtime_s * (50.0 if g == 0 else 1.0), e.repo, run_id=e.run_id)
               for e, g in zip(examples, groups, strict=True)]
    again = out_of_fold_references(changed, groups, params, seeds=1)
    same = [refs[reference_key(e)] == again[reference_key(e)] for e, g in zip(examples, groups,
                                                                                strict=True)]
    assert all(s for s, g in zip(same, groups, strict=True) if g == 0)
    assert not all(s for s, g in zip(same, groups, strict=True) if g != 0)
    # a lone group has nobody to learn from: no reference
    assert out_of_fold_references(examples[:3], [0, 0, 0], params, seeds=1) == {}
    with pytest.raises(ValueError, match="lack"):
        grid_point({"objective": "huber"})
    with pytest.raises(ValueError, match="one group per example"):
        out_of_fold_references(examples, groups[:-1], params)


@pytest.mark.parametrize(
    "warmup, total, done, expected",
    [
        (500, 200, 100, (100, 200)),  # slow machine: warmup shrinks, the time limit holds
        (500, 200, 30, (30, 200)),  # warmup cut at the steps already done in it
        (500, 20_000, 100, (500, 20_000)),  # more time than planned: warmup unchanged
        (10, 300, 100, (10, 300)),  # past the warmup: only the total moves
        (10, 50, 100, (10, 101)),  # over time: stop at the next step, warmup done
        (1, 1, 0, (1, 2)),
    ],
)
def test_time_limited_schedules_shrink_their_warmup(warmup, total, done, expected):
    from laser_ci.training.loops import _lr_lambda, _refit_plan

    plan = {"total": 100_000, "warmup": warmup}
    _refit_plan(plan, total, done)
    assert (plan["warmup"], plan["total"]) == expected
    f = _lr_lambda(100_000, warmup, plan)
    assert f(plan["total"]) == pytest.approx(0.1)  # the decay completes at the new total
