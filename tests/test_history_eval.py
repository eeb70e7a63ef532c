"""Causal history of labeled examples, `laser-ci eval --history prior` and `estimate --history`,
on the gha-mini fixture (tiny/collected's pipeline has six runs, one configuration change)."""

from __future__ import annotations

import gzip
import json
import math
import shutil
from collections.abc import Sequence
from pathlib import Path

import gha_mini
import pytest
from click.testing import CliRunner

from laser_ci.cli import main
from laser_ci.estimate import load_history
from laser_ci.evaluation.regimes import example_text, in_subset, subset_of
from laser_ci.predictors.base import Runtime
from laser_ci.predictors.baselines import (
    HistoryMedianPredictor,
    HistoryRecentPredictor,
    MedianPredictor,
    load_baselines,
)
from laser_ci.text.history import History, history_lines
from laser_ci.text.numbers import DEFAULT_CODEC
from laser_ci.text.serialize import serialize_job, serialize_workflow
from laser_ci.training.collected import load_history_index
from laser_ci.training.examples import Example, load_examples, load_runs, workflow_blobs
from laser_ci.training.history import (
    attach_history,
    causal_histories,
    parse_time,
    strip_history_block,
    training_texts,
    with_history_block,
)
from laser_ci.workflows.parse import read_workflows

FIXTURES = Path(__file__).parent / "fixtures"
MINI = gha_mini.MINI  # written per test run, see tests/gha_mini.py
PIPELINE = ".github/workflows/pipeline.yml"


def one(examples: Sequence[Example], run: int, kind: str = "workflow",
        job: str | None = None) -> Example:
    (e,) = [e for e in examples if e.run_id == f"fixture{run:02d}" and e.kind == kind
            and (job is None or e.job_name == job)]
    return e


# --- causal history --------------------------------------------------------------------------


def test_parse_time_reads_offsets() -> None:
    assert parse_time("2023-04-01T08:00:00-04:00") == parse_time("2023-04-01T12:00:00Z")
    assert parse_time("2023-04-01T12:00:00+00:00") == parse_time("2023-04-01T12:00:00")
    assert parse_time("") is None and parse_time(None) is None and parse_time("soon") is None


def test_history_is_strictly_earlier_runs_of_the_same_workflow(examples: list[Example]) -> None:
    # file order 11..16; time order 11 < 12 = 13 (same instant, other offset) < 15 < 14 < 16
    assert one(examples, 11).history is None and one(examples, 11).text_warm is None
    for tie in (12, 13):  # a run at the same instant is not history
        assert one(examples, tie).history.runtimes == (1030.0,)
    assert one(examples, 15).history.runtimes == (1030.0, 900.0, 830.0)  # 14 is later
    assert one(examples, 14).history.runtimes == (1030.0, 900.0, 830.0, 1000.0)
    assert one(examples, 16).history.runtimes == (1030.0, 900.0, 830.0, 1000.0, 1650.0)
    # per job: the earlier runs' times of the job with the same display name
    assert one(examples, 14, "job", "Unit tests").history.runtimes == (120.0, 100.0, 130.0, 110.0)
    assert one(examples, 14, "job", "End to end").history.latest == 890.0
    # other workflows and repositories never mix in
    assert one(examples, 2).history.runtimes == (610.0,)  # acme/widgets ci.yml, run 1
    assert one(examples, 3).history is None  # lint.yml of the same repo: no earlier run
    assert one(examples, 6).history.runtimes == (48.5,)  # acme/gadgets: not acme/widgets' lint


