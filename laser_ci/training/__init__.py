"""Offline: labeled examples, training, export, evaluation.

Enters: a data folder in the ``gha-runs`` format. ``example`` and ``examples`` turn runs into
labeled texts, ``history`` gives each its earlier runs (causally), ``collected`` reads a
collected folder for ``estimate --history``, ``train`` and ``export`` make a language model,
``baselines`` is the baselines' training recipe, ``evaluate`` and ``metrics`` score
predictors, ``folds`` and ``crossval`` cross-validate them by repository. Nothing at
inference imports this package, except ``estimate --history`` reading a collected folder.
"""
