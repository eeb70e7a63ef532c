"""What the Action hands the runner: workflow commands (annotations), step outputs, the job
summary and the JSON result file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from laser_ci.report.comment import over_timeout
from laser_ci.report.jobs import job_label


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **props: Any) -> str:
    """One workflow command line, e.g. ``::notice file=a.yml,line=3::text``."""
    ps = ",".join(f"{k}={_escape_property(str(v))}" for k, v in props.items() if v is not None)
    return f"::{kind}{' ' + ps if ps else ''}::{_escape_data(message)}"


def emit(kind: str, message: str, **props: Any) -> None:
    click.echo(command(kind, message, **props))


def annotate(result: Mapping[str, Any]) -> None:
    pr = result.get("pull_request")
    only = set(pr.get("changed_workflows") or ()) if isinstance(pr, Mapping) else None
    for wf in result.get("workflows") or ():
        if only is not None and wf.get("path") not in only:
            continue  # on a PR, annotate what the PR touches, not every workflow every time
        hits: dict[tuple[Any, Any, Any], list[tuple[Mapping[str, Any], float, float]]] = {}
        for job in wf.get("jobs") or ():
            hit = over_timeout(job)
            if hit is not None:
                # the file that defines the job: its line is in it (a reusable workflow's)
                where = (job.get("called_workflow") or wf.get("path"), job.get("line"),
                         job.get("id"))
                hits.setdefault(where, []).append((job, *hit))
        for (path, line, _id), found in hits.items():
            job, p90_min, timeout = max(found, key=lambda h: h[1])
            limit = (
                f"its timeout-minutes: {timeout:g}"
                if job.get("timeout_minutes") is not None
                else f"GitHub's default timeout of {timeout:g} min"
            )
            if len(found) == 1:
                text = (f"Job '{job_label(job)}' has a predicted p90 runtime of "
                        f"{p90_min:.0f} min, above {limit}.")
            else:  # the instances of one job: one notice
                text = (f"{len(found)} instances of job '{job.get('group') or job_label(job)}' "
                        f"have a predicted p90 runtime above {limit}, up to {p90_min:.0f} min "
                        f"('{job_label(job)}').")
            emit("notice", text, file=path, line=line, title="laser-ci: may hit its timeout")
    for e in result.get("errors") or ():
        emit("warning", str(e.get("message")), file=e.get("path"), line=e.get("line"),
              title="laser-ci: cannot read")


def write_json(path: Path, result: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def write_outputs(output: Path | None, outputs: Mapping[str, str]) -> None:
    """Appends ``key=value`` lines to ``$GITHUB_OUTPUT`` (stdout when None)."""
    lines = "".join(f"{k}={v}\n" for k, v in outputs.items())
    if output is None:
        click.echo(lines, nl=False)
        return
    with output.open("a", encoding="utf-8") as fh:
        fh.write(lines)


def append_summary(step_summary: Path | None, markdown: str) -> None:
    """Appends Markdown to ``$GITHUB_STEP_SUMMARY`` (stdout when None)."""
    if step_summary is None:
        click.echo(markdown)
        return
    with step_summary.open("a", encoding="utf-8") as fh:
        fh.write(markdown.rstrip("\n") + "\n")


