"""Issue 49: a job the repository has not run yet is predicted from the closest evidence it
has (siblings, its workflow, the repository), with the band calibrated for that evidence,
and advice that follows it.

The PR of the issue: a matrix gains Python 3.13; its 3.11 and 3.12 instances have 12 runs
each of about 11 minutes and the job has ``timeout-minutes: 30``. Cold, the new instance
was predicted at 2m 12s (p90 18m) beside its siblings' 11 minutes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from laser_ci.estimate import estimate_paths
from laser_ci.predictors.base import Runtime
from laser_ci.predictors.evidence import (
    MIN_SAY,
    SIM_PRIOR,
    Item,
    Resolved,
    counted_runs,
    lent,
    resolve,
    runtime_of,
    shrunk_shift,
    similarity,
    words_of,
)
from laser_ci.predictors.evidence import typical_runs as typical
from laser_ci.predictors.evidence_bands import load_offsets, write_offsets
from laser_ci.report.comment import over_timeout, render_summary
from laser_ci.sizing.advice import advise
from laser_ci.sizing.runners import resolve_runner
from laser_ci.text.history import HistoryIndex, PastRuns

CI = """name: CI
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    strategy:
      matrix:
        python: ["3.11", "3.12", "3.13"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python }}
      - run: pip install -e .[test]
      - run: pytest -n auto
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: pip install ruff && ruff check .
"""
DOCS = """name: Docs
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: pip install -e .[docs]
      - run: make -C docs html
"""
NIGHTLY = """name: Nightly
on:
  schedule:
    - cron: "0 3 * * *"
jobs:
  test:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - run: pip install -e .[test]
      - run: pytest -n auto
