"""The language-model predictor at inference time: numpy + onnxruntime + tokenizers only.

A model folder (written by :func:`laser_ci.training.export.export_model`) holds::

    laser.json          config: architecture, prompt budget, number codec, decoding defaults,
                        and the sha256 of every other file (checked at load)
    model.onnx          int8 decoder with a KV cache and an attention-bias input; logits of
                        the digit and sign tokens at every fed position
    tokenizer.json      the BPE (laser_ci.text.tokenize)
    weights.safetensors fp16 torch weights + hf_config.json: the base of ``laser-ci finetune``
                        (not read at inference)
    reference/          only when ``prompt.cold_reference`` is ``tabular``: the tabular model
                        (laser_ci.predictors.baselines) whose p50 is a cold text's reference

:class:`LaserModel` implements :class:`laser_ci.predictors.base.Predictor`: each text is encoded as
``<eos> text <sep>``, N runtimes are sampled with the constrained loop
(:func:`laser_ci.predictors.decode.sample_numbers`; ``laser.json`` ``decoding``: N, temperature, seed,
``sampling`` independent or stratified, ``exact_last``: the last digit's distribution kept
whole, absent: false), one job per batch for a dynamic int8 graph, and the result is their
p10/median/p90. A ``shared-prefix`` model (``prompt.layout``) computes the
KV cache of a body its texts share once (:mod:`laser_ci.text.tokenize`). A ``ratio``
model's samples for a text with history are multiplied back to seconds
(``prompt.warm_target``, :mod:`laser_ci.text.tokenize`), and so are a ``cold_reference``
model's for a text without: its prompt carries the reference model's p50 and the model
writes the ratio to it; a text with history's by the history's ``prompt.warm_anchor``
(``median``, absent: the median of the last 20 runs; ``recent``: of the last 3). A model
with ``prompt.outcome`` is asked for the runtime of a successful run. Then, by regime
(:func:`text_regime`: ``warm``, ``changed``, ``cold``), ``decoding.shrink`` moves the median
toward the reference (the share of the model's correction that held on examples it was not
trained on) and ``decoding.band_scale`` stretches the band (both fit by :mod:`laser_ci.training.bands`).

To register it with :mod:`laser_ci.predictors.choice`: ``LOADERS["lm"] = load_models`` (the folder
``model/lm`` with its ``card.json``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from laser_ci.predictors.base import Runtime
from laser_ci.text.history import config_changed, parse_history
from laser_ci.text.targets import USAGE_TARGETS

CONFIG_NAME = "laser.json"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
FORMAT_VERSION = 1
REFERENCE_DIR = "reference"
REFERENCE_MODELS = ("tabular",)  # laser.json prompt.cold_reference
DEFAULT_THREADS = 2
# laser.json "decoding.sampling": see laser_ci.predictors.decode
SAMPLING = ("independent", "stratified")
# laser.json "decoding.band_scale" and "decoding.shrink" are set per regime
# (laser_ci.training.bands): texts with a history block whose configuration is unchanged
# (or unknown), texts whose configuration changed since their latest earlier run, and texts
# without a history block
BAND_REGIMES = ("warm", "changed", "cold")


def text_regime(text: str) -> str:
    """The regime of :data:`BAND_REGIMES` a text decodes in."""
    if parse_history(text) is None:
        return "cold"
    return "changed" if config_changed(text) else "warm"


def regime_values(values: dict[str, float], default: float = 1.0) -> dict[str, float]:
    """A value for every regime of :data:`BAND_REGIMES`: ``values``'s own, else for
    ``changed`` the ``warm`` one (a model calibrated before that regime existed), else
    ``default``."""
    out = {r: float(values[r]) for r in BAND_REGIMES if r in values}
    out.setdefault("warm", default)
    out.setdefault("changed", out["warm"])
    out.setdefault("cold", default)
    return {r: out[r] for r in BAND_REGIMES}


def band_scales(scales: dict[str, float]) -> dict[str, float]:
    """A band scale for every regime (:func:`regime_values`; 1.0: the samples' own band)."""
    return regime_values(scales)


def shrinks(values: dict[str, float]) -> dict[str, float]:
    """A shrink for every regime (:func:`regime_values`; 1.0: the model's own median)."""
    return regime_values(values)


class ModelFileError(ValueError):
    """A model folder that is incomplete, corrupt, or of another format."""


@contextmanager
def _reading(path: Path) -> Iterator[None]:
    """A value of ``path`` that is missing or of the wrong type or range as a
    :class:`ModelFileError` naming the file (a KeyError's message is the bare key)."""
    try:
        yield
    except ModelFileError:
        raise
    except KeyError as e:
        raise ModelFileError(f"{path}: missing {e}") from e
    except (TypeError, ValueError, AttributeError) as e:
        raise ModelFileError(f"{path}: {e}") from e


def _check_decoding(num_samples: int, temperature: float, band_scale: Any, shrink: Any,
                    max_prompt_tokens: int) -> None:
    """Raise ValueError on decoding settings no prediction can come from (they failed
    later, inside the loop, or turned bands inside out)."""
    if num_samples < 1:
        raise ValueError(f"decoding.num_samples {num_samples}: expected at least 1")
    if not (math.isfinite(temperature) and temperature >= 0):
        raise ValueError(f"decoding.temperature {temperature}: expected a number >= 0")
    if max_prompt_tokens < 1:
        raise ValueError(f"prompt.max_prompt_tokens {max_prompt_tokens}: expected at least 1")
    for key, values, low in (("band_scale", band_scale, 0.0), ("shrink", shrink, -math.inf)):
        if not isinstance(values, dict):
            raise ValueError(f"decoding.{key} {values!r}: expected an object by regime")
        for regime, v in values.items():
            if not (isinstance(v, (int, float)) and not isinstance(v, bool)
                    and math.isfinite(v) and v >= low):
                raise ValueError(f"decoding.{key}.{regime} {v!r}: expected a finite number"
                                 + (" >= 0" if low == 0 else ""))


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_config(model_dir: str | os.PathLike[str], *, verify: bool = True,
                only: Sequence[str] | None = None) -> dict[str, Any]:
    """``laser.json`` of a model folder, after checking the sha256 of its files.

    ``only`` limits the check to those file names (inference needs only the ONNX graph and
    the tokenizer).
    """
    d = Path(model_dir)
    path = d / CONFIG_NAME
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ModelFileError(f"{path}: cannot read model config: {e}") from e
    if not isinstance(config, dict):
        raise ModelFileError(f"{path}: not a JSON object")
    if config.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(
            f"{path}: format_version {config.get('format_version')!r}, expected {FORMAT_VERSION}"
        )
    files: dict[str, str] = config.get("files") or {}
    if not isinstance(files, dict):
        raise ModelFileError(f"{path}: files is not an object (file name -> sha256)")
    for name in (MODEL_FILE, TOKENIZER_FILE):
        if name not in files:
            raise ModelFileError(f"{path}: no sha256 for {name}")
    if verify:
        for name, digest in files.items():
            if only is not None and name not in only:
                continue
            f = d / name
            if not f.is_file():
                raise ModelFileError(f"{d}: missing {name}")
            actual = _sha256(f)
            if actual != digest:
                raise ModelFileError(
                    f"{f}: sha256 {actual[:12]}... does not match laser.json ({digest[:12]}...)"
                )
    return config


def _targets(value: Any, config_path: Path) -> tuple[str, ...]:
    """``prompt.targets``: the usage targets the model writes after the runtime."""
    if not isinstance(value, list) or any(t not in USAGE_TARGETS for t in value):
        raise ModelFileError(f"{config_path}: prompt.targets {value!r}, expected a list of "
                             f"some of {list(USAGE_TARGETS)}")
    return tuple(value)


def make_session(path: str | os.PathLike[str], threads: int = DEFAULT_THREADS) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])


