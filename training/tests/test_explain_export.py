"""The model file's parts for explanations: node counts, the comparable-sales table, the card's drift."""

import json

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

from training import comparables, metrics
from training.data import REQUEST_FIELDS, Sale
from training.export import export_trees


def test_export_carries_each_nodes_training_count():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] * 2 + rng.normal(size=300) * 0.1
    model = HistGradientBoostingRegressor(max_iter=5, random_state=0).fit(X, y)
    _, trees = export_trees(model)
    for tree, iteration in zip(trees, model._predictors):
        assert tree["count"] == [int(c) for c in iteration[0].nodes["count"]]
        assert tree["count"][0] == 300
        for i, leaf in enumerate(tree["is_leaf"]):
            if not leaf:  # a split sends every sample one way or the other
                assert tree["count"][tree["left"][i]] + tree["count"][tree["right"][i]] == tree["count"][i]


def sale(row, date, price, **changes):
    house = {f: 1.0 for f in REQUEST_FIELDS}
    house.update(bedrooms=3, waterfront=False, view=0, condition=3, grade=7, yr_built=1990,
                 yr_renovated=0, lat=47.5, long=-122.2, sqft_living=2000.0)
    house.update(changes)
    return Sale(row=row, id=f"id{row}", date=date, price=price, house=house)


def test_comparables_table_is_sorted_compact_without_id_and_deterministic():
    sales = [
        sale(0, "2014-06-02", 400000.0, sqft_living=2100.0, lat=47.51),
        sale(1, "2014-05-02", 350500.5, waterfront=True),
        sale(2, "2014-06-02", 500000.0, bathrooms=2.25),
    ]
    table = comparables.comparables_table(sales)
    again = comparables.comparables_table(list(reversed(sales)))
    dump = lambda t: json.dumps(t, sort_keys=True, separators=(",", ":"))  # noqa: E731
    assert dump(table) == dump(again)  # the same sales in any order give the same bytes
    assert table["sales"] == 3
    assert table["date_runs"] == [["2014-05-02", 1], ["2014-06-02", 2]]
    cols = table["columns"]
    assert set(cols) == {"price", *REQUEST_FIELDS}  # the CSV's own fields only: no id
    assert cols["price"] == [350500.5, 400000, 500000]  # by date, then CSV row; whole numbers as ints
    assert cols["waterfront"] == [1, 0, 0]
    assert cols["sqft_living"] == [2000, 2100, 2000]
    assert cols["bathrooms"] == [1, 1, 2.25]
    assert "lat" not in table["scale"] and table["scale"]["grade"] == 1.0  # no spread: 1
    assert table["count"] == 5 and table["similar_size_ratio"] == 1.25


def test_signed_error_by_month():
    months = metrics.signed_error_by_month(
        [95.0, 90.0, 110.0, 80.0], [100.0, 100.0, 100.0, 100.0],
        ["2015-03-02", "2015-03-20", "2015-03-31", "2015-04-01"])
    assert months == [
        {"month": "2015-03", "sales": 3, "median_error_pct": -5.0, "mean_error_pct": -1.67},
        {"month": "2015-04", "sales": 1, "median_error_pct": -20.0, "mean_error_pct": -20.0},
    ]


def test_shipped_file_holds_the_table_and_the_drift(real_csv):
    from training.tests.conftest import REPO_ROOT

    doc = json.loads((REPO_ROOT / "models/kc-hgb-drift-2015-02.json").read_text())
    assert doc["format_version"] == 3
    table = doc["comparable_sales"]
    assert table["sales"] == doc["card"]["training"]["sales"]  # training sales only
    assert max(d for d, _ in table["date_runs"]) <= doc["prices_as_of"]
    months = doc["card"]["test"]["signed_error_by_month"]
    assert [m["month"] for m in months] == ["2015-03", "2015-04", "2015-05"]
    assert all(m["median_error_pct"] < 0 for m in months)  # ran low, more so later
    assert months[0]["median_error_pct"] > months[-1]["median_error_pct"]
    # with as_of at the sale's month the drift is mostly gone
    by_sale_month = doc["card"]["test"]["as_of_sale_month"]["signed_error_by_month"]
    assert all(abs(s["median_error_pct"]) < abs(m["median_error_pct"])
               for s, m in zip(by_sale_month, months))
    assert any("Prices rose after that date" in c for c in doc["card"]["caveats"])
    assert any("rising market" in s for s in doc["card"]["not_for"])
