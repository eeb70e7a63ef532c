"""The usage targets a learned model writes after the runtime (laser_ci.text.targets) and
their place in the output (PromptCodec.target / written): table-driven."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from laser_ci.text.targets import USAGE_TARGETS, usage_targets
from laser_ci.text.tokenize import PromptCodec, load_tokenizer

ROOT = Path(__file__).resolve().parents[1]
REC = {"kind": "laser-ci-usage", "samples": 10, "cpu_cores_p95": 1.85,
       "memory_peak_bytes": 3.21e9, "disk_used_baseline_bytes": 20e9,
       "disk_used_peak_bytes": 21.2e9}


@pytest.mark.parametrize(("change", "want"), [
    ({}, {"cpu_cores": 1.85, "memory_gb": 3.21, "disk_gb": 1.2}),
    ({"disk_used_peak_bytes": 19e9}, {"cpu_cores": 1.85, "memory_gb": 3.21, "disk_gb": 0.0}),
    ({"cpu_cores_p95": 0}, {"cpu_cores": 0.0, "memory_gb": 3.21, "disk_gb": 1.2}),
    ({"cpu_cores_p95": None}, None),
    ({"memory_peak_bytes": -1}, None),
    ({"disk_used_baseline_bytes": math.nan}, None),
    ({"disk_used_peak_bytes": True}, None),
    ({"memory_peak_bytes": "3e9"}, None),
])
def test_usage_targets_of_a_record(change, want) -> None:
    got = usage_targets({**REC, **change})
    if want is None:
        assert got is None
    else:
        assert got == pytest.approx(want)


def test_not_a_record_gives_none() -> None:
    assert usage_targets(None) is None
    assert usage_targets([1, 2]) is None  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def codecs():
    tok = load_tokenizer(ROOT / "model" / "lm" / "tokenizer.json")
    return PromptCodec(tok, max_prompt_tokens=256), PromptCodec(tok, max_prompt_tokens=256,
                                                                targets=USAGE_TARGETS)


USAGE = {"cpu_cores": 1.85, "memory_gb": 3.21, "disk_gb": 1.2}


@pytest.mark.parametrize(("usage", "text"), [
    (None, '{"runtime_s": "4.73e+02"}'),
    ({}, '{"runtime_s": "4.73e+02"}'),
    ({"cpu_cores": 1.85, "memory_gb": 3.21}, '{"runtime_s": "4.73e+02"}'),  # one lacking
    (USAGE, '{"runtime_s": "4.73e+02", "cpu_cores": "1.85e+00", "memory_gb": "3.21e+00", '
            '"disk_gb": "1.20e+00"}'),
])
def test_the_output_writes_usage_after_the_runtime_only_when_it_has_all(codecs, usage,
                                                                        text) -> None:
    plain, with_targets = codecs
    ids, generated = with_targets.target(473.0, usage=usage)
    assert with_targets.decode_output(ids) == text
    assert sum(generated) == 6 * text.count("e+")  # only the digits and signs are learned
    # a runtime-only model writes what it always wrote, whatever the run measured
    assert plain.target(473.0, usage=usage) == plain.target(473.0)
    assert plain.decode_output(plain.target(473.0)[0]) == '{"runtime_s": "4.73e+02"}'


@pytest.mark.parametrize("done", [{}, {"cpu_cores": 1.85}, {"cpu_cores": 1.85,
                                                             "memory_gb": 3.21}])
def test_what_a_later_target_reads_is_the_output_so_far(codecs, done) -> None:
    """Decoding target k reads the runtime and the targets before it, then its own key:
    the same ids as the whole output's, up to there."""
    _plain, codec = codecs
    whole, _ = codec.target(473.0, 10.0, USAGE)
    prefix, _ = codec.written(473.0, 10.0, done)
    key = USAGE_TARGETS[len(done)]
    head = codec.segments[key][0]
    assert whole[:len(prefix) + len(head)] == prefix + head
