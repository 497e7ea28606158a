"""Turning a fitted HistGradientBoostingRegressor into the model file's trees,
and a pure-numpy walk of those exported trees (used to prove the export exact).
"""

from __future__ import annotations

import numpy as np


def export_trees(model) -> tuple[float, list[dict]]:
    """(baseline, trees) of a fitted single-output HistGradientBoostingRegressor.

    Each tree holds parallel arrays indexed by node (node 0 is the root):
    feature (-1 on leaves), threshold (sklearn's num_threshold, float64; 0 on
    leaves), missing_go_to_left (0/1), left, right (child node indices, 0 on
    leaves), is_leaf (0/1), value (the leaf value; 0 on inner nodes) and count
    (the number of training samples that reached the node, sklearn's node
    ``count``; what path-dependent TreeSHAP weighs the two sides of a split by).
    """
    baseline = model._baseline_prediction
    if baseline.shape != (1, 1):
        raise ValueError("expected a single-output regressor")
    trees: list[dict] = []
    for iteration in model._predictors:
        if len(iteration) != 1:
            raise ValueError("expected one tree per iteration")
        predictor = iteration[0]
        nodes = predictor.nodes
        if nodes["is_categorical"].any():
            raise ValueError("categorical splits are not supported by the model file")
        leaf = nodes["is_leaf"].astype(bool)
        trees.append({
            "feature": [-1 if lf else int(f) for f, lf in zip(nodes["feature_idx"], leaf)],
            "threshold": [0.0 if lf else float(t) for t, lf in zip(nodes["num_threshold"], leaf)],
            "missing_go_to_left": [int(m) for m in nodes["missing_go_to_left"]],
            "left": [0 if lf else int(c) for c, lf in zip(nodes["left"], leaf)],
            "right": [0 if lf else int(c) for c, lf in zip(nodes["right"], leaf)],
            "is_leaf": [int(lf) for lf in leaf],
            "value": [float(v) if lf else 0.0 for v, lf in zip(nodes["value"], leaf)],
            "count": [int(c) for c in nodes["count"]],
        })
    return float(baseline[0, 0]), trees


def walk_tree(tree: dict, X: np.ndarray) -> np.ndarray:
    """Values of one exported tree for every row of X (float64), vectorised."""
    feature = np.asarray(tree["feature"], dtype=np.int64)
    threshold = np.asarray(tree["threshold"], dtype=np.float64)
    mleft = np.asarray(tree["missing_go_to_left"], dtype=bool)
    left = np.asarray(tree["left"], dtype=np.int64)
    right = np.asarray(tree["right"], dtype=np.int64)
    is_leaf = np.asarray(tree["is_leaf"], dtype=bool)
    value = np.asarray(tree["value"], dtype=np.float64)
    node = np.zeros(X.shape[0], dtype=np.int64)
    rows = np.arange(X.shape[0])
    active = ~is_leaf[node]
    while active.any():
        r = rows[active]
        n = node[active]
        x = X[r, feature[n]]
        go_left = np.where(np.isnan(x), mleft[n], x <= threshold[n])
        node[active] = np.where(go_left, left[n], right[n])
        active = ~is_leaf[node]
    return value[node]


def walk_raw(baseline: float, trees: list[dict], X: np.ndarray) -> np.ndarray:
    """baseline + tree0 + tree1 + ..., summed in that order as sklearn's _raw_predict does."""
    raw = np.zeros(X.shape[0], dtype=np.float64)
    raw += baseline
    for tree in trees:
        raw += walk_tree(tree, X)
    return raw
