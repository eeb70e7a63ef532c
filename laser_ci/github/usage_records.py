"""Usage records of earlier job runs, read from a run's artifacts (``actions: read``).

The measure step (``measure/``, :mod:`laser_ci.measure.record`) uploads one artifact per
measured job run, named ``laser-ci-usage-<attempt>-<job id>-<salt>``, holding
``usage.json``. Readers (``laser-ci collect``, the Action's history fetch) list a run's
artifacts (``GET /repos/{o}/{r}/actions/runs/{id}/artifacts``), download the small zip of
each (``GET .../actions/artifacts/{id}/zip``, a redirect to storage: PyGithub drops the
token there) and match each record to the job it measured: the job of the same attempt
that ran on the record's runner (``runner_name``) and was running when the record began.
No logs are downloaded. An expired artifact, a zip over :data:`MAX_ZIP_BYTES`, a record
that is not one, or one matching no job, is left out.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator, Sequence
from typing import Any

from laser_ci.measure.record import parse_record

ARTIFACT_PREFIX = "laser-ci-usage-"
RECORD_FILE = "usage.json"
MAX_ZIP_BYTES = 1 << 20  # a record is about 1 kB
MAX_ARTIFACTS = 300  # per run: a matrix of 256 jobs and some to spare
SLACK_S = 120.0  # a record may begin this long before the job's started_at (clock skew)


def record_from_zip(data: bytes) -> dict[str, Any] | None:
    """The usage record in an artifact's zip; None when there is none or it is malformed."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            info = zf.getinfo(RECORD_FILE)
            if info.file_size > MAX_ZIP_BYTES:
                return None
            return parse_record(json.loads(zf.read(info).decode("utf-8")))
    except (zipfile.BadZipFile, KeyError, ValueError, UnicodeDecodeError, OSError,
            EOFError, NotImplementedError):
        return None


def _pages(requester: Any, url: str) -> Iterator[dict[str, Any]]:
    for page in range(1, MAX_ARTIFACTS // 100 + 2):
        _h, data = requester.requestJsonAndCheck("GET", url,
                                                  parameters={"per_page": 100, "page": page})
        items = data.get("artifacts") if isinstance(data, dict) else None
        if not isinstance(items, list):
            return
        yield from (a for a in items if isinstance(a, dict))
        if len(items) < 100:
            return


def usage_artifacts(requester: Any, repo_url: str, run_id: int) -> list[dict[str, Any]]:
    """The run's unexpired usage artifacts (the API's JSON), at most :data:`MAX_ARTIFACTS`."""
    out = []
    for a in _pages(requester, f"{repo_url}/actions/runs/{run_id}/artifacts"):
        size = a.get("size_in_bytes")
        if str(a.get("name", "")).startswith(ARTIFACT_PREFIX) and not a.get("expired") \
                and isinstance(a.get("archive_download_url"), str) \
                and (not isinstance(size, int) or size <= MAX_ZIP_BYTES):
            out.append(a)
        if len(out) >= MAX_ARTIFACTS:
            break
    return out


def download(requester: Any, url: str) -> bytes | None:
    """The zip at ``url`` (an ``archive_download_url``); None past :data:`MAX_ZIP_BYTES`."""
    _status, _headers, chunks = requester.getStream(url, chunk_size=65536)
    buf = bytearray()
    for chunk in chunks:
        buf += chunk
        if len(buf) > MAX_ZIP_BYTES:
            return None
    return bytes(buf)


def _time(value: Any) -> float | None:
    from laser_ci.github.collect_base import parse_time

    try:
        t = parse_time(value) if isinstance(value, str) else None
    except ValueError:
        return None
    return t.timestamp() if t is not None else None


def match_records(jobs: Sequence[dict[str, Any]], records: Sequence[dict[str, Any]]
                  ) -> dict[int, dict[str, Any]]:
    """Per index of ``jobs`` (the API's or collect's job dicts), the record that measured it:
    same runner name, same attempt when both say, and the record began between the job's
    start (less :data:`SLACK_S`) and its end. A record matching two jobs (a self-hosted
    runner's jobs back to back, a fake's shared runner name) goes to the one named after the
    record's ``job`` (``GITHUB_JOB``: the display name is it, or starts with it and a
    matrix), else to the one whose start is nearest; each job gets one."""
    out: dict[int, dict[str, Any]] = {}
    for rec in records:
        start = _time(rec.get("started_at"))
        best: tuple[float, float, int] | None = None
        for i, job in enumerate(jobs):
            if i in out or not rec.get("runner_name") \
                    or job.get("runner_name") != rec.get("runner_name"):
                continue
            attempt = job.get("run_attempt")
            if isinstance(attempt, int) and rec.get("run_attempt") not in (None, attempt):
                continue
            j0, j1 = _time(job.get("started_at")), _time(job.get("completed_at"))
            if start is None or j0 is None or not (j0 - SLACK_S <= start <= (j1 or j0) + 1):
                continue
            name, job_id = str(job.get("name") or ""), str(rec.get("job") or "")
            named = bool(job_id) and (name == job_id or name.startswith(job_id + " "))
            key = (0.0 if named else 1.0, abs(start - j0), i)
            if best is None or key < best:
                best = key
        if best is not None:
            out[best[2]] = rec
    return out


def run_usage(requester: Any, repo_url: str, run_id: int, jobs: Sequence[dict[str, Any]]
              ) -> dict[int, dict[str, Any]]:
    """Per index of ``jobs``, the usage record of that job run (API errors propagate)."""
    records = []
    for art in usage_artifacts(requester, repo_url, run_id):
        try:
            data = download(requester, art["archive_download_url"])
        except Exception as e:  # noqa: BLE001 - a 4xx (expired since listed, gone): left out
            status = getattr(getattr(e, "response", None), "status_code", None)
            if isinstance(status, int) and 400 <= status < 500:
                continue
            raise
        rec = record_from_zip(data) if data else None
        if rec is not None:
            records.append(rec)
    return match_records(jobs, records) if records else {}
