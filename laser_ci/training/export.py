"""Export a trained model to the shipped artifact: ONNX with a KV cache, int8, tokenizer, config.

Steps (:func:`export_model`):

1. ``optimum`` exports the transformers model as ``text-generation-with-past`` (inputs
   ``input_ids``, ``attention_mask``, ``position_ids``, ``past_key_values.{i}.key/value``;
   outputs ``logits``, ``present.{i}.key/value``).
2. Graph surgery. Attention (:func:`use_attention_bias`): the masks become one additive
   ``attention_bias`` input, so the decoding loop can lay a job's samples out as branches
   of one sequence (tree attention) that share the prompt's KV cache. LM head
   (:func:`restrict_head`): the loop only reads the tokens the number codec can emit
   (digits and signs), so the head becomes ``MatMul(W[:, ids])`` with logits
   ``[batch, seq, 12]`` instead of ``[batch, seq, vocab]``. The full-vocabulary graph that
   naive decoding needs (benchmarks only) keeps every column for the last position only.
3. int8 (:func:`quantize_int8`): the weight MatMuls only (the tiny head stays fp32).
   *Static* with calibration prompts: activation scales fixed on those token ids, so jobs
   decode side by side and split at a shared prefix without changing a sample (the shipped
   graph: ``benchmarks/int8_check.py --static-weights s7``). Else *dynamic*: a scale per
   call, so one job per batch (what ``laser-ci eval --folds`` exports).
4. ``laser.json`` (see :mod:`laser_ci.predictors.lm`) with the sha256 of every file, so a corrupt or
   mismatched artifact fails at load time.

Needs the ``train`` extra (torch, transformers, optimum, optimum-onnx); inference does not.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from laser_ci.predictors.lm import CONFIG_NAME, FORMAT_VERSION, MODEL_FILE, TOKENIZER_FILE

INT64_MAX = np.iinfo(np.int64).max
HEAD_NODE_OUTPUT = "logits"


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---- 1. optimum export ---------------------------------------------------------------------


def optimum_export(hf_dir: str | Path, out_dir: str | Path, *, validate: bool = True) -> Path:
    """``text-generation-with-past`` export of a saved transformers model; returns model.onnx."""
    from optimum.exporters.onnx import main_export

    for name in ("optimum", "transformers", "torch.onnx"):
        logging.getLogger(name).setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main_export(
            str(hf_dir),
            output=str(out_dir),
            task="text-generation-with-past",
            device="cpu",
            do_validation=validate,
            local_files_only=True,
        )
    path = Path(out_dir) / "model.onnx"
    if not path.is_file():
        raise RuntimeError(f"optimum wrote no model.onnx into {out_dir}")
    return path


# ---- 2. head surgery -----------------------------------------------------------------------


def _initializer(graph: Any, name: str) -> Any | None:
    return next((i for i in graph.initializer if i.name == name), None)


def _head_weight(graph: Any, name: str) -> tuple[np.ndarray, list[Any]]:
    """The ``[hidden, vocab]`` head weight feeding the logits MatMul, and the nodes that only
    produce it (a Transpose of the tied embedding, as optimum writes tied weights)."""
    from onnx import numpy_helper

    init = _initializer(graph, name)
    if init is not None:
        return numpy_helper.to_array(init), []
    prod = next((n for n in graph.node if name in n.output), None)
    if prod is not None and prod.op_type == "Transpose":
        src = _initializer(graph, prod.input[0])
        perm = [a.ints for a in prod.attribute if a.name == "perm"]
        if src is not None and (not perm or list(perm[0]) == [1, 0]):
            return numpy_helper.to_array(src).T, [prod]
    raise ValueError(f"cannot find the LM head weight {name!r} in the graph")


def restrict_head(model: Any, token_ids: Sequence[int] | None, *, last_only: bool = True) -> Any:
    """Rewrite the LM head of an optimum decoder graph in place (and return it).

    ``last_only``: logits for the last position only (``[batch, 1, n]``).
    ``token_ids``: keep only these vocabulary rows, in this order (``n = len(token_ids)``);
    ``None`` keeps the whole vocabulary.
    """
    import onnx
    from onnx import helper, numpy_helper

    g = model.graph
    idx, node = next(
        (i, n) for i, n in enumerate(g.node) if HEAD_NODE_OUTPUT in n.output
    )
    if node.op_type != "MatMul":
        raise ValueError(f"logits come from {node.op_type}, expected MatMul")
    hidden, w_name = node.input[0], node.input[1]
    new_nodes = []
    if last_only:
        consts = {
            "laser_head_starts": np.array([-1], dtype=np.int64),
            "laser_head_ends": np.array([INT64_MAX], dtype=np.int64),
            "laser_head_axes": np.array([1], dtype=np.int64),
        }
        for k, v in consts.items():
            g.initializer.append(numpy_helper.from_array(v, k))
        new_nodes.append(
            helper.make_node(
                "Slice",
                [hidden, *consts],
                ["laser_head_last_hidden"],
                name="laser_head_last",
            )
        )
        node.input[0] = "laser_head_last_hidden"
    n_out: int | None = None
    if token_ids is not None:
        w, producers = _head_weight(g, w_name)
        ids = np.asarray(list(token_ids), dtype=np.int64)
        if ids.min() < 0 or ids.max() >= w.shape[1]:
            raise ValueError("head token id out of range")
        sel = np.ascontiguousarray(w[:, ids]).astype(np.float32)
        g.initializer.append(numpy_helper.from_array(sel, "laser_head_weight"))
        node.input[1] = "laser_head_weight"
        n_out = len(ids)
        still_used = {i for n in g.node for i in n.input}
        for p in producers:
            if not any(o in still_used for o in p.output):
                g.node.remove(p)
        still_used = {i for n in g.node for i in n.input}
        if w_name not in still_used:
            init = _initializer(g, w_name)
            if init is not None:
                g.initializer.remove(init)
        idx = next(i for i, n in enumerate(g.node) if HEAD_NODE_OUTPUT in n.output)
    for k, n in enumerate(new_nodes):
        g.node.insert(idx + k, n)
    out = next(o for o in g.output if o.name == HEAD_NODE_OUTPUT)
    dims = out.type.tensor_type.shape.dim
    if last_only:
        dims[1].ClearField("dim_param")
        dims[1].dim_value = 1
    if n_out is not None:
        dims[2].ClearField("dim_param")
        dims[2].dim_value = n_out
    onnx.checker.check_model(model)
    return model


def _const_value(graph: Any, name: str) -> np.ndarray | None:
    from onnx import numpy_helper

    init = _initializer(graph, name)
    if init is not None:
        return numpy_helper.to_array(init)
    prod = next((n for n in graph.node if name in n.output), None)
    if prod is not None and prod.op_type == "Constant":
        for a in prod.attribute:
            if a.name == "value":
                return numpy_helper.to_array(a.t)
    return None


def prune(graph: Any) -> None:
    """Drop nodes (and initializers) nothing reaches the graph outputs through."""
    needed = {o.name for o in graph.output}
    keep = []
    for n in reversed(list(graph.node)):
        if any(o in needed for o in n.output):
            keep.append(n)
            needed.update(i for i in n.input if i)
            for a in n.attribute:  # subgraphs (If/Loop) read outer names
                for sub in [a.g, *a.graphs]:
                    needed.update(i for sn in sub.node for i in sn.input)
    keep.reverse()
    del graph.node[:]
    graph.node.extend(keep)
    unused = [i for i in graph.initializer if i.name not in needed]
    for i in unused:
        graph.initializer.remove(i)


BIAS_INPUT = "attention_bias"


def use_attention_bias(model: Any) -> dict[str, int]:
    """Replace the graph's own attention masking by an additive ``attention_bias`` input
    (``float32 [batch, 1, new tokens, past + new tokens]``: 0 where a query may attend, a
    large negative number elsewhere), in place.

    optimum's export of SDPA attention builds a causal + padding mask from
    ``attention_mask`` and, in every layer, turns it into ``0/-inf`` with a ``Where``, adds it
    to the scores and guards the softmax with ``Where(IsNaN(p), 0, p)``. With the bias as an
    input the mask is computed once by the caller (cheaper), the NaN guard goes (a finite
    bias never gives a NaN row), and the caller can express any attention pattern: the
    decoding loop uses it for *tree attention*, where the samples of one job are branches of
    one sequence that share the prompt's KV cache (:mod:`laser_ci.predictors.decode`). The
    ``attention_mask`` input is removed when nothing else reads it.
    """
    from onnx import TensorProto, helper

    g = model.graph
    consumers: dict[str, list[Any]] = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    prod = {o: n for n in g.node for o in n.output}
    guards = masks = 0
    for sm in [n for n in g.node if n.op_type == "Softmax"]:
        for isnan in [c for c in consumers.get(sm.output[0], []) if c.op_type == "IsNaN"]:
            for w in [c for c in consumers.get(isnan.output[0], []) if c.op_type == "Where"]:
                if w.input[0] == isnan.output[0] and w.input[2] == sm.output[0]:
                    for c in consumers.get(w.output[0], []):
                        for k, i in enumerate(c.input):
                            if i == w.output[0]:
                                c.input[k] = sm.output[0]
                    guards += 1
        add = prod.get(sm.input[0])
        if add is None or add.op_type != "Add":
            continue
        for k in (0, 1):
            where = prod.get(add.input[k])
            if where is None or where.op_type != "Where":
                continue
            neg = _const_value(g, where.input[2])
            zero = _const_value(g, where.input[1])
            if neg is None or zero is None or not np.all(np.isneginf(neg)) or np.any(zero):
                continue
            add.input[k] = BIAS_INPUT
            masks += 1
    if not masks:
        raise ValueError("found no attention mask to replace (unexpected export)")
    n_layers = sum(1 for i in g.input if i.name.startswith("past_key_values.") and
                   i.name.endswith(".key"))
    if masks != n_layers:
        raise ValueError(f"replaced {masks} attention masks for {n_layers} layers")
    g.input.append(helper.make_tensor_value_info(
        BIAS_INPUT, TensorProto.FLOAT,
        ["batch_size", 1, "sequence_length", "past_sequence_length + sequence_length"]))
    prune(g)
    used = {i for n in g.node for i in n.input}
    for inp in [i for i in g.input if i.name not in used]:
        g.input.remove(inp)
    return {"nan_guards_removed": guards, "masks_replaced": masks}


# ---- 3. int8 -------------------------------------------------------------------------------


def head_node_names(model: Any) -> list[str]:
    return [n.name for n in model.graph.node if HEAD_NODE_OUTPUT in n.output]


QUANTIZATIONS = ("dynamic", "static")  # laser.json model.quantization


class _Calibration:
    """``onnxruntime.quantization.CalibrationDataReader`` over prompts: one prefill pass
    (empty KV cache, causal bias) per token-id list."""

    def __init__(self, prompts: Sequence[Sequence[int]], past_inputs: Sequence[Any]) -> None:
        self.prompts = iter(prompts)
        self.past = [(i.name, int(i.shape[1]), int(i.shape[3])) for i in past_inputs]

    def get_next(self) -> dict[str, np.ndarray] | None:
        from laser_ci.predictors.decode import causal_bias

        ids = next(self.prompts, None)
        if ids is None:
            return None
        n = len(ids)
        feeds: dict[str, np.ndarray] = {
            "input_ids": np.asarray([ids], dtype=np.int64),
            "position_ids": np.arange(n, dtype=np.int64)[None],
            "attention_bias": causal_bias(np.ones((1, n), dtype=np.int64)),
        }
        for name, heads, dim in self.past:
            feeds[name] = np.zeros((1, heads, 0, dim), dtype=np.float32)
        return feeds


STATIC_WEIGHTS = ("u8", "s8", "s7")  # quantize_int8's static weight types


def quantize_int8(
    src: str | Path, dst: str | Path, *, fp32_nodes: Sequence[str] = (), per_channel: bool = False,
    calibration: Sequence[Sequence[int]] | None = None, weights: str = "u8",
) -> Path:
    """int8 quantization of the weight MatMuls (and, dynamic, the embedding Gather):
    static with activation scales from ``calibration`` (token-id lists), else dynamic.
    Static ``weights`` (:data:`STATIC_WEIGHTS`): ``u8`` (u8 activations × u8 weights),
    ``s8`` (× s8 weights, the operand types of VNNI's dot-product instruction) or ``s7`` (s8
    weights in 7 bits, onnxruntime's ``reduce_range``: x86 CPUs without VNNI multiply u8 × s8
    in int16 sums that full-range weights can saturate). Dynamic weights are s8."""
    import onnx

    if weights not in STATIC_WEIGHTS:
        raise ValueError(f"weights {weights!r}: expected one of {STATIC_WEIGHTS}")
    model = onnx.load(str(src))
    exclude = sorted(set(fp32_nodes) | set(head_node_names(model)))
    logging.getLogger("onnxruntime").setLevel(logging.ERROR)
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # its "consider pre-processing" advice, on the root logger
    try:
        return _quantize(src, dst, exclude, per_channel, calibration, weights)
    finally:
        root.setLevel(level)


def _quantize(src: str | Path, dst: str | Path, exclude: list[str], per_channel: bool,
              calibration: Sequence[Sequence[int]] | None, weights: str) -> Path:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    if calibration is not None:
        if not calibration:
            raise ValueError("static int8 needs at least one calibration prompt")
        import onnxruntime as ort
        from onnxruntime.quantization import CalibrationMethod, QuantFormat, quantize_static

        sess = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
        past = [i for i in sess.get_inputs() if i.name.startswith("past_key_values.")]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quantize_static(
                str(src),
                str(dst),
                _Calibration(calibration, past),
                quant_format=QuantFormat.QOperator,
                op_types_to_quantize=["MatMul"],
                activation_type=QuantType.QUInt8,
                weight_type=QuantType.QUInt8 if weights == "u8" else QuantType.QInt8,
                reduce_range=weights == "s7",
                per_channel=per_channel,
                nodes_to_exclude=exclude,
                calibrate_method=CalibrationMethod.MinMax,
                extra_options={"MatMulConstBOnly": True},
            )
        return Path(dst)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quantize_dynamic(
            str(src),
            str(dst),
            op_types_to_quantize=["MatMul", "Gather"],
            weight_type=QuantType.QInt8,
            per_channel=per_channel,
            nodes_to_exclude=exclude,
            extra_options={"MatMulConstBOnly": True},
        )
    return Path(dst)


# ---- 4. the artifact -----------------------------------------------------------------------


def export_model(
    model: Any,
    tokenizer: Any,
    out_dir: str | Path,
    *,
    max_prompt_tokens: int,
    codec: Any = None,
    warm_target: str = "runtime",
    layout: str = "serial",
    warm_anchor: str = "median",
    targets: Sequence[str] = (),
    num_samples: int = 16,
    sampling: str = "stratified",
    exact_last: bool = True,
    int8: bool = True,
    calibration: Sequence[Sequence[int]] | None = None,
    static_weights: str = "u8",
    keep_fp32: bool = False,
    full_vocab_graph: bool = False,
    include_weights: bool = True,
    fp32_nodes: Sequence[str] = (),
    validate: bool = True,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the artifact folder for a trained ``LlamaForCausalLM`` and return its config.

    Files: ``model.onnx`` (int8 unless ``int8=False``; static with ``calibration``, the
    token ids of training prompts, and ``static_weights``, see :func:`quantize_int8`),
    ``tokenizer.json``, ``laser.json``;
    optionally ``model.fp32.onnx`` (``keep_fp32``), ``model.full.onnx`` (full-vocabulary
    head for naive decoding, fp32 or int8 like model.onnx) and ``weights.safetensors`` +
    ``hf_config.json`` (fp16 torch weights, the base for ``laser-ci finetune``).
    """
    import onnx

    from laser_ci.text.numbers import DEFAULT_CODEC
    from laser_ci.text.tokenize import PromptCodec

    codec = codec or DEFAULT_CODEC
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    prompt = PromptCodec(tokenizer, codec, max_prompt_tokens, warm_target=warm_target,
                         layout=layout, warm_anchor=warm_anchor)
    head_tokens = codec.all_tokens()
    head_ids = [prompt.token_ids[t] for t in head_tokens]
    files: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="laser-export-") as tmp:
        tmp_path = Path(tmp)
        hf_dir = tmp_path / "hf"
        model = model.to("cpu").float().eval()
        model.save_pretrained(str(hf_dir), safe_serialization=True)
        raw = optimum_export(hf_dir, tmp_path / "onnx", validate=validate)
        variants = {MODEL_FILE: head_ids}
        if full_vocab_graph:
            variants["model.full.onnx"] = None
        for name, ids in variants.items():
            m = onnx.load(str(raw))
            use_attention_bias(m)
            # the digits-only graph: logits at every new position (the decoding loop reads
            # one per sample branch); the full-vocabulary graph: last position only
            restrict_head(m, ids, last_only=ids is None)
            fp32 = tmp_path / f"fp32-{name}"
            onnx.save(m, str(fp32))
            if keep_fp32 and name == MODEL_FILE:
                shutil.copyfile(fp32, out / "model.fp32.onnx")
                files["model.fp32.onnx"] = ""
            if int8:
                quantize_int8(fp32, out / name, fp32_nodes=fp32_nodes, calibration=calibration,
                              weights=static_weights)
            else:
                shutil.copyfile(fp32, out / name)
            files[name] = ""
        if include_weights:
            from safetensors.torch import save_file

            state = {k: v.detach().to("cpu").half().contiguous() for k, v in model.state_dict().items()}
            if getattr(model.config, "tie_word_embeddings", False):
                state.pop("lm_head.weight", None)
            save_file(state, str(out / "weights.safetensors"))
            (out / "hf_config.json").write_text(model.config.to_json_string())
            files["weights.safetensors"] = ""
            files["hf_config.json"] = ""
    tokenizer.save(str(out / TOKENIZER_FILE))
    files[TOKENIZER_FILE] = ""
    cfg = model.config
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    config: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "model": {
            "architecture": type(model).__name__,
            "vocab_size": cfg.vocab_size,
            "hidden_size": cfg.hidden_size,
            "num_hidden_layers": cfg.num_hidden_layers,
            "num_attention_heads": cfg.num_attention_heads,
            "num_key_value_heads": cfg.num_key_value_heads,
            "head_dim": head_dim,
            "parameters": int(sum(p.numel() for p in model.parameters())),
            "int8": int8,
            **({"quantization": "static" if calibration is not None else "dynamic"}
               if int8 else {}),
            **({"static_weights": static_weights} if int8 and calibration is not None else {}),
        },
        "prompt": {"max_prompt_tokens": max_prompt_tokens, "warm_target": warm_target,
                   **({"layout": layout} if layout != "serial" else {}),
                   **({"warm_anchor": warm_anchor} if warm_anchor != "median" else {}),
                   **({"targets": list(targets)} if targets else {})},
        "codec": {
            "mantissa_digits": codec.mantissa_digits,
            "exponent_digits": codec.exponent_digits,
            "min_exponent": codec.min_exponent,
            "max_exponent": codec.max_exponent,
            "key": codec.key,
        },
        "head_tokens": head_tokens,
        "head_token_ids": head_ids,
        "decoding": {"num_samples": num_samples, "temperature": 1.0, "seed": 0,
                     "sampling": sampling, "exact_last": exact_last},
        **(extra or {}),
        "files": {name: sha256_file(out / name) for name in sorted(files)},
    }
    (out / CONFIG_NAME).write_text(json.dumps(config, indent=2) + "\n")
    return config
