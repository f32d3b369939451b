//! Civil dates and times in the proleptic Gregorian calendar, without time zones.
//!
//! Dates convert to and from a day count relative to 1970-01-01, which makes
//! weekday computation and day arithmetic plain integer arithmetic.

use crate::duration::Duration;
use crate::error::{Error, Result};
use std::fmt;
use std::ops::{Add, Sub};
use std::str::FromStr;

/// A day of the week.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Weekday {
    Mon,
    Tue,
    Wed,
    Thu,
    Fri,
    Sat,
    Sun,
}

const WEEKDAY_NAMES: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

const MONTH_NAMES: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

impl Weekday {
    /// All weekdays, Monday first.
    pub const ALL: [Weekday; 7] = [
        Weekday::Mon,
        Weekday::Tue,
        Weekday::Wed,
        Weekday::Thu,
        Weekday::Fri,
        Weekday::Sat,
        Weekday::Sun,
    ];

    /// 0 for Monday up to 6 for Sunday.
    pub fn monday_index(self) -> u8 {
        self as u8
    }

    /// The cron numbering: 0 for Sunday, 1 for Monday up to 6 for Saturday.
    pub fn cron_number(self) -> u8 {
        (self as u8 + 1) % 7
    }

    /// The weekday `index` days after Monday (taken modulo 7).
    pub fn from_monday_index(index: u8) -> Weekday {
        Weekday::ALL[usize::from(index % 7)]
    }

    /// The weekday with cron number `n` (0 or 7 is Sunday).
    pub fn from_cron_number(n: u8) -> Weekday {
        Weekday::from_monday_index(n % 7 + 6)
    }

    /// The following day.
    pub fn succ(self) -> Weekday {
        Weekday::from_monday_index(self as u8 + 1)
    }

    /// The preceding day.
    pub fn pred(self) -> Weekday {
        Weekday::from_monday_index(self as u8 + 6)
    }

    /// Days from `self` forward to the next `other` (0 if equal).
    pub fn days_until(self, other: Weekday) -> u8 {
        (7 + other as u8 - self as u8) % 7
    }

    /// Saturday or Sunday.
    pub fn is_weekend(self) -> bool {
        matches!(self, Weekday::Sat | Weekday::Sun)
    }

    /// The three-letter English name, e.g. `Mon`.
    pub fn short_name(self) -> &'static str {
        ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][self as usize]
    }

    /// Parses a full or three-letter English name, ignoring case.
    pub fn parse(text: &str) -> Result<Weekday> {
        let lower = text.trim().to_ascii_lowercase();
        WEEKDAY_NAMES
            .iter()
            .position(|name| lower == *name || lower == name[..3])
            .map(|i| Weekday::ALL[i])
            .ok_or_else(|| Error::InvalidDate(format!("unknown weekday {text:?}")))
    }
}

impl fmt::Display for Weekday {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_name())
    }
}

/// Parses a month given as a number (`1`-`12`) or an English name (`jan`, `January`).
pub fn parse_month(text: &str) -> Option<u8> {
    let t = text.trim();
    if let Ok(n) = t.parse::<u8>() {
        return (1..=12).contains(&n).then_some(n);
    }
    let lower = t.to_ascii_lowercase();
    MONTH_NAMES
        .iter()
        .position(|name| lower == *name || (lower.len() == 3 && lower == name[..3]))
        .map(|i| i as u8 + 1)
}

/// Whether `year` has a 29th of February.
pub fn is_leap_year(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// The number of days in `month` (1-12) of `year`; panics on a month outside 1-12.
pub fn days_in_month(year: i32, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => panic!("invalid month {month}"),
    }
}

/// A calendar date.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: i32,
    month: u8,
    day: u8,
}

impl Date {
    /// A checked date; the year must lie in 1..=9999.
    pub fn new(year: i32, month: u8, day: u8) -> Result<Date> {
        if !(1..=9999).contains(&year) {
            return Err(Error::InvalidDate(format!(
                "year {year} out of range 1..=9999"
            )));
        }
        if !(1..=12).contains(&month) {
            return Err(Error::InvalidDate(format!(
                "month {month} out of range 1..=12"
            )));
        }
        let last = days_in_month(year, month);
        if day == 0 || day > last {
            return Err(Error::InvalidDate(format!(
                "day {day} out of range for {year:04}-{month:02} (1..={last})"
            )));
        }
        Ok(Date { year, month, day })
    }

