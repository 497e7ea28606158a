"""Train the house-price model and write the model file.

    training/.venv/bin/python -m training.train \
        --csv ../shared/data/kc_house_data.csv --out models/kc-hgb-drift-2015-02.json

Same CSV -> byte-identical file. See training/README.md for every choice.
"""

from __future__ import annotations

# One OpenMP thread: sklearn sums gradients with a parallel reduction whose
# rounding depends on the thread count, so a fixed count keeps the file
# identical on every machine. Set before numpy/sklearn are imported.
import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

import argparse
import datetime as dt
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import scipy
import sklearn
from sklearn.ensemble import HistGradientBoostingRegressor
from threadpoolctl import threadpool_limits

from . import comparables, data, drift, features, metrics, rules
from .export import export_trees, walk_raw

# 2: trees carry each node's training sample count; comparable_sales.
# 3: price_index (the monthly levels, added to the baseline for the month prices are as of).
FORMAT_VERSION = 3
MODEL_VERSION = "kc-hgb-drift-2015-02"
PRICES_AS_OF = "2015-02-28"
# Rolling origin: fit on the training months up to each origin, validate on the next
# VALIDATION_MONTHS months (all inside the training months: never past PRICES_AS_OF).
ORIGINS = ("2014-09", "2014-10", "2014-11")
VALIDATION_MONTHS = 3
BOOTSTRAP_RESAMPLES = 2000
RANGE_COVERAGE = 0.8
AREA_MARGIN_DEG = 0.01
HIGH_VALUE_USD = 1_000_000
RANDOM_STATE = 0
MAX_ITER = 950  # the explanation budget: TreeSHAP time grows with the trees
ITER_STEP = 50  # candidate numbers of trees: 50, 100, ..., MAX_ITER

# The small grid searched on the validation weeks (everything else fixed).
FIXED_PARAMS = {
    "loss": "absolute_error",
    "learning_rate": 0.1,
    "l2_regularization": 0.0,
    "max_bins": 255,
    "early_stopping": False,
    "random_state": RANDOM_STATE,
}
# 15 leaves: the explanation budget (TreeSHAP's cost grows with the leaves and the trees).
GRID = [{"max_leaf_nodes": 15, "min_samples_leaf": msl} for msl in (5, 10, 20, 40)]
# The explanation budget on the depth: every estimate walks one path per tree, and every
# explanation walks it too before TreeSHAP. The cost of a candidate is the mean number of splits
# on the path of a training sale's leaf (each tree's leaves weighted by their training counts,
# averaged over the candidate's trees), measured on the candidate fitted to the whole training
# period (the model that would ship; the windows' models, fitted on fewer sales, have longer
# paths and are not comparable). Only candidates at or under the model before the drift
# (kc-hgb-2015-02: 2.891 splits, 950 trees of 15 leaves) are considered.
MAX_SPLITS_PER_PATH = 2.891
# The model that does not see the date, whose out-of-fold residuals give the price index:
# fixed settings (not chosen on anything).
INDEX_PARAMS = {"max_leaf_nodes": 15, "min_samples_leaf": 40}
INDEX_TREES = 300

# Rare-value groups: one warning per group, naming all its fields, when any
# field of the group is above its threshold (the given quantile of the
# training sales, taken as an observed value: nearest rank).
RARE_GROUPS = (
    {"name": "land", "fields": ("sqft_lot", "sqft_lot15"), "quantile": 0.99},
    {"name": "living_area", "fields": ("sqft_living",), "quantile": 0.999},
    {"name": "bedrooms", "fields": ("bedrooms",), "quantile": 0.999},
    {"name": "bathrooms", "fields": ("bathrooms",), "quantile": 0.999},
)

TARGET_TRANSFORM = {
    "name": "log_price_per_sqft_living",
    "raw": "log(price / sqft_living)",
    "estimate": "exp(raw) * sqft_living",
    "denominator": "sqft_living",
}

