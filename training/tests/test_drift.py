"""The price index (training/drift.py) and the guard of the rolling-origin validation."""

import numpy as np
import pytest

from training import drift, train


def test_folds_split_by_house_every_sale_of_a_house_in_one_fold():
    ids = ["b", "a", "c", "a", "d", "b", "e", "f"]
    folds = drift.house_folds(ids, folds=3)
    for house in set(ids):
        assert len({int(f) for f, i in zip(folds, ids) if i == house}) == 1
    # sorted houses dealt round-robin: a0 b1 c2 d0 e1 f2
    assert list(folds) == [1, 0, 2, 0, 0, 1, 1, 2]


def test_out_of_fold_never_predicts_a_sale_with_a_model_that_saw_its_house():
    ids = ["a", "a", "b", "c", "c", "d"]
    X = np.arange(6, dtype=np.float64).reshape(-1, 1)
    y = np.zeros(6)
    seen = []

    def fit_predict(X_fit, _y, X_held):
        seen.append((set(X_fit[:, 0]), set(X_held[:, 0])))
        return X_held[:, 0] * 10

    pred = drift.out_of_fold(X, y, ids, fit_predict, folds=2)
    assert list(pred) == [0, 10, 20, 30, 40, 50]
    for fitted, held in seen:
        assert not fitted & held
        held_houses = {ids[int(i)] for i in held}
        assert not held_houses & {ids[int(i)] for i in fitted}


def test_monthly_index_is_the_median_residual_per_month():
    dates = ["2014-05-02", "2014-05-20", "2014-05-31", "2014-06-01", "2014-06-30"]
    index = drift.monthly_index([0.1, -0.2, 0.3, 0.5, 0.7], dates)
    assert index == [
        {"month": "2014-05", "level": 0.1, "sales": 3},
        {"month": "2014-06", "level": 0.6, "sales": 2},
    ]
    with pytest.raises(ValueError, match="a month without sales"):
        drift.monthly_index([0.0, 0.0], ["2014-05-02", "2014-07-02"])


def test_levels_inside_the_data_and_the_trend_carried_on_past_it():
    index = [{"month": m, "level": lv, "sales": 1} for m, lv in
             (("2014-10", 0.0), ("2014-11", 0.01), ("2014-12", 0.02), ("2015-01", 0.04),
              ("2015-02", 0.06))]
    trend = (0.06 - 0.01) / 3
    assert drift.trend_per_month(index) == trend
    assert drift.level_at(index, "2014-10") == (0.0, False)
    assert drift.level_at(index, "2015-02") == (0.06, False)
    assert drift.level_at(index, "2015-03") == (0.06 + 1 * trend, True)
    assert drift.level_at(index, "2015-05") == (0.06 + 3 * trend, True)
    with pytest.raises(ValueError, match="more than 3 months past the data"):
        drift.level_at(index, "2015-06")
    with pytest.raises(ValueError, match="before the first month"):
        drift.level_at(index, "2014-09")
    assert drift.add_months("2014-11", 3) == "2015-02"


def test_no_validation_window_passes_the_as_of_date():
    windows = train.validation_windows()
    assert [w[0] for w in windows] == ["2014-09", "2014-10", "2014-11"]
    assert all(end <= "2015-02" for _, _, end in windows)
    assert windows[-1] == ("2014-11", "2014-12", "2015-02")
    with pytest.raises(ValueError, match="passes 2015-02"):
        train.validation_windows(origins=("2014-12",))
    with pytest.raises(ValueError, match="passes 2015-02"):
        train.validation_windows(months=4)


def test_the_shipped_file_holds_the_levels_the_rule_and_the_as_of_date():
    import json

    from training.tests.conftest import REPO_ROOT

    doc = json.loads((REPO_ROOT / "models/kc-hgb-drift-2015-02.json").read_text())
    index = doc["price_index"]
    assert index["as_of_month"] == doc["prices_as_of"][:7] == "2015-02"
    assert [m["month"] for m in index["months"]][0] == "2014-05"
    assert index["months"][-1]["month"] == "2015-02"
    assert index["extrapolation"]["trend_months"] == drift.TREND_MONTHS
    assert index["extrapolation"]["max_months_past_data"] == drift.MAX_MONTHS_PAST_DATA
    card = doc["card"]
    assert [m["month"] for m in card["price_index"]["months"]] == [m["month"] for m in index["months"]]
    assert "autumn" in card["training"]["selection"]["not_seen_by_validation"]