"""
PATH = ".github/workflows/ci.yml"


def _repo(tmp_path: Path, docs: bool = False, nightly: bool = False) -> Path:
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "ci.yml").write_text(CI, encoding="utf-8")
    if docs:
        (wf / "docs.yml").write_text(DOCS, encoding="utf-8")
    if nightly:
        (wf / "nightly.yml").write_text(NIGHTLY, encoding="utf-8")
    return tmp_path


def _runs(minutes: float, n: int = 12) -> PastRuns:
    # about `minutes` each, within +-5%, all successful
    times = tuple(minutes * 60 * (1 + 0.05 * math.sin(i)) for i in range(n))
    return PastRuns(times, conclusions=("success",) * n)


def _jobs(result: dict) -> dict[str, dict]:
    return {j["name"]: j for wf in result["workflows"] for j in wf["jobs"]}


def test_the_new_instance_of_a_static_matrix_is_predicted_from_its_siblings(tmp_path) -> None:
    """The issue's PR, through the shipped default predictor: 3.13 within 1.5x of its
    siblings, p90 under its 30-minute timeout, no timeout alarm."""
    root = _repo(tmp_path)
    history = HistoryIndex(jobs={(PATH, "test (3.11)"): _runs(11.0),
                                 (PATH, "test (3.12)"): _runs(11.2)}, workflows={})
    cold = _jobs(estimate_paths([str(root)], repo_root=str(root)))["test (3.13)"]
    result = estimate_paths([str(root)], repo_root=str(root), history=history)
    jobs = _jobs(result)
    new, old = jobs["test (3.13)"], jobs["test (3.12)"]
    assert old["history_source"] == "own" and new["history_source"] == "siblings"
    # its siblings' runs are its evidence, not runs of its own: it is not warm
    assert new["evidence_runs"] == 24 and new["history_runs"] is None
    siblings = (jobs["test (3.11)"]["runtime_s"]["p50"] + old["runtime_s"]["p50"]) / 2
    assert siblings / 1.5 <= new["runtime_s"]["p50"] <= siblings * 1.5
    assert new["runtime_s"]["p90"] < 30 * 60
    assert new["runtime_s"]["p10"] < new["runtime_s"]["p50"] < new["runtime_s"]["p90"]
    # narrower than the cold guess it replaces
    assert (new["runtime_s"]["p90"] / new["runtime_s"]["p10"]
            < cold["runtime_s"]["p90"] / cold["runtime_s"]["p10"])
    assert not [a for a in new["advice"] if a["kind"] == "timeout"]
    assert over_timeout(new) is None
    body = render_summary(result)
    assert "⚠️" not in body
    assert "| new: from 24 runs of its matrix siblings |" in body
    # 2 of 4 jobs have runs of their own; 3.13 from its siblings, lint from its workflow
    assert ("History: **2 of 4 jobs warm** (predicted with their earlier runs), 1 new, from "
            "their matrix siblings' runs, 1 new, calibrated by the repository's other runs, "
            "0 cold") in body
    # the job beside it, new to a workflow that ran: the workflow's evidence
    assert jobs["lint"]["history_source"] == "workflow" and jobs["lint"]["evidence_runs"] == 24
    assert jobs["lint"]["history_runs"] is None


def test_a_new_workflow_is_shifted_by_the_repository_jobs_alike_to_it(tmp_path,
                                                                      monkeypatch) -> None:
    """A new workflow's job moves by the residual of the repository's jobs, each weighted
    by how alike it is: a copy of the test job (nightly) nearly the whole residual, the
    docs build (other steps) by the weight its similarity gives it."""
    import statistics

    from laser_ci.predictors import evidence
    from laser_ci.text.serialize import serialize_job
    from laser_ci.workflows.parse import read_workflows

    root = _repo(tmp_path, docs=True, nightly=True)
    history = HistoryIndex(jobs={(PATH, "test (3.11)"): _runs(11.0)}, workflows={})
    cold = _jobs(estimate_paths([str(root)], repo_root=str(root)))
    read: list[str] = []
    monkeypatch.setattr(evidence, "words_of", lambda text: read.append(text) or words_of(text))
    warm = _jobs(estimate_paths([str(root)], repo_root=str(root), history=history))
    # every job's words are read from its text without history, also test (3.11)'s
    assert len(read) == 6 and not [t for t in read if "history: n=" in t]
    files = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*.yml")}
    wfs, _ = read_workflows(files, sorted(files))
    words = {(wf.path, job.name): words_of(serialize_job(job, wf, None))
             for wf in wfs for job in wf.jobs}
    test = words[(PATH, "test (3.11)")]
    # the residuals of test (3.11): ln(its runs) - ln(its cold p50)
    residuals = [math.log(t / cold["test (3.11)"]["runtime_s"]["p50"])
                 for t in _runs(11.0).runtimes]
    shifts = {}
    for path, name in [(".github/workflows/docs.yml", "build"),
                       (".github/workflows/nightly.yml", "test")]:
        job = warm[name]
        assert job["history_source"] == "repository" and job["evidence_runs"] == 12
        shifts[name] = math.log(job["runtime_s"]["p50"] / cold[name]["runtime_s"]["p50"])
        assert shifts[name] == pytest.approx(
            lent(words[(path, name)], [(test, residuals)])[0], abs=1e-3)  # p50 is rounded
    median = statistics.median(residuals)
    assert similarity(words[(".github/workflows/nightly.yml", "test")], test) > 0.75
    assert similarity(words[(".github/workflows/docs.yml", "build")], test) < 0.5
    # a copy of the test job: nearly all of its residual; the docs build: less
    assert median > shifts["test"] > 0.95 * median
    assert shifts["test"] > shifts["build"] > 0


@pytest.mark.parametrize("words, others, expected", [
    (frozenset({"a"}), [], 0.0),                                  # nothing ran
    (frozenset({"a"}), [(frozenset({"a"}), [])], 0.0),            # a job without runs
    (frozenset({"a"}), [(frozenset({"b"}), [2.0])], 0.0),         # nothing alike
    (frozenset(), [(frozenset(), [2.0])], 0.0),                   # no words at all
    (frozenset({"a"}), [(frozenset({"a"}), [2.0])], 2.0 * 0.5 / (0.5 + SIM_PRIOR)),
    (frozenset({"a"}), [(frozenset({"a"}), [1.0, 2.0, 9.0])],    # its median, 3/4 of a say
     2.0 * 0.75 / (0.75 + SIM_PRIOR)),
    (frozenset({"a", "b"}), [(frozenset({"a"}), [2.0])],          # half alike: 1/16 of it
     2.0 * 0.5 / 16 / (0.5 / 16 + SIM_PRIOR)),
    (frozenset({"a"}), [(frozenset({"a"}), [2.0]), (frozenset({"a"}), [-2.0])], 0.0),
])
def test_lent_edge_values(words, others, expected) -> None:
    assert lent(words, others)[0] == pytest.approx(expected)


def test_each_job_of_the_other_workflows_lends() -> None:
    """Every job of the repository's other workflows is a lender: one job a quarter alike
    has too little say to count (the job stays cold), forty of them together lend what
    one would with forty times its say; one just like it lends nearly all of its
    residual."""
    mine = frozenset("abcde")
    unlike = frozenset("abXYZ")  # similarity 1/4
    new = Item("new.yml", "n", 0.0, words=mine)
    one = Item("big.yml", "j", 0.0, (math.e,) * 3, words=unlike)
    assert lent(mine, [(unlike, [1.0] * 3)])[1] < MIN_SAY
    assert resolve([one, new])[-1] == Resolved(None, 0.0, 0)
    big = [Item("big.yml", f"j{k}", 0.0, (math.e,) * 3, words=unlike) for k in range(40)]
    got = resolve([*big, new])[-1]
    assert got.source == "repository" and got.runs == 120
    say = (1 / 4) ** 4 * 0.75 * 40
    assert got.log_p50 == pytest.approx(say / (say + SIM_PRIOR))
    assert got.log_p50 == pytest.approx(lent(mine, [(unlike, [1.0] * 3)] * 40)[0])
    twin = Item("twin.yml", "t", 0.0, (math.e ** 2,) * 3, words=mine)
    got = resolve([*big, twin, new])[-1]
    assert got.log_p50 == pytest.approx(
        lent(mine, [(unlike, [1.0] * 3)] * 40 + [(mine, [2.0] * 3)])[0])
    assert got.log_p50 > 1.8  # the twin outweighs the forty


@pytest.mark.parametrize("others, say", [
    ([], 0.0),                                                    # nothing ran
    ([(frozenset({"b"}), [2.0])], 0.0),                           # nothing alike
    ([(frozenset({"a"}), [2.0])], 0.5 / (0.5 + SIM_PRIOR)),       # one run of a twin
    ([(frozenset({"a", "b"}), [2.0] * 3)],                        # half alike, 3 runs
     0.75 / 16 / (0.75 / 16 + SIM_PRIOR)),
    ([(frozenset({"a", "b", "c"}), [2.0] * 99)],                  # a third alike, 99 runs:
     0.99 / 81 / (0.99 / 81 + SIM_PRIOR)),                        # just over MIN_SAY
    ([(frozenset({"a", "b", "c", "d"}), [2.0] * 99)],             # a quarter: under it
     0.99 / 256 / (0.99 / 256 + SIM_PRIOR)),
])
def test_lenders_say_edge_values(others, say) -> None:
    assert lent(frozenset({"a"}), others)[1] == pytest.approx(say)


def test_lenders_say_against_min_say() -> None:
    third = [(frozenset({"a", "b", "c"}), [2.0] * 99)]
    quarter = [(frozenset({"a", "b", "c", "d"}), [2.0] * 99)]
    assert lent(frozenset({"a"}), third)[1] >= MIN_SAY > lent(frozenset({"a"}), quarter)[1]


STALE = """name: Stale
on:
  schedule:
    - cron: "30 1 * * *"
