"""Stage 3, model and decode: text in, a runtime distribution out.

Enters: serialized job texts. Leaves: :class:`~laser_ci.predictors.base.Runtime` (p10, p50,
p90 and samples). ``base`` is the interface every predictor implements; ``baselines`` and
``features`` the tabular and text-linear models; ``lm`` the ONNX language model and
``decode`` its constrained, prefix-filled decoding loop; ``choice`` picks the default from the
scores written into each shipped ``card.json``.
"""

from laser_ci.predictors.choice import (
    FAMILIES,
    ModelNotFoundError,
    available_predictors,
    best_name,
    default_model_dir,
    find_families,
    load_predictor,
    read_cards,
)

__all__ = [
    "FAMILIES",
    "ModelNotFoundError",
    "available_predictors",
    "best_name",
    "default_model_dir",
    "find_families",
    "load_predictor",
    "read_cards",
]
