"""Offline: labeled examples, training, export, evaluation.

Enters: a data folder in the ``gha-runs`` format. ``example`` and ``examples`` turn runs into
labeled texts, ``history`` gives each its earlier runs (causally), ``collected`` reads a
collected folder for ``estimate --history``, ``train`` and ``export`` make a language model,
``evaluate`` and ``metrics`` score predictors. Nothing at inference imports this package,
except ``estimate --history`` reading a collected folder.
"""
