"""Engineered features of a serialized job or workflow text, for the tabular baseline.

The input is the text :mod:`laser_ci.text.serialize` writes (the same text every predictor
reads), parsed line by line: unindented ``key: value`` lines are job/workflow keys, lines
under ``steps:`` are steps (``- key: value`` starts one; deeper ``steps:`` are inlined
composite actions) and ``run: |`` is followed by the script, indented.

:func:`extract` returns ``{name: float}``; absent features are 0. Fixed names describe
counts and sizes; bag-of-words names have a prefix: ``uses:owner/name`` (actions, ref
dropped), ``cmd:word`` (first word of each script line), ``os:``/``runner:`` (runner
labels), ``on:`` (triggers), ``with:key``, ``ext:.java`` (repo files by extension, log
count) and ``top:pom.xml`` (repository root entries). The training script keeps the bag
names frequent enough across repositories; the rest are dropped at vectorizing time.

For a ``task: workflow`` text the per-job counts are summed over job definitions, and
``*_x_inst`` variants weight each definition by its number of matrix instances (the label
is the sum over instances).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict

_KEY = re.compile(r"^([A-Za-z][\w-]*): ?(.*)$")
_STEP_KEY = re.compile(r"^(\s*)(- |  )([A-Za-z][\w-]*): ?(.*)$")
_SIZE = re.compile(r"^([\d.]+)([KMG]?)$")
_CORES = re.compile(r"(\d+)[-_ ]?(?:cores?|cpus?|vcpus?)\b")
_CMD_SKIP = {"sudo", "env", "time", "exec", "then", "do", "else", "fi", "done", "if", "for",
             "echo", "export", "set", "cd", "run", "}", "{", "-", "&&", "||", "\\"}
_WORD = re.compile(r"[a-z][a-z0-9]+")
_SCRIPT_FLAGS = {
    "skip_tests": re.compile(r"skiptests|maven\.test\.skip|-x\s*:?test\b|--exclude-task\s+test"),
    "parallel": re.compile(r"-t\s*\d|--parallel|-j\s*\d|-n\s*auto|--max-workers"),
    "docker_build": re.compile(r"docker\s+(?:build|compose|-compose)|buildx"),
    "test_cmd": re.compile(r"\btest\b|pytest|\bverify\b|jest|vitest|mocha|ctest"),
    "install_cmd": re.compile(r"\binstall\b|\bci\b|apt-get|brew"),
    "curl": re.compile(r"\bcurl\b|\bwget\b"),
    "sleep": re.compile(r"\bsleep\b|timeout\b"),
}
_KNOWN_OS = ("ubuntu", "windows", "macos", "self-hosted", "linux", "arm", "buildjet",
             "large", "xlarge", "gpu")


def _size_bytes(s: str) -> float:
    m = _SIZE.match(s)
    if not m:
        return 0.0
    mult = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]
    try:
        return float(m.group(1)) * mult
    except ValueError:
        return 0.0


def _num(s: str) -> float | None:
    try:
        v = float(s.strip().strip("'\""))
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _cmd_word(line: str) -> str | None:
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    for tok in line.split():
        tok = tok.strip("'\"();")
        if not tok or tok in _CMD_SKIP or "=" in tok or tok.startswith("$"):
            continue
        tok = tok.rsplit("/", 1)[-1] if tok.startswith(("./", "../", "/")) else tok
        tok = tok.lower()
        if re.fullmatch(r"[a-z][\w.+-]{0,30}", tok):
            return tok
        return None
    return None


def _runner_tokens(value: str) -> list[str]:
    v = value.lower()
    out = []
    for label in re.split(r"[\[\],;{}]+", v):
        label = label.strip().strip("'\"")
        if label:
            out.append(label)
    return out


class _Job:
    def __init__(self) -> None:
        self.instances = 1.0
        self.n_steps = 0
        self.n_composite_steps = 0
        self.n_run = 0
        self.n_uses = 0
        self.run_lines = 0
        self.run_chars = 0
        self.has = defaultdict(float)  # job keys present
        self.timeout = 0.0
        self.step_timeouts = 0
        self.runs_on = ""
        self.matrix_keys = 0
        self.dynamic_matrix = 0
        self.services = 0
        self.needs = 0
        self.bags: dict[str, float] = defaultdict(float)


def extract(text: str) -> dict[str, float]:
    """Feature dict of one serialized text (never raises on odd input)."""
    f: dict[str, float] = defaultdict(float)
    lines = text.splitlines()
    f["text_lines"] = len(lines)
    f["text_chars_log"] = math.log1p(len(text))
    jobs: list[_Job] = []
    job: _Job | None = None
    in_script = False
    in_raw = False
    in_steps = False  # step lines only follow a job's ``steps:``
    in_diff = False  # ``history-config: changed`` is followed by +/- diff lines
    script_indent = 0
    for line in lines:
        if in_diff:
            if line.startswith(("+ ", "- ", "+", "-")) and not _KEY.match(line):
                f["history_diff_lines"] += 1
                continue
            in_diff = False
        if in_raw:
            if line.startswith("  ") or not line:
                f["raw_lines"] += 1
                stripped = line.strip()
                if stripped.startswith("uses:") or stripped.startswith("- uses:"):
                    ref = stripped.split("uses:", 1)[1].strip().strip("'\"")
                    f[f"uses:{ref.split('@')[0].lower()}"] += 1
                    f["n_uses"] += 1
                elif stripped.startswith("runs-on:"):
                    for lab in _runner_tokens(stripped.split(":", 1)[1]):
                        _runner_features(f, lab, 1.0)
                continue
            in_raw = False
        if in_script:
            indent = len(line) - len(line.lstrip(" "))
            if not line or indent >= script_indent:
                if job is not None and line.strip():
                    _script_line(job, line)
                continue
            in_script = False
        if line.startswith("# ... truncated"):
            f["truncated"] = 1
            continue
        m = _STEP_KEY.match(line)
        if m and job is not None and in_steps and not _KEY.match(line):
            indent, dash, key, value = m.groups()
            depth = len(indent) // 2
            if dash == "- ":
                if depth == 0:
                    job.n_steps += 1
                else:
                    job.n_composite_steps += 1
            if key == "uses":
                job.n_uses += 1
                ref = value.strip().strip("'\"")
                if ref.startswith("./"):
                    job.bags["uses:local"] += 1
                elif ref.startswith("docker://"):
                    job.bags["uses:docker"] += 1
                else:
                    job.bags[f"uses:{ref.split('@')[0].lower()}"] += 1
            elif key == "run":
                job.n_run += 1
                if value.strip().startswith("|"):
                    in_script = True
                    script_indent = len(indent) + 4
                else:
                    _script_line(job, value)
            elif key == "with":
                for k in re.findall(r"[{,]\s*([\w-]+):", value):
                    job.bags[f"with:{k.lower()}"] += 1
            elif key == "timeout-minutes":
                job.step_timeouts += 1
            elif key == "name" and depth == 0:
                for w in set(_WORD.findall(value.lower())):
                    job.bags[f"step:{w}"] += 1
            continue
        m = _KEY.match(line)
        if not m:
            continue
        key, value = m.group(1), m.group(2).strip()
        in_steps = False
        if key == "task":
            f["task_job"] = float(value == "job")
        elif key == "workflow":
            for w in set(_WORD.findall(value.lower())):
                f[f"name:{w}"] = 1
        elif key == "on":
            trig = [t.strip() for t in value.split(",") if t.strip()]
            f["n_triggers"] = len(trig)
            for t in trig:
                f[f"on:{t.lower()}"] = 1
        elif key in ("workflow-env", "workflow-concurrency", "workflow-defaults"):
            f[f"has_{key}"] = 1
        elif key == "jobs":
            nums = re.findall(r"\d+", value)
            if len(nums) >= 2:
                f["wf_job_defs"], f["wf_instances"] = float(nums[0]), float(nums[1])
        elif key == "history":
            _history_features(f, value)
        elif key == "history-config":
            state = value.split(" ", 1)[0]
            f[f"history_config_{state}"] = 1
            in_diff = state == "changed"
            counts = re.findall(r"([+-])(\d+)", value)
            for sign, count in counts:
                f["history_diff_added" if sign == "+" else "history_diff_removed"] = float(count)
        elif key == "raw":
            f["raw"] = 1
            in_raw = True
        elif key == "job":
            job = _Job()
            jobs.append(job)
            for w in set(_WORD.findall(value.lower())):
                job.bags[f"job:{w}"] += 1
        elif key == "repo":
            _repo_features(f, value)
        elif job is None:
            continue
        elif key == "instances":
            job.instances = max(_num(value) or 1.0, 1.0)
        elif key == "runs-on":
            job.runs_on = value
        elif key == "matrix":
            if value == "dynamic":
                job.dynamic_matrix = 1
            else:
                first = value.lstrip("[").split("}", 1)[0]
                job.matrix_keys = len(re.findall(r"[{,]\s*[\w-]+:", first))
        elif key == "timeout-minutes":
            job.timeout = _num(value) or 0.0
            job.has["timeout"] = 1
        elif key == "services":
            job.services = len(re.findall(r"[{,]\s*[\w-]+: \{", value)) or 1
        elif key == "needs":
            job.needs = value.count(",") + 1
        elif key == "container":
            job.has["container"] = 1
        elif key == "steps":
            in_steps = True
        else:
            job.has[key] = 1
    _job_features(f, jobs)
    return dict(f)


def _history_features(f: dict[str, float], value: str) -> None:
    """``history: n=12 median=4.73e+02 p10=... p90=... latest=...`` (or ``none``)."""
    if value.strip() == "none":
        f["history_none"] = 1
        return
    for part in value.split():
        k, _, v = part.partition("=")
        x = _num(v)
        if x is None:
            continue
        if k == "n":
            f["history_n"] = x
        elif k in ("median", "p10", "p90", "latest", "recent"):
            f[f"history_{k}_log"] = math.log(max(x, 1.0))
    if "history_p10_log" in f and "history_p90_log" in f:
        f["history_spread_log"] = f["history_p90_log"] - f["history_p10_log"]
    if "history_latest_log" in f and "history_median_log" in f:
        f["history_latest_rel"] = f["history_latest_log"] - f["history_median_log"]
    if "history_recent_log" in f and "history_median_log" in f:
        f["history_recent_rel"] = f["history_recent_log"] - f["history_median_log"]


def _script_line(job: _Job, line: str) -> None:
    job.run_lines += 1
    job.run_chars += len(line.strip())
    w = _cmd_word(line)
    if w:
        job.bags[f"cmd:{w}"] += 1
    low = line.lower()
    for name, pattern in _SCRIPT_FLAGS.items():
        if pattern.search(low):
            job.bags[f"script:{name}"] += 1


def _runner_features(f: dict[str, float], label: str, weight: float) -> None:
    for os_ in _KNOWN_OS:
        if os_ in label:
            f[f"os:{os_}"] += weight
    if "${{" in label:
        f["os:expression"] += weight
    m = _CORES.search(label)
    if m:
        f["runner_cores"] = max(f["runner_cores"], float(m.group(1)))
    f[f"runner:{label[:40]}"] += weight


def _job_features(f: dict[str, float], jobs: list[_Job]) -> None:
    f["n_jobs"] = len(jobs)
    if not jobs:
        return
    inst = [j.instances for j in jobs]
    f["instances"] = sum(inst)
    f["instances_max"] = max(inst)
    timeouts = [j.timeout for j in jobs if j.timeout > 0]
    f["timeout_max"] = max(timeouts) if timeouts else 0.0
    f["timeout_min"] = min(timeouts) if timeouts else 0.0
    f["n_timeouts"] = len(timeouts)
    for j in jobs:
        w = j.instances
        for name, v in (
            ("steps", j.n_steps),
            ("composite_steps", j.n_composite_steps),
            ("run_steps", j.n_run),
            ("uses_steps", j.n_uses),
            ("run_lines", j.run_lines),
            ("run_chars", j.run_chars),
            ("services", j.services),
            ("step_timeouts", j.step_timeouts),
            ("needs", j.needs),
        ):
            f[name] += v
            f[f"{name}_x_inst"] += v * w
        f["matrix_keys_max"] = max(f["matrix_keys_max"], j.matrix_keys)
        f["dynamic_matrix"] = max(f["dynamic_matrix"], j.dynamic_matrix)
        f["jobs_with_matrix"] += float(j.instances > 1 or j.matrix_keys > 0)
        for k, v in j.has.items():
            f[f"job_{k}"] += v
        for k, v in j.bags.items():
            f[k] += v
        labels = _runner_tokens(j.runs_on) or ["none"]
        for lab in labels:
            _runner_features(f, lab, w / len(labels))
    f["run_chars_log"] = math.log1p(f["run_chars"])
    f["run_chars_x_inst_log"] = math.log1p(f["run_chars_x_inst"])


def _repo_features(f: dict[str, float], value: str) -> None:
    f["has_repo"] = 1
    fields: dict[str, str] = {}
    for part in value.split(" "):
        if "=" in part:
            k, _, v = part.partition("=")
            fields[k] = v
    n_files = _num(fields.get("files", "")) or 0.0
    f["repo_files_log"] = math.log1p(n_files)
    f["repo_bytes_log"] = math.log1p(_size_bytes(fields.get("size", "")))
    for item in fields.get("ext", "").split(","):
        ext, _, count = item.rpartition(":")
        c = _num(count)
        if ext and c is not None:
            f[f"ext:{ext.lower()}"] = math.log1p(c)
            if n_files > 0:
                f[f"extshare:{ext.lower()}"] = c / n_files
    for entry in fields.get("top", "").split(","):
        if entry:
            f[f"top:{entry.lower()}"] = 1
    f["repo_top_entries"] = len([e for e in fields.get("top", "").split(",") if e])