INTENDED_USE = (
    "A first indication of the market price, in US dollars as of the prices_as_of date, "
    "of a single-family house in King County, Washington (USA), described by the 16 "
    "request fields; for consumers, agents and analysts who want a quick estimate with "
    "a range. Every answer names the model version so that it can be traced."
)
NOT_FOR = [
    "Not for lending, underwriting or insurance decisions about a person, nor any other "
    "decision with legal or similarly significant effects on a person.",
    "Estimates of $1,000,000 or more are much less reliable: few such sales were seen "
    "and their errors are larger (answers carry a high_value warning).",
    "Not an appraisal: the model does not see the interior, the state of repair beyond "
    "the condition and grade fields, or anything about the sale itself.",
    "Not for houses outside King County (the model area) or sales long after "
    "prices_as_of: prices move, and the model knows only sales up to that date.",
    "Not a price for today: the estimate is a price as of prices_as_of (or of the as_of "
    "month asked, at most 3 months past the data, where the level is carried on from the "
    "trend). In a rising market it runs low for a later sale, and lower the later the sale "
    "(on the spring 2015 test sales, by the signed errors of test.signed_error_by_month).",
    "Houses with unusual values (rare_value warnings) are estimated from few examples.",
]


def estimate_from_raw(raw: float, house: dict) -> float:
    """The estimate in dollars (float64, unrounded) of one raw prediction."""
    return math.exp(raw) * float(house["sqft_living"])


def fit_model(X: np.ndarray, y: np.ndarray, params: dict, max_iter: int):
    model = HistGradientBoostingRegressor(max_iter=max_iter, **FIXED_PARAMS, **params)
    with threadpool_limits(limits=1):
        model.fit(X, y)
    return model


def raw_predict(model, X: np.ndarray) -> np.ndarray:
    with threadpool_limits(limits=1):
        return model.predict(X)


def matrix(sales: list[data.Sale]) -> np.ndarray:
    return np.array([features.feature_row(s.house) for s in sales], dtype=np.float64)


def target(sales: list[data.Sale]) -> np.ndarray:
    return np.array([math.log(s.price / s.house["sqft_living"]) for s in sales])


def estimates_usd(raws, sales: list[data.Sale]) -> list[int]:
    return [metrics.round_dollars(estimate_from_raw(float(r), s.house))
            for r, s in zip(raws, sales)]


def split(sales: list[data.Sale]):
    """(train, test, excluded) where excluded maps rule -> counts per period."""
    train, test = [], []
    excluded: dict[str, dict[str, int]] = {}
    for s in sales:
        period = "training" if s.date <= PRICES_AS_OF else "test"
        broken = rules.broken_rules(s.house)
        if broken:
            for rule in broken:
                c = excluded.setdefault(rule, {"training": 0, "test": 0})
                c[period] += 1
            continue
        (train if period == "training" else test).append(s)
    return train, test, excluded


def validation_windows(origins=ORIGINS, months=VALIDATION_MONTHS,
                       as_of_month: str | None = None) -> list[tuple[str, str, str]]:
    """(origin, first, last validation month) of each rolling-origin window; a window whose
    validation months pass the month of PRICES_AS_OF is refused (the held-out months are
    never used for a choice)."""
    last = as_of_month or drift.month_of(PRICES_AS_OF)
    windows = []
    for origin in origins:
        first, end = drift.add_months(origin, 1), drift.add_months(origin, months)
        if end > last:
            raise ValueError(f"validation window {first}..{end} passes {last}")
        windows.append((origin, first, end))
    return windows


def splits_per_path(model) -> np.ndarray:
    """For n = 1..number of trees, the mean number of splits on a training sale's path over the
    first n trees (each tree's leaves weighted by their training counts)."""
    per_tree = []
    for (predictor,) in model._predictors:
        nodes = predictor.nodes
        depth = np.zeros(len(nodes), dtype=np.int64)
        for i in range(len(nodes)):
            if not nodes["is_leaf"][i]:
                depth[nodes["left"][i]] = depth[nodes["right"][i]] = depth[i] + 1
        leaf = nodes["is_leaf"].astype(bool)
        counts = nodes["count"][leaf].astype(np.float64)
        per_tree.append(float(np.dot(counts, depth[leaf]) / counts.sum()))
    return np.cumsum(per_tree) / np.arange(1, len(per_tree) + 1)


def fit_index(sales: list[data.Sale]) -> list[dict]:
    """The monthly price index of these sales (drift.py): the median out-of-fold residual
    of a model that does not see the date, folds split by house."""
    X, y = matrix(sales), target(sales)

    def fit_predict(X_fit, y_fit, X_held):
        return raw_predict(fit_model(X_fit, y_fit, INDEX_PARAMS, INDEX_TREES), X_held)

    oof = drift.out_of_fold(X, y, [s.id for s in sales], fit_predict)
    return drift.monthly_index(y - oof, [s.date for s in sales])


