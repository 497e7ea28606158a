from training import rules, train
from training.data import Sale

GOOD = {
    "bedrooms": 3, "bathrooms": 2.25, "floors": 1.5, "sqft_living": 2000.0,
    "sqft_basement": 400.0, "sqft_lot": 5000.0, "waterfront": False, "view": 0,
    "condition": 3, "grade": 7, "yr_built": 1960, "yr_renovated": 0, "lat": 47.5,
    "long": -122.2, "sqft_living15": 1800.0, "sqft_lot15": 5000.0,
}


def sale(row, date, **changes):
    return Sale(row=row, id=f"{row:010d}", date=date, price=500000.0, house={**GOOD, **changes})


def test_valid_house_breaks_no_rule():
    assert rules.broken_rules(GOOD) == []


def test_each_rule():
    cases = {
        "bedrooms: integer 0 to 11": [{"bedrooms": 33}, {"bedrooms": 12}, {"bedrooms": -1}],
        "bathrooms: 0 to 10, multiple of 0.25": [{"bathrooms": 0.3}, {"bathrooms": 10.25}],
        "floors: 1 to 4, multiple of 0.5": [{"floors": 1.25}, {"floors": 0.5}, {"floors": 4.5}],
        "sqft_living: 100 to 14000": [{"sqft_living": 14001.0, "sqft_basement": 0.0},
                                      {"sqft_living": 99.0, "sqft_basement": 0.0}],
        "sqft_basement: at least 0 and smaller than sqft_living": [{"sqft_basement": 2000.0},
                                                                   {"sqft_basement": -1.0}],
        "sqft_lot: 100 to 5000000": [{"sqft_lot": 99.0}, {"sqft_lot": 5000001.0}],
        "view: integer 0 to 4": [{"view": 5}],
        "condition: integer 1 to 5": [{"condition": 0}],
        "grade: integer 1 to 13": [{"grade": 14}],
        "yr_built: integer 1900 to 2015": [{"yr_built": 1899}, {"yr_built": 2016}],
        "yr_renovated: 0 or yr_built to 2015": [{"yr_renovated": 1950}, {"yr_renovated": 2016}],
        "sqft_living15: 100 to 14000": [{"sqft_living15": 14001.0}],
        "sqft_lot15: 100 to 5000000": [{"sqft_lot15": 50.0}],
    }
    assert sorted(cases) == sorted(rules.RULES)
    for rule, changes in cases.items():
        for change in changes:
            assert rules.broken_rules({**GOOD, **change}) == [rule], change
    # the boundaries themselves are accepted
    for ok in [{"bedrooms": 0}, {"bedrooms": 11}, {"bathrooms": 0.0}, {"bathrooms": 0.25},
               {"floors": 3.5}, {"floors": 4.0}, {"grade": 13}, {"yr_renovated": 1960},
               {"yr_renovated": 2015}, {"yr_built": 2015, "yr_renovated": 0}]:
        assert rules.broken_rules({**GOOD, **ok}) == [], ok


def test_split_by_date_and_exclusion():
    sales = [
        sale(0, "2015-02-27"), sale(1, "2015-02-28"), sale(2, "2015-03-01"),
        sale(3, "2014-05-02", bedrooms=33), sale(4, "2015-04-01", grade=14),
        sale(5, "2015-05-27"),
    ]
    tr, te, excluded = train.split(sales)
    assert [s.row for s in tr] == [0, 1]  # 2015-02-28 itself is training
    assert [s.row for s in te] == [2, 5]
    assert excluded == {
        "bedrooms: integer 0 to 11": {"training": 1, "test": 0},
        "grade: integer 1 to 13": {"training": 0, "test": 1},
    }


def test_real_exclusions(real_csv):
    from training import data

    sales, _ = data.load(real_csv)
    tr, te, excluded = train.split(sales)
    assert excluded == {"bedrooms: integer 0 to 11": {"training": 1, "test": 0}}
    assert len(tr) + len(te) + 1 == len(sales)
    assert all(s.date <= "2015-02-28" for s in tr) and all(s.date > "2015-02-28" for s in te)