def test_changed_flag_and_diff(examples: list[Example]) -> None:
    assert one(examples, 11).changed is None
    assert [one(examples, i).changed for i in (12, 13, 15, 16)] == [False] * 4
    e = one(examples, 14)
    assert e.changed is True
    assert e.history.diff == ("+ - uses: actions/setup-go@v5", "- go test ./...",
                              "+ go test -race ./...")
    assert one(examples, 16).history.diff == ()  # same file as 14, its previous run
    # the file changed, this job's configuration did not
    e2e = one(examples, 14, "job", "End to end")
    assert e2e.changed is True and e2e.history.diff == ()
    assert subset_of(e) == "warm-changed" and subset_of(one(examples, 11)) == "cold"
    assert subset_of(one(examples, 16)) == "warm"
    assert in_subset(e, "warm") and in_subset(e, "warm-changed") and not in_subset(e, "cold")


def test_warm_text_is_the_serializer_with_history(examples: list[Example]) -> None:
    e = one(examples, 14)
    runs = {r["id"]: r for r in load_runs(MINI)}
    from laser_ci.training.examples import load_blobs, run_files
    from laser_ci.workflows.model import RepoProfile

    run = runs["fixture14"]
    files = run_files(run, load_blobs(MINI))
    (wf,), _ = read_workflows(files, [PIPELINE])
    profile = RepoProfile.from_json(run["repo_profile"])
    assert e.text == serialize_workflow(wf, profile)  # the cold text is unchanged
    assert "history: none" in e.text
    assert e.text_warm == serialize_workflow(wf, profile, history=e.history)
    assert "history: n=4 median=9.50e+02" in e.text_warm
    assert "history-config: changed +2 -1" in e.text_warm
    job = one(examples, 14, "job", "Unit tests")
    assert job.text_warm == serialize_job(wf.jobs[0], wf, profile, history=job.history)
    assert e.prior_text == e.text_warm and one(examples, 11).prior_text == one(examples, 11).text
    assert example_text(e, "none") == e.text and example_text(e, "prior") == e.text_warm
    with pytest.raises(ValueError):
        example_text(e, "later")
    # without a renderer the block is spliced into the cold text
    assert with_history_block(e.text, e.history) == e.text_warm
    assert strip_history_block(e.text_warm) == e.text