def detrended_target(sales: list[data.Sale], index: list[dict]) -> np.ndarray:
    """The target with the level of each sale's month removed."""
    return target(sales) - drift.levels_of(index, [s.date for s in sales])


def select(train: list[data.Sale], log=print):
    """Choose the settings by rolling-origin validation inside the training months."""
    windows = []
    for origin, first, end in validation_windows():
        fit_part = [s for s in train if drift.month_of(s.date) <= origin]
        val_part = [s for s in train if first <= drift.month_of(s.date) <= end]
        index = fit_index(fit_part)
        windows.append({
            "origin": origin, "first": first, "end": end, "fit": fit_part, "val": val_part, "index": index,
            "origin_level": drift.level_at(index, origin)[0],
            "sale_levels": np.array([drift.level_at(index, drift.month_of(s.date))[0]
                                     for s in val_part]),
            "X_val": matrix(val_part), "prices": [s.price for s in val_part],
        })
    index_all = fit_index(train)
    X_all, y_all = matrix(train), detrended_target(train, index_all)
    results = []
    staged_by_params = []
    for params in GRID:
        staged_windows = []
        for w in windows:
            model = fit_model(matrix(w["fit"]), detrended_target(w["fit"], w["index"]),
                              params, MAX_ITER)
            with threadpool_limits(limits=1):
                staged_windows.append(list(model.staged_predict(w["X_val"])))
        staged_by_params.append(staged_windows)
        # The first n trees of a fit of MAX_ITER trees are the fit of n trees (no early stopping).
        splits = splits_per_path(fit_model(X_all, y_all, params, MAX_ITER))
        for n_iter in range(ITER_STEP, MAX_ITER + 1, ITER_STEP):
            mapes = [metrics.card_figures(
                estimates_usd(staged[n_iter - 1] + w["origin_level"], w["val"]),
                w["prices"])["mape_pct"] for w, staged in zip(windows, staged_windows)]
            results.append(({**params, "max_iter": n_iter}, math.fsum(mapes) / len(mapes),
                            float(splits[n_iter - 1])))
        mine = [r for r in results if r[0]["min_samples_leaf"] == params["min_samples_leaf"]]
        log(f"  {params}: splits per path {splits[-1]:.3f} at {MAX_ITER} trees; best mean "
            f"mape {min(r[1] for r in mine):.3f}; within the budget "
            f"{min((r[1] for r in mine if r[2] <= MAX_SPLITS_PER_PATH), default=math.nan):.3f}")
    affordable = [r for r in results if r[2] <= MAX_SPLITS_PER_PATH]
    if not affordable:
        raise SystemExit(f"no setting within {MAX_SPLITS_PER_PATH} splits per path")
    chosen, mean_mape, chosen_splits = min(affordable, key=lambda r: r[1])  # the first of equals
    best_over = min((r for r in results if r[2] > MAX_SPLITS_PER_PATH), key=lambda r: r[1],
                    default=None)
    staged_windows = staged_by_params[GRID.index(
        {k: v for k, v in chosen.items() if k != "max_iter"})]
    pooled_est, pooled_prices, per_window = [], [], []
    for w, staged in zip(windows, staged_windows):
        raw = staged[chosen["max_iter"] - 1]
        est = estimates_usd(raw + w["origin_level"], w["val"])
        est_sale = estimates_usd(raw + w["sale_levels"], w["val"])
        pooled_est += est
        pooled_prices += w["prices"]
        per_window.append({
            "fit_period": f"{min(s.date for s in w['fit'])[:7]} to {w['origin']}",
            "fit_sales": len(w["fit"]),
            "validation_period": f"{w['first']} to {w['end']}",
            "validation_sales": len(w["val"]),
            "mape_pct_as_of_origin": round(metrics.card_figures(est, w["prices"])["mape_pct"], 2),
            "mape_pct_as_of_sale_month": round(
                metrics.card_figures(est_sale, w["prices"])["mape_pct"], 2),
            "index_trend_pct_per_month": round(
                (math.exp(drift.trend_per_month(w["index"])) - 1) * 100, 2),
        })
    log(f"  chosen {chosen}: mean validation mape {mean_mape:.3f}")
    low, high = metrics.range_factors(pooled_est, pooled_prices, RANGE_COVERAGE)
    summary = {
        "method": (
            f"rolling origin inside the training months: for each origin "
            f"({', '.join(ORIGINS)}), the price index and the model are fitted on the "
            f"training sales up to the end of that month and measured on the sales of the "
            f"next {VALIDATION_MONTHS} months, at the level of the origin month (as the "
            f"service answers a sale after prices_as_of); grid {len(GRID)} settings x number "
            f"of trees {ITER_STEP}..{MAX_ITER} step {ITER_STEP}; among those within the "
            f"explanation budget (explanation_budget), the lowest mean mape_pct over the "
            f"windows wins. The range factors are the {(1 - RANGE_COVERAGE) / 2:.2f} and "
            f"{(1 + RANGE_COVERAGE) / 2:.2f} quantiles of price / estimate over the "
            f"validation sales of the windows (3 decimals, outward). Then the index and the "
            f"chosen settings are refitted on the whole training period. The held-out "
            f"months after prices_as_of chose nothing."
        ),
        "windows": per_window,
        "validation_mape_pct": round(mean_mape, 2),
        "explanation_budget": {
            "splits_per_path_max": MAX_SPLITS_PER_PATH,
            "splits_per_path_chosen": round(chosen_splits, 3),
            "measure": (
                "the mean number of splits on the path of a training sale's leaf (each tree's "
                "leaves weighted by their training counts, averaged over the trees) of the "
                "candidate fitted to the whole training period; only candidates at or under "
                "the model before the drift (kc-hgb-2015-02) were considered"),
            "best_over_budget": [] if best_over is None else [{
                **best_over[0], "validation_mape_pct": round(best_over[1], 2),
                "splits_per_path": round(best_over[2], 3)}],
        },
        "validation_coverage": round(
            metrics.coverage(pooled_est, pooled_prices, low, high), 4),
        "grid": GRID,
        "price_index_model": {**INDEX_PARAMS, "max_iter": INDEX_TREES, "folds": drift.FOLDS,
                              "folds_split_by": "house id"},
        "not_seen_by_validation": (
            "The autumn months of the validation windows were flat (the index moved by "
            "less than 1% a month), so validation barely tells trend methods apart: the "
            "rule that carries the last three months' trend past the data was not chosen "
            "on any measurement, and its effect is seen only on the held-out months."
        ),
    }
    return chosen, (low, high), summary


