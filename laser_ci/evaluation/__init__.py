"""Offline: ``laser-ci eval``, scoring predictors on a folder of CI history.

Enters: a data folder in the ``gha-runs`` format, read into labeled examples by
:mod:`laser_ci.training.examples`, and the shipped predictors. ``evaluate`` scores them on a
split (``eval_command`` is the command), ``crossval`` cross-validates the shipped recipes by
repository (``folds``): the baselines' (:mod:`laser_ci.training.baselines`) and the language
model's (``lm_recipe``, whose decoding ``bands`` calibrates per regime); ``cv_report``
renders the result and writes the cards :mod:`laser_ci.predictors.choice` ranks by. Leaves:
reports, predictions files, ``card.json`` ``cv`` blocks, and (``--lm-ship``) a model folder.
"""
