"""Date serial numbers with a fixed epoch.

A date is stored as a number of days since 1899-12-30 (serial 0), so serial
1 is 1899-12-31 and serial 45000 is 2023-03-15; the fractional part of a
serial is the time of day.  Unlike some spreadsheet programs, the fictitious
1900-02-29 is not emulated.  Conversions use Howard Hinnant's proleptic
Gregorian "days from civil" algorithms, so no calendar library is involved.
"""

import math

from .errors import ErrorSignal
from .values import NUM

MAX_SERIAL = 2_958_465  # 9999-12-31
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July",
               "August", "September", "October", "November", "December")
DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


def days_from_civil(year, month, day):
    """Return the number of days from 1970-01-01 to the given Gregorian date.

    ``month`` must be 1-12 and ``day`` a valid day of that month; negative
    results are dates before 1970.
    """
    year -= 1 if month <= 2 else 0
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def civil_from_days(days):
    """Inverse of :func:`days_from_civil`: return ``(year, month, day)`` for a day count."""
    days += 719468
    era = days // 146097
    day_of_era = days - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    year = year_of_era + era * 400
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + (3 if shifted_month < 10 else -9)
    return year + (1 if month <= 2 else 0), month, day


_EPOCH = days_from_civil(1899, 12, 30)


def date_to_serial(year, month, day):
    """Return the serial number of a date, normalising overflowing parts.

    Months outside 1-12 roll into neighbouring years (month 13 of 2023 is
    January 2024) and days outside the month roll forward or back
    (``(2024, 3, 0)`` is 2024-02-29).

    Raises:
        ErrorSignal: :data:`NUM` when the resulting serial is negative or
            after 9999-12-31.
    """
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    serial = days_from_civil(year, month, 1) - _EPOCH + day - 1
    if serial < 0 or serial > MAX_SERIAL:
        raise ErrorSignal(NUM)
    return serial


def serial_to_date(serial):
    """Return ``(year, month, day)`` for the whole-day part of ``serial``.

    Raises:
        ErrorSignal: :data:`NUM` for serials below 0 or after 9999-12-31.
    """
    if serial < 0 or serial >= MAX_SERIAL + 1:
        raise ErrorSignal(NUM)
    return civil_from_days(math.floor(serial) + _EPOCH)


def weekday(serial):
    """Return the day of the week of ``serial``: 1 for Sunday through 7 for Saturday."""
    return (math.floor(serial) + 6) % 7 + 1


def time_of_day(serial):
    """Return ``(hours, minutes, seconds)`` of the fractional part, rounded to the second.

    A fraction that rounds up to a full day gives ``(0, 0, 0)``.
    """
    seconds = round((serial - math.floor(serial)) * 86400) % 86400
    hours, remainder = divmod(seconds, 3600)
    minutes, seconds = divmod(remainder, 60)
    return hours, minutes, seconds