jobs:
  stale:
    runs-on: ubuntu-latest
    timeout-minutes: 1
    permissions:
      issues: write
    steps:
      - uses: actions/stale@v9
        with:
          days-before-stale: 60
          stale-issue-message: This issue is stale
"""


def test_a_new_workflow_alike_to_nothing_that_ran_stays_a_cold_guess(tmp_path) -> None:
    """A new workflow none of whose words the repository's runs share: no evidence (the
    lenders' say under MIN_SAY), so the cold prediction with its band, and no timeout
    alarm from it, though the runs of the repository's tests are long."""
    root = _repo(tmp_path)
    (root / ".github/workflows/stale.yml").write_text(STALE, encoding="utf-8")
    history = HistoryIndex(jobs={(PATH, "test (3.11)"): _runs(50.0)}, workflows={})
    cold = _jobs(estimate_paths([str(root)], repo_root=str(root)))["stale"]
    got = _jobs(estimate_paths([str(root)], repo_root=str(root), history=history))
    assert got["test (3.12)"]["history_source"] == "siblings"  # the history was read
    stale = got["stale"]
    assert stale["history_source"] is None and stale["runtime_s"] == cold["runtime_s"]
    assert over_timeout(stale) is None
    timeout = [a["message"] for a in stale["advice"] if a["kind"] == "timeout"]
    assert timeout and all(m.startswith("Cannot tell yet") for m in timeout)