def test_history_off_and_cache(examples: list[Example], tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    cold = load_examples(MINI, cache=False, history=False)
    assert [e.text for e in cold] == [e.text for e in examples]
    assert all(e.history is None and e.text_warm is None and e.changed is None for e in cold)
    monkeypatch.setenv("LASER_CI_CACHE", str(tmp_path))
    assert load_examples(MINI, history=False) == cold  # writes the cache (with history)
    assert load_examples(MINI) == examples  # read back, History objects included
    assert load_examples(MINI, history=False) == cold


def test_success_only_history(examples: list[Example]) -> None:
    blobs = workflow_blobs(load_runs(MINI))
    hist = dict(zip([(e.run_id, e.kind, e.job_name) for e in examples],
                    causal_histories(examples, blobs, success_only=True), strict=True))
    h, _ = hist[("fixture14", "workflow", None)]
    assert h.runtimes == (900.0, 830.0, 1000.0)  # run 11 failed
    # examples listed in any order give the same history
    again = attach_history(list(reversed(examples)), blobs)
    assert [e.history for e in reversed(again)] == [e.history for e in examples]


def test_training_texts_modes(examples: list[Example]) -> None:
    warm = sum(e.text_warm is not None for e in examples)
    both = training_texts(examples)
    assert len(both) == len(examples) + warm
    assert sum(t == e.text_warm for t, e in both) == warm
    drop = training_texts(examples, mode="drop", p_cold=0.5, seed=1)
    assert len(drop) == len(examples) and drop == training_texts(examples, mode="drop",
                                                                 p_cold=0.5, seed=1)
    assert all(t == e.text for t, e in training_texts(examples, mode="drop", p_cold=1.0))
    with pytest.raises(ValueError):
        training_texts(examples, mode="sometimes")


def test_train_texts_follow_the_history_mode(examples: list[Example]) -> None:
    from laser_ci.training.config import TrainConfig
    from laser_ci.training.finetune import with_history_texts

    warm = [e for e in examples if e.text_warm is not None]
    assert warm
    tr, va = with_history_texts(examples, examples, TrainConfig(p_cold=0.0, scale_aug=0.0))
    assert [t.text for t in tr] == [e.prior_text for e in examples] == [v.text for v in va]
    tr, va = with_history_texts(examples, examples, TrainConfig(p_cold=1.0))
    assert [t.text for t in tr] == [e.text for e in examples]
    assert [v.text for v in va] == [e.prior_text for e in examples]  # val: as eval --history prior
    assert [(t.runtime_s, t.repo) for t in tr] == [(e.runtime_s, e.repo) for e in examples]
    # rescaled warm texts: the runtime and the history's numbers move together
    tr, va = with_history_texts(examples, examples,
                                TrainConfig(p_cold=0.0, scale_aug=1.0, scale_range=1.0))
    assert [v.text for v in va] == [e.prior_text for e in examples]
    for t, e in zip(tr, examples, strict=True):
        if e.history is None:
            assert (t.text, t.runtime_s) == (e.text, e.runtime_s)
            continue
        ratio = t.runtime_s / e.runtime_s
        assert math.exp(-1.0) <= ratio <= math.exp(1.0) and ratio != 1.0
        assert f"latest={DEFAULT_CODEC.to_string(e.history.latest * ratio)}" in t.text
        assert strip_history_block(t.text) == strip_history_block(e.text_warm)


def test_train_texts_carry_their_own_reference(examples: list[Example]) -> None:
    """A cold text gets its reference, a warm text none (it is over its history)."""
    from laser_ci.training.config import TrainConfig
    from laser_ci.training.finetune import with_history_texts
    from laser_ci.training.references import reference_key

    refs = {reference_key(e): 100.0 for e in examples}
    tr, va = with_history_texts(examples, examples, TrainConfig(p_cold=0.0, scale_aug=1.0),
                                refs)
    for got in (tr, va):
        assert [t.reference for t in got] == [
            None if e.text_warm is not None else 100.0 for e in examples]
    tr, _ = with_history_texts(examples, [], TrainConfig(p_cold=1.0), refs)
    assert [t.reference for t in tr] == [100.0 for _ in examples]


# --- history median ----------------------------------------------------------------------------


class Recorder:
    """Remembers what it was asked; predicts 60 s."""

    name = "recorder"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def predict(self, texts: Sequence[str]) -> list[Runtime]:
        self.seen.extend(texts)
        return [Runtime(30.0, 60.0, 120.0) for _ in texts]


def test_history_median_reads_the_block_and_falls_back(examples: list[Example]) -> None:
    fallback = Recorder()
    p = HistoryMedianPredictor(fallback, offset_lo=-0.1, offset_hi=0.2)
    e14, e11 = one(examples, 14), one(examples, 11)
    warm, cold = p.predict([e14.text_warm, e11.text])
    assert warm.p50 == pytest.approx(950.0)  # median of 1030, 900, 830, 1000 as written
    assert warm.p10 == pytest.approx(e14.history.quantile(0.1) * math.exp(-0.1), rel=1e-2)
    assert warm.p90 == pytest.approx(e14.history.quantile(0.9) * math.exp(0.2), rel=1e-2)
    assert cold == Runtime(30.0, 60.0, 120.0) and fallback.seen == [e11.text]
    # a raw fallback text carries the block too
    raw = "task: workflow\nfile: x.yml\n" + "\n".join(history_lines(History.of([5.0, 7.0])))
    assert p.predict([raw + "\nraw: |\n  junk\n"])[0].p50 == pytest.approx(6.0)
    assert p.predict([]) == []


def test_history_median_saves_its_fallback_by_name(tmp_path: Path) -> None:
    median = MedianPredictor.fit([10, 100, 1000])
    median.save(tmp_path)
    HistoryMedianPredictor(median, -0.5, 0.5).save(tmp_path)
    loaded = load_baselines(tmp_path)
    assert set(loaded) == {"median", "history-median"}
    hm = loaded["history-median"]
    assert hm.fallback is loaded["median"] and hm.offset_hi == 0.5
    assert HistoryMedianPredictor.load(tmp_path).fallback.log_p50 == median.log_p50
    (tmp_path / "median.json").unlink()
    with pytest.raises(ValueError, match="fallback"):
        HistoryMedianPredictor.load(tmp_path)


@pytest.mark.parametrize(
    "runtimes, median, recent",
    [
        ([100.0, 200.0, 300.0, 400.0, 500.0], 300.0, 400.0),  # the last 3: 300, 400, 500
        ([500.0, 100.0, 900.0, 120.0], 310.0, 120.0),  # 100, 900, 120
        ([50.0, 70.0], 60.0, 60.0),  # fewer than 3 runs: all of them
        ([42.0], 42.0, 42.0),
    ],
)
def test_history_recent_is_the_median_of_the_last_three(runtimes: list[float], median: float,
                                                        recent: float) -> None:
    text = "task: workflow\nfile: x.yml\n" + "\n".join(history_lines(History.of(runtimes)))
    fallback = Recorder()
    assert HistoryMedianPredictor(fallback).predict([text])[0].p50 == pytest.approx(median, rel=1e-2)
    assert HistoryRecentPredictor(fallback).predict([text])[0].p50 == pytest.approx(recent, rel=1e-2)
    # a line from before the field: the median; no history: the fallback
    old = text.replace(f" recent={DEFAULT_CODEC.to_string(recent)}", "")
    assert "recent=" not in old
    assert HistoryRecentPredictor(fallback).predict([old])[0].p50 == pytest.approx(median, rel=1e-2)
    assert HistoryRecentPredictor(fallback).predict(["task: workflow\nhistory: none\n"]) == [
        Runtime(30.0, 60.0, 120.0)]


def test_history_recent_saves_apart_from_history_median(tmp_path: Path) -> None:
    median = MedianPredictor.fit([10, 100, 1000])
    median.save(tmp_path)
    HistoryMedianPredictor(median, -0.5, 0.5).save(tmp_path)
    HistoryRecentPredictor(median, -0.3, 0.4).save(tmp_path)
    loaded = load_baselines(tmp_path)
    assert set(loaded) == {"median", "history-median", "history-recent"}
    assert type(loaded["history-recent"]) is HistoryRecentPredictor
    assert (loaded["history-median"].offset_hi, loaded["history-recent"].offset_hi) == (0.5, 0.4)


# --- laser-ci eval --history prior -------------------------------------------------------------


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory, examples: list[Example]) -> Path:
    """median + history-median (no LightGBM needed)."""
    d = tmp_path_factory.mktemp("model") / "baselines"
    median = MedianPredictor.fit(e.runtime_s for e in examples)
    median.save(d)
    HistoryMedianPredictor(median, -0.2, 0.2).save(d)
    (d / "card.json").write_text(json.dumps({"predictors": {
        "median": {"val_log_mae": 2.0, "val_prior_log_mae": 2.0},
        "history-median": {"val_log_mae": 2.0, "val_prior_log_mae": 0.5}}}))
    return d.parent


