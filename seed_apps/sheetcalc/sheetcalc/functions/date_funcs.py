"""Date built-ins working on serial numbers (DATE, YEAR, MONTH, DAY, WEEKDAY)."""

from ..dates import date_to_serial, serial_to_date, weekday
from ..errors import ErrorSignal
from ..values import NUM
from .base import FunctionSpec, int_arg, number_arg


def fn_date(args):
    """DATE(year, month, day): the serial of a date; years 0-1899 are taken as 1900-3799.

    Overflowing months and days roll over; years outside 0-9999 are #NUM!.
    """
    year, month, day = (int_arg(arg) for arg in args)
    if 0 <= year < 1900:
        year += 1900
    if not 0 <= year <= 9999:
        raise ErrorSignal(NUM)
    return float(date_to_serial(year, month, day))


def fn_year(args):
    """YEAR(serial): the year of a date serial."""
    return float(serial_to_date(number_arg(args[0]))[0])


def fn_month(args):
    """MONTH(serial): the month (1-12) of a date serial."""
    return float(serial_to_date(number_arg(args[0]))[1])


def fn_day(args):
    """DAY(serial): the day of the month of a date serial."""
    return float(serial_to_date(number_arg(args[0]))[2])


def fn_weekday(args):
    """WEEKDAY(serial): day of the week, 1 (Sunday) to 7 (Saturday)."""
    serial = number_arg(args[0])
    serial_to_date(serial)
    return float(weekday(serial))


SPECS = (
    FunctionSpec("DATE", fn_date, 3, 3),
    FunctionSpec("YEAR", fn_year, 1, 1),
    FunctionSpec("MONTH", fn_month, 1, 1),
    FunctionSpec("DAY", fn_day, 1, 1),
    FunctionSpec("WEEKDAY", fn_weekday, 1, 1),
)
