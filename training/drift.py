"""The market's drift: a monthly price index, and the level of any month from it.

The index comes from a model that does not see the date: the median, per month of the sale
date, of its out-of-fold residual ``log(price / sqft_living) - prediction``. The folds are
split by house (every sale of one house falls in the same fold), so no sale is scored by a
model that saw the same house. The index is fitted on the training months only.

The model that ships learns the target with the index removed (``raw - level(month of the
sale)``); an estimate adds back the level of the month its prices are as of. Past the last
month of the data, the level carries on the trend of the last three months:

    level(last + k) = level(last) + k * (level(last) - level(last - 3)) / 3,  1 <= k <= 3

(the same float64 operations in TypeScript: ``model/price-level.ts``).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

FOLDS = 5
TREND_MONTHS = 3  # the trend carried on past the data: the last three months'
MAX_MONTHS_PAST_DATA = 3  # the furthest a level may be carried past the data

EXTRAPOLATION_RULE = (
    "level(last + k) = level(last) + k * (level(last) - level(last - 3)) / 3 for "
    "k = 1..3 months past the last month of the data; no level beyond"
)


def month_of(date: str) -> str:
    """``YYYY-MM`` of an ISO date."""
    return date[:7]


def month_number(month: str) -> int:
    """Months since year 0 (to count months between two ``YYYY-MM``)."""
    return int(month[:4]) * 12 + int(month[5:7]) - 1


def month_text(number: int) -> str:
    return f"{number // 12:04d}-{number % 12 + 1:02d}"


def add_months(month: str, k: int) -> str:
    return month_text(month_number(month) + k)


def house_folds(ids: Sequence[str], folds: int = FOLDS) -> np.ndarray:
    """The fold of every sale: the houses (ids) in sorted order, dealt round-robin."""
    fold_of = {house: i % folds for i, house in enumerate(sorted(set(ids)))}
    return np.array([fold_of[house] for house in ids], dtype=np.int64)


def out_of_fold(X: np.ndarray, y: np.ndarray, ids: Sequence[str],
                fit_predict: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
                folds: int = FOLDS) -> np.ndarray:
    """Every sale's prediction by the model fitted on the other folds (split by house)."""
    fold = house_folds(ids, folds)
    pred = np.empty(len(y), dtype=np.float64)
    for k in range(folds):
        held = fold == k
        pred[held] = fit_predict(X[~held], y[~held], X[held])
    return pred


def monthly_index(residuals: Sequence[float], dates: Sequence[str]) -> list[dict]:
    """Per month of the sale date, in order: the median residual (``level``) and the sales.
    Every month between the first and the last must have sales."""
    by_month: dict[str, list[float]] = {}
    for r, d in zip(residuals, dates):
        by_month.setdefault(month_of(d), []).append(float(r))
    months = sorted(by_month)
    first, last = month_number(months[0]), month_number(months[-1])
    if len(months) != last - first + 1:
        raise ValueError("a month without sales inside the index")
    return [{"month": m, "level": float(np.median(by_month[m])), "sales": len(by_month[m])}
            for m in months]


def trend_per_month(index: list[dict]) -> float:
    """The last three months' trend: (level(last) - level(last - 3)) / 3."""
    if len(index) <= TREND_MONTHS:
        raise ValueError("too few months for the trend")
    return (index[-1]["level"] - index[-1 - TREND_MONTHS]["level"]) / TREND_MONTHS


def level_at(index: list[dict], month: str) -> tuple[float, bool]:
    """(level, extrapolated) of a month from the first month of the index to
    MAX_MONTHS_PAST_DATA past its last; ValueError outside."""
    k = month_number(month) - month_number(index[-1]["month"])
    if k <= 0:
        i = len(index) - 1 + k
        if i < 0:
            raise ValueError(f"{month} is before the first month of the index")
        return index[i]["level"], False
    if k > MAX_MONTHS_PAST_DATA:
        raise ValueError(f"{month} is more than {MAX_MONTHS_PAST_DATA} months past the data")
    return index[-1]["level"] + k * trend_per_month(index), True


def levels_of(index: list[dict], dates: Sequence[str]) -> np.ndarray:
    """The level of each sale's own month."""
    return np.array([level_at(index, month_of(d))[0] for d in dates], dtype=np.float64)


def card_index(index: list[dict]) -> list[dict]:
    """The index for the card: the level as a percentage change of the price against the
    first month, ``(exp(level - level(first)) - 1) * 100``."""
    base = index[0]["level"]
    return [{"month": m["month"], "sales": m["sales"],
             "index_pct": round((math.exp(m["level"] - base) - 1) * 100, 2)}
            for m in index]
