import math

import pytest

from training import features, metrics


def test_round_dollars_half_up():
    assert metrics.round_dollars(100.5) == 101
    assert metrics.round_dollars(100.49) == 100
    assert metrics.round_dollars(0.49999999999999994) == 0  # like Math.round
    assert metrics.round_dollars(2.5) == 3  # not banker's rounding


def test_card_figures_hand_made():
    prices = [100.0, 200.0, 400.0, 1000.0, 50.0]
    estimates = [110.0, 180.0, 400.0, 1200.0, 60.0]
    # |error| %: 10, 10, 0, 20, 20
    f = metrics.card_figures(estimates, prices)
    assert f["median_error_pct"] == 10.0
    assert f["mape_pct"] == pytest.approx(12.0, abs=1e-12)
    assert f["within_10pct"] == 0.6  # 10, 10 and 0 are within
    assert f["over_by_10pct_or_more"] == 0.6  # 110>=110, 1200>=1100, 60>=55


def test_median_even_count():
    assert metrics.median([4.0, 1.0, 3.0, 2.0]) == 2.5


def test_rounded_card_figures():
    f = metrics.rounded_card_figures([101.0, 97.0, 100.0], [100.0, 100.0, 100.0])
    assert f == {"median_error_pct": 1.0, "mape_pct": 1.33, "within_10pct": 1.0,
                 "over_by_10pct_or_more": 0.0}


def test_coverage_and_bounds():
    assert metrics.range_bounds(100001, 0.9, 1.2) == (90001, 120001)
    prices = [90.0, 100.0, 121.0, 85.0]
    assert metrics.coverage([100.0] * 4, prices, 0.9, 1.2) == 0.5


def test_quantile_linear():
    assert metrics.quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.1) == pytest.approx(1.4)
    assert metrics.quantile([3.0, 1.0, 2.0], 0.5) == 2.0


def test_range_factors():
    estimates = [100.0] * 11
    prices = [float(p) for p in range(80, 135, 5)]  # ratios 0.80 .. 1.30
    low, high = metrics.range_factors(estimates, prices, 0.8)
    assert (low, high) == (0.85, 1.25)
    # rounded outward to 3 decimals
    low, high = metrics.range_factors([3.0, 3.0], [2.0, 4.0], 0.8)
    assert low == math.floor(metrics.quantile([2 / 3, 4 / 3], 0.1) * 1000) / 1000
    assert high == math.ceil(metrics.quantile([2 / 3, 4 / 3], 0.9) * 1000) / 1000


def test_nearest_rank():
    values = [float(v) for v in range(1, 1001)]
    assert metrics.nearest_rank(values, 0.99) == 990.0
    assert metrics.nearest_rank(values, 0.999) == 999.0


def test_derived_features():
    house = {"bedrooms": 3, "bathrooms": 2.0, "floors": 1.0, "sqft_living": 2000.0,
             "sqft_basement": 500.0, "sqft_lot": 5000.0, "waterfront": True, "view": 0,
             "condition": 3, "grade": 7, "yr_built": 1960, "yr_renovated": 1990,
             "lat": 47.5, "long": -122.25, "sqft_living15": 1800.0, "sqft_lot15": 5000.0}
    row = dict(zip(features.FEATURE_NAMES, features.feature_row(house)))
    assert row["waterfront"] == 1.0
    assert row["lat_plus_long"] == 47.5 + -122.25
    assert row["lat_minus_long"] == 47.5 - -122.25
    assert row["lat_plus_half_long"] == 47.5 + 0.5 * -122.25
    assert row["sqft_above"] == 1500.0
    assert row["yr_last_work"] == 1990.0
    assert dict(zip(features.FEATURE_NAMES, features.feature_row({**house, "yr_renovated": 0})))[
        "yr_last_work"] == 1960.0
