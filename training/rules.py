"""The house-price service's validation rules, as constants.

A sale whose house the service would refuse (422) is left out of training and
of testing. These are the decided rules of the service (the model file decision); keep them in
step with the service's request schema. Latitude/longitude must lie inside the
model area, which is derived from the training sales themselves and so always
holds for them: it is not checked here.
"""

from __future__ import annotations

BEDROOMS_MIN, BEDROOMS_MAX = 0, 11  # integer
BATHROOMS_MIN, BATHROOMS_MAX, BATHROOMS_STEP = 0.0, 10.0, 0.25
FLOORS_MIN, FLOORS_MAX, FLOORS_STEP = 1.0, 4.0, 0.5
SQFT_LIVING_MIN, SQFT_LIVING_MAX = 100.0, 14000.0
SQFT_BASEMENT_MIN = 0.0  # and strictly smaller than sqft_living
SQFT_LOT_MIN, SQFT_LOT_MAX = 100.0, 5_000_000.0
VIEW_MIN, VIEW_MAX = 0, 4
CONDITION_MIN, CONDITION_MAX = 1, 5
GRADE_MIN, GRADE_MAX = 1, 13
YR_BUILT_MIN, YR_BUILT_MAX = 1900, 2015
YR_RENOVATED_NEVER = 0  # otherwise yr_built..YR_RENOVATED_MAX
YR_RENOVATED_MAX = 2015
SQFT_LIVING15_MIN, SQFT_LIVING15_MAX = 100.0, 14000.0
SQFT_LOT15_MIN, SQFT_LOT15_MAX = 100.0, 5_000_000.0

# Rule names as they appear in the model card, in the order they are checked.
RULES: tuple[str, ...] = (
    "bedrooms: integer 0 to 11",
    "bathrooms: 0 to 10, multiple of 0.25",
    "floors: 1 to 4, multiple of 0.5",
    "sqft_living: 100 to 14000",
    "sqft_basement: at least 0 and smaller than sqft_living",
    "sqft_lot: 100 to 5000000",
    "view: integer 0 to 4",
    "condition: integer 1 to 5",
    "grade: integer 1 to 13",
    "yr_built: integer 1900 to 2015",
    "yr_renovated: 0 or yr_built to 2015",
    "sqft_living15: 100 to 14000",
    "sqft_lot15: 100 to 5000000",
)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _multiple_of(v: float, step: float) -> bool:
    q = v / step
    return q == int(q)


def broken_rules(house: dict) -> list[str]:
    """The names (from RULES) of every rule that ``house`` breaks; empty if valid."""
    h = house
    checks = (
        _is_int(h["bedrooms"]) and BEDROOMS_MIN <= h["bedrooms"] <= BEDROOMS_MAX,
        BATHROOMS_MIN <= h["bathrooms"] <= BATHROOMS_MAX
        and _multiple_of(h["bathrooms"], BATHROOMS_STEP),
        FLOORS_MIN <= h["floors"] <= FLOORS_MAX and _multiple_of(h["floors"], FLOORS_STEP),
        SQFT_LIVING_MIN <= h["sqft_living"] <= SQFT_LIVING_MAX,
        SQFT_BASEMENT_MIN <= h["sqft_basement"] < h["sqft_living"],
        SQFT_LOT_MIN <= h["sqft_lot"] <= SQFT_LOT_MAX,
        _is_int(h["view"]) and VIEW_MIN <= h["view"] <= VIEW_MAX,
        _is_int(h["condition"]) and CONDITION_MIN <= h["condition"] <= CONDITION_MAX,
        _is_int(h["grade"]) and GRADE_MIN <= h["grade"] <= GRADE_MAX,
        _is_int(h["yr_built"]) and YR_BUILT_MIN <= h["yr_built"] <= YR_BUILT_MAX,
        _is_int(h["yr_renovated"])
        and (
            h["yr_renovated"] == YR_RENOVATED_NEVER
            or h["yr_built"] <= h["yr_renovated"] <= YR_RENOVATED_MAX
        ),
        SQFT_LIVING15_MIN <= h["sqft_living15"] <= SQFT_LIVING15_MAX,
        SQFT_LOT15_MIN <= h["sqft_lot15"] <= SQFT_LOT15_MAX,
    )
    return [name for name, ok in zip(RULES, checks) if not ok]