class LaserModel:
    """The shipped language model as a :class:`~laser_ci.predictors.base.Predictor`."""

    name = "laser-lm"

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        *,
        num_samples: int | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        sampling: str | None = None,
        exact_last: bool | None = None,
        band_scale: dict[str, float] | None = None,
        shrink: dict[str, float] | None = None,
        batch_jobs: int | None = None,
        threads: int = DEFAULT_THREADS,
        model_file: str = MODEL_FILE,
        verify: bool = True,
        name: str | None = None,
    ) -> None:
        from tokenizers import Tokenizer

        from laser_ci.predictors.decode import OnnxDecoder, PrefixStore, Skeleton
        from laser_ci.text.numbers import NumberCodec
        from laser_ci.text.tokenize import WARM_ANCHORS, PromptCodec

        self.model_dir = Path(model_dir)
        self.config = read_config(self.model_dir, verify=verify,
                                  only=[model_file, TOKENIZER_FILE, *_reference_files(model_dir)])
        if name:
            self.name = name
        config_path = self.model_dir / CONFIG_NAME
        with _reading(config_path):
            dec = self.config.get("decoding") or {}
            self.num_samples = int(num_samples if num_samples is not None
                                   else dec.get("num_samples", 32))
            self.temperature = float(temperature if temperature is not None
                                     else dec.get("temperature", 1.0))
            self.seed = int(seed if seed is not None else dec.get("seed", 0))
            self.sampling = str(sampling or dec.get("sampling", "independent"))
            self.exact_last = bool(exact_last if exact_last is not None
                                   else dec.get("exact_last", False))
            # p10-p90 band scales by regime (laser_ci.training.bands; absent: the samples' own)
            scales = band_scale if band_scale is not None else dec.get("band_scale", {})
            # how far the median moves from the prompt's reference, by regime (absent: all
            # the way)
            moves = shrink if shrink is not None else dec.get("shrink", {})
            prompt = self.config["prompt"]
            _check_decoding(self.num_samples, self.temperature, scales, moves,
                            int(prompt["max_prompt_tokens"]))
            self.band_scale = band_scales(scales)
            self.shrink = shrinks(moves)
            # A dynamic int8 graph quantizes activations with one scale per call, so a job
            # decoded beside others could get other samples than alone: one job per batch
            # keeps every prediction a function of its own text. A static int8 graph (fixed
            # scales, laser.json model.quantization) and an fp32 one decode jobs side by side.
            spec = self.config.get("model", {})
            dynamic = (bool(spec.get("int8", True)) and "fp32" not in model_file
                       and spec.get("quantization", "dynamic") == "dynamic")
            self.batch_jobs = int(batch_jobs or (1 if dynamic else 64))
            if self.sampling not in SAMPLING:
                raise ModelFileError(f"{self.model_dir}: sampling {self.sampling!r}, expected "
                                     f"one of {SAMPLING}")
            self.codec = NumberCodec(**self.config["codec"])
        try:
            tokenizer = Tokenizer.from_file(str(self.model_dir / TOKENIZER_FILE))
        except Exception as e:  # noqa: BLE001 - the tokenizers library raises a bare Exception
            raise ModelFileError(f"{self.model_dir / TOKENIZER_FILE}: cannot read the "
                                 f"tokenizer: {e}") from e
        with _reading(config_path):
            cold_reference = prompt.get("cold_reference")
            if cold_reference is not None and cold_reference not in REFERENCE_MODELS:
                raise ModelFileError(f"{self.model_dir}: prompt.cold_reference "
                                     f"{cold_reference!r}, expected one of {REFERENCE_MODELS}")
            if prompt.get("warm_reference") is not None:  # lever 1 for warm texts, not adopted
                raise ModelFileError(f"{self.model_dir}: prompt.warm_reference: a recipe "
                                     "laser-ci no longer reads (model/lm/EXPERIMENTS.md)")
            if prompt.get("warm_anchor", "median") not in WARM_ANCHORS:
                raise ModelFileError(f"{self.model_dir}: prompt.warm_anchor "
                                     f"{prompt.get('warm_anchor')!r}, expected one of "
                                     f"{WARM_ANCHORS}")
            self.prompt = PromptCodec(
                tokenizer, self.codec, int(prompt["max_prompt_tokens"]),
                warm_target=str(prompt.get("warm_target", "runtime")),
                outcome=bool(prompt.get("outcome", False)),
                cold_reference=cold_reference is not None,
                layout=str(prompt.get("layout", "serial")),
                warm_anchor=str(prompt.get("warm_anchor", "median")),
                targets=_targets(prompt.get("targets", []), config_path),
            )
        self.reference_model: Any = None
        if cold_reference is not None:
            self.reference_model = load_reference(self.model_dir)
        # one thread per run, `threads` runs at a time (buckets of jobs side by side): this
        # graph's small passes split across threads gain little (benchmarks/estimate_100.py)
        self.threads = max(1, int(threads))
        self.session = make_session(self.model_dir / model_file, 1)
        self.decoder = OnnxDecoder(self.session)
        with _reading(config_path):
            head_tokens: list[str] = self.config["head_tokens"]
            if self.decoder.last_only:
                raise ModelFileError(
                    f"{self.model_dir / model_file}: logits of the last position only; the "
                    "constrained loop needs logits at every position (model.onnx)"
                )
            if self.decoder.columns == len(head_tokens):
                columns = {t: i for i, t in enumerate(head_tokens)}
            else:  # a full-vocabulary graph
                columns = dict(self.prompt.token_ids)
            for t, i in zip(head_tokens, self.config["head_token_ids"], strict=True):
                if self.prompt.token_ids[t] != i:
                    raise ModelFileError(f"{self.model_dir}: tokenizer id of {t!r} is not {i}")
            self.skeleton = Skeleton(self.codec, self.prompt.pieces, self.prompt.token_ids,
                                     columns)
        self.last_stats: Any = None
        self.prefix_store = PrefixStore()  # shared bodies' KV caches, across calls

    def sample(self, texts: Sequence[str], num_samples: int | None = None) -> list[np.ndarray]:
        """The sorted runtime samples of each text (a ``ratio`` model's warm samples
        multiplied by the text's history median or recent median, ``prompt.warm_anchor``;
        see :mod:`laser_ci.text.tokenize`)."""
        return [s for s, _ in self.sample_with_references(texts, num_samples)]

    def sample_with_references(self, texts: Sequence[str], num_samples: int | None = None,
                               ) -> list[tuple[np.ndarray, float | None]]:
        """Each text's sorted runtime samples and the runtime its prompt's output is relative
        to (the history's median or recent median, or the reference model's p50; None for a
        model that writes
        runtimes)."""
        from laser_ci.predictors.decode import DecodeStats
        from laser_ci.text.tokenize import RATIO_CENTER

        if not texts:
            return []
        texts = self.prompt_texts(texts)
        stats = DecodeStats()
        segments = self.prompt.encode_segments(texts)
        out = self._sample(segments, [own for _, own in segments], self.skeleton,
                           num_samples=num_samples, stats=stats)
        self.last_stats = stats
        refs = [self.prompt.reference(t) for t in texts]
        return [(s, None) if r is None else (s * r, r * RATIO_CENTER)
                for s, r in zip(out, refs, strict=True)]

    def _sample(self, segments: Sequence[tuple[list[int], list[int]]],
                prompts: Sequence[Sequence[int]], skeleton: Any, num_samples: int | None = None,
                stats: Any = None) -> list[np.ndarray]:
        """:func:`laser_ci.predictors.decode.sample_numbers` of ``prompts`` (each after its
        segment's shared head) under ``skeleton``, as this model decodes."""
        from laser_ci.predictors.decode import sample_numbers

        return sample_numbers(
            self.decoder, prompts, skeleton,
            shared=[head for head, _ in segments] if any(h for h, _ in segments) else None,
            prefix_store=self.prefix_store, num_samples=num_samples or self.num_samples,
            temperature=self.temperature, seed=self.seed, pad_id=self.prompt.pad_id,
            stats=stats, stratified=self.sampling == "stratified", exact_last=self.exact_last,
            max_batch_jobs=self.batch_jobs, workers=self.threads)

    def predict_usage(self, texts: Sequence[str], runtimes: Sequence[Runtime],
                      ) -> list[dict[str, dict[str, float]]]:
        """What each job will use (:mod:`laser_ci.text.targets`: ``{target: {"p50", "p90"}}``),
        written after its runtime's p50 as the model was taught: each target sampled as the
        runtime is (the same constrained loop, its key prefix-filled), the prompt reading
        the runtime and the earlier targets' medians. Empty dicts from a model that writes
        the runtime alone (``laser.json`` without ``prompt.targets``)."""
        from laser_ci.predictors.decode import Skeleton

        if not self.prompt.targets or not texts:
            return [{} for _ in texts]
        texts = self.prompt_texts(texts)
        segments = self.prompt.encode_segments(texts)
        refs = [self.prompt.reference(t) for t in texts]
        got: list[dict[str, float]] = [{} for _ in texts]
        out: list[dict[str, dict[str, float]]] = [{} for _ in texts]
        for key in self.prompt.targets:
            skeleton = Skeleton(self.codec, self.prompt.segments[key], self.prompt.token_ids,
                                self.skeleton.columns)
            prompts = [own + self.prompt.written(rt.p50, ref, done)[0]
                       for (_h, own), rt, ref, done in zip(segments, runtimes, refs, got,
                                                           strict=True)]
            for k, s in enumerate(self._sample(segments, prompts, skeleton)):
                p50, p90 = (float(np.quantile(s, q)) for q in (0.5, 0.9))
                got[k][key] = p50
                out[k][key] = {"p50": p50, "p90": p90}
        return out

    def prompt_texts(self, texts: Sequence[str]) -> list[str]:
        """The texts as this model reads them: with the ``outcome: success`` line and, for
        texts without history, the reference model's p50 (see :mod:`laser_ci.text.tokenize`).
        Unchanged for a model that reads neither."""
        refs = prompt_references(self.reference_model, texts)
        return [self.prompt.with_prompt_lines(t, outcome="success", reference=r)
                for t, r in zip(texts, refs, strict=True)]

    def predict(self, texts: Sequence[str]) -> list[Runtime]:
        return [self.finish(raw, ref, text_regime(t))
                for t, (raw, ref) in zip(texts, self.predict_raw(texts), strict=True)]

    def predict_raw(self, texts: Sequence[str]) -> list[tuple[Runtime, float | None]]:
        """Each text's samples' p10/median/p90, before the shrink and the band scale, and its
        reference (:meth:`sample_with_references`): what :mod:`laser_ci.training.bands`
        calibrates on."""
        from laser_ci.predictors.decode import summarize_samples

        texts = list(texts)
        # identical texts (e.g. matrix instances that serialize alike) are decoded once
        unique = list(dict.fromkeys(texts))
        got = {t: (Runtime(*summarize_samples(s)), r)
               for t, (s, r) in zip(unique, self.sample_with_references(unique), strict=True)}
        return [got[t] for t in texts]

    def finish(self, raw: Runtime, reference: float | None, regime: str) -> Runtime:
        """A raw prediction (:meth:`predict_raw`) as this model states it: moved toward its
        reference by the regime's shrink, its band scaled by the regime's band scale."""
        return _in_range(scaled_band(shrunk(raw, reference, self.shrink[regime]),
                                     self.band_scale[regime]))