def run_eval(*args: str) -> str:
    result = CliRunner().invoke(main, ["eval", str(MINI), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_eval_history_prior_json(model_dir: Path, examples: list[Example]) -> None:
    report = json.loads(run_eval("--split", "all", "--history", "prior", "--format", "json",
                                 "--model", str(model_dir)))
    wf = [e for e in examples if e.kind == "workflow"]
    assert report["history"] == "prior" and report["n"] == len(wf) == 15
    sub = report["subsets"]
    # warm: runs 2 (acme/widgets), 6 (acme/gadgets), 8 (octo/matrix-lib), 12-16
    assert sub["warm"]["n"] == sum(e.history is not None for e in wf) == 8
    assert sub["warm-changed"]["n"] == 1 and sub["cold"]["n"] == 7
    assert sub["warm"]["n"] + sub["cold"]["n"] == report["n"]
    hm, med = report["predictors"]["history-median"], report["predictors"]["median"]
    assert set(hm) == {"all", "success", "subsets", "regimes", "seconds"}
    assert set(hm["subsets"]) == {"warm", "warm-changed", "cold"}
    assert set(hm["regimes"]) == {"none"}
    for res in (hm, hm["regimes"]["none"]):
        assert res["all"]["n"] == 15 and res["subsets"]["warm"]["all"]["n"] == 8
        assert res["subsets"]["warm-changed"]["success"]["n"] == 1
    # without history history-median is its fallback; with it, it reads the block
    assert hm["regimes"]["none"]["all"]["log_mae"] == med["all"]["log_mae"]
    assert hm["subsets"]["warm"]["all"]["log_mae"] < med["subsets"]["warm"]["all"]["log_mae"]
    assert hm["subsets"]["cold"] == med["subsets"]["cold"]


def test_eval_history_none_keeps_the_old_report(model_dir: Path) -> None:
    report = json.loads(run_eval("--split", "all", "--format", "json", "--model", str(model_dir)))
    assert report["history"] == "none" and "subsets" not in report
    assert set(report["predictors"]["median"]) == {"all", "success", "seconds"}
    table = run_eval("--split", "all", "--model", str(model_dir))
    assert "history=none" in table and "warm" not in table


def test_eval_history_prior_tables(model_dir: Path) -> None:
    md = run_eval("--split", "all", "--history", "prior", "--format", "markdown",
                  "--model", str(model_dir))
    assert "| predictor | history | runs | n | log-MAE |" in md
    for title in ("**all: 15 all examples**", "**warm: 8 examples with earlier runs**",
                  "**warm-changed: 1 examples with earlier runs whose workflow file changed",
                  "**cold: 7 examples without earlier runs**"):
        assert title in md
    assert "| history-median | prior | all | 8 |" in md
    assert "| history-median | none | all | 8 |" in md
    cold_table = md.split("**cold:")[1]
    assert "| none |" not in cold_table  # one regime: same texts
    table = run_eval("--split", "train", "--history", "prior", "--model", str(model_dir),
                     "--kind", "job")
    assert "history=prior" in table and "warm-changed:" in table


# --- estimate --history DIR --------------------------------------------------------------------


def collected_folder(tmp_path: Path, repos: Sequence[str] = ("tiny/collected",)) -> Path:
    """A folder like `laser-ci collect` writes, gzip-compressed, for some fixture repos."""
    out = tmp_path / "collected"
    out.mkdir()
    with open(MINI / "runs.jsonl", encoding="utf-8") as src, \
            gzip.open(out / "runs.jsonl.gz", "wt", encoding="utf-8") as dst:
        for line in src:
            if json.loads(line)["repo"] in repos:
                dst.write(line)
    with open(MINI / "blobs.jsonl", "rb") as src, gzip.open(out / "blobs.jsonl.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def test_load_history_index(tmp_path: Path) -> None:
    index = load_history_index(collected_folder(tmp_path))
    unit = index.for_job(PIPELINE, "Unit tests")
    # ordered by commit date, not file order: 11, 12, 13 (same instant), 15, 14, 16
    assert unit.runtimes == (120.0, 100.0, 130.0, 110.0, 150.0, 160.0)
    assert index.for_job(PIPELINE, "Not in the file") is None  # no such job in the file
    assert index.for_workflow(PIPELINE).runtimes == (1030.0, 900.0, 830.0, 1000.0, 1650.0, 1700.0)
    # previous_text: the job as the latest run (16, the changed file) ran it
    assert "go test -race" in unit.previous_text and "history: none" in unit.previous_text
    index_all = load_history_index(MINI, repo="tiny/collected")
    assert index_all.for_job(PIPELINE, "Unit tests") == unit
    with pytest.raises(ValueError, match="repositories"):
        load_history_index(MINI)
    with pytest.raises(ValueError, match="not a collected folder"):
        load_history_index(tmp_path / "nowhere")


@pytest.mark.parametrize("jobs, wrong", [
    (None, False), ([], False), ([{"name": "a"}], False),
    ("build", True), ([{"name": "a"}, 3], True), ({"name": "a"}, True), (5, True),
    (True, True),
])
def test_a_wrong_jobs_list_names_its_line(tmp_path: Path, jobs: object, wrong: bool) -> None:
    folder = collected_folder(tmp_path)
    with gzip.open(folder / "runs.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    rows[2]["jobs"] = jobs
    with gzip.open(folder / "runs.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n\n" for r in rows)  # a blank line after each
    if wrong:  # the third row: line 5, as the file numbers it
        with pytest.raises(ValueError, match=r"runs\.jsonl\.gz:5: jobs is not a list of jobs"):
            load_history(folder)
    else:
        assert load_history(folder).for_job(PIPELINE, "Unit tests") is not None


# the collected workflow changed once more (-count=2) and a job that never ran (lint)
PIPELINE_NOW = gha_mini.COLLECTED_V2.replace("go test -race ./...", "go test -race -count=2 ./...") + """\
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: make lint
"""


def test_estimate_with_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder()
    monkeypatch.setattr("laser_ci.estimate._default_predictor", lambda model_dir=None: recorder)
    # the warm texts are asked too (they are where a job's own runs give no figure): their
    # history blocks are what this checks
    monkeypatch.setattr("laser_ci.estimate._own_rule", lambda *_a: {})
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "pipeline.yml").write_text(PIPELINE_NOW)
    folder = collected_folder(tmp_path)
    result = CliRunner().invoke(main, ["estimate", str(repo / ".github" / "workflows"),
                                       "--history", str(folder), "--format", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    jobs = {j["name"]: j for j in out["workflows"][0]["jobs"]}
    assert jobs["Unit tests"]["history_runs"] == 6 and jobs["End to end"]["history_runs"] == 6
    assert jobs["lint"]["history_runs"] is None  # never ran: cold start
    # how the earlier runs ended: run 11's end to end failed after 15 minutes
    assert jobs["End to end"]["history_failures"] == {"runs": 6, "failed": 1,
                                                      "failed_median_s": 900.0}
    assert jobs["Unit tests"]["history_failures"] == {"runs": 6, "failed": 0,
                                                     "failed_median_s": None}
    assert jobs["lint"]["history_failures"] is None
    table = CliRunner().invoke(main, ["estimate", str(repo / ".github" / "workflows"),
                                      "--history", str(folder)]).stdout
    assert "1 of its last 6 runs with a known end failed, after 15m 00s (median)" in table
    unit_text = next(t for t in recorder.seen if "job: Unit tests" in t)
    assert "history: n=6 median=1.25e+02" in unit_text
    assert "history-config: changed +1 -1" in unit_text  # -count=2 is new since run 16
    e2e_text = next(t for t in recorder.seen if "job: End to end" in t)
    assert "history-config: unchanged" in e2e_text
    # the monthly projection counts the collected runs over their time span
    assert out["workflows"][0]["cost"]["runs_per_month_basis"] is not None
    assert "history" in out["workflows"][0]["cost"]["runs_per_month_basis"]
    # without --history: cold start everywhere
    recorder.seen.clear()
    result = CliRunner().invoke(main, ["estimate", str(repo / ".github" / "workflows"),
                                       "--format", "json"])
    assert all(j["history_runs"] is None for j in json.loads(result.stdout)["workflows"][0]["jobs"])


@pytest.mark.usefixtures("fake_predictor")
def test_estimate_with_a_bad_history_folder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "pipeline.yml").write_text(PIPELINE_NOW)
    for bad in (tmp_path / "missing", repo):
        result = CliRunner().invoke(main, ["estimate", str(repo / ".github" / "workflows"),
                                           "--history", str(bad)])
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("laser-ci: error: --history")
        assert "Traceback" not in result.output
