"""``laser-ci finetune``: learning one repository (laser_ci.training.learn). The split and
the budget table-driven; the command end to end on the runtime-matrix fixture's invented
history, from the shipped model."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

import pytest

from laser_ci.training.learn import (
    EXPORT_RESERVE_S,
    NEW_EVERY,
    job_key,
    pick_graph,
    split_history,
    training_minutes,
)

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Ex:
    kind: str
    workflow_path: str
    job_name: str | None
    commit_date: str
    run_id: str


def _history(runs: int, names: int, *, workflows: bool = False) -> list[Ex]:
    out = []
    for r in range(runs):
        date = f"2026-01-{1 + r // 10:02d}T{r % 10:02d}:00:00Z"
        out += [Ex("job", "ci.yml", f"job {n}", date, str(1000 + r)) for n in range(names)]
        if workflows:
            out.append(Ex("workflow", "ci.yml", None, date, str(1000 + r)))
    return out


@pytest.mark.parametrize(("runs", "names", "held_runs", "new"), [
    (10, 2, 2, 0),      # under NEW_EVERY names: none held out
    (10, 9, 2, 0),
    (10, 10, 2, 1),
    (10, 29, 2, 2),
    (50, 200, 10, 20),
    (5, 40, 1, 4),  # the latest run alone is held back
    (1, 40, 1, 4),  # one run: held back, nothing to learn from
])
def test_the_split_holds_back_the_latest_runs_and_some_names(runs: int, names: int,
                                                             held_runs: int, new: int) -> None:
    examples = _history(runs, names, workflows=True)
    s = split_history(examples)
    late = {(e.commit_date, e.run_id) for e in s.val + s.new}
    assert len(late) == held_runs
    assert all((e.commit_date, e.run_id) < s.cut for e in s.train)
    assert all((e.commit_date, e.run_id) >= s.cut for e in s.val + s.new)
    assert len(s.new_names) == new == names // NEW_EVERY
    assert not {job_key(e) for e in s.train} & s.new_names  # never learned
    assert {job_key(e) for e in s.new} == (s.new_names if s.new else set())
    assert all(e.kind == "job" for e in s.new)  # a workflow row is never a held-out name
    # everything is somewhere, once; the held-out names' earlier runs are dropped
    dropped = [e for e in examples if (e.commit_date, e.run_id) < s.cut
               and job_key(e) in s.new_names]
    assert len(s.train) + len(s.val) + len(s.new) + len(dropped) == len(examples)


@pytest.mark.parametrize(("names", "new_every", "new"), [(40, 0, 0), (40, 4, 10), (40, None, 4)])
def test_how_many_names_are_held_out(names: int, new_every: int | None, new: int) -> None:
    assert len(split_history(_history(10, names), new_every=new_every).new_names) == new


def test_the_split_is_the_same_in_any_order() -> None:
    examples = _history(20, 40)
    shuffled = list(examples)
    random.Random(1).shuffle(shuffled)
    a, b = split_history(examples), split_history(shuffled)
    assert a.new_names == b.new_names and a.cut == b.cut
    assert sorted(map(id, a.train)) == sorted(map(id, b.train))


def test_an_empty_history_splits_into_nothing() -> None:
    s = split_history([])
    assert (s.train, s.val, s.new, s.new_names) == ([], [], [], frozenset())


@pytest.mark.parametrize(("budget", "elapsed", "val_s", "per_text", "texts", "want"), [
    (0, 500, 30, 0.1, 1000, 0.0),  # no limit
    (20, 60, 30, 0.02, 2500, (1200 - 60 - 30 - EXPORT_RESERVE_S - 100) / 60),
    (20, 0, 0, 0, 0, (1200 - EXPORT_RESERVE_S) / 60),
    (2, 100, 60, 0.05, 1000, 1.0),  # over budget already: one minute, still a model
    (0.5, 0, 0, 0, 0, 1.0),
])
def test_training_minutes_leave_room_for_what_follows(budget, elapsed, val_s, per_text,
                                                      texts, want) -> None:
    assert training_minutes(budget, elapsed, val_s, per_text, texts) == pytest.approx(want)


@pytest.mark.parametrize(("fp32", "static", "dynamic", "want"), [
    (0.40, 0.41, 0.40, "static"),
    (0.40, 0.42, 0.40, "static"),  # at the tolerance
    (0.40, 0.43, 0.41, "dynamic"),
    (0.40, 0.43, 0.43, "fp32"),
    (0.40, None, 0.40, "dynamic"),  # no figure: not shipped on trust
    (None, 0.90, 0.90, "static"),  # nothing to compare with
])
def test_the_int8_graph_ships_within_its_tolerance(fp32, static, dynamic, want) -> None:
    assert pick_graph({"fp32": fp32, "static": static, "dynamic": dynamic}) == want


MEASURED = ("Unit Test", "integration")  # the jobs the measure step ran in


def with_usage(runs: list[dict]) -> list[dict]:
    """The measure step's records on the runs of the jobs named ``MEASURED*``: an
    integration job peaks at about 3 GB and 2 cores, a unit-test shard at 1.5 GB and 1."""
    rng = random.Random(5)
    for row in runs:
        for job in row["jobs"]:
            if job["name"].startswith(MEASURED) and job["run_time_s"] > 0:
                big = job["name"].startswith("integration")
                job["usage"] = {
                    "kind": "laser-ci-usage", "version": 1, "samples": 30,
                    "cpu_cores_p95": (2.0 if big else 1.0) * rng.uniform(0.9, 1.1),
                    "memory_peak_bytes": (3e9 if big else 1.5e9) * rng.uniform(0.9, 1.1),
                    "memory_total_bytes": 16e9, "disk_used_baseline_bytes": 40e9,
                    "disk_used_peak_bytes": 40e9 + (2e9 if big else 0.5e9), "duration_s": 60}
    return runs


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    """``laser-ci finetune`` on 10 days of the fixture's history, from the shipped model;
    some of its jobs measured (:func:`with_usage`)."""
    from click.testing import CliRunner
    from runtime_history import make_runs, write_folder

    from laser_ci.cli import main

    tmp = tmp_path_factory.mktemp("learn")
    data = write_folder(tmp / "history", with_usage(make_runs(days=10)))
    out = tmp / "model"
    with pytest.MonkeyPatch.context() as mp:  # its few job names: hold some out
        mp.setattr("laser_ci.training.learn.NEW_EVERY", 3)
        r = CliRunner().invoke(main, ["finetune", "--data", str(data), "--base",
                                      str(ROOT / "model" / "lm"), "--out", str(out),
                                      "--minutes", "1", "--epochs", "1", "--device", "cpu"])
    assert r.exit_code == 0, r.output
    return data, out, r


@pytest.mark.train_extra
def test_the_learned_folder_says_what_it_learned_and_is_calibrated(learned) -> None:
    from laser_ci.predictors.lm import LaserModel, read_config

    _data, out, r = learned
    config = read_config(out)  # every file's sha256 checks
    info = config["learned"]
    assert info["repository"] == "octo/monorepo"
    assert info["job_runs"] > 0 and info["runs"] > 0
    assert info["first"] <= info["last"] < info["calibrated_on"]["first"]
    assert info["calibrated_on"]["new_job_names"] >= 2
    assert info["base"] == read_config(ROOT / "model" / "lm")["files"]["model.onnx"]
    assert set(info["figures"]) == {"with history", "new jobs"}
    for fig in info["figures"].values():
        assert fig["learned"]["runs"] == fig["base"]["runs"] > 0
    dec = config["decoding"]
    assert all(0.0 <= a <= 1.0 for a in dec["shrink"].values())
    assert dec["band_scale"] and dec["band_calibration"]["examples"] > 0
    check = config["checks"]["int8"]
    assert check["shipped"] == pick_graph(check["log_mae"]) and check["texts"] > 0
    assert (config["model"].get("quantization"), check["shipped"]) in (
        ("static", "static"), ("dynamic", "dynamic"), (None, "fp32"))
    assert not (out / "model.fp32.onnx").exists() and not (out / "model.dynamic.onnx").exists()
    assert "evidence_bands.json" in config["files"]  # jobs with runs: the own-runs rule
    assert not (out / "weights.safetensors").exists()  # not read at inference
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    assert size < 40 * 2**20
    LaserModel(out).predict(["task: job\n"])
    lines = r.stdout.splitlines()
    assert lines[0].startswith("learned octo/monorepo from ")
    assert any(line.startswith("  new jobs: ") for line in lines)
    assert lines[-1].startswith(f"wrote {out} (")


@pytest.mark.train_extra
def test_estimate_uses_the_learned_model(learned, tmp_path) -> None:
    from click.testing import CliRunner

    from laser_ci.cli import main

    data, out, _r = learned
    repo = ROOT / "tests" / "fixtures" / "repos" / "runtime-matrix"
    r = CliRunner().invoke(main, ["estimate", str(repo), "--model", str(out), "--history",
                                  str(data), "--format", "json"])
    assert r.exit_code == 0, r.output
    result = json.loads(r.stdout)
    jobs = [j for wf in result["workflows"] for j in wf["jobs"]]
    assert jobs and all(j["runtime_s"]["p10"] <= j["runtime_s"]["p50"] <= j["runtime_s"]["p90"]
                        for j in jobs)
    assert any(j.get("history_source") == "own" for j in jobs)


@pytest.mark.train_extra
def test_a_history_with_usage_teaches_cpu_memory_and_disk_after_the_runtime(learned,
                                                                             tmp_path) -> None:
    """Part 5: its measured runs make the model write usage after the runtime; estimate
    reads it for the jobs without measurements, and says so in their runner advice."""
    from click.testing import CliRunner

    from laser_ci.cli import main
    from laser_ci.predictors.base import Runtime
    from laser_ci.predictors.lm import LaserModel, read_config
    from laser_ci.sizing.usage import usage_line
    from laser_ci.text.targets import USAGE_TARGETS

    data, out, r = learned
    assert read_config(out)["prompt"]["targets"] == list(USAGE_TARGETS)
    assert "it also writes cpu_cores, memory_gb, disk_gb after the runtime" in r.output
    usage = read_config(out)["learned"]["usage"]
    assert usage["measured_job_runs"] > 0 and usage["figures"]["runs"] > 0
    for key in USAGE_TARGETS:
        assert set(usage["figures"][key]) == {"learned", "median of measured runs"}
    model = LaserModel(out)
    (got,) = model.predict_usage(["task: job\n"], [Runtime(60.0, 120.0, 240.0)])
    assert set(got) == set(USAGE_TARGETS)
    assert all(0 < v["p50"] <= v["p90"] for v in got.values())
    repo = ROOT / "tests" / "fixtures" / "repos" / "runtime-matrix"
    r = CliRunner().invoke(main, ["estimate", str(repo), "--model", str(out), "--history",
                                  str(data), "--format", "json"])
    assert r.exit_code == 0, r.output
    jobs = {j["name"]: j for wf in json.loads(r.stdout)["workflows"] for j in wf["jobs"]}
    lint, measured = jobs["lint"], next(j for n, j in jobs.items() if n.startswith(MEASURED))
    assert lint["usage"]["measured_runs"] == 0
    assert lint["usage"]["predicted"]["model"] == model.name
    assert set(lint["usage"]["predicted"]) == {"model", *USAGE_TARGETS}
    assert measured["usage"]["measured_runs"] > 0 and "predicted" not in measured["usage"]
    assert all(0 < v["p50"] <= v["p90"] for k, v in lint["usage"]["predicted"].items()
               if k != "model")
    n = sum("predicted" in j["usage"] for j in jobs.values())
    assert usage_line(list(jobs.values())).endswith(
        f"; {n} predicted by the model learned from them")  # the PR comment's usage line
    # the shipped model writes the runtime alone: nothing predicted
    r = CliRunner().invoke(main, ["estimate", str(repo), "--history", str(data), "--format",
                                  "json"])
    jobs = {j["name"]: j for wf in json.loads(r.stdout)["workflows"] for j in wf["jobs"]}
    assert "predicted" not in jobs["lint"]["usage"]


def test_a_history_of_several_repositories_needs_repo(tmp_path) -> None:
    from click.testing import CliRunner
    from gha_mini import MINI

    from laser_ci.cli import main

    r = CliRunner().invoke(main, ["finetune", "--data", str(MINI), "--base",
                                  str(ROOT / "model" / "lm"), "--out", str(tmp_path / "m"),
                                  "--device", "cpu"])
    if "needs torch" in r.output:
        pytest.skip("no train extra")
    assert r.exit_code != 0
    assert "learning is per repository: pick one with --repo" in r.output
    assert not (tmp_path / "m").exists()
