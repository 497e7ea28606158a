"""The model card's figures and the range factors, defined once.

Every figure is computed from estimates rounded to whole dollars, as the
service answers them (``round_dollars``: round half up, like JavaScript's
``Math.round``):

* error_pct = (estimate_usd - price) / price * 100
* median_error_pct = median of |error_pct| (mean of the two middle values
  when the count is even)
* mape_pct = mean of |error_pct|
* within_10pct = share of sales with |error_pct| <= 10
* over_by_10pct_or_more = share of sales with error_pct >= 10 (the estimate is
  10% or more above the price; computed on error_pct rather than as
  estimate >= price * 1.10, where 1.10 is not exact in binary)
* range coverage = share of sales with low_usd <= price <= high_usd, where
  low_usd = round_dollars(estimate_usd * low_factor) and
  high_usd = round_dollars(estimate_usd * high_factor)
* signed error by month = per month of the sale date, the median and the mean of
  error_pct (signed: negative when the estimates ran below the prices)

Percentages are rounded to 2 decimals, fractions to 4.
"""

from __future__ import annotations

import math
from typing import Sequence


def round_dollars(x: float) -> int:
    """Round half up to a whole number (JavaScript's Math.round for x >= 0)."""
    f = math.floor(x)
    return int(f) + 1 if x - f >= 0.5 else int(f)


def error_pct(estimate_usd: float, price: float) -> float:
    return (estimate_usd - price) / price * 100.0


def median(values: Sequence[float]) -> float:
    s = sorted(values)
    n = len(s)
    if n == 0:
        raise ValueError("median of no values")
    mid = n // 2
    return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2.0


def card_figures(estimates_usd: Sequence[float], prices: Sequence[float]) -> dict:
    """The test figures of the card, unrounded. estimates_usd are whole dollars."""
    if len(estimates_usd) != len(prices) or not prices:
        raise ValueError("need as many estimates as prices, at least one")
    abs_err = [abs(error_pct(e, p)) for e, p in zip(estimates_usd, prices)]
    n = len(abs_err)
    return {
        "median_error_pct": median(abs_err),
        "mape_pct": math.fsum(abs_err) / n,
        "within_10pct": sum(1 for a in abs_err if a <= 10.0) / n,
        "over_by_10pct_or_more": sum(
            1 for e, p in zip(estimates_usd, prices) if error_pct(e, p) >= 10.0
        ) / n,
    }


def rounded_card_figures(estimates_usd: Sequence[float], prices: Sequence[float]) -> dict:
    f = card_figures(estimates_usd, prices)
    return {
        "median_error_pct": round(f["median_error_pct"], 2),
        "mape_pct": round(f["mape_pct"], 2),
        "within_10pct": round(f["within_10pct"], 4),
        "over_by_10pct_or_more": round(f["over_by_10pct_or_more"], 4),
    }


def range_bounds(estimate_usd: float, low_factor: float, high_factor: float) -> tuple[int, int]:
    return round_dollars(estimate_usd * low_factor), round_dollars(estimate_usd * high_factor)


def coverage(estimates_usd: Sequence[float], prices: Sequence[float],
             low_factor: float, high_factor: float) -> float:
    inside = 0
    for e, p in zip(estimates_usd, prices):
        lo, hi = range_bounds(e, low_factor, high_factor)
        if lo <= p <= hi:
            inside += 1
    return inside / len(prices)


def quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default 'linear' method)."""
    s = sorted(values)
    if not s:
        raise ValueError("quantile of no values")
    pos = (len(s) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def range_factors(estimates_usd: Sequence[float], prices: Sequence[float],
                  coverage_target: float = 0.8) -> tuple[float, float]:
    """low/high factors: the (1-c)/2 and (1+c)/2 quantiles of price / estimate,
    rounded to 3 decimals (low down, high up, so the range never shrinks)."""
    ratios = [p / e for e, p in zip(estimates_usd, prices)]
    tail = (1.0 - coverage_target) / 2.0
    lo = quantile(ratios, tail)
    hi = quantile(ratios, 1.0 - tail)
    return math.floor(lo * 1000) / 1000, math.ceil(hi * 1000) / 1000


def nearest_rank(values: Sequence[float], q: float) -> float:
    """The value at nearest rank ceil(q * n) of the sorted values (an observed value)."""
    s = sorted(values)
    k = max(1, math.ceil(q * len(s)))
    return s[k - 1]


def signed_error_by_month(estimates_usd: Sequence[float], prices: Sequence[float],
                          dates: Sequence[str]) -> list[dict]:
    """Per calendar month of the sale date (``YYYY-MM``), in month order: the number of
    sales, the median and the mean of the signed error_pct (negative: the estimates ran
    below the prices), 2 decimals."""
    by_month: dict[str, list[float]] = {}
    for e, p, d in zip(estimates_usd, prices, dates):
        by_month.setdefault(d[:7], []).append(error_pct(e, p))
    return [
        {
            "month": month,
            "sales": len(errors),
            "median_error_pct": round(median(errors), 2),
            "mean_error_pct": round(math.fsum(errors) / len(errors), 2),
        }
        for month, errors in sorted(by_month.items())
    ]