def _in_range(r: Runtime) -> Runtime:
    """``r`` within the runtimes a prediction can state: 1 s to the runtime codec's largest
    value (a scaled band, or a ratio times its reference, can reach past them; every metric
    clips at 1 s the same way)."""
    from laser_ci.text.numbers import DEFAULT_CODEC

    lo, hi = DEFAULT_CODEC.min_value, DEFAULT_CODEC.max_value
    return Runtime(*(min(max(x, lo), hi) if x == x else x for x in (r.p10, r.p50, r.p90)))


def shrunk(r: Runtime, reference: float | None, a: float) -> Runtime:
    """``r`` with its median's log ratio to ``reference`` multiplied by ``a`` (0: the
    reference itself, 1: unchanged), its band moved with it (:mod:`laser_ci.training.bands`)."""
    if a == 1.0 or reference is None or not (reference > 0 and r.p50 > 0):
        return r
    f = (reference / r.p50) ** (1.0 - a)
    return Runtime(r.p10 * f, r.p50 * f, r.p90 * f)


def scaled_band(r: Runtime, s: float) -> Runtime:
    """``r`` with its band stretched (s > 1) or shrunk (s < 1) in log space around the
    median (:mod:`laser_ci.training.bands`)."""
    if s == 1.0 or not (r.p50 > 0 and r.p10 > 0 and r.p90 > 0):
        return r
    return Runtime(r.p50 * (r.p10 / r.p50) ** s, r.p50, r.p50 * (r.p90 / r.p50) ** s)


