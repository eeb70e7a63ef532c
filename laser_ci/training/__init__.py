"""Offline: labeled examples, the baselines' and the language model's training, export.

Enters: a data folder in the ``gha-runs`` format. ``example`` and ``examples`` turn runs into
labeled texts, ``history`` gives each its earlier runs (causally), ``collected`` reads a
collected folder for ``estimate --history``; ``baselines`` is the baselines' training recipe
(``metrics`` its scores); ``config``, ``network``, ``loops``, ``pretrain``, ``finetune``,
``references`` and ``export`` make the language model by the shipped recipe, ``train`` holds
the ``train`` and ``finetune`` commands. Leaves: model folders. Nothing at inference imports
this package, except ``estimate --history`` reading a collected folder. Scoring and
cross-validation are in :mod:`laser_ci.evaluation`.
"""