def bootstrap_95(estimates: list[int], prices: list[float], low: float, high: float) -> dict:
    """95% ranges (2.5th and 97.5th percentiles) of mape_pct and range coverage over
    BOOTSTRAP_RESAMPLES resamples of the sales (with replacement, numpy seed 0)."""
    est = np.asarray(estimates, dtype=np.float64)
    p = np.asarray(prices, dtype=np.float64)
    abs_err = np.abs((est - p) / p * 100.0)
    inside = np.array([lo <= pr <= hi for (lo, hi), pr in zip(
        (metrics.range_bounds(e, low, high) for e in estimates), prices)], dtype=np.float64)
    rng = np.random.default_rng(0)
    idx = rng.integers(0, len(p), size=(BOOTSTRAP_RESAMPLES, len(p)))
    mape = abs_err[idx].mean(axis=1)
    cov = inside[idx].mean(axis=1)
    return {
        "resamples": BOOTSTRAP_RESAMPLES,
        "mape_pct": [round(float(np.percentile(mape, 2.5)), 2),
                     round(float(np.percentile(mape, 97.5)), 2)],
        "coverage": [round(float(np.percentile(cov, 2.5)), 4),
                     round(float(np.percentile(cov, 97.5)), 4)],
    }


def model_area(train: list[data.Sale]) -> dict:
    lats = [s.house["lat"] for s in train]
    longs = [s.house["long"] for s in train]
    down = lambda v: math.floor((v - AREA_MARGIN_DEG) * 100) / 100  # noqa: E731
    up = lambda v: math.ceil((v + AREA_MARGIN_DEG) * 100) / 100  # noqa: E731
    return {
        "lat_min": down(min(lats)), "lat_max": up(max(lats)),
        "long_min": down(min(longs)), "long_max": up(max(longs)),
        "margin_deg": AREA_MARGIN_DEG,
    }