    /// Like [`Date::new`] but panics with "invalid date" on bad input; handy for literals.
    pub fn ymd(year: i32, month: u8, day: u8) -> Date {
        match Date::new(year, month, day) {
            Ok(date) => date,
            Err(e) => panic!("invalid date: {e}"),
        }
    }

    /// The year.
    pub fn year(self) -> i32 {
        self.year
    }

    /// The month, 1-12.
    pub fn month(self) -> u8 {
        self.month
    }

    /// The day of the month, 1-31.
    pub fn day(self) -> u8 {
        self.day
    }

    /// Days since 1970-01-01 (negative before it).
    pub fn to_days(self) -> i64 {
        let y = i64::from(self.year) - i64::from(self.month <= 2);
        let era = y.div_euclid(400);
        let year_of_era = y - era * 400;
        let shifted_month = (i64::from(self.month) + 9) % 12;
        let day_of_year = (153 * shifted_month + 2) / 5 + i64::from(self.day) - 1;
        let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
        era * 146_097 + day_of_era - 719_468
    }

    /// The date `days` days after 1970-01-01 (the inverse of [`Date::to_days`]).
    pub fn from_days(days: i64) -> Date {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let day_of_era = z - era * 146_097;
        let year_of_era =
            (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
        let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
        let shifted_month = (5 * day_of_year + 2) / 153;
        let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
        let month = if shifted_month < 10 {
            shifted_month + 3
        } else {
            shifted_month - 9
        };
        let year = year_of_era + era * 400 + i64::from(month <= 2);
        Date {
            year: year as i32,
            month: month as u8,
            day: day as u8,
        }
    }

    /// The day of the week.
    pub fn weekday(self) -> Weekday {
        // 1970-01-01 was a Thursday (Monday index 3).
        Weekday::from_monday_index((self.to_days() + 3).rem_euclid(7) as u8)
    }

    /// The date `n` days later (earlier when negative).
    pub fn add_days(self, n: i64) -> Date {
        Date::from_days(self.to_days() + n)
    }

    /// The next day.
    pub fn succ(self) -> Date {
        self.add_days(1)
    }

    /// The previous day.
    pub fn pred(self) -> Date {
        self.add_days(-1)
    }

    /// Signed number of days from `self` to `other`.
    pub fn days_until(self, other: Date) -> i64 {
        other.to_days() - self.to_days()
    }

    /// The same day `n` months later, clamped to the end of shorter months.
    pub fn add_months(self, n: i32) -> Date {
        let total = i64::from(self.year) * 12 + i64::from(self.month) - 1 + i64::from(n);
        let year = total.div_euclid(12) as i32;
        let month = (total.rem_euclid(12) + 1) as u8;
        let day = self.day.min(days_in_month(year, month));
        Date { year, month, day }
    }

    /// The day of the year, 1-366.
    pub fn ordinal(self) -> u16 {
        let jan1 = Date {
            year: self.year,
            month: 1,
            day: 1,
        };
        (jan1.days_until(self) + 1) as u16
    }

    /// The first day of this date's month.
    pub fn first_of_month(self) -> Date {
        Date { day: 1, ..self }
    }

    /// The last day of this date's month.
    pub fn last_of_month(self) -> Date {
        Date {
            day: days_in_month(self.year, self.month),
            ..self
        }
    }

    /// The `n`-th `weekday` of a month: `n` in 1..=5 counts from the start,
    /// -1..=-5 from the end (-1 is the last). `None` if that day does not exist.
    pub fn nth_weekday(year: i32, month: u8, weekday: Weekday, n: i8) -> Option<Date> {
        if n == 0 || !(-5..=5).contains(&n) || !(1..=12).contains(&month) {
            return None;
        }
        let last = days_in_month(year, month);
        let day = if n > 0 {
            let first = Date {
                year,
                month,
                day: 1,
            };
            let offset = first.weekday().days_until(weekday);
            1 + i32::from(offset) + 7 * (i32::from(n) - 1)
        } else {
            let end = Date {
                year,
                month,
                day: last,
            };
            let offset = weekday.days_until(end.weekday());
            i32::from(last) - i32::from(offset) - 7 * (-i32::from(n) - 1)
        };
        if day < 1 || day > i32::from(last) {
            None
        } else {
            Some(Date {
                year,
                month,
                day: day as u8,
            })
        }
    }

    /// The ISO 8601 week-numbering year and week (1-53).
    pub fn iso_week(self) -> (i32, u8) {
        let monday_index = i64::from(self.weekday().monday_index());
        let thursday = self.add_days(3 - monday_index);
        let week = (thursday.ordinal() - 1) / 7 + 1;
        (thursday.year, week as u8)
    }

    /// Parses `YYYY-MM-DD`.
    pub fn parse(text: &str) -> Result<Date> {
        let t = text.trim();
        let parts: Vec<&str> = t.split('-').collect();
        let shape_ok = parts.len() == 3
            && parts[0].len() == 4
            && parts[1].len() == 2
            && parts[2].len() == 2
            && parts.iter().all(|p| p.bytes().all(|b| b.is_ascii_digit()));
        if !shape_ok {
            return Err(Error::InvalidDate(format!(
                "expected YYYY-MM-DD, got {t:?}"
            )));
        }
        let year: i32 = parts[0].parse().expect("four digits");
        let month: u8 = parts[1].parse().expect("two digits");
        let day: u8 = parts[2].parse().expect("two digits");
        Date::new(year, month, day)
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl FromStr for Date {
    type Err = Error;

    fn from_str(s: &str) -> Result<Date> {
        Date::parse(s)
    }
}

/// A date and a time of day with one-second resolution.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime {
    date: Date,
    secs: u32,
}

impl DateTime {
    /// A checked date and time.
    pub fn new(date: Date, hour: u8, minute: u8, second: u8) -> Result<DateTime> {
        if hour > 23 || minute > 59 || second > 59 {
            return Err(Error::InvalidTime(format!(
                "{hour:02}:{minute:02}:{second:02} is not a time of day"
            )));
        }
        Ok(DateTime::from_parts(date, hour, minute, second))
    }

    pub(crate) fn from_parts(date: Date, hour: u8, minute: u8, second: u8) -> DateTime {
        DateTime {
            date,
            secs: u32::from(hour) * 3_600 + u32::from(minute) * 60 + u32::from(second),
        }
    }

    /// `date` at `hour:minute`; panics with "invalid time" on bad input.
    pub fn at(date: Date, hour: u8, minute: u8) -> DateTime {
        match DateTime::new(date, hour, minute, 0) {
            Ok(dt) => dt,
            Err(e) => panic!("invalid time: {e}"),
        }
    }

    /// The start of `date`.
    pub fn midnight(date: Date) -> DateTime {
        DateTime { date, secs: 0 }
    }

    /// The date part.
    pub fn date(self) -> Date {
        self.date
    }

    /// The hour, 0-23.
    pub fn hour(self) -> u8 {
        (self.secs / 3_600) as u8
    }

    /// The minute, 0-59.
    pub fn minute(self) -> u8 {
        (self.secs / 60 % 60) as u8
    }

    /// The second, 0-59.
    pub fn second(self) -> u8 {
        (self.secs % 60) as u8
    }

    /// Seconds since midnight.
    pub fn seconds_of_day(self) -> u32 {
        self.secs
    }

    /// Seconds since 1970-01-01T00:00:00.
    pub fn timestamp(self) -> i64 {
        self.date.to_days() * 86_400 + i64::from(self.secs)
    }

    /// The inverse of [`DateTime::timestamp`].
    pub fn from_timestamp(ts: i64) -> DateTime {
        DateTime {
            date: Date::from_days(ts.div_euclid(86_400)),
            secs: ts.rem_euclid(86_400) as u32,
        }
    }

    /// The time `secs` seconds later (earlier when negative).
    pub fn add_seconds(self, secs: i64) -> DateTime {
        DateTime::from_timestamp(self.timestamp() + secs)
    }

    /// The time `d` later (also available as `dt + d`).
    pub fn plus(self, d: Duration) -> DateTime {
        self.add_seconds(d.as_secs() as i64)
    }

    /// The time `d` earlier (also available as `dt - d`).
    pub fn minus(self, d: Duration) -> DateTime {
        self.add_seconds(-(d.as_secs() as i64))
    }

    /// The time elapsed since `earlier` (zero if `earlier` is later).
    pub fn duration_since(self, earlier: DateTime) -> Duration {
        Duration::from_secs((self.timestamp() - earlier.timestamp()).max(0) as u64)
    }

    /// This time with the seconds dropped.
    pub fn truncate_to_minute(self) -> DateTime {
        DateTime {
            secs: self.secs - self.secs % 60,
            ..self
        }
    }

    /// Parses `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS]` or `YYYY-MM-DD HH:MM[:SS]`.
    pub fn parse(text: &str) -> Result<DateTime> {
        let t = text.trim();
        let (date_part, clock) = match t.find(['T', ' ']) {
            Some(i) => (&t[..i], Some(t[i + 1..].trim())),
            None => (t, None),
        };
        let date = Date::parse(date_part)?;
        let Some(clock) = clock else {
            return Ok(DateTime::midnight(date));
        };
        let parts: Vec<&str> = clock.split(':').collect();
        let shape_ok = (2..=3).contains(&parts.len())
            && parts
                .iter()
                .all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_digit()));
        if !shape_ok {
            return Err(Error::InvalidTime(format!(
                "expected HH:MM or HH:MM:SS, got {clock:?}"
            )));
        }
        let num = |i: usize| -> u8 { parts.get(i).map_or(0, |p| p.parse().expect("two digits")) };
        DateTime::new(date, num(0), num(1), num(2))
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}T{:02}:{:02}:{:02}",
            self.date,
            self.hour(),
            self.minute(),
            self.second()
        )
    }
}

