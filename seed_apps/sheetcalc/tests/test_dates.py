import pytest

from sheetcalc.dates import civil_from_days, date_to_serial, days_from_civil, serial_to_date, time_of_day, weekday
from sheetcalc.errors import ErrorSignal
from sheetcalc.values import NUM


@pytest.mark.parametrize("date, days", [((1970, 1, 1), 0), ((2000, 3, 1), 11017), ((1969, 12, 31), -1), ((1600, 2, 29), -135081)])
def test_days_from_civil(date, days):
    assert days_from_civil(*date) == days
    assert civil_from_days(days) == date


def test_civil_round_trip_over_leap_years():
    for days in range(-800, 800, 7):
        assert days_from_civil(*civil_from_days(days * 37)) == days * 37


@pytest.mark.parametrize("date, serial", [
    ((1899, 12, 30), 0), ((1899, 12, 31), 1), ((1900, 3, 1), 61), ((2023, 3, 15), 45000), ((2024, 2, 29), 45351),
])
def test_date_to_serial(date, serial):
    assert date_to_serial(*date) == serial
    assert serial_to_date(serial) == date


def test_date_to_serial_normalises_month_and_day_overflow():
    assert date_to_serial(2023, 14, 1) == date_to_serial(2024, 2, 1)
    assert date_to_serial(2024, 0, 1) == date_to_serial(2023, 12, 1)
    assert date_to_serial(2024, 1, 32) == date_to_serial(2024, 2, 1)


@pytest.mark.parametrize("call", [lambda: date_to_serial(1899, 12, 29), lambda: serial_to_date(-0.5),
                                  lambda: serial_to_date(2958466), lambda: date_to_serial(10000, 1, 1)])
def test_out_of_range_dates_raise_num(call):
    with pytest.raises(ErrorSignal) as info:
        call()
    assert info.value.error == NUM


def test_serial_to_date_ignores_time_fraction():
    assert serial_to_date(45000.99) == (2023, 3, 15)


def test_weekday_sunday_is_one():
    assert weekday(1) == 1
    assert weekday(0) == 7
    assert weekday(45000.5) == 4


@pytest.mark.parametrize("serial, expected", [(0.5, (12, 0, 0)), (45000.75, (18, 0, 0)), (0.999999, (0, 0, 0)), (1 / 86400 * 3725, (1, 2, 5))])
def test_time_of_day(serial, expected):
    assert time_of_day(serial) == expected
