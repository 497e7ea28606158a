"""Reading kc_house_data.csv as text, with the csv module.

The file quotes id, date, floors and zipcode; ids keep their leading zeros
(they stay strings), prices may be written in exponent form (``1.225e+006``)
and are parsed with ``float``; dates look like ``20141013T000000``.
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

# The 16 fields of the House request body of POST /v1/estimates, in the
# service's contract order.
REQUEST_FIELDS: tuple[str, ...] = (
    "bedrooms",
    "bathrooms",
    "floors",
    "sqft_living",
    "sqft_basement",
    "sqft_lot",
    "waterfront",
    "view",
    "condition",
    "grade",
    "yr_built",
    "yr_renovated",
    "lat",
    "long",
    "sqft_living15",
    "sqft_lot15",
)

# Fields that the contract types as integers (the others are JSON numbers).
INTEGER_FIELDS: frozenset[str] = frozenset(
    {"bedrooms", "view", "condition", "grade", "yr_built", "yr_renovated"}
)

EXPECTED_HEADER: tuple[str, ...] = (
    "id", "date", "price", "bedrooms", "bathrooms", "sqft_living", "sqft_lot",
    "floors", "waterfront", "view", "condition", "grade", "sqft_above",
    "sqft_basement", "yr_built", "yr_renovated", "zipcode", "lat", "long",
    "sqft_living15", "sqft_lot15",
)


@dataclass(frozen=True)
class Sale:
    """One row of the CSV: a sale of a house."""

    row: int  # 0-based index of the data row in the file
    id: str  # kept as text: leading zeros matter
    date: str  # ISO date, YYYY-MM-DD
    price: float  # US dollars
    # The 16 request fields as the service would receive them: waterfront is
    # a bool, integer fields are int, the others float.
    house: dict


class CsvFormatError(ValueError):
    pass


def parse_date(text: str) -> str:
    """``20141013T000000`` -> ``2014-10-13``."""
    if len(text) != 15 or text[8:] != "T000000" or not text[:8].isdigit():
        raise CsvFormatError(f"unexpected date {text!r}")
    y, m, d = text[0:4], text[4:6], text[6:8]
    if not ("01" <= m <= "12" and "01" <= d <= "31"):
        raise CsvFormatError(f"unexpected date {text!r}")
    return f"{y}-{m}-{d}"


def parse_number(text: str, field: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CsvFormatError(f"{field}: not a number: {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise CsvFormatError(f"{field}: not a finite number: {text!r}")
    return value


def parse_integer(text: str, field: str) -> int:
    value = parse_number(text, field)
    if value != int(value):
        raise CsvFormatError(f"{field}: not an integer: {text!r}")
    return int(value)


def parse_text(text: str) -> list[Sale]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise CsvFormatError("empty CSV") from None
    if tuple(header) != EXPECTED_HEADER:
        raise CsvFormatError(f"unexpected header {header!r}")
    sales: list[Sale] = []
    for index, cells in enumerate(reader):
        if len(cells) != len(EXPECTED_HEADER):
            raise CsvFormatError(
                f"data row {index + 1}: {len(cells)} cells, expected {len(EXPECTED_HEADER)}"
            )
        raw = dict(zip(EXPECTED_HEADER, cells))
        house: dict = {}
        for field in REQUEST_FIELDS:
            cell = raw[field]
            if field == "waterfront":
                if cell not in ("0", "1"):
                    raise CsvFormatError(f"waterfront: expected 0 or 1, got {cell!r}")
                house[field] = cell == "1"
            elif field in INTEGER_FIELDS:
                house[field] = parse_integer(cell, field)
            else:
                house[field] = parse_number(cell, field)
        ident = raw["id"]
        if not ident:
            raise CsvFormatError(f"data row {index + 1}: empty id")
        sales.append(
            Sale(
                row=index,
                id=ident,
                date=parse_date(raw["date"]),
                price=parse_number(raw["price"], "price"),
                house=house,
            )
        )
    return sales


def read_bytes(path: str | Path) -> bytes:
    return Path(path).read_bytes()


def load(path: str | Path) -> tuple[list[Sale], str]:
    """Parse the CSV at ``path``; returns the sales and the file's SHA-256."""
    data = read_bytes(path)
    return parse_text(data.decode("utf-8")), hashlib.sha256(data).hexdigest()
