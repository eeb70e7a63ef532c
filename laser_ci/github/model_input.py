"""The Action's ``model`` input: which model predicts, and why not the one asked for.

The input names a model folder, or is ``learned``: the repository's learned model, which
``action.yml`` restores from the Actions cache (the newest entry under
``laser-ci-model-<owner/name>-``, saved by the weekly learning workflow, docs/learning.md)
into ``$RUNNER_TEMP/laser-ci-model`` before laser-ci runs.

The folder is used unless one of these holds; then the model shipped with the Action
predicts, with one ``::notice::`` saying why and the same reason in the footer of the
comment and the job summary (the result's ``model.fallback``). None of them fails the step:
a missing model costs accuracy, not the report.

1. **A pull request from a fork** (its head repository is not the base repository, or the
   fork is gone). Its run is the fork author's: on ``pull_request`` the workflow file, and
   the caches it can read first (those its own earlier runs saved, scoped to the PR), are
   the PR's, so a folder found there need not be the one the repository's schedule wrote;
   a folder in the workspace is the PR's checkout. The shipped model is the same for every
   fork PR. (The run history leaves out runs of a fork's code for the same reason.)
2. **No folder there**: ``learned`` with no entry in the cache (a cache miss: the learning
   workflow has not run yet, or its entry expired), or a path that does not exist.
3. **A folder that learned another repository** (its ``laser.json`` ``learned.repository``
   is not ``GITHUB_REPOSITORY``): its corrections are that repository's. A folder restored
   for ``learned`` that learned no repository at all counts as this too.
4. **A folder that cannot be read or loaded** (a malformed ``learned`` block, a file whose
   sha256 is not the one its ``laser.json`` lists, no model in it).

The result's ``model`` object (:func:`laser_ci.predictors.learned.model_json`, plus
``input``: what was asked for)::

    {"shipped": false, "folder": ..., "learned": {...} | null, "input": "learned"}
    {"shipped": true, "input": "learned", "fallback": "no learned model of octo/app ..."}
    {"shipped": true}                                   # no model input
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from laser_ci.github.errors import describe
from laser_ci.github.runner_io import emit

LEARNED = "learned"  # the input value: the repository's learned model, from the Actions cache
LEARNED_DIR = "laser-ci-model"  # under $RUNNER_TEMP: where action.yml restores it
NOTICE_TITLE = "laser-ci: shipped model"


def cache_prefix(repository: str | None) -> str:
    """The key prefix the learned model is saved under (docs/learning.md)."""
    return f"laser-ci-model-{repository or '<owner/name>'}-"


def head_repository(pull_request: Mapping[str, Any]) -> str | None:
    """``owner/name`` of a pull request's head repository; None when the event has none (a
    fork deleted since)."""
    head = pull_request.get("head")
    repo = head.get("repo") if isinstance(head, Mapping) else None
    name = repo.get("full_name") if isinstance(repo, Mapping) else None
    return name if isinstance(name, str) and name else None


def fork_of(pull_request: Mapping[str, Any] | None, repository: str | None) -> str | None:
    """Why the pull request counts as one from a fork (its head repository's name, or that
    it is gone); None for a pull request from a branch of ``repository`` or no PR."""
    if pull_request is None:
        return None
    head = head_repository(pull_request)
    if head is None:
        return "its head repository is gone"
    if repository is None or head.lower() != repository.lower():
        return f"its head is {head}"
    return None


def choose_model(folder: Path | None, *, from_cache: bool, repository: str | None,
                 pull_request: Mapping[str, Any] | None,
                 load: Callable[[Path | None], Any]) -> tuple[Any, dict[str, Any]]:
    """``(predictor, the result's model object)`` for the ``model`` input: ``folder`` (for
    ``learned``: where the cache was restored, ``from_cache``), None without the input.
    ``load(folder)`` loads a folder, ``load(None)`` the shipped model (whose failure is
    raised: the run cannot go on without a model). A fallback prints its notice."""
    from laser_ci.predictors.learned import LearnedFileError, learned_info, model_json

    if folder is None:
        return load(None), {"shipped": True}
    asked = LEARNED if from_cache else str(folder)
    why: str | None = None
    fork = fork_of(pull_request, repository)
    info = None
    if fork is not None:
        why = (f"this pull request comes from a fork ({fork}), whose run may find a model "
               "that this repository's schedule did not write")
    elif not folder.is_dir():
        why = (f"no learned model of {repository or 'this repository'} in the Actions cache "
               f"(key {cache_prefix(repository)}…): the weekly learning workflow saves one, "
               "docs/learning.md" if from_cache else f"no model folder at {folder}")
    else:
        try:
            info = learned_info(folder)
        except LearnedFileError as exc:
            why = str(exc)
        if why is None and info is None and from_cache:
            why = f"the folder restored from the Actions cache learned no repository ({folder})"
        elif (why is None and info is not None and repository is not None
              and info.repository.lower() != repository.lower()):
            why = f"{folder} learned {info.repository}'s runs, not {repository}'s"
    if why is None:
        try:
            predictor = load(folder)
        except Exception as exc:  # noqa: BLE001 - one line, whatever the folder holds
            why = f"{folder}: {describe(exc)}"
        else:
            return predictor, {**model_json(folder), "input": asked}
    emit("notice", f"laser-ci: model: {why}; the shipped model predicts", title=NOTICE_TITLE)
    return load(None), {"shipped": True, "input": asked, "fallback": why}