def test_a_workflow_not_estimated_lends_its_residual_through_its_last_text(tmp_path) -> None:
    """estimate of one file: the repository's other workflows are read from the history
    (the text of the configuration each job last ran)."""
    from laser_ci.text.serialize import serialize_job
    from laser_ci.workflows.parse import read_workflows

    root = _repo(tmp_path, docs=True)
    files = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*.yml")}
    wfs, _ = read_workflows(files, [PATH])
    text = serialize_job(wfs[0].jobs[0], wfs[0], None)
    past = PastRuns(_runs(11.0).runtimes, previous_text=text, conclusions=("success",) * 12)
    history = HistoryIndex(jobs={(PATH, "test (3.11)"): past}, workflows={})
    docs = _jobs(estimate_paths([str(root / ".github/workflows/docs.yml")],
                                repo_root=str(root), history=history))["build"]
    assert docs["history_source"] == "repository" and docs["evidence_runs"] == 12
    from laser_ci.report.cells import history_cell

    assert history_cell(docs) == "new: from 12 runs of alike jobs of other workflows"
    # it lends by the words of that text, its residuals against that text's cold p50
    from laser_ci.predictors.choice import load_predictor

    base = load_predictor().predict([text])[0].p50
    residuals = [math.log(t / base) for t in past.runtimes]
    docs_wf = next(wf for wf in read_workflows(files, sorted(files))[0] if wf.path.endswith("docs.yml"))
    shift = lent(words_of(serialize_job(docs_wf.jobs[0], docs_wf, None)),
                 [(words_of(text), residuals)])[0]
    cold = _jobs(estimate_paths([str(root / ".github/workflows/docs.yml")], repo_root=str(root)))
    assert shift > 0.1
    assert math.log(docs["runtime_s"]["p50"] / cold["build"]["runtime_s"]["p50"]) == \
        pytest.approx(shift, abs=1e-3)


def test_cold_guess_past_its_timeout_cannot_tell_yet() -> None:
    runner = resolve_runner("ubuntu-latest", {})
    wide = Runtime(p10=60, p50=600, p90=3600)
    cold = [a for a in advise(wide, runner, 30, evidence=None) if a.kind == "timeout"]
    assert len(cold) == 1
    assert cold[0].message.startswith("Cannot tell yet") and cold[0].suggested == {}
    warm = [a for a in advise(wide, runner, 30, evidence="siblings") if a.kind == "timeout"]
    assert warm[0].suggested == {"timeout-minutes": 90}
    # within the timeout, a cold guess gets the usual timeout advice: none here
    assert not [a for a in advise(Runtime(60, 300, 900), runner, 30, evidence=None)
                if a.kind == "timeout"]
    job = {"runtime_s": {"p90": 3600}, "timeout_minutes": 30}
    assert over_timeout({**job, "history_source": None}) is None
    assert over_timeout({**job, "history_source": "repository"}) == (60.0, 30.0)


def test_a_new_job_of_a_known_workflow_borrows_from_the_repository_jobs_alike_to_it() -> None:
    """Issue 49 (b): a new job of a workflow that ran, from that workflow's other jobs and
    the repository: a job of another workflow that does what it does lends its residual,
    the unlike jobs of its own workflow next to nothing; alike to none, the workflow's
    pooled residual, shrunk."""
    build = frozenset({"cmake", "ninja", "build", "runtime"})
    items = [Item("ci.yml", "lint", math.log(100), (100.0,) * 3, words=frozenset({"lint"})),
             Item("nightly.yml", "build", math.log(100), (800.0,) * 4, words=build),
             Item("ci.yml", "build", math.log(100), (), words=build),
             Item("ci.yml", "docs", math.log(100), (), words=frozenset({"sphinx"}))]
    got = resolve(items)
    w = 4 / 5  # the twin's weight: similarity 1, 4 runs; lint's 0
    assert got[2] == Resolved("workflow", pytest.approx(
        math.log(100) + w * math.log(8) / (w + SIM_PRIOR)), 4)
    assert got[3] == Resolved("workflow", pytest.approx(math.log(100)), 3)
    # the comment says where the runs are: nightly.yml's build is not of its workflow
    from laser_ci.report.cells import history_cell

    assert got[2].elsewhere and not got[3].elsewhere
    cell = {"history_source": "workflow", "evidence_runs": 4}
    assert history_cell({**cell, "evidence_elsewhere": True}) == \
        "new: from 4 runs of alike jobs of other workflows"
    assert history_cell({**cell, "evidence_elsewhere": False}) == \
        "new: from 4 runs of its workflow's other jobs"


