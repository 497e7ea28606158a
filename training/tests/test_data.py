import pytest

from training import data

HEADER = ",".join(data.EXPECTED_HEADER)


def row(id_='"0291310100"', date='"20150227T000000"', price="1.225e+006", floors='"1.5"',
        bedrooms="3", waterfront="0", lat="47.5112"):
    return (f'{id_},{date},{price},{bedrooms},2.25,2570,7242,{floors},{waterfront},0,3,7,2170,400,'
            f'1951,1991,"98125",{lat},-122.319,1690,7639')


def test_odd_formats():
    text = HEADER + "\n" + row() + "\n" + row(id_='"7129300520"', date='"20141013T000000"',
                                              price="221900", floors='"1"', waterfront="1") + "\n"
    a, b = data.parse_text(text)
    assert a.id == "0291310100"  # leading zero kept
    assert a.price == 1225000.0  # exponent form
    assert a.date == "2015-02-27"
    assert a.house["floors"] == 1.5  # quoted number
    assert a.house["waterfront"] is False and b.house["waterfront"] is True
    assert b.price == 221900.0 and b.id == "7129300520" and b.date == "2014-10-13"
    assert a.house["lat"] == 47.5112
    assert isinstance(a.house["bedrooms"], int) and isinstance(a.house["bathrooms"], float)
    assert sorted(a.house) == sorted(data.REQUEST_FIELDS)
    assert a.row == 0 and b.row == 1


def test_crlf_and_no_trailing_newline():
    (s,) = data.parse_text(HEADER + "\r\n" + row())
    assert s.price == 1225000.0


@pytest.mark.parametrize("bad", [
    row(price="nan"), row(price=""), row(date='"2015-02-27"'), row(id_='""'),
    row(bedrooms="3.5"), row(waterfront="2"), row() + ",extra",
])
def test_refuses_corrupt_rows(bad):
    with pytest.raises(data.CsvFormatError):
        data.parse_text(HEADER + "\n" + bad + "\n")


def test_refuses_other_header():
    with pytest.raises(data.CsvFormatError):
        data.parse_text("id,date,price\n1,2,3\n")


def test_real_csv(real_csv):
    sales, sha = data.load(real_csv)
    assert len(sales) == 21613
    assert sha == "d0875baa0251b21d4bdc9d2ae940a4fe0bb6009824f23dd0e2a5b2bf04557b7e"
    assert sales[0].id == "7129300520" and sales[0].price == 221900.0
    assert sum(s.price for s in sales) == 11672925008
    assert any(s.id.startswith("0") for s in sales)
    assert min(s.date for s in sales) == "2014-05-02" and max(s.date for s in sales) == "2015-05-27"