def load_reference(model_dir: str | os.PathLike[str]) -> Any:
    """The tabular model in a model folder's ``reference/`` (``prompt.cold_reference``)."""
    from laser_ci.predictors.baselines import TabularPredictor

    d = Path(model_dir) / REFERENCE_DIR
    try:
        return TabularPredictor.load(d)
    except (OSError, ValueError, KeyError) as e:
        raise ModelFileError(f"{d}: cannot load the reference model: {e}") from e


def prompt_references(reference_model: Any, texts: Sequence[str]) -> list[float | None]:
    """Each text's reference runtime: the reference model's p50 for a text without a
    history block; None for the others (and for every text without a reference model)."""
    refs: list[float | None] = [None] * len(texts)
    if reference_model is not None:
        take = [i for i, t in enumerate(texts) if parse_history(t) is None]
        for i, r in zip(take, reference_model.predict([texts[i] for i in take]), strict=True):
            refs[i] = r.p50
    return refs


def _reference_files(model_dir: str | os.PathLike[str]) -> list[str]:
    """The reference model's files (as ``laser.json`` names them), if the folder has one."""
    d = Path(model_dir) / REFERENCE_DIR
    return sorted(f"{REFERENCE_DIR}/{p.name}" for p in d.iterdir()) if d.is_dir() else []


def load_models(folder: str | os.PathLike[str]) -> dict[str, LaserModel]:
    """Loader for :data:`laser_ci.predictors.choice.LOADERS`: ``{"laser-lm": LaserModel(folder)}``."""
    model = LaserModel(folder)
    return {model.name: model}
