"""The text tokenizer: a byte-level BPE trained on workflow YAML, and the prompt layout.

* Pre-tokenization splits every digit into its own piece (so every digit is one token, in
  the input and in the generated number) and then applies GPT-2 byte-level splitting, which
  keeps newlines and indentation as tokens (``\\n`` + spaces merge into indentation tokens).
  ``decode(encode(text)) == text`` for any text.
* Special tokens: ``<pad>`` (0), ``<eos>`` (1; also the document separator and the first
  token of every prompt) and ``<sep>`` (2; closes the input, the output skeleton follows).

The prompt layout is shared by training (:mod:`laser_ci.training.train`) and inference
(:mod:`laser_ci.predictors.decode`), so both build token ids through :class:`PromptCodec`::

    <eos> text-ids history-ids <sep> {"runtime_s": " d . d d e s d d "}

``history-ids`` is the serializer's history block moved to the end of the prompt, its
median (or ``warm_anchor``) last (the nearest number to the output); ``text-ids`` is the
rest of the text. Both together hold at most ``max_prompt_tokens`` ids: a longer text keeps
its head and the start of its last line (the serializer's ``repo:`` profile line).

What a warm prompt's output means is the model's ``warm_target``:

* ``runtime``: the runtime in seconds, like a cold prompt's;
* ``ratio``: ``RATIO_CENTER`` (√10) times the runtime over the history median, i.e. the
  runtime divided by :meth:`PromptCodec.reference`; the prompt's ``p10``, ``p90`` and
  ``latest`` are written the same way (:func:`laser_ci.text.history.relative_history_line`).
  The model then writes how the next run departs from its history instead of copying
  digits, and its samples are multiplied back at inference (:mod:`laser_ci.predictors.lm`). The
  factor puts "as long as the median" (``3.16e+00``) in the middle of one decade, so every
  ratio from 0.32 to 3.16 has the exponent ``+00`` and the first digit the model writes
  orders them (unscaled, 0.95 and 1.05 would be ``9.50e-01`` and ``1.05e+00``).

Which history figure a warm ratio is over is the model's ``warm_anchor``: ``median`` (of the
last 20 runs; such a model's prompts drop the history line's ``recent=`` field, which
came later) or ``recent`` (the median of the last 3 runs, moved last in its place; the
median is then written relative to it like the rest).

Two more lines can close a prompt, appended by the model's own layer (never by the
serializer, whose text stays the pinned contract) through :meth:`PromptCodec.with_prompt_lines`:

* ``outcome: success`` (``outcome``): the conclusion the runtime is asked for. Training
  writes each run's own conclusion, so failed runs still teach without blurring the answer
  to "how long until it passes"; inference asks for ``success``.
* ``reference: d.dde+dd`` (``cold_reference``, ratio models only): for a text without
  history, a reference runtime in seconds (the tabular model's p50, computed out of fold
  for training texts). The output is then ``RATIO_CENTER`` times the runtime over that
  reference, as a warm output is over the history median, so the model learns corrections
  to the reference instead of the level from scratch.
* ``reference: d.dde+dd`` for a text with history (``warm_reference``, ratio models only):
  the tabular model's history-anchored p50 (out of fold in training). The output is then
  ``RATIO_CENTER`` times the runtime over that reference instead of over the history
  median; the history line stays in the prompt (its median in seconds, the rest relative
  to it), just before the reference.

They sit after the history block's configuration lines, the reference (or the history's
median) last, nearest the output.

Where the lines of a job's text sit is the model's ``layout``:

* ``serial``: the serializer's order, bar the history block and the prompt lines;
* ``shared-prefix``: a job text's ``job:``, ``runs-on:`` and ``matrix:`` lines move to the
  end too, before the history block's configuration lines::

      <eos> body | job runs-on matrix history-config outcome number <sep>

  The body (the workflow's header, the job's keys, its steps, the ``repo:`` line) is then
  the same for the runtimes of a job on other runners that the sizing advice asks for, and
  for the matrix instances whose steps read no matrix value, so the decoding loop computes
  its KV cache once and feeds only the rest per text (:meth:`PromptCodec.encode_segments`,
  :func:`laser_ci.predictors.decode.sample_numbers`). The body's budget does not depend
  on those lines: they get a fixed ``n // 6`` ids (whole lines in that order, the last
  one cut), so a job's body is cut the same on every runner.

Fixed pieces of the skeleton are tokenized on their own (never merged with the digits next
to them), and each generated position is exactly one token. This module imports only
``tokenizers`` (no torch).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from laser_ci.text.history import (
    anchor_field,
    parse_history,
    relative_history_line,
    split_history_block,
    without_history_field,
)
from laser_ci.text.numbers import DEFAULT_CODEC, NumberCodec
from laser_ci.workflows.yamlload import well_formed

PAD = "<pad>"
EOS = "<eos>"
SEP = "<sep>"
SPECIAL_TOKENS = [PAD, EOS, SEP]
DEFAULT_VOCAB_SIZE = 8192
WARM_TARGETS = ("runtime", "ratio")
LAYOUTS = ("serial", "shared-prefix")  # PromptCodec.layout: see the module doc
WARM_ANCHORS = ("median", "recent")  # PromptCodec.warm_anchor: see the module doc
INSTANCE_LINES = ("job: ", "runs-on: ", "matrix: ")  # moved to the end by shared-prefix
RATIO_CENTER = math.sqrt(10.0)
OUTCOME_LINE = "outcome: "
REFERENCE_LINE = "reference: "


def _move_instance_lines(body: str) -> tuple[str, list[str]]:
    """``body`` without the first top-level line of each :data:`INSTANCE_LINES` prefix
    before ``steps:``, and those lines in that order."""
    lines = body.split("\n")
    found: dict[str, int] = {}
    for i, line in enumerate(lines):
        if line == "steps:":
            break
        for prefix in INSTANCE_LINES:
            if prefix not in found and line.startswith(prefix):
                found[prefix] = i
    moved = [lines[found[p]] for p in INSTANCE_LINES if p in found]
    drop = set(found.values())
    return "\n".join(line for i, line in enumerate(lines) if i not in drop), moved


def pre_tokenizer() -> pre_tokenizers.PreTokenizer:
    """Digits split one by one, then byte-level (GPT-2 regex) splitting."""
    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )


def new_tokenizer() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizer()
    tok.decoder = decoders.ByteLevel()
    return tok


def train_tokenizer(
    texts: Iterable[str],
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    min_frequency: int = 2,
    show_progress: bool = False,
) -> Tokenizer:
    """Train the BPE on ``texts`` (an iterable of documents)."""
    tok = new_tokenizer()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=show_progress,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    for i, s in enumerate(SPECIAL_TOKENS):
        assert tok.token_to_id(s) == i, (s, tok.token_to_id(s))
    return tok


def load_tokenizer(path: str | Path) -> Tokenizer:
    """Load a tokenizer saved with ``Tokenizer.save`` (a ``tokenizer.json``)."""
    tok = Tokenizer.from_file(str(path))
    for i, s in enumerate(SPECIAL_TOKENS):
        if tok.token_to_id(s) != i:
            raise ValueError(f"{path}: special token {s} is not id {i}")
    return tok


@dataclass
class PromptCodec:
    """Turns (text, runtime) into token ids, the same way for training and inference."""

    tokenizer: Tokenizer
    codec: NumberCodec = DEFAULT_CODEC
    max_prompt_tokens: int = 512
    last_line_tokens: int = 96
    warm_target: str = "runtime"  # see the module doc
    outcome: bool = False  # prompts end with an ``outcome:`` line
    cold_reference: bool = False  # texts without history carry a ``reference:`` runtime
    warm_reference: bool = False  # texts with history carry one too (see the module doc)
    layout: str = "serial"  # see the module doc
    warm_anchor: str = "median"  # the history field a warm ratio is over (see the module doc)
    # the (pad, start, separator) tokens: this tokenizer's SPECIAL_TOKENS, or a pretrained
    # tokenizer's own (laser_ci.training.pretrained: Gemma's <pad>, <bos> and a newline)
    specials: tuple[str, str, str] = (PAD, EOS, SEP)
    # usage targets written after the runtime (laser_ci.text.targets; () for runtime only)
    targets: tuple[str, ...] = ()
    # filled in __post_init__
    pad_id: int = field(init=False)
    eos_id: int = field(init=False)
    sep_id: int = field(init=False)
    token_ids: dict[str, int] = field(init=False)  # codec token -> vocab id
    pieces: list[list[int] | int] = field(init=False)  # skeleton: fixed ids or a slot index
    segments: dict[str, list[list[int] | int]] = field(init=False)  # each target's, after
    close: list[int] = field(init=False)  # the output's closing piece

    def __post_init__(self) -> None:
        if self.warm_target not in WARM_TARGETS:
            raise ValueError(f"warm_target {self.warm_target!r}: expected one of {WARM_TARGETS}")
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout {self.layout!r}: expected one of {LAYOUTS}")
        if self.warm_anchor not in WARM_ANCHORS:
            raise ValueError(f"warm_anchor {self.warm_anchor!r}: expected one of {WARM_ANCHORS}")
        if (self.cold_reference or self.warm_reference) and self.warm_target != "ratio":
            raise ValueError("a reference line needs warm_target 'ratio' (outputs are ratios)")
        t = self.tokenizer
        ids = [t.token_to_id(s) for s in self.specials]
        if any(i is None for i in ids):
            raise ValueError(f"special tokens {self.specials}: not all in the vocabulary ({ids})")
        self.pad_id, self.eos_id, self.sep_id = ids
        self.token_ids = {}
        for s in self.codec.all_tokens():
            ids = t.encode(s, add_special_tokens=False).ids
            if len(ids) != 1:
                raise ValueError(f"codec token {s!r} is not a single token: {ids}")
            self.token_ids[s] = ids[0]
        skeleton = self.codec.skeleton()  # ['{"runtime_s": "', slots and fixed pieces, '"}']
        self.pieces = self._encoded(skeleton)
        self.segments = {key: self._encoded([f'", "{key}": "', *skeleton[1:-1]])
                         for key in self.targets}
        close = self.pieces[-1]
        assert isinstance(close, list), "a number codec's skeleton ends with a fixed piece"
        self.close = close

    def _encoded(self, pieces: Sequence[str | int]) -> list[list[int] | int]:
        return [self.tokenizer.encode(p, add_special_tokens=False).ids if isinstance(p, str)
                else p for p in pieces]

    @property
    def id_to_token(self) -> dict[int, str]:
        return {i: s for s, i in self.token_ids.items()}

    # ---- prompt ------------------------------------------------------------------------------

    def encode_texts(self, texts: Sequence[str]) -> list[list[int]]:
        """The input part of each prompt: ``<eos> body tail <sep>``, at most
        ``max_prompt_tokens`` ids between ``<eos>`` and ``<sep>`` (the two segments of
        :meth:`encode_segments` end to end).

        The serializer's history block (:func:`laser_ci.text.history.split_history_block`) moves
        to the end, next to the output, so that copying from the history is a fixed-offset
        lookup. It keeps its ``history:`` line whole (its end, should that exceed half the
        budget) and its diff while the block fits a third of the budget; the body gets the
        rest (less the instance lines' share in the ``shared-prefix`` layout). A longer
        body keeps its head and the start of its last line (at most ``last_line_tokens``;
        the serializer ends with the ``repo:`` profile line)."""
        return [shared + own for shared, own in self.encode_segments(texts)]

    def encode_segments(self, texts: Sequence[str]) -> list[tuple[list[int], list[int]]]:
        """Each prompt's input as ``(shared, own)``: ``shared`` is ``<eos>`` and the body in
        the ``shared-prefix`` layout (texts with the same body have the same ``shared``
        ids, whatever their other lines), ``[]`` in the ``serial`` one; ``own`` is the rest,
        ``<sep>`` last."""
        # any reader's text as UTF-8 holds it (the tokenizer takes nothing else)
        prompts = [self._layout(well_formed(t)) for t in texts]
        encode = self.tokenizer.encode_batch
        bodies = [body for body, _, _, _ in prompts]
        instance_texts = ["".join("\n" + line for line in inst) for _, inst, _, _ in prompts]
        config_texts = ["".join("\n" + line for line in config) for _, _, config, _ in prompts]
        encs = encode(bodies, add_special_tokens=False)
        instances = encode(instance_texts, add_special_tokens=False)
        configs = encode(config_texts, add_special_tokens=False)
        numbers = encode(["\n" + number if number else "" for _, _, _, number in prompts],
                         add_special_tokens=False)
        out = []
        n = self.max_prompt_tokens
        shared_prefix = self.layout == "shared-prefix"
        for body, enc, inst, cfg, cfg_text, num in zip(bodies, encs, instances, configs,
                                                       config_texts, numbers, strict=True):
            tail = num.ids[-(n // 2):]  # whole in practice (~50 ids); its end if n is tiny
            tail = self._whole_lines(cfg, cfg_text, n // 3 - len(tail)) + tail
            if shared_prefix:
                own = inst.ids[: n // 6]
                body_ids = self._fit(body, enc, n - len(tail) - n // 6)
                out.append(([self.eos_id, *body_ids], [*own, *tail, self.sep_id]))
            else:
                out.append(([], [self.eos_id, *self._fit(body, enc, n - len(tail)), *tail,
                                 self.sep_id]))
        return out

    def _layout(self, text: str) -> tuple[str, list[str], list[str], str | None]:
        """(body, instance lines, lines before the number line, number line) of one prompt:
        the history block and the prompt lines moved to the end, the median or reference
        last; in the ``shared-prefix`` layout a job text's instance lines too (else
        ``[]``)."""
        text, extra = self._split_prompt_lines(text)
        body, block = split_history_block(text, last=self.warm_anchor)
        instance: list[str] = []
        if self.layout == "shared-prefix" and body.startswith("task: job\n"):
            body, instance = _move_instance_lines(body)
        if block and self.warm_anchor == "median":  # models from before ``recent=``
            block = [*block[:-1], without_history_field(block[-1], "recent")]
        if block and self.warm_target == "ratio":
            block = [*block[:-1], relative_history_line(block[-1], self.codec.to_string,
                                                        RATIO_CENTER, self.warm_anchor)]
        if not block and not extra:
            return body, instance, [], None
        outcome = [line for line in extra if line.startswith(OUTCOME_LINE)]
        reference = [line for line in extra if line.startswith(REFERENCE_LINE)]
        config, number = (block[:-1], block[-1]) if block else ([], None)
        if reference and (self.warm_reference or number is None
                          or parse_history(number) is None):
            # no usable history (``history: none``), or a warm reference: the reference is
            # the nearest number, the history line just before it
            config, number = [*config, *([number] if number else [])], reference[-1]
        return body.rstrip("\n"), instance, [*config, *outcome], number

    def _split_prompt_lines(self, text: str) -> tuple[str, list[str]]:
        """``text`` without the prompt lines :meth:`with_prompt_lines` appended, and them."""
        if not (self.outcome or self.cold_reference or self.warm_reference):
            return text, []
        lines = text.rstrip("\n").split("\n")
        extra: list[str] = []
        while len(lines) > 1 and lines[-1].startswith((OUTCOME_LINE, REFERENCE_LINE)):
            extra.insert(0, lines.pop())
        return ("\n".join(lines) + "\n", extra) if extra else (text, [])

    def with_prompt_lines(self, text: str, *, outcome: str | None = "success",
                          reference: float | None = None) -> str:
        """``text`` with the lines this model's prompts end with (see the module doc):
        ``outcome:`` when the model reads one, ``reference:`` when the model reads one for
        a text like this (without history: ``cold_reference``; with: ``warm_reference``)
        and ``reference`` is a positive runtime."""
        lines = []
        if self.outcome and outcome:
            lines.append(OUTCOME_LINE + outcome)
        reads = self.warm_reference if parse_history(text) is not None else self.cold_reference
        if reads and reference is not None and math.isfinite(reference) and reference > 0:
            lines.append(REFERENCE_LINE + self.codec.to_string(reference))
        if not lines:
            return text
        return text.rstrip("\n") + "\n" + "\n".join(lines) + "\n"

    @staticmethod
    def _whole_lines(enc: object, text: str, n: int) -> list[int]:
        """The ids of the lines of ``text`` (each starting with a newline) that fit in ``n``."""
        ids: list[int] = enc.ids  # type: ignore[attr-defined]
        if len(ids) <= n:
            return ids
        offsets = enc.offsets  # type: ignore[attr-defined]
        k = max((i for i in range(1, max(n, 0) + 1) if text[offsets[i][0]] == "\n"), default=0)
        return ids[:k]

    def _fit(self, text: str, enc: object, n: int) -> list[int]:
        ids: list[int] = enc.ids  # type: ignore[attr-defined]
        if len(ids) <= n:
            return ids
        start = text.rstrip("\n").rfind("\n") + 1  # where the last line begins
        offsets = enc.offsets  # type: ignore[attr-defined]
        k = next((i for i, (a, _b) in enumerate(offsets) if a >= start - 1), len(ids))
        tail = ids[k : k + min(self.last_line_tokens, n // 4)] if k > n // 2 else []
        return ids[: n - len(tail)] + tail

    def skeleton_prefix(self) -> list[int]:
        """The fixed ids before the first generated position (``{"runtime_s": "``)."""
        out: list[int] = []
        for p in self.pieces:
            if isinstance(p, int):
                break
            out.extend(p)
        return out

    def reference(self, text: str) -> float | None:
        """What the output of ``text``'s prompt is relative to, over ``RATIO_CENTER``, when
        the model's ``warm_target`` is ``ratio``: for a text with a history block, its
        ``reference:`` line's runtime when the model reads one (``warm_reference``), else
        the history's ``warm_anchor`` (the median, or the ``recent`` median; the median for
        a line without that field); for a text without, its ``reference:`` line's runtime
        when the model reads one (``cold_reference``); else None (the output is the runtime
        itself)."""
        if self.warm_target != "ratio":
            return None
        h = parse_history(text)
        if h is not None and not self.warm_reference:
            return self._anchor(h)
        if self.warm_reference if h is not None else self.cold_reference:
            _, extra = self._split_prompt_lines(text)
            for line in reversed(extra):
                if line.startswith(REFERENCE_LINE):
                    try:
                        value = float(line[len(REFERENCE_LINE):])
                    except ValueError:
                        return None
                    return value / RATIO_CENTER if math.isfinite(value) and value > 0 else None
        if h is not None:  # a warm text without its reference line: the anchor, as a plain model
            return self._anchor(h)
        return None

    def _anchor(self, h: dict[str, float]) -> float | None:
        value = h[anchor_field(h, self.warm_anchor)]
        return value / RATIO_CENTER if value > 0 else None

    def target(self, value: float, reference: float | None = None,
               usage: Mapping[str, float] | None = None) -> tuple[list[int], list[bool]]:
        """The skeleton ids for ``value`` (divided by ``reference``, if given) after the
        prompt, and which ones are generated; with ``usage`` holding every one of the
        model's :attr:`targets`, their values after the runtime (:mod:`laser_ci.text.targets`),
        else the runtime alone."""
        if usage is None or not self.targets or any(k not in usage for k in self.targets):
            usage = {}
        ids, generated = self.written(value, reference, usage)
        return ids + self.close, generated + [False] * len(self.close)

    def written(self, value: float, reference: float | None = None,
                usage: Mapping[str, float] | None = None) -> tuple[list[int], list[bool]]:
        """The output up to its closing piece: the runtime, then the values ``usage`` has of
        the model's :attr:`targets`, in their order, up to the first it lacks (what
        decoding a later target reads after the prompt)."""
        ids: list[int] = []
        generated: list[bool] = []

        def fill(pieces: Sequence[list[int] | int], v: float) -> None:
            tokens = self.codec.to_tokens(v)
            for p in pieces:
                if isinstance(p, int):
                    ids.append(self.token_ids[tokens[p]])
                    generated.append(True)
                else:
                    ids.extend(p)
                    generated.extend([False] * len(p))

        fill(self.pieces[:-1], value / reference if reference else value)
        for key in self.targets:
            if usage is None or key not in usage:
                break
            fill(self.segments[key], usage[key])
        return ids, generated

    def decode_output(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False)