def test_resolve_order_and_shrinkage() -> None:
    does = frozenset({"run", "make", "test"})
    items = [Item("a", "t", math.log(100), (600.0, 620.0, 640.0), traits=frozenset({"x"}),
                  words=does),
             Item("a", "t", math.log(200), (), traits=frozenset({"x"})),
             Item("a", "u", math.log(100), ()),
             Item("b", "v", math.log(50), (), words=does),
             Item("c", "w", math.log(50), (), words=frozenset({"lint"}))]
    got = resolve(items)
    assert got[0] is None
    # sibling: its median 620 s, times the cold ratio 2
    assert got[1] == Resolved("siblings", pytest.approx(math.log(1240)), 3)
    r = [math.log(t / 100) for t in (600, 620, 640)]
    assert got[2] == Resolved("workflow", pytest.approx(math.log(100) + shrunk_shift(r)), 3)
    # the repository: a job that does the same lends its median residual, weighted
    # 3/4 (its runs) against SIM_PRIOR; next to one that does nothing alike, a job stays cold
    assert got[3] == Resolved("repository",
                              pytest.approx(math.log(50) + 0.75 * r[1] / (0.75 + SIM_PRIOR)), 3)
    assert got[4] == Resolved(None, math.log(50), 0)
    assert shrunk_shift([1.0]) == 0.5 and shrunk_shift([]) == 0.0
    assert resolve([Item("a", "t", 1.0)]) == [Resolved(None, 1.0, 0)]
    # a job whose runs all failed has runs of its own but lends none
    failed = PastRuns((100.0, 120.0), conclusions=("failure", "failure"))
    assert typical(failed) == ()
    # where some ends are known, only the runs known to have succeeded
    assert typical(PastRuns((100.0, 120.0, 900.0), conclusions=("success", None, "failure"))) \
        == (100.0,)
    assert typical(PastRuns((100.0, 120.0))) == (100.0, 120.0)  # no end known: every run


def test_bands_per_source(tmp_path) -> None:
    cold = Runtime(p10=10, p50=100, p90=1000)
    res = Resolved("workflow", math.log(300), 5)
    kept = runtime_of(res, cold, {})
    assert kept.p50 == pytest.approx(300) and kept.p90 / kept.p10 == pytest.approx(100)
    path = tmp_path / "evidence_bands.json"
    write_offsets(path, {"workflow": (-0.5, 0.7), "siblings": (-0.2, 0.3)}, {"n": 1})
    offsets = load_offsets(path)
    assert offsets == {"workflow": (-0.5, 0.7), "siblings": (-0.2, 0.3)}
    rt = runtime_of(res, cold, offsets)
    assert rt.p10 == pytest.approx(300 * math.exp(-0.5)) and rt.p90 == pytest.approx(300 * math.exp(0.7))
    assert runtime_of(Resolved(None, 1.0, 0), cold, offsets) is cold
    path.write_text('{"offsets": {"workflow": [0.5, 0.7], "siblings": "x"}}')
    assert load_offsets(path) == {}
    assert load_offsets(tmp_path / "missing.json") == {}


@pytest.mark.parametrize("residuals, weights, expected", [
    ([-2.0, -1.0, 1.0, 2.0], None, (-1.7, 1.7)),                 # numpy's linear quantiles
    ([-2.0, -1.0, 1.0, 2.0], [1, 1, 1, 1], (-2.0, 2.0)),         # the inverted CDF
    ([-2.0, -1.0, 1.0, 2.0], [1 / 3] * 4, (-2.0, 2.0)),          # rounding does not move it
    ([1.0, 2.0, 3.0], [1, 1, 1], (0.0, 3.0)),                     # lo is at most 0
    # one repository of 2 residuals weighs as much as one of 8
    ([-3.0, 3.0] + [0.1] * 8, [1 / 2] * 2 + [1 / 8] * 8, (-3.0, 3.0)),
    ([-3.0, 3.0] + [0.1] * 8, None, (-0.21, 0.39)),
    ([], None, (0.0, 0.0)),
])
def test_band_offsets_edge_values(residuals, weights, expected) -> None:
    from laser_ci.predictors.evidence_bands import band_offsets

    assert band_offsets(residuals, weights=weights) == pytest.approx(expected)


