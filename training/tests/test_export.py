import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

from training.export import export_trees, walk_raw


def test_numpy_walk_of_exported_trees_equals_sklearn():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    X[rng.random(X.shape) < 0.05] = np.nan  # missing values take missing_go_to_left
    y = np.nan_to_num(X[:, 0]) * 3 + np.sin(np.nan_to_num(X[:, 1])) + rng.normal(size=400) * 0.1
    model = HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(X, y)
    baseline, trees = export_trees(model)
    assert len(trees) == 30
    X_new = rng.normal(size=(300, 5))
    X_new[rng.random(X_new.shape) < 0.1] = np.nan
    assert np.array_equal(walk_raw(baseline, trees, X_new), model.predict(X_new))
    tree = trees[0]
    n = len(tree["feature"])
    assert all(len(tree[k]) == n for k in tree)
    assert all((f == -1) == bool(leaf) for f, leaf in zip(tree["feature"], tree["is_leaf"]))