def rare_value_thresholds(train: list[data.Sale]) -> list[dict]:
    groups = []
    for g in RARE_GROUPS:
        groups.append({
            "name": g["name"],
            "fields": list(g["fields"]),
            "quantile": g["quantile"],
            "max": {f: metrics.nearest_rank([float(s.house[f]) for s in train], g["quantile"])
                    for f in g["fields"]},
        })
    return groups


def drift_caveat(by_month: list[dict], by_sale_month: list[dict]) -> str:
    """The caveat, in plain words, that estimates of later sales run low in a rising market."""
    def months(rows: list[dict]) -> str:
        return ", ".join(f"{m['month']} {m['median_error_pct']:+.1f}%" for m in rows)
    return (
        "Estimates are prices as of prices_as_of unless as_of names a later month. Prices "
        "rose after that date, so the estimates of later sales ran low, and more so the "
        "later the sale: the median signed error of the test sales by month was "
        f"{months(by_month)}; with as_of set to the month of the sale (the last three "
        f"months' trend carried on) it was {months(by_sale_month)}. A level past the data "
        "is a guess from the trend, not a measurement."
    )


def build(sales: list[data.Sale], csv_sha256: str, log=print):
    """The model file (a dict), the raw predictions for every sale and the fitted model."""
    train, test, excluded = split(sales)
    if not train or not test:
        raise SystemExit("need sales on both sides of " + PRICES_AS_OF)
    log(f"training sales {len(train)}, test sales {len(test)}, "
        f"excluded {sum(1 for s in sales if rules.broken_rules(s.house))}")
    chosen, (low, high), selection = select(train, log)
    index = fit_index(train)
    as_of_month = drift.month_of(PRICES_AS_OF)
    level = drift.level_at(index, as_of_month)[0]
    params = {k: v for k, v in chosen.items() if k != "max_iter"}
    model = fit_model(matrix(train), detrended_target(train, index), params,
                      chosen["max_iter"])
    baseline, trees = export_trees(model)
    shipped_splits = round(float(splits_per_path(model)[-1]), 3)
    selection["explanation_budget"]["splits_per_path_shipped"] = shipped_splits
    log(f"  shipped model: splits per path {shipped_splits}")

    X_all = matrix(sales)
    # The exported trees must give exactly sklearn's raw predictions.
    if not np.array_equal(walk_raw(baseline, trees, X_all), raw_predict(model, X_all)):
        raise SystemExit("exported trees disagree with sklearn's predictions")
    # As the service answers: the level of the month prices are as of added to the baseline.
    raw_all = walk_raw(baseline + level, trees, X_all)
    raw_by_row = {s.row: float(r) for s, r in zip(sales, raw_all)}

    test_est = [metrics.round_dollars(estimate_from_raw(raw_by_row[s.row], s.house)) for s in test]
    test_prices = [s.price for s in test]
    test_dates = [s.date for s in test]
    figures = metrics.rounded_card_figures(test_est, test_prices)
    test_cov = round(metrics.coverage(test_est, test_prices, low, high), 4)
    by_month = metrics.signed_error_by_month(test_est, test_prices, test_dates)
    # The same test sales with as_of set to each sale's own month (level carried on).
    sale_month_raw: dict[int, float] = {}
    for month in sorted({drift.month_of(d) for d in test_dates}):
        in_month = [s for s in test if drift.month_of(s.date) == month]
        month_level = drift.level_at(index, month)[0]
        raws = walk_raw(baseline + month_level, trees, matrix(in_month))
        sale_month_raw.update({s.row: float(r) for s, r in zip(in_month, raws)})
    sale_month_est = [metrics.round_dollars(estimate_from_raw(sale_month_raw[s.row], s.house))
                      for s in test]
    as_of_sale_month = {
        "description": (
            "the same test sales estimated with as_of set to the month of each sale "
            "(levels past the data carried on by the trend rule of price_index)"
        ),
        **metrics.rounded_card_figures(sale_month_est, test_prices),
        "measured_coverage": round(metrics.coverage(sale_month_est, test_prices, low, high), 4),
        "bootstrap_95": bootstrap_95(sale_month_est, test_prices, low, high),
        "signed_error_by_month": metrics.signed_error_by_month(
            sale_month_est, test_prices, test_dates),
    }

    n_excluded = {"training": 0, "test": 0}
    for s in sales:
        if rules.broken_rules(s.house):
            n_excluded["training" if s.date <= PRICES_AS_OF else "test"] += 1
    feature_specs = features.feature_specs()
    range_ = {"coverage": RANGE_COVERAGE, "low_factor": low, "high_factor": high,
              "measured_test_coverage": test_cov}
    hyper = {**FIXED_PARAMS, **chosen}
    card = {
        "model_version": MODEL_VERSION,
        "prices_as_of": PRICES_AS_OF,
        "model_details": (
            "Gradient-boosted regression trees (scikit-learn "
            f"{sklearn.__version__} HistGradientBoostingRegressor, {len(trees)} trees, "
            f"loss {FIXED_PARAMS['loss']}) predicting log(price / sqft_living); "
            "estimate = exp(prediction + level) * sqft_living, in US dollars, rounded to "
            "whole dollars, where level is the price index of the month the prices are as "
            "of (prices_as_of, or the as_of month of the request); the trees learned the "
            "target with the level of each sale's month removed."
        ),
        "intended_use": INTENDED_USE,
        "not_for": NOT_FOR,
        "test": {
            "description": (
                "Sales after prices_as_of, never seen in training or in choosing settings; "
                "figures from the estimates rounded to whole dollars."
            ),
            "sales": len(test),
            "first_sales": f"{min(s.date for s in test)} to {max(s.date for s in test)}",
            **figures,
            "measured_coverage": test_cov,
            "bootstrap_95": bootstrap_95(test_est, test_prices, low, high),
            "signed_error_by_month": by_month,
            "as_of_sale_month": as_of_sale_month,
        },
        "price_index": {
            "description": (
                "the market's drift by month of the sale: the median out-of-fold residual "
                "of a model that does not see the date (folds split by house), fitted on the "
                "training sales only; index_pct is the price change against the first month"
            ),
            "months": drift.card_index(index),
            "as_of_month": as_of_month,
            "extrapolation": drift.EXTRAPOLATION_RULE,
            "trend_pct_per_month": round(
                (math.exp(drift.trend_per_month(index)) - 1) * 100, 2),
        },
        "range": dict(range_),
        "metrics": {
            "error_pct": "(estimate_usd - price) / price * 100",
            "median_error_pct": "median of |error_pct| over the test sales",
            "mape_pct": "mean of |error_pct| over the test sales",
            "within_10pct": "fraction of test sales with |error_pct| <= 10",
            "over_by_10pct_or_more": "fraction of test sales with error_pct >= 10",
            "signed_error_by_month": (
                "per month of the sale date: sales, median and mean of error_pct (signed: "
                "negative when the estimates ran below the prices)"
            ),
            "measured_test_coverage": (
                "fraction of test sales with round(estimate_usd * low_factor) <= price "
                "<= round(estimate_usd * high_factor)"
            ),
            "bootstrap_95": (
                "2.5th and 97.5th percentiles of mape_pct and of the coverage over "
                f"{BOOTSTRAP_RESAMPLES} resamples of the test sales with replacement"
            ),
            "rounding": "estimate_usd = round half up of the float estimate; "
                        "percentages 2 decimals, fractions 4 decimals",
        },
        "training": {
            "period": f"{min(s.date for s in train)} to {PRICES_AS_OF}",
            "sales": len(train),
            "excluded": {
                "description": (
                    "sales whose house the service would refuse (422) are left out of "
                    "training and of the test"
                ),
                "training_period": n_excluded["training"],
                "test_period": n_excluded["test"],
                "by_rule": {rule: c for rule, c in sorted(excluded.items())},
            },
            "hyperparameters": hyper,
            "selection": selection,
        },
        "features": [
            {"name": f["name"], "description": f.get("description", f["name"])}
            for f in feature_specs
        ],
        "data": {
            "source": "House Sales in King County, USA (King County public records, "
                      "Kaggle harlfoxem/housesalesprediction, CC0)",
            "file": "kc_house_data.csv",
            "sha256": csv_sha256,
            "rows": len(sales),
        },
        "caveats": [
            "Prices move: the test sales (spring 2015) came after the training period.",
            drift_caveat(by_month, as_of_sale_month["signed_error_by_month"]),
            "What validation could not see: the autumn months of the validation windows "
            "were flat, so the rule that carries the trend past the data was not chosen on "
            "a measurement; the held-out spring months are its only check.",
            "The contract's example card figures (mape_pct 12.8, range factors 0.884 and "
            "1.279) describe the reference model the contract was written from; this card "
            "reports what this model measured.",
            "Some houses sold twice; a house sold in both periods was seen in training.",
        ],
    }
    doc = {
        "format_version": FORMAT_VERSION,
        "model_version": MODEL_VERSION,
        "prices_as_of": PRICES_AS_OF,
        "features": feature_specs,
        "target_transform": TARGET_TRANSFORM,
        "baseline": baseline,
        "trees": trees,
        "comparable_sales": comparables.comparables_table(train),
        "range": range_,
        "price_index": {
            "months": index,
            "as_of_month": as_of_month,
            "extrapolation": {"rule": drift.EXTRAPOLATION_RULE,
                              "trend_months": drift.TREND_MONTHS,
                              "max_months_past_data": drift.MAX_MONTHS_PAST_DATA},
        },
        "model_area": model_area(train),
        "rare_value_thresholds": rare_value_thresholds(train),
        "high_value_usd": HIGH_VALUE_USD,
        "card": card,
        "trained_with": {
            "python": f"{sys.version_info.major}.{sys.version_info.minor}",
            "scikit-learn": sklearn.__version__,
            "numpy": np.__version__,
            "scipy": scipy.__version__,
        },
    }
    return doc, raw_by_row, model