def test_band_offsets_rejects_weights_that_do_not_fit() -> None:
    from laser_ci.predictors.evidence_bands import band_offsets

    for weights in ([1.0], [1.0, 0.0], [1.0, -1.0]):
        with pytest.raises(ValueError):
            band_offsets([1.0, 2.0], weights=weights)


class _Constant:
    """A cold predictor that knows nothing: 5 minutes for every text, band 1-25 minutes."""

    name = "constant"

    def predict(self, texts):
        return [Runtime(60.0, 300.0, 1500.0) for _ in texts]


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> Path:
    from runtime_history import make_runs, write_folder

    return write_folder(tmp_path_factory.mktemp("newjobs") / "collected", make_runs(days=21))


def test_depth_protocol_holds_names_out_and_scores_them_against_cold(collected) -> None:
    from laser_ci.evaluation.new_jobs import depth_report, eval_new_jobs, is_depth, summarize

    assert is_depth(collected)
    early, rows, offsets = depth_report(collected, _Constant(), test_days=3, holdout="names")
    assert early and rows
    new = [r for r in rows if r.source == "siblings" and r.success]
    own = [r for r in rows if r.source == "own"]
    assert new and own and all(r.base is not None for r in own)
    s = summarize(new)
    # the shards' siblings know their time; a constant does not
    assert s["log_mae"] < 0.5 * s["cold_log_mae"] and s["diff"]["hi"] < 0
    assert "siblings" in offsets and offsets["siblings"][0] <= 0 <= offsets["siblings"][1]
    text = eval_new_jobs(str(collected), _Constant(), test_days=3)
    assert "| new instance | successful |" in text and "workflows held out" in text


def test_eval_new_jobs_option(collected) -> None:
    from click.testing import CliRunner

    from laser_ci.evaluation.eval_command import eval_command

    out = CliRunner().invoke(eval_command, [str(collected), "--new-jobs", "--format", "json"])
    assert out.exit_code == 0, out.output
    import json

    figures = json.loads(out.output)
    assert figures["names"]["siblings/successful"]["n"] > 0


def test_shared_runs_protocol_uses_only_earlier_successful_runs_of_other_workflows() -> None:
    from types import SimpleNamespace

    from laser_ci.evaluation.new_jobs import _repository_rows

    def run(repo, wf, seconds, day, end="success", text="run: make test"):
        return SimpleNamespace(repo=repo, workflow_path=wf, runtime_s=seconds, conclusion=end,
                               created_at=f"2024-05-{day:02d}T10:00:00Z", commit_date=None,
                               text=f"workflow: {wf}\n{text}")

    # the cold model says 100 s for everything; repo a's other workflow takes 400 s
    examples = [run("a", "ci", 400, 1), run("a", "ci", 400, 2), run("a", "ci", 5000, 3, "failure"),
                run("a", "docs", 300, 4), run("a", "docs", 300, 5),
                run("b", "ci", 50, 1)]
    cold = [Runtime(10.0, 100.0, 1000.0)] * len(examples)
    rows = _repository_rows(examples, cold, folds=2)
    # ci's own runs see no other workflow before them; b has one workflow: no evidence
    assert len(rows) == 2 and {r.truth for r in rows} == {300}
    # docs: 2 earlier successful ci runs (the failed one left out), alike in every word:
    # ln 4 with a say of 2/3 against SIM_PRIOR
    assert all(r.pred[1] == pytest.approx(100 * 4 ** ((2 / 3) / (2 / 3 + SIM_PRIOR)))
               for r in rows)
    assert all(r.source == "repository" and r.group == "a" for r in rows)
    # a docs workflow that does nothing ci does: the cold prediction, with its band
    examples[3:5] = [run("a", "docs", 300, 4, text="uses: pages"),
                     run("a", "docs", 300, 5, text="uses: pages")]
    rows = _repository_rows(examples, cold, folds=2)
    assert [(r.source, r.pred) for r in rows] == [(None, (10.0, 100.0, 1000.0))] * 2


