//! Whole cron expressions: parsing, matching and searching for fire times.

use super::field::{format_field, parse_field, BitSet64, Field, FieldKind};
use crate::datetime::{days_in_month, Date, DateTime};
use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// How many years a search may scan before giving up. Weekday and leap-year
/// patterns repeat every 28 years inside a century, so 30 is enough for any
/// expression that can fire at all.
const SEARCH_YEARS: i32 = 30;

/// A parsed five-field cron expression.
///
/// Day-of-month and day-of-week combine like classic cron: if either field was
/// written starting with `*`, a day must satisfy both; otherwise it may satisfy
/// either. The day-of-month field may also be `L`, the last day of the month.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronExpr {
    source: String,
    minutes: BitSet64,
    hours: BitSet64,
    days: BitSet64,
    months: BitSet64,
    weekdays: BitSet64,
    last_day: bool,
    dom_star: bool,
    dow_star: bool,
}

fn expand_macro(text: &str) -> Option<&'static str> {
    Some(match text.to_ascii_lowercase().as_str() {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        _ => return None,
    })
}

impl CronExpr {
    /// Parses an expression or one of the macros `@yearly`, `@annually`,
    /// `@monthly`, `@weekly`, `@daily`, `@midnight` and `@hourly`.
    pub fn parse(text: &str) -> Result<CronExpr> {
        let source = text.trim();
        let fail = |reason: String| Error::InvalidCron {
            expr: source.to_string(),
            reason,
        };
        let body = if source.starts_with('@') {
            expand_macro(source).ok_or_else(|| fail(format!("unknown macro {source}")))?
        } else {
            source
        };
        let fields: Vec<&str> = body.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(fail(format!("expected 5 fields, found {}", fields.len())));
        }
        let parse = |i: usize| -> Result<Field> {
            let kind = FieldKind::ALL[i];
            parse_field(fields[i], kind).map_err(|m| fail(format!("{} field: {m}", kind.name())))
        };
        let minutes = parse(0)?;
        let hours = parse(1)?;
        let last_day = fields[2].eq_ignore_ascii_case("l");
        let days = if last_day {
            Field {
                values: BitSet64::EMPTY,
                star: false,
            }
        } else {
            parse(2)?
        };
        let months = parse(3)?;
        let weekdays = parse(4)?;
        let expr = CronExpr {
            source: source.to_string(),
            minutes: minutes.values,
            hours: hours.values,
            days: days.values,
            months: months.values,
            weekdays: weekdays.values,
            last_day,
            dom_star: days.star,
            dow_star: weekdays.star,
        };
        expr.check_reachable().map_err(fail)?;
        Ok(expr)
    }

    /// Rejects expressions whose day-of-month can never occur in the chosen months
    /// (such as `0 0 30 2 *`) when no weekday alternative exists.
    fn check_reachable(&self) -> std::result::Result<(), String> {
        let and_semantics = self.dom_star || self.dow_star;
        if self.last_day || !and_semantics {
            return Ok(());
        }
        // 2000 is a leap year, so February counts with 29 days.
        let longest = self
            .months
            .iter()
            .map(|m| days_in_month(2000, m))
            .max()
            .unwrap_or(0);
        match self.days.min() {
            Some(first) if first > longest => Err(format!(
                "day-of-month {first} never occurs in the selected months"
            )),
            _ => Ok(()),
        }
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The values allowed by one field (day-of-month is empty for `L`).
    pub fn field(&self, kind: FieldKind) -> BitSet64 {
        match kind {
            FieldKind::Minute => self.minutes,
            FieldKind::Hour => self.hours,
            FieldKind::DayOfMonth => self.days,
            FieldKind::Month => self.months,
            FieldKind::DayOfWeek => self.weekdays,
        }
    }

    /// Whether the expression fires on some minute of `date`.
    pub fn matches_date(&self, date: Date) -> bool {
        if !self.months.contains(date.month()) {
            return false;
        }
        let dom_ok = if self.last_day {
            date.day() == days_in_month(date.year(), date.month())
        } else {
            self.days.contains(date.day())
        };
        let dow_ok = self.weekdays.contains(date.weekday().cron_number());
        if self.dom_star || self.dow_star {
            dom_ok && dow_ok
        } else {
            dom_ok || dow_ok
        }
    }

    /// Whether the expression fires exactly at `dt` (which must be on a whole minute).
    pub fn matches(&self, dt: DateTime) -> bool {
        dt.second() == 0
            && self.hours.contains(dt.hour())
            && self.minutes.contains(dt.minute())
            && self.matches_date(dt.date())
    }

    /// The first allowed time of day at or after `minute_of_day`.
    fn first_time_from(&self, minute_of_day: u32) -> Option<(u8, u8)> {
        let hour = (minute_of_day / 60) as u8;
        let minute = (minute_of_day % 60) as u8;
        if self.hours.contains(hour) {
            if let Some(m) = self.minutes.next_from(minute) {
                return Some((hour, m));
            }
        }
        let next_hour = self.hours.next_from(hour + 1)?;
        Some((next_hour, self.minutes.min()?))
    }

    /// The last allowed time of day at or before `minute_of_day`.
    fn last_time_until(&self, minute_of_day: u32) -> Option<(u8, u8)> {
        let hour = (minute_of_day / 60) as u8;
        let minute = (minute_of_day % 60) as u8;
        if self.hours.contains(hour) {
            if let Some(m) = self.minutes.prev_from(minute) {
                return Some((hour, m));
            }
        }
        if hour == 0 {
            return None;
        }
        let prev_hour = self.hours.prev_from(hour - 1)?;
        Some((prev_hour, self.minutes.max()?))
    }

    /// The first fire time strictly after `after`.
    ///
    /// ```
    /// use cronplan::{CronExpr, DateTime};
    /// let weekday_mornings = CronExpr::parse("30 8 * * mon-fri").unwrap();
    /// let friday_noon = DateTime::parse("2024-03-01T12:00").unwrap();
    /// let next = weekday_mornings.next_after(friday_noon).unwrap();
    /// assert_eq!(next.to_string(), "2024-03-04T08:30:00");
    /// ```
    pub fn next_after(&self, after: DateTime) -> Option<DateTime> {
        let mut date = after.date();
        let mut minute = after.seconds_of_day() / 60 + 1;
        if minute >= 1_440 {
            date = date.succ();
            minute = 0;
        }
        let limit = date.year() + SEARCH_YEARS;
        while date.year() <= limit {
            if !self.months.contains(date.month()) {
                date = date.last_of_month().succ();
                minute = 0;
                continue;
            }
            if self.matches_date(date) {
                if let Some((h, m)) = self.first_time_from(minute) {
                    return Some(DateTime::from_parts(date, h, m, 0));
                }
            }
            date = date.succ();
            minute = 0;
        }
        None
    }

    /// The last fire time strictly before `before`.
    pub fn prev_before(&self, before: DateTime) -> Option<DateTime> {
        let mut date = before.date();
        let secs = before.seconds_of_day();
        let mut minute = if secs.is_multiple_of(60) {
            i64::from(secs / 60) - 1
        } else {
            i64::from(secs / 60)
        };
        if minute < 0 {
            date = date.pred();
            minute = 1_439;
        }
        let limit = date.year() - SEARCH_YEARS;
        while date.year() >= limit {
            if !self.months.contains(date.month()) {
                date = date.first_of_month().pred();
                minute = 1_439;
                continue;
            }
            if self.matches_date(date) {
                if let Some((h, m)) = self.last_time_until(minute as u32) {
                    return Some(DateTime::from_parts(date, h, m, 0));
                }
            }
            date = date.pred();
            minute = 1_439;
        }
        None
    }

    /// Fire times in the half-open window `[from, until)`, in order.
    pub fn occurrences(&self, from: DateTime, until: DateTime) -> Occurrences<'_> {
        Occurrences {
            expr: self,
            cursor: from.add_seconds(-1),
            until,
            done: false,
        }
    }

    /// The expression with every field rendered in compact canonical form.
    pub fn normalized(&self) -> String {
        let mut parts = Vec::with_capacity(5);
        for kind in FieldKind::ALL {
            if kind == FieldKind::DayOfMonth && self.last_day {
                parts.push("L".to_string());
            } else {
                parts.push(format_field(self.field(kind), kind));
            }
        }
        parts.join(" ")
    }
}

