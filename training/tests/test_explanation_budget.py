import json

import numpy as np

from training import train
from training.export import export_trees
from training.tests.conftest import REPO_ROOT


def splits_per_path_of_file(trees: list[dict]) -> float:
    """The explanation budget's measure from the exported trees: per tree, the mean number of
    splits on a leaf's path weighted by the leaves' training counts; then the mean over the trees."""
    per_tree = []
    for t in trees:
        depth = [0] * len(t["is_leaf"])
        for i, leaf in enumerate(t["is_leaf"]):
            if not leaf:
                depth[t["left"][i]] = depth[t["right"][i]] = depth[i] + 1
        leaves = [i for i, leaf in enumerate(t["is_leaf"]) if leaf]
        weight = sum(t["count"][i] for i in leaves)
        per_tree.append(sum(t["count"][i] * depth[i] for i in leaves) / weight)
    return sum(per_tree) / len(per_tree)


def test_the_measure_of_the_selection_is_the_one_of_the_exported_trees():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.1, size=400)
    model = train.fit_model(X, y, {"max_leaf_nodes": 7, "min_samples_leaf": 5}, 20)
    cumulative = train.splits_per_path(model)
    assert len(cumulative) == 20
    _, trees = export_trees(model)
    assert abs(cumulative[-1] - splits_per_path_of_file(trees)) < 1e-12
    assert abs(cumulative[4] - splits_per_path_of_file(trees[:5])) < 1e-12


def test_the_shipped_model_is_within_the_explanation_budget():
    doc = json.loads((REPO_ROOT / "models/kc-hgb-drift-2015-02.json").read_text())
    measured = splits_per_path_of_file(doc["trees"])
    assert measured <= train.MAX_SPLITS_PER_PATH
    budget = doc["card"]["training"]["selection"]["explanation_budget"]
    assert budget["splits_per_path_shipped"] == round(measured, 3)
    assert budget["splits_per_path_chosen"] == budget["splits_per_path_shipped"]
