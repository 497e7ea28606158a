"""The comparable-sales table shipped inside the model file.

The service lists, for a house, the five training sales most like it (see
``docs/houses.md``, "Comparable sales"): among the training sales of similar
size (``sqft_living`` within a factor ``similar_size_ratio`` of the house's, both
ways), the nearest by great-circle distance; when fewer than five are of
similar size, the rest are the sales nearest in size. The service does the
search; this module only writes the table it searches.

The table holds the training sales only (never a test sale), each with its
sale date, price and the 16 request fields exactly as the CSV has them: no id,
nothing that is not in the CSV. It is laid out as columns (one array per
field, the same order in every column), sorted by date and then by the row of
the CSV, so it is the same to the byte for the same CSV. The dates are written
once per run of equal dates (``date_runs``: ``[date, number of sales]`` in
table order), which the sort makes short. Whole numbers are
written as JSON integers (``1180``, not ``1180.0``) to keep the file small.
"""

from __future__ import annotations

import statistics

from . import data
from .data import REQUEST_FIELDS

SIMILAR_SIZE_RATIO = 1.25
COUNT = 5
EARTH_RADIUS_KM = 6371.0088  # mean Earth radius (IUGG), for the haversine distance
DIFFERING_FIELDS = 3  # fields named per comparable sale, those that differ most


def compact(value: float | int | bool) -> float | int:
    """A CSV value as the table writes it: booleans as 0/1, whole floats as ints."""
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def field_scale(values: list[float]) -> float:
    """The population standard deviation (exact, ``statistics.pstdev``), 4 significant digits.

    The service divides a field's difference by it to find the fields that
    differ most; a field with no spread gets 1 so that the division is defined.
    """
    sd = statistics.pstdev(values)
    return float(f"{sd:.4g}") if sd > 0 else 1.0


def comparables_table(train: list[data.Sale]) -> dict:
    """The ``comparable_sales`` object of the model file, from the training sales only."""
    rows = sorted(train, key=lambda s: (s.date, s.row))
    date_runs: list[list] = []
    for s in rows:
        if date_runs and date_runs[-1][0] == s.date:
            date_runs[-1][1] += 1
        else:
            date_runs.append([s.date, 1])
    columns: dict[str, list] = {"price": [compact(s.price) for s in rows]}
    for field in REQUEST_FIELDS:
        columns[field] = [compact(s.house[field]) for s in rows]
    scales = {
        field: field_scale([float(compact(s.house[field])) for s in rows])
        for field in REQUEST_FIELDS if field not in ("lat", "long")
    }
    return {
        "description": (
            "The training sales (sale date, price and the 16 request fields as in the CSV; no id), "
            "sorted by date then CSV row, one array per column; the dates as runs [date, number "
            "of sales]. The service lists the "
            f"{COUNT} nearest by great-circle distance among those whose sqft_living is within "
            f"a factor {SIMILAR_SIZE_RATIO} of the house's (filled with the nearest in size when "
            "fewer are), naming the fields that differ most (difference / scale)."
        ),
        "count": COUNT,
        "similar_size_ratio": SIMILAR_SIZE_RATIO,
        "earth_radius_km": EARTH_RADIUS_KM,
        "differing_fields": DIFFERING_FIELDS,
        "scale": scales,
        "sales": len(rows),
        "date_runs": date_runs,
        "columns": columns,
    }
