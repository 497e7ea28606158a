"""Train the house-price model and write the model file.

    training/.venv/bin/python -m training.train \
        --csv ../shared/data/kc_house_data.csv --out models/kc-hgb-2015-02.json

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

from . import comparables, data, features, metrics, rules
from .export import export_trees, walk_raw

FORMAT_VERSION = 2  # 2: trees carry each node's training sample count; comparable_sales
MODEL_VERSION = "kc-hgb-2015-02"
PRICES_AS_OF = "2015-02-28"
VALIDATION_DAYS = 42  # the last 6 weeks of the training period choose the settings
RANGE_COVERAGE = 0.8
AREA_MARGIN_DEG = 0.01
HIGH_VALUE_USD = 1_000_000
RANDOM_STATE = 0
MAX_ITER = 1000
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
GRID = [
    {"max_leaf_nodes": leaves, "min_samples_leaf": msl}
    for leaves in (15, 31)
    for msl in (20, 40)
]

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
    "Not a price for today: the estimate is a price as of prices_as_of. In a rising market "
    "it runs low for a sale after that date, and lower the later the sale (on the spring "
    "2015 test sales, by the signed errors of test.signed_error_by_month).",
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


def select(train: list[data.Sale], log=print):
    """Choose the settings on the last VALIDATION_DAYS of the training period."""
    cut = dt.date.fromisoformat(PRICES_AS_OF) - dt.timedelta(days=VALIDATION_DAYS)
    val_from = cut.isoformat()
    fit_part = [s for s in train if s.date <= val_from]
    val_part = [s for s in train if s.date > val_from]
    X_fit, y_fit, X_val = matrix(fit_part), target(fit_part), matrix(val_part)
    prices = [s.price for s in val_part]
    results = []
    best = None
    for params in GRID:
        model = fit_model(X_fit, y_fit, params, MAX_ITER)
        with threadpool_limits(limits=1):
            staged = list(model.staged_predict(X_val))
        for n_iter in range(ITER_STEP, MAX_ITER + 1, ITER_STEP):
            est = estimates_usd(staged[n_iter - 1], val_part)
            mape = metrics.card_figures(est, prices)["mape_pct"]
            results.append({**params, "max_iter": n_iter, "mape_pct": round(mape, 3)})
            if best is None or mape < best[0]:
                best = (mape, {**params, "max_iter": n_iter}, est)
        log(f"  {params}: best so far {best[1]} mape {best[0]:.3f}")
    mape, chosen, val_est = best
    low, high = metrics.range_factors(val_est, prices, RANGE_COVERAGE)
    summary = {
        "method": (
            f"hold-out on the last {VALIDATION_DAYS} days of the training period: fit on "
            f"sales up to {val_from}, measure on the {len(val_part)} sales after it "
            f"(to {PRICES_AS_OF}); grid {len(GRID)} settings x number of trees "
            f"{ITER_STEP}..{MAX_ITER} step {ITER_STEP}, lowest mape_pct wins; the range "
            f"factors are the {(1 - RANGE_COVERAGE) / 2:.2f} and {(1 + RANGE_COVERAGE) / 2:.2f} "
            f"quantiles of price / estimate on those validation sales (3 decimals, "
            f"outward); then the chosen settings are refitted on the whole training period"
        ),
        "fit_sales": len(fit_part),
        "validation_period": f"{min(s.date for s in val_part)} to {max(s.date for s in val_part)}",
        "validation_sales": len(val_part),
        "validation_mape_pct": round(mape, 2),
        "validation_coverage": round(metrics.coverage(val_est, prices, low, high), 4),
        "grid": GRID,
    }
    return chosen, (low, high), summary


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


def drift_caveat(by_month: list[dict]) -> str:
    """The caveat, in plain words, that estimates of later sales run low in a rising market."""
    months = ", ".join(f"{m['month']} {m['median_error_pct']:+.1f}%" for m in by_month)
    return (
        "Estimates are prices as of prices_as_of. Prices rose after that date, so the "
        "estimates of later sales ran low, and more so the later the sale: the median signed "
        f"error of the test sales by month was {months}. In a rising market, expect an "
        "estimate for a sale after prices_as_of to be below the price."
    )


def build(sales: list[data.Sale], csv_sha256: str, log=print):
    """The model file (a dict), the raw predictions for every sale and the fitted model."""
    train, test, excluded = split(sales)
    if not train or not test:
        raise SystemExit("need sales on both sides of " + PRICES_AS_OF)
    log(f"training sales {len(train)}, test sales {len(test)}, "
        f"excluded {sum(1 for s in sales if rules.broken_rules(s.house))}")
    chosen, (low, high), selection = select(train, log)
    params = {k: v for k, v in chosen.items() if k != "max_iter"}
    model = fit_model(matrix(train), target(train), params, chosen["max_iter"])
    baseline, trees = export_trees(model)

    X_all = matrix(sales)
    raw_all = raw_predict(model, X_all)
    # The exported trees must give exactly sklearn's raw predictions.
    walked = walk_raw(baseline, trees, X_all)
    if not np.array_equal(walked, raw_all):
        raise SystemExit("exported trees disagree with sklearn's predictions")
    raw_by_row = {s.row: float(r) for s, r in zip(sales, raw_all)}

    test_est = [metrics.round_dollars(estimate_from_raw(raw_by_row[s.row], s.house)) for s in test]
    test_prices = [s.price for s in test]
    figures = metrics.rounded_card_figures(test_est, test_prices)
    test_cov = round(metrics.coverage(test_est, test_prices, low, high), 4)
    by_month = metrics.signed_error_by_month(test_est, test_prices, [s.date for s in test])

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
            "estimate = exp(prediction) * sqft_living, in US dollars, rounded to whole dollars."
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
            "signed_error_by_month": by_month,
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
            drift_caveat(by_month),
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


def write_shap_values(path: str, model, sales: list[data.Sale]) -> None:
    """shap's TreeExplainer (path-dependent, the reference TreeSHAP) on the fitted model for
    every CSV row: a first line ``expected_value,<float>``, a header ``row,<feature names>``,
    then one line per row (floats as repr). Only for the parity test: shap is imported here."""
    import shap  # noqa: PLC0415 (the training itself does not need shap)

    explainer = shap.TreeExplainer(model, feature_perturbation="tree_path_dependent")
    with threadpool_limits(limits=1):
        values = explainer.shap_values(matrix(sales), check_additivity=False)
    expected = float(np.asarray(explainer.expected_value).reshape(-1)[0])
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
        write_shap_values(args.shap_out, model, sales)
        log(f"wrote {args.shap_out} in {time.monotonic() - shap_started:.1f}s")
    card = doc["card"]
    log(f"wrote {out} ({len(text.encode())} bytes) in {time.monotonic() - started:.1f}s")
    log("test: " + json.dumps({k: v for k, v in card["test"].items() if k != "description"}))
    log("range: " + json.dumps(card["range"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
