"""Model inputs: the 16 request fields plus a few derived features.

Every derived feature is one IEEE-754 float64 operation or two on request
fields, written so that TypeScript computes the identical double:

* ``add_scaled``: ``x + c * y`` (c is 1, -1, 0.5 or -0.5 here: the product is
  exact, so only the addition rounds, the same in every IEEE-754 language);
* ``max``: ``max(x, y)``.

The list (names, kinds, operands) is written into the model file, and the
TypeScript evaluator computes the features from that list.
"""

from __future__ import annotations

from .data import REQUEST_FIELDS

# (name, kind, x, y, c, description)
DERIVED: tuple[dict, ...] = (
    {"name": "lat_plus_long", "kind": "add_scaled", "x": "lat", "y": "long", "c": 1.0,
     "description": "lat + long (the location turned by 45 degrees)"},
    {"name": "lat_minus_long", "kind": "add_scaled", "x": "lat", "y": "long", "c": -1.0,
     "description": "lat - long (the location turned by -45 degrees)"},
    {"name": "lat_plus_half_long", "kind": "add_scaled", "x": "lat", "y": "long", "c": 0.5,
     "description": "lat + 0.5 * long"},
    {"name": "lat_minus_half_long", "kind": "add_scaled", "x": "lat", "y": "long", "c": -0.5,
     "description": "lat - 0.5 * long"},
    {"name": "sqft_above", "kind": "add_scaled", "x": "sqft_living", "y": "sqft_basement",
     "c": -1.0, "description": "sqft_living - sqft_basement (living area above ground)"},
    {"name": "yr_last_work", "kind": "max", "x": "yr_built", "y": "yr_renovated",
     "description": "max(yr_built, yr_renovated): year of the last construction work"},
)


def feature_specs() -> list[dict]:
    """The ordered feature list as written into the model file."""
    specs: list[dict] = []
    for name in REQUEST_FIELDS:
        spec = {"name": name, "kind": "input"}
        if name == "waterfront":
            spec["description"] = "waterfront: 1 for true, 0 for false"
        specs.append(spec)
    specs.extend(dict(d) for d in DERIVED)
    return specs


FEATURE_NAMES: tuple[str, ...] = tuple(s["name"] for s in feature_specs())


def input_value(house: dict, field: str) -> float:
    v = house[field]
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    return float(v)


def feature_row(house: dict) -> list[float]:
    """The model's input vector for one house (plain Python float64 arithmetic)."""
    row = [input_value(house, f) for f in REQUEST_FIELDS]
    for d in DERIVED:
        x = input_value(house, d["x"])
        y = input_value(house, d["y"])
        if d["kind"] == "add_scaled":
            row.append(x + d["c"] * y)
        elif d["kind"] == "max":
            row.append(x if x >= y else y)
        else:  # pragma: no cover
            raise ValueError(d["kind"])
    return row