impl Add<Duration> for DateTime {
    type Output = DateTime;

    fn add(self, d: Duration) -> DateTime {
        self.plus(d)
    }
}

impl Sub<Duration> for DateTime {
    type Output = DateTime;

    fn sub(self, d: Duration) -> DateTime {
        self.minus(d)
    }
}

impl FromStr for DateTime {
    type Err = Error;

    fn from_str(s: &str) -> Result<DateTime> {
        DateTime::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leap_years_follow_the_gregorian_rule() {
        assert!(is_leap_year(2024));
        assert!(!is_leap_year(2023));
        assert!(!is_leap_year(1900));
        assert!(is_leap_year(2000));
    }

    #[test]
    fn month_lengths() {
        assert_eq!(days_in_month(2023, 2), 28);
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(2024, 4), 30);
        assert_eq!(days_in_month(2024, 12), 31);
    }

    #[test]
    #[should_panic(expected = "invalid month 13")]
    fn days_in_month_panics_on_bad_month() {
        days_in_month(2024, 13);
    }

    #[test]
    fn epoch_is_day_zero() {
        assert_eq!(Date::ymd(1970, 1, 1).to_days(), 0);
        assert_eq!(Date::from_days(0), Date::ymd(1970, 1, 1));
        assert_eq!(Date::ymd(1969, 12, 31).to_days(), -1);
        assert_eq!(Date::ymd(2000, 3, 1).to_days(), 11_017);
    }