def test_the_table_keeps_every_run_when_none_had_evidence() -> None:
    """The shared runs' table: the row of every run, alike or not, also where every run
    stayed cold; no second copy of a lone subset's row."""
    from laser_ci.evaluation.new_jobs import GHA_HELD, Row, table

    def row(source, group):
        return Row(group, source, True, 200.0, (10.0, 100.0, 1000.0), (10.0, 100.0, 1000.0))

    cold = [row(None, g) for g in "abcde"]
    text, figures = table(cold, "t", held=GHA_HELD)
    assert set(figures) == {"held/successful", "held/all"}
    assert figures["held/successful"]["n"] == 5 and GHA_HELD in text
    alike = [row("repository", g) for g in "abcde"]
    text, figures = table(alike, "t", held=GHA_HELD)
    assert set(figures) == {"repository/successful", "repository/all"}
    assert GHA_HELD not in text
    _text, figures = table(alike + cold, "t", held=GHA_HELD)
    assert figures["held/successful"]["n"] == 10 and figures["repository/successful"]["n"] == 5


@pytest.mark.parametrize("others, runs", [
    ([], 0),                                                       # nothing ran
    ([(frozenset("VWXYZ"), 5)], 0),                                # nothing alike
    ([(frozenset("abcde"), 5), (frozenset("abcde"), 0)], 5),       # a job without runs
    ([(frozenset("abcde"), 5), (frozenset("abcdeX"), 7)], 12),     # 5/6 alike: 51% of its weight
    ([(frozenset("abcde"), 5), (frozenset("abcdeVWXYZ"), 7)], 5),  # half alike: 6.6%
    ([(frozenset("abcde"), 5), (frozenset("aVWXYZ"), 900)], 5),    # many runs of an unlike one
    ([(frozenset("abcdeVWXYZ"), 7)], 7),                           # alone it is the heaviest
])
def test_counted_runs_are_those_of_the_alike_lenders(others, runs) -> None:
    """``evidence_runs`` of a new workflow: the runs of the jobs weighing at least a tenth
    of the heaviest lender, not of every job of the repository's other workflows."""
    assert counted_runs(frozenset("abcde"), others) == runs


def test_the_table_and_markdown_say_what_the_jobs_were_predicted_from(tmp_path) -> None:
    """The CLI said "predictor: history-recent" alone, with or without history: a cold
    guess read like a prediction from the job's runs."""
    from laser_ci.report.render import render

    root = _repo(tmp_path)
    history = HistoryIndex(jobs={(PATH, "test (3.11)"): _runs(11.0),
                                 (PATH, "test (3.12)"): _runs(11.2)}, workflows={})
    warm = estimate_paths([str(root)], repo_root=str(root), history=history)
    said = ("2 of 4 jobs from their own earlier runs, 1 new from their matrix siblings' runs, "
            "1 new from alike jobs' runs, 0 cold")
    lines = render(warm, "table").splitlines()
    assert lines[-2:] == [f"history: {said}", f"predictor: {warm['predictor']}"]
    assert f"History: {said}" in render(warm, "markdown").splitlines()
    # the comment's footer: not "from the workflow files alone"
    assert "from the workflow files and the repository's earlier runs" in render_summary(warm)
    cold = render(estimate_paths([str(root)], repo_root=str(root)), "table").splitlines()
    assert cold[-2] == ("history: none: cold guesses from the workflow files alone "
                        "(laser-ci collect, then --history DIR)")


@pytest.mark.parametrize(("job", "counted"), [
    ({"history_source": "own", "history_runs": 3}, "own"),
    ({"history_runs": 3}, "own"),  # a result from before history_source
    ({"history_source": "own", "history_runs": 0}, "cold"),
    ({"history_source": "own", "history_runs": True}, "cold"),
    ({"history_source": None, "history_runs": None}, "cold"),
    ({}, "cold"),
    ({"history_source": "siblings", "history_runs": None, "evidence_runs": 24}, "siblings"),
    ({"history_source": "workflow"}, "lent"),
    ({"history_source": "repository"}, "lent"),
    ({"history_source": "something new"}, "cold"),
])
def test_evidence_counts_edge_values(job, counted) -> None:
    from laser_ci.report.jobs import evidence_counts

    e = evidence_counts([job, {}])
    assert e.jobs == 2 and getattr(e, counted) == 1 + (counted == "cold")