impl fmt::Display for CronExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.normalized())
    }
}

impl FromStr for CronExpr {
    type Err = Error;

    fn from_str(s: &str) -> Result<CronExpr> {
        CronExpr::parse(s)
    }
}

/// The iterator returned by [`CronExpr::occurrences`].
#[derive(Clone, Debug)]
pub struct Occurrences<'a> {
    expr: &'a CronExpr,
    cursor: DateTime,
    until: DateTime,
    done: bool,
}

impl Iterator for Occurrences<'_> {
    type Item = DateTime;

    fn next(&mut self) -> Option<DateTime> {
        if self.done {
            return None;
        }
        match self.expr.next_after(self.cursor) {
            Some(t) if t < self.until => {
                self.cursor = t;
                Some(t)
            }
            _ => {
                self.done = true;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(text: &str) -> DateTime {
        DateTime::parse(text).unwrap()
    }

    fn next(expr: &str, after: &str) -> String {
        CronExpr::parse(expr)
            .unwrap()
            .next_after(dt(after))
            .unwrap()
            .to_string()
    }

    #[test]
    fn macros_expand() {
        assert_eq!(CronExpr::parse("@daily").unwrap().normalized(), "0 0 * * *");
        assert_eq!(
            CronExpr::parse("@ANNUALLY").unwrap().normalized(),
            "0 0 1 1 *"
        );
        assert_eq!(
            CronExpr::parse("@weekly").unwrap().normalized(),
            "0 0 * * 0"
        );
        assert_eq!(
            CronExpr::parse("@hourly").unwrap().normalized(),
            "0 * * * *"
        );
        let err = CronExpr::parse("@fortnightly").unwrap_err();
        assert!(
            err.to_string().contains("unknown macro @fortnightly"),
            "{err}"
        );
    }

    #[test]
    fn wrong_field_count_is_reported() {
        let err = CronExpr::parse("* * * *").unwrap_err();
        assert_eq!(
            err,
            Error::InvalidCron {
                expr: "* * * *".into(),
                reason: "expected 5 fields, found 4".into()
            }
        );
    }

    #[test]
    fn field_errors_name_the_field() {
        let err = CronExpr::parse("0 25 * * *").unwrap_err();
        assert!(
            err.to_string()
                .contains("hour field: value 25 out of range 0-23"),
            "{err}"
        );
    }

    #[test]
    fn impossible_day_is_rejected_but_weekday_alternative_is_not() {
        let err = CronExpr::parse("0 0 30 2 *").unwrap_err();
        assert!(
            err.to_string().contains("day-of-month 30 never occurs"),
            "{err}"
        );
        assert!(CronExpr::parse("0 0 29 2 *").is_ok());
        assert!(CronExpr::parse("0 0 31 4,6 *").is_err());
        assert!(CronExpr::parse("0 0 31 4,7 *").is_ok());
        assert!(CronExpr::parse("0 0 30 2 mon").is_ok());
    }

    #[test]
    fn next_within_the_same_hour() {
        assert_eq!(
            next("*/15 * * * *", "2024-01-01T10:07"),
            "2024-01-01T10:15:00"
        );
        assert_eq!(
            next("*/15 * * * *", "2024-01-01T10:15"),
            "2024-01-01T10:30:00"
        );
        assert_eq!(
            next("*/15 * * * *", "2024-01-01T10:14:59"),
            "2024-01-01T10:15:00"
        );
    }

    #[test]
    fn next_rolls_over_hours_days_and_years() {
        assert_eq!(next("0 9 * * *", "2024-01-01T09:00"), "2024-01-02T09:00:00");
        assert_eq!(
            next("59 23 * * *", "2024-02-28T23:59"),
            "2024-02-29T23:59:00"
        );
        assert_eq!(next("0 0 1 1 *", "2024-06-15T00:00"), "2025-01-01T00:00:00");
        assert_eq!(
            next("* * * * *", "2024-12-31T23:59:30"),
            "2025-01-01T00:00:00"
        );
    }

    #[test]
    fn next_skips_months_that_lack_the_day() {
        assert_eq!(
            next("0 12 31 * *", "2024-04-01T00:00"),
            "2024-05-31T12:00:00"
        );
        assert_eq!(
            next("0 0 29 2 *", "2024-03-01T00:00"),
            "2028-02-29T00:00:00"
        );
    }

    #[test]
    fn last_day_of_month() {
        assert_eq!(
            next("0 18 L * *", "2024-02-01T00:00"),
            "2024-02-29T18:00:00"
        );
        assert_eq!(
            next("0 18 L * *", "2023-02-28T18:00"),
            "2023-03-31T18:00:00"
        );
        assert_eq!(
            CronExpr::parse("0 18 l * *").unwrap().normalized(),
            "0 18 L * *"
        );
    }

    #[test]
    fn day_of_month_or_weekday_when_both_restricted() {
        let e = CronExpr::parse("0 0 13 * fri").unwrap();
        // 2024-09-06 is a Friday, 2024-09-13 a Friday the 13th, 2024-10-13 a Sunday.
        assert!(e.matches_date(Date::ymd(2024, 9, 6)));
        assert!(e.matches_date(Date::ymd(2024, 10, 13)));
        assert!(!e.matches_date(Date::ymd(2024, 10, 14)));
    }

    #[test]
    fn star_step_day_of_month_combines_with_and() {
        let e = CronExpr::parse("0 0 */2 * mon").unwrap();
        // 2024-01-01 is a Monday on an odd day; 2024-01-08 is a Monday on an even day.
        assert!(e.matches_date(Date::ymd(2024, 1, 1)));
        assert!(!e.matches_date(Date::ymd(2024, 1, 8)));
        assert!(!e.matches_date(Date::ymd(2024, 1, 3)));
    }

    #[test]
    fn matches_requires_whole_minutes() {
        let e = CronExpr::parse("30 6 * * *").unwrap();
        assert!(e.matches(dt("2024-05-05T06:30")));
        assert!(!e.matches(dt("2024-05-05T06:30:01")));
        assert!(!e.matches(dt("2024-05-05T06:31")));
    }

    #[test]
    fn prev_before_walks_backwards() {
        let e = CronExpr::parse("0 9 * * mon-fri").unwrap();
        assert_eq!(
            e.prev_before(dt("2024-03-04T09:00")).unwrap().to_string(),
            "2024-03-01T09:00:00"
        );
        assert_eq!(
            e.prev_before(dt("2024-03-04T09:00:01"))
                .unwrap()
                .to_string(),
            "2024-03-04T09:00:00"
        );
        let yearly = CronExpr::parse("@yearly").unwrap();
        assert_eq!(
            yearly
                .prev_before(dt("2024-01-01T00:00"))
                .unwrap()
                .to_string(),
            "2023-01-01T00:00:00"
        );
    }

    #[test]
    fn occurrences_cover_a_half_open_window() {
        let e = CronExpr::parse("0 */6 * * *").unwrap();
        let times: Vec<String> = e
            .occurrences(dt("2024-01-01T00:00"), dt("2024-01-02T00:00"))
            .map(|t| t.to_string())
            .collect();
        assert_eq!(
            times,
            [
                "2024-01-01T00:00:00",
                "2024-01-01T06:00:00",
                "2024-01-01T12:00:00",
                "2024-01-01T18:00:00"
            ]
        );
    }

    #[test]
    fn normalized_form_is_compact_and_reparses() {
        let e = CronExpr::parse("0,15,30,45 9-17 * JAN-MAR,dec 1-5").unwrap();
        assert_eq!(e.normalized(), "*/15 9-17 * 1-3,12 1-5");
        assert_eq!(e.source(), "0,15,30,45 9-17 * JAN-MAR,dec 1-5");
        let again = CronExpr::parse(&e.normalized()).unwrap();
        assert_eq!(again.normalized(), e.normalized());
        assert_eq!(e.to_string(), e.normalized());
    }
}