    #[test]
    fn day_numbers_round_trip_around_leap_days() {
        for date in [
            Date::ymd(2024, 2, 28),
            Date::ymd(2024, 2, 29),
            Date::ymd(2024, 3, 1),
            Date::ymd(1900, 2, 28),
            Date::ymd(1900, 3, 1),
            Date::ymd(1, 1, 1),
            Date::ymd(9999, 12, 31),
        ] {
            assert_eq!(Date::from_days(date.to_days()), date);
        }
        assert_eq!(Date::ymd(1900, 2, 28).succ(), Date::ymd(1900, 3, 1));
    }

    #[test]
    fn weekdays_of_known_dates() {
        assert_eq!(Date::ymd(1970, 1, 1).weekday(), Weekday::Thu);
        assert_eq!(Date::ymd(2024, 1, 1).weekday(), Weekday::Mon);
        assert_eq!(Date::ymd(1969, 7, 20).weekday(), Weekday::Sun);
    }

    #[test]
    fn weekday_numbering() {
        assert_eq!(Weekday::Sun.cron_number(), 0);
        assert_eq!(Weekday::Sat.cron_number(), 6);
        assert_eq!(Weekday::from_cron_number(0), Weekday::Sun);
        assert_eq!(Weekday::from_cron_number(7), Weekday::Sun);
        assert_eq!(Weekday::from_cron_number(1), Weekday::Mon);
        assert_eq!(Weekday::Sun.succ(), Weekday::Mon);
        assert_eq!(Weekday::Mon.pred(), Weekday::Sun);
        assert_eq!(Weekday::Fri.days_until(Weekday::Mon), 3);
        assert_eq!(Weekday::Mon.days_until(Weekday::Mon), 0);
    }

