"""LightGBM regression models evaluated with numpy alone: the trees of the tabular
baseline (:class:`laser_ci.predictors.baselines.TabularPredictor`) as flat node arrays,
shipped as ``.npz`` and read without LightGBM."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

_MISSING = {"None": 0, "Zero": 1, "NaN": 2}
_ZERO = 1e-35  # LightGBM's kZeroThreshold


class TreeEnsemble:
    """A LightGBM regression model (numerical splits only) as flat node arrays.

    Node ``i`` is a leaf when ``left[i] < 0``; its output is ``value[i]``. Internal nodes go
    left when ``x[feature] <= threshold``, with LightGBM's missing-value rules. The
    prediction is the sum of the trees' leaf values (LightGBM folds shrinkage and the
    initial score into them).
    """

    FIELDS = ("feature", "threshold", "left", "right", "default_left", "missing", "value", "roots")

    def __init__(self, **arrays: np.ndarray) -> None:
        self.feature = np.asarray(arrays["feature"], dtype=np.int32)
        self.threshold = np.asarray(arrays["threshold"], dtype=np.float64)
        self.left = np.asarray(arrays["left"], dtype=np.int32)
        self.right = np.asarray(arrays["right"], dtype=np.int32)
        self.default_left = np.asarray(arrays["default_left"], dtype=bool)
        self.missing = np.asarray(arrays["missing"], dtype=np.int8)
        self.value = np.asarray(arrays["value"], dtype=np.float64)
        self.roots = np.asarray(arrays["roots"], dtype=np.int32)

    @classmethod
    def from_lightgbm(cls, dump: dict[str, Any]) -> TreeEnsemble:
        """From ``Booster.dump_model()`` (a dict)."""
        cols: dict[str, list[Any]] = {f: [] for f in cls.FIELDS if f != "roots"}
        roots: list[int] = []

        def add(node: dict[str, Any]) -> int:
            i = len(cols["feature"])
            for f in cols:
                cols[f].append(0)
            if "leaf_value" in node:
                cols["left"][i] = cols["right"][i] = -1
                cols["value"][i] = float(node["leaf_value"])
                return i
            if node.get("decision_type", "<=") != "<=":
                raise ValueError("only numerical splits are supported")
            cols["feature"][i] = int(node["split_feature"])
            cols["threshold"][i] = float(node["threshold"])
            cols["default_left"][i] = bool(node.get("default_left", True))
            cols["missing"][i] = _MISSING[str(node.get("missing_type", "None"))]
            cols["left"][i] = add(node["left_child"])
            cols["right"][i] = add(node["right_child"])
            return i

        for tree in dump["tree_info"]:
            roots.append(add(tree["tree_structure"]))
        return cls(**{k: np.asarray(v) for k, v in cols.items()}, roots=np.asarray(roots))

    @classmethod
    def mean(cls, models: Sequence[TreeEnsemble]) -> TreeEnsemble:
        """One ensemble predicting the average of ``models`` (trees concatenated, leaves
        scaled by 1/len)."""
        k = len(models)
        offsets = np.cumsum([0] + [m.n_nodes for m in models[:-1]])
        shift = lambda a, o: np.where(a >= 0, a + o, a)  # noqa: E731
        return cls(
            feature=np.concatenate([m.feature for m in models]),
            threshold=np.concatenate([m.threshold for m in models]),
            left=np.concatenate([shift(m.left, o) for m, o in zip(models, offsets, strict=True)]),
            right=np.concatenate([shift(m.right, o) for m, o in zip(models, offsets, strict=True)]),
            default_left=np.concatenate([m.default_left for m in models]),
            missing=np.concatenate([m.missing for m in models]),
            value=np.concatenate([m.value / k for m in models]),
            roots=np.concatenate([m.roots + o for m, o in zip(models, offsets, strict=True)]),
        )

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        n = X.shape[0]
        if n == 0 or len(self.roots) == 0:
            return np.zeros(n)
        node = np.tile(self.roots, (n, 1))  # (n, n_trees)
        rows = np.arange(n)[:, None]
        while True:
            internal = self.left[node] >= 0
            if not internal.any():
                break
            x = X[rows, np.where(internal, self.feature[node], 0)]
            miss = self.missing[node]
            nan = np.isnan(x)
            x = np.where(nan & (miss != 2), 0.0, x)
            use_default = ((miss == 1) & (np.abs(x) <= _ZERO)) | ((miss == 2) & nan)
            go_left = np.where(use_default, self.default_left[node], x <= self.threshold[node])
            nxt = np.where(go_left, self.left[node], self.right[node])
            node = np.where(internal, nxt, node)
        return self.value[node].sum(axis=1)

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}{f}": getattr(self, f) for f in self.FIELDS}

    def check(self, n_features: int, prefix: str = "") -> None:
        """Raise ValueError unless the arrays make trees :meth:`predict` can walk: one
        length for every node array, roots that are nodes, and each internal node's
        children later nodes (as :meth:`from_lightgbm` and :meth:`mean` lay them out, so
        every path ends) and its feature one of the ``n_features``."""
        n = self.n_nodes
        arrays = ("feature", "threshold", "left", "right", "default_left", "missing", "value")
        lengths = {f: len(getattr(self, f)) for f in arrays}
        if len(set(lengths.values())) != 1 or any(getattr(self, f).ndim != 1 for f in arrays):
            raise ValueError(f"{prefix}trees: node arrays of different shapes ({lengths})")
        if self.roots.ndim != 1 or np.any((self.roots < 0) | (self.roots >= n)):
            raise ValueError(f"{prefix}trees: a root that is not one of the {n} nodes")
        internal = np.flatnonzero(self.left >= 0)
        for side in (self.left, self.right):
            child = side[internal]
            if np.any((child <= internal) | (child >= n)):
                raise ValueError(f"{prefix}trees: a child that is not a later node")
        feature = self.feature[internal]
        if np.any((feature < 0) | (feature >= n_features)):
            raise ValueError(f"{prefix}trees: a split on a feature beyond the "
                             f"{n_features} named")

    @classmethod
    def from_arrays(cls, arrays: Any, prefix: str) -> TreeEnsemble:
        return cls(**{f: arrays[f"{prefix}{f}"] for f in cls.FIELDS})

    @property
    def n_nodes(self) -> int:
        return len(self.feature)