def dumps(doc: dict) -> str:
    """Deterministic JSON: sorted keys, compact, floats as Python's repr
    (shortest round-trip, which JavaScript's JSON.parse reads to the same double)."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False,
                      ensure_ascii=True) + "\n"


def write_predictions(path: str, sales: list[data.Sale], raw_by_row: dict) -> None:
    """One line per CSV data row: row,id,date,period,excluded,raw,estimate (floats as repr)."""
    lines = ["row,id,date,period,excluded,raw,estimate"]
    for s in sales:
        raw = raw_by_row[s.row]
        period = "training" if s.date <= PRICES_AS_OF else "test"
        excluded = 1 if rules.broken_rules(s.house) else 0
        lines.append(f"{s.row},{s.id},{s.date},{period},{excluded},{raw!r},"
                     f"{estimate_from_raw(raw, s.house)!r}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_shap_values(path: str, model, sales: list[data.Sale], level: float) -> None:
    """shap's TreeExplainer (path-dependent, the reference TreeSHAP) on the fitted model for
    every CSV row: a first line ``expected_value,<float>``, a header ``row,<feature names>``,
    then one line per row (floats as repr). Only for the parity test: shap is imported here."""
    import shap  # noqa: PLC0415 (the training itself does not need shap)

    explainer = shap.TreeExplainer(model, feature_perturbation="tree_path_dependent")
    with threadpool_limits(limits=1):
        values = explainer.shap_values(matrix(sales), check_additivity=False)
    # The level of the month prices are as of is part of the expected value.
    expected = float(np.asarray(explainer.expected_value).reshape(-1)[0]) + level
    lines = [f"expected_value,{expected!r}", "row," + ",".join(features.FEATURE_NAMES)]
    for s, row in zip(sales, values):
        lines.append(f"{s.row}," + ",".join(repr(float(v)) for v in row))
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.train", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", required=True, help="path of kc_house_data.csv")
    ap.add_argument("--out", required=True, help="model file to write")
    ap.add_argument("--predictions-out",
                    help="also write sklearn's predictions for every CSV row (CSV)")
    ap.add_argument("--shap-out",
                    help="also write shap's TreeExplainer values for every CSV row (CSV)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr))
    started = time.monotonic()
    sales, sha = data.load(args.csv)
    doc, raw_by_row, model = build(sales, sha, log)
    text = dumps(doc)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    if args.predictions_out:
        write_predictions(args.predictions_out, sales, raw_by_row)
    if args.shap_out:
        shap_started = time.monotonic()
        index = doc["price_index"]
        write_shap_values(args.shap_out, model, sales,
                          drift.level_at(index["months"], index["as_of_month"])[0])
        log(f"wrote {args.shap_out} in {time.monotonic() - shap_started:.1f}s")
    card = doc["card"]
    log(f"wrote {out} ({len(text.encode())} bytes) in {time.monotonic() - started:.1f}s")
    log("test: " + json.dumps({k: v for k, v in card["test"].items() if k != "description"}))
    log("range: " + json.dumps(card["range"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