    #[test]
    fn weekday_parsing() {
        assert_eq!(Weekday::parse("tue").unwrap(), Weekday::Tue);
        assert_eq!(Weekday::parse("Saturday").unwrap(), Weekday::Sat);
        assert!(Weekday::parse("tues").is_err());
        assert!(Weekday::parse("").is_err());
    }

    #[test]
    fn month_parsing() {
        assert_eq!(parse_month("3"), Some(3));
        assert_eq!(parse_month("Sep"), Some(9));
        assert_eq!(parse_month("december"), Some(12));
        assert_eq!(parse_month("13"), None);
        assert_eq!(parse_month("sept"), None);
    }

    #[test]
    fn checked_construction() {
        assert!(Date::new(2023, 2, 29).is_err());
        assert!(Date::new(2024, 0, 1).is_err());
        assert!(Date::new(0, 1, 1).is_err());
        assert!(Date::new(2024, 4, 31).is_err());
        let err = Date::new(2023, 2, 30).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid date: day 30 out of range for 2023-02 (1..=28)"
        );
    }

    #[test]
    fn add_months_clamps_to_month_end() {
        assert_eq!(Date::ymd(2024, 1, 31).add_months(1), Date::ymd(2024, 2, 29));
        assert_eq!(Date::ymd(2023, 1, 31).add_months(1), Date::ymd(2023, 2, 28));
        assert_eq!(
            Date::ymd(2024, 11, 15).add_months(3),
            Date::ymd(2025, 2, 15)
        );
        assert_eq!(
            Date::ymd(2024, 3, 31).add_months(-1),
            Date::ymd(2024, 2, 29)
        );
        assert_eq!(
            Date::ymd(2024, 1, 10).add_months(-13),
            Date::ymd(2022, 12, 10)
        );
    }

    #[test]
    fn ordinals_and_month_bounds() {
        assert_eq!(Date::ymd(2024, 1, 1).ordinal(), 1);
        assert_eq!(Date::ymd(2024, 12, 31).ordinal(), 366);
        assert_eq!(Date::ymd(2023, 3, 1).ordinal(), 60);
        assert_eq!(
            Date::ymd(2024, 2, 10).last_of_month(),
            Date::ymd(2024, 2, 29)
        );
        assert_eq!(
            Date::ymd(2024, 2, 10).first_of_month(),
            Date::ymd(2024, 2, 1)
        );
    }

    #[test]
    fn nth_weekday_from_either_end() {
        // May 2024 starts on a Wednesday.
        assert_eq!(
            Date::nth_weekday(2024, 5, Weekday::Mon, 1),
            Some(Date::ymd(2024, 5, 6))
        );
        assert_eq!(
            Date::nth_weekday(2024, 5, Weekday::Mon, -1),
            Some(Date::ymd(2024, 5, 27))
        );
        assert_eq!(
            Date::nth_weekday(2024, 5, Weekday::Wed, 5),
            Some(Date::ymd(2024, 5, 29))
        );
        assert_eq!(Date::nth_weekday(2024, 5, Weekday::Mon, 5), None);
        assert_eq!(Date::nth_weekday(2024, 5, Weekday::Mon, 0), None);
        assert_eq!(
            Date::nth_weekday(2024, 5, Weekday::Fri, -2),
            Some(Date::ymd(2024, 5, 24))
        );
    }

    #[test]
    fn iso_weeks_at_year_boundaries() {
        assert_eq!(Date::ymd(2024, 1, 1).iso_week(), (2024, 1));
        assert_eq!(Date::ymd(2021, 1, 3).iso_week(), (2020, 53));
        assert_eq!(Date::ymd(2024, 12, 30).iso_week(), (2025, 1));
        assert_eq!(Date::ymd(2026, 12, 31).iso_week(), (2026, 53));
    }

    #[test]
    fn date_parsing_is_strict() {
        assert_eq!(Date::parse("2024-02-29").unwrap(), Date::ymd(2024, 2, 29));
        for bad in [
            "2024-2-29",
            "24-02-29",
            "2024/02/29",
            "2024-02-30",
            "",
            "2024-02-2x",
        ] {
            assert!(Date::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn datetime_parsing_and_display() {
        let dt = DateTime::parse("2024-03-01T12:30").unwrap();
        assert_eq!((dt.hour(), dt.minute(), dt.second()), (12, 30, 0));
        assert_eq!(dt.to_string(), "2024-03-01T12:30:00");
        let dt = DateTime::parse("2024-03-01 07:05:09").unwrap();
        assert_eq!(dt.to_string(), "2024-03-01T07:05:09");
        assert_eq!(
            DateTime::parse("2024-03-01").unwrap(),
            DateTime::midnight(Date::ymd(2024, 3, 1))
        );
        for bad in [
            "2024-03-01T24:00",
            "2024-03-01T1:00",
            "2024-03-01T10",
            "2024-03-01T10:00:00:00",
        ] {
            assert!(DateTime::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn timestamps_round_trip() {
        let dt = DateTime::at(Date::ymd(2024, 2, 29), 23, 59).add_seconds(59);
        assert_eq!(DateTime::from_timestamp(dt.timestamp()), dt);
        assert_eq!(
            DateTime::midnight(Date::ymd(1970, 1, 2)).timestamp(),
            86_400
        );
        assert_eq!(
            DateTime::from_timestamp(-1).to_string(),
            "1969-12-31T23:59:59"
        );
    }

    #[test]
    fn datetime_arithmetic_crosses_midnight() {
        let dt = DateTime::at(Date::ymd(2023, 12, 31), 23, 30);
        let later = dt.plus(Duration::from_hours(1));
        assert_eq!(later.to_string(), "2024-01-01T00:30:00");
        assert_eq!(later.minus(Duration::from_hours(1)), dt);
        assert_eq!(later.duration_since(dt), Duration::from_hours(1));
        assert_eq!(dt.duration_since(later), Duration::ZERO);
    }

    #[test]
    #[should_panic(expected = "invalid time")]
    fn at_panics_on_bad_time() {
        DateTime::at(Date::ymd(2024, 1, 1), 25, 0);
    }

    #[test]
    #[ignore = "exhaustive sweep over a 400-year Gregorian cycle; run with --ignored"]
    fn every_day_of_a_gregorian_cycle_round_trips() {
        let start = Date::ymd(2000, 1, 1).to_days();
        let mut expected = Date::ymd(2000, 1, 1);
        for n in 0..146_097 {
            let date = Date::from_days(start + n);
            assert_eq!(date, expected);
            assert_eq!(date.to_days(), start + n);
            assert!(Date::new(date.year(), date.month(), date.day()).is_ok());
            expected = if expected.day() < days_in_month(expected.year(), expected.month()) {
                Date::ymd(expected.year(), expected.month(), expected.day() + 1)
            } else if expected.month() < 12 {
                Date::ymd(expected.year(), expected.month() + 1, 1)
            } else {
                Date::ymd(expected.year() + 1, 1, 1)
            };
        }
    }
}
