//! Business calendars: weekends, holiday rules and business-day arithmetic.

use crate::datetime::{days_in_month, parse_month, Date, Weekday};
use crate::error::{Error, Result};
use std::fmt;

/// The date of Easter Sunday in the Gregorian calendar.
pub fn easter_sunday(year: i32) -> Date {
    let a = year % 19;
    let b = year / 100;
    let c = year % 100;
    let d = b / 4;
    let e = b % 4;
    let f = (b + 8) / 25;
    let g = (b - f + 1) / 3;
    let h = (19 * a + b - d - g + 15) % 30;
    let i = c / 4;
    let k = c % 4;
    let l = (32 + 2 * e + 2 * i - h - k) % 7;
    let m = (a + 11 * h + 22 * l) / 451;
    let month = (h + l - 7 * m + 114) / 31;
    let day = (h + l - 7 * m + 114) % 31 + 1;
    Date::ymd(year, month as u8, day as u8)
}

/// How a holiday's date is found in a given year.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HolidayRule {
    /// The same month and day every year. When `observed` is set, a Saturday
    /// holiday is observed on the Friday before and a Sunday one on the Monday after.
    Fixed { month: u8, day: u8, observed: bool },
    /// The `n`-th weekday of a month (`n` = -1 for the last one).
    NthWeekday { month: u8, weekday: Weekday, n: i8 },
    /// A number of days before (negative) or after Easter Sunday.
    Easter { offset: i16 },
    /// A single date.
    Once(Date),
}

fn ordinal_word(n: i8) -> &'static str {
    match n {
        1 => "1st",
        2 => "2nd",
        3 => "3rd",
        4 => "4th",
        5 => "5th",
        _ => "last",
    }
}

impl HolidayRule {
    /// The date this rule produces for `year` (an observed date may fall in the
    /// neighbouring year), or `None` if it produces nothing that year.
    pub fn date_in(&self, year: i32) -> Option<Date> {
        match *self {
            HolidayRule::Fixed {
                month,
                day,
                observed,
            } => {
                let date = Date::new(year, month, day).ok()?;
                if !observed {
                    return Some(date);
                }
                Some(match date.weekday() {
                    Weekday::Sat => date.pred(),
                    Weekday::Sun => date.succ(),
                    _ => date,
                })
            }
            HolidayRule::NthWeekday { month, weekday, n } => {
                Date::nth_weekday(year, month, weekday, n)
            }
            HolidayRule::Easter { offset } => Some(easter_sunday(year).add_days(i64::from(offset))),
            HolidayRule::Once(date) => (date.year() == year).then_some(date),
        }
    }

    /// Parses one of: `MM-DD`, `MM-DD observed`, `YYYY-MM-DD`, `easter`,
    /// `easter+N`, `easter-N`, or `<1st|2nd|3rd|4th|5th|last> <weekday> of <month>`.
    pub fn parse(text: &str) -> Result<HolidayRule> {
        let lower = text.trim().to_ascii_lowercase();
        let fail = |why: &str| Error::InvalidHoliday(format!("{why} in {text:?}"));
        if let Some(rest) = lower.strip_prefix("easter") {
            let rest = rest.trim();
            if rest.is_empty() {
                return Ok(HolidayRule::Easter { offset: 0 });
            }
            let (sign, digits) = if let Some(d) = rest.strip_prefix('+') {
                (1, d)
            } else if let Some(d) = rest.strip_prefix('-') {
                (-1, d)
            } else {
                return Err(fail("expected + or - after easter"));
            };
            let n: i16 = digits
                .trim()
                .parse()
                .map_err(|_| fail("expected a day count"))?;
            if n > 366 {
                return Err(fail("offset too large"));
            }
            return Ok(HolidayRule::Easter { offset: sign * n });
        }
        let words: Vec<&str> = lower.split_whitespace().collect();
        if words.len() == 4 && words[2] == "of" {
            let n = match words[0] {
                "1st" | "first" => 1,
                "2nd" | "second" => 2,
                "3rd" | "third" => 3,
                "4th" | "fourth" => 4,
                "5th" | "fifth" => 5,
                "last" => -1,
                _ => return Err(fail("unknown ordinal")),
            };
            let weekday = Weekday::parse(words[1]).map_err(|_| fail("unknown weekday"))?;
            let month = parse_month(words[3]).ok_or_else(|| fail("unknown month"))?;
            return Ok(HolidayRule::NthWeekday { month, weekday, n });
        }
        match words.as_slice() {
            [date] if date.len() == 10 => Date::parse(date)
                .map(HolidayRule::Once)
                .map_err(|_| fail("bad date")),
            [month_day] | [month_day, "observed"] => {
                let (m, d) = month_day
                    .split_once('-')
                    .ok_or_else(|| fail("expected MM-DD"))?;
                let month = parse_month(m).ok_or_else(|| fail("bad month"))?;
                let day: u8 = d.parse().map_err(|_| fail("bad day"))?;
                // Checked against a leap year so that 02-29 is allowed.
                if day == 0 || day > days_in_month(2000, month) {
                    return Err(fail("day out of range"));
                }
                Ok(HolidayRule::Fixed {
                    month,
                    day,
                    observed: words.len() == 2,
                })
            }
            _ => Err(fail("unrecognised rule")),
        }
    }
}

impl fmt::Display for HolidayRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HolidayRule::Fixed {
                month,
                day,
                observed,
            } => {
                write!(f, "{month:02}-{day:02}")?;
                if *observed {
                    f.write_str(" observed")?;
                }
                Ok(())
            }
            HolidayRule::NthWeekday { month, weekday, n } => {
                write!(f, "{} {} of {}", ordinal_word(*n), weekday, month)
            }
            HolidayRule::Easter { offset: 0 } => f.write_str("easter"),
            HolidayRule::Easter { offset } => write!(f, "easter{offset:+}"),
            HolidayRule::Once(date) => write!(f, "{date}"),
        }
    }
}

/// How to move a date that is not a business day.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Roll {
    /// The next business day.
    Following,
    /// The previous business day.
    Preceding,
    /// The next business day, unless that is in another month: then the previous one.
    ModifiedFollowing,
    /// The previous business day, unless that is in another month: then the next one.
    ModifiedPreceding,
}

/// A named set of weekend days and holiday rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Calendar {
    name: String,
    weekend: [bool; 7],
    holidays: Vec<(String, HolidayRule)>,
}

impl Calendar {
    /// A calendar with a Saturday-Sunday weekend and no holidays.
    pub fn new(name: &str) -> Calendar {
        let mut weekend = [false; 7];
        weekend[Weekday::Sat.monday_index() as usize] = true;
        weekend[Weekday::Sun.monday_index() as usize] = true;
        Calendar {
            name: name.to_string(),
            weekend,
            holidays: Vec::new(),
        }
    }

    /// The calendar's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Replaces the weekend days; at least one day must remain a working day.
    pub fn with_weekend(mut self, days: &[Weekday]) -> Result<Calendar> {
        let mut weekend = [false; 7];
        for day in days {
            weekend[day.monday_index() as usize] = true;
        }
        if weekend.iter().all(|&w| w) {
            return Err(Error::InvalidArgument(format!(
                "calendar '{}' has no working days",
                self.name
            )));
        }
        self.weekend = weekend;
        Ok(self)
    }

    /// Adds a named holiday rule.
    pub fn add_holiday(&mut self, name: &str, rule: HolidayRule) {
        self.holidays.push((name.to_string(), rule));
    }

    /// The holiday rules, in the order they were added.
    pub fn holidays(&self) -> &[(String, HolidayRule)] {
        &self.holidays
    }

    /// Whether `date` falls on a weekend day.
    pub fn is_weekend(&self, date: Date) -> bool {
        self.weekend[date.weekday().monday_index() as usize]
    }

    /// The name of the first holiday rule that lands on `date`.
    pub fn holiday_name(&self, date: Date) -> Option<&str> {
        // Observed dates can spill into the neighbouring year.
        let years = [date.year(), date.year() + 1, date.year() - 1];
        self.holidays
            .iter()
            .find(|(_, rule)| years.iter().any(|&y| rule.date_in(y) == Some(date)))
            .map(|(name, _)| name.as_str())
    }

    /// Neither a weekend day nor a holiday.
    pub fn is_business_day(&self, date: Date) -> bool {
        !self.is_weekend(date) && self.holiday_name(date).is_none()
    }

    /// Every holiday that lands in `year`, sorted by date then name.
    pub fn holidays_in_year(&self, year: i32) -> Vec<(Date, &str)> {
        let mut out: Vec<(Date, &str)> = self
            .holidays
            .iter()
            .flat_map(|(name, rule)| {
                [year - 1, year, year + 1]
                    .into_iter()
                    .filter_map(move |y| rule.date_in(y).map(|d| (d, name.as_str())))
            })
            .filter(|(d, _)| d.year() == year)
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn step_to_business_day(&self, mut date: Date, step: i64) -> Date {
        while !self.is_business_day(date) {
            date = date.add_days(step);
        }
        date
    }

    /// Moves `date` to a business day according to `roll` (unchanged if it is one).
    ///
    /// ```
    /// use cronplan::{Calendar, Date, Roll};
    /// let cal = Calendar::new("plain");
    /// // 2024-08-31 is a Saturday at the end of the month.
    /// let sat = Date::ymd(2024, 8, 31);
    /// assert_eq!(cal.roll(sat, Roll::Following), Date::ymd(2024, 9, 2));
    /// assert_eq!(cal.roll(sat, Roll::ModifiedFollowing), Date::ymd(2024, 8, 30));
    /// ```
    pub fn roll(&self, date: Date, roll: Roll) -> Date {
        match roll {
            Roll::Following => self.step_to_business_day(date, 1),
            Roll::Preceding => self.step_to_business_day(date, -1),
            Roll::ModifiedFollowing => {
                let next = self.step_to_business_day(date, 1);
                if next.month() == date.month() {
                    next
                } else {
                    self.step_to_business_day(date, -1)
                }
            }
            Roll::ModifiedPreceding => {
                let prev = self.step_to_business_day(date, -1);
                if prev.month() == date.month() {
                    prev
                } else {
                    self.step_to_business_day(date, 1)
                }
            }
        }
    }

    /// Moves `n` business days forward (backward when negative). With `n == 0`
    /// the date is rolled forward to a business day.
    pub fn add_business_days(&self, date: Date, n: i64) -> Date {
        if n == 0 {
            return self.roll(date, Roll::Following);
        }
        let step = n.signum();
        let mut remaining = n.abs();
        let mut current = date;
        while remaining > 0 {
            current = current.add_days(step);
            if self.is_business_day(current) {
                remaining -= 1;
            }
        }
        current
    }

    /// The number of business days in `[start, end)`; negative if `end < start`.
    pub fn business_days_between(&self, start: Date, end: Date) -> i64 {
        if end < start {
            return -self.business_days_between(end, start);
        }
        let mut count = 0;
        let mut day = start;
        while day < end {
            if self.is_business_day(day) {
                count += 1;
            }
            day = day.succ();
        }
        count
    }

    /// The `n`-th (1-based) business day of a month, if the month has that many.
    pub fn nth_business_day(&self, year: i32, month: u8, n: u32) -> Option<Date> {
        let mut seen = 0;
        for day in 1..=days_in_month(year, month) {
            let date = Date::ymd(year, month, day);
            if self.is_business_day(date) {
                seen += 1;
                if seen == n {
                    return Some(date);
                }
            }
        }
        None
    }

    /// The last business day of a month.
    pub fn last_business_day(&self, year: i32, month: u8) -> Option<Date> {
        (1..=days_in_month(year, month))
            .rev()
            .map(|day| Date::ymd(year, month, day))
            .find(|&d| self.is_business_day(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Date {
        Date::parse(text).unwrap()
    }

    fn uk_like() -> Calendar {
        let mut cal = Calendar::new("uk");
        cal.add_holiday("New Year", HolidayRule::parse("01-01 observed").unwrap());
        cal.add_holiday("Good Friday", HolidayRule::parse("easter-2").unwrap());
        cal.add_holiday("Easter Monday", HolidayRule::parse("easter+1").unwrap());
        cal.add_holiday("Spring", HolidayRule::parse("last mon of may").unwrap());
        cal.add_holiday("Christmas", HolidayRule::parse("12-25 observed").unwrap());
        cal
    }

    #[test]
    fn easter_dates() {
        assert_eq!(easter_sunday(2024), d("2024-03-31"));
        assert_eq!(easter_sunday(2025), d("2025-04-20"));
        assert_eq!(easter_sunday(2019), d("2019-04-21"));
        assert_eq!(easter_sunday(2038), d("2038-04-25"));
        assert_eq!(easter_sunday(2285), d("2285-03-22"));
    }

    #[test]
    fn fixed_rules_with_observance() {
        let rule = HolidayRule::parse("12-25 observed").unwrap();
        // 2022-12-25 was a Sunday, 2021-12-25 a Saturday.
        assert_eq!(rule.date_in(2022), Some(d("2022-12-26")));
        assert_eq!(rule.date_in(2021), Some(d("2021-12-24")));
        assert_eq!(rule.date_in(2024), Some(d("2024-12-25")));
        let plain = HolidayRule::parse("12-25").unwrap();
        assert_eq!(plain.date_in(2022), Some(d("2022-12-25")));
    }

    #[test]
    fn leap_day_rule_skips_common_years() {
        let rule = HolidayRule::parse("02-29").unwrap();
        assert_eq!(rule.date_in(2024), Some(d("2024-02-29")));
        assert_eq!(rule.date_in(2023), None);
    }

    #[test]
    fn parse_rule_forms() {
        assert_eq!(
            HolidayRule::parse("3rd Mon of jan").unwrap(),
            HolidayRule::NthWeekday {
                month: 1,
                weekday: Weekday::Mon,
                n: 3
            }
        );
        assert_eq!(
            HolidayRule::parse("2024-07-05").unwrap(),
            HolidayRule::Once(d("2024-07-05"))
        );
        assert_eq!(
            HolidayRule::parse("Easter").unwrap(),
            HolidayRule::Easter { offset: 0 }
        );
        assert_eq!(
            HolidayRule::parse("sep-01").unwrap(),
            HolidayRule::Fixed {
                month: 9,
                day: 1,
                observed: false
            }
        );
    }

    #[test]
    fn parse_rule_errors() {
        for bad in [
            "",
            "13-01",
            "02-30",
            "easter*2",
            "easter+x",
            "6th mon of may",
            "1st xyz of may",
            "1st mon of foo",
            "12-25 maybe",
            "12/25",
        ] {
            assert!(HolidayRule::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn rules_display_in_parseable_form() {
        for text in [
            "12-25 observed",
            "01-01",
            "last Mon of 5",
            "2nd Tue of 11",
            "easter-2",
            "easter",
            "2024-07-05",
        ] {
            let rule = HolidayRule::parse(text).unwrap();
            let shown = rule.to_string();
            assert_eq!(
                HolidayRule::parse(&shown).unwrap(),
                rule,
                "{text} -> {shown}"
            );
        }
        assert_eq!(HolidayRule::Easter { offset: 1 }.to_string(), "easter+1");
    }

    #[test]
    fn observed_new_year_can_fall_in_the_previous_year() {
        let cal = uk_like();
        // 2022-01-01 was a Saturday: observed on Friday 2021-12-31.
        assert_eq!(cal.holiday_name(d("2021-12-31")), Some("New Year"));
        let in_2021: Vec<Date> = cal
            .holidays_in_year(2021)
            .into_iter()
            .map(|(d, _)| d)
            .collect();
        assert!(in_2021.contains(&d("2021-12-31")));
        let in_2022: Vec<Date> = cal
            .holidays_in_year(2022)
            .into_iter()
            .map(|(d, _)| d)
            .collect();
        assert!(!in_2022.contains(&d("2022-01-01")));
    }

    #[test]
    fn holidays_in_year_are_sorted() {
        let cal = uk_like();
        let names: Vec<(String, &str)> = cal
            .holidays_in_year(2024)
            .into_iter()
            .map(|(d, n)| (d.to_string(), n))
            .collect();
        assert_eq!(
            names,
            vec![
                ("2024-01-01".to_string(), "New Year"),
                ("2024-03-29".to_string(), "Good Friday"),
                ("2024-04-01".to_string(), "Easter Monday"),
                ("2024-05-27".to_string(), "Spring"),
                ("2024-12-25".to_string(), "Christmas"),
            ]
        );
    }

    #[test]
    fn custom_weekends() {
        let cal = Calendar::new("gulf")
            .with_weekend(&[Weekday::Fri, Weekday::Sat])
            .unwrap();
        assert!(cal.is_business_day(d("2024-03-03"))); // Sunday
        assert!(!cal.is_business_day(d("2024-03-01"))); // Friday
        assert!(Calendar::new("never").with_weekend(&Weekday::ALL).is_err());
    }

    #[test]
    fn rolling_conventions() {
        let cal = uk_like();
        // 2024-03-29 Good Friday, 03-30/31 weekend, 04-01 Easter Monday.
        let sat = d("2024-03-30");
        assert_eq!(cal.roll(sat, Roll::Following), d("2024-04-02"));
        assert_eq!(cal.roll(sat, Roll::Preceding), d("2024-03-28"));
        assert_eq!(cal.roll(sat, Roll::ModifiedFollowing), d("2024-03-28"));
        assert_eq!(
            cal.roll(d("2024-06-01"), Roll::ModifiedPreceding),
            d("2024-06-03")
        );
        assert_eq!(cal.roll(d("2024-06-04"), Roll::Preceding), d("2024-06-04"));
    }

    #[test]
    fn business_day_arithmetic() {
        let cal = uk_like();
        assert_eq!(cal.add_business_days(d("2024-03-28"), 1), d("2024-04-02"));
        assert_eq!(cal.add_business_days(d("2024-04-02"), -1), d("2024-03-28"));
        assert_eq!(cal.add_business_days(d("2024-03-30"), 0), d("2024-04-02"));
        assert_eq!(cal.add_business_days(d("2024-06-03"), 5), d("2024-06-10"));
        assert_eq!(
            cal.business_days_between(d("2024-03-25"), d("2024-04-08")),
            8
        );
        assert_eq!(
            cal.business_days_between(d("2024-04-08"), d("2024-03-25")),
            -8
        );
        assert_eq!(
            cal.business_days_between(d("2024-04-08"), d("2024-04-08")),
            0
        );
    }

    #[test]
    fn nth_and_last_business_days() {
        let cal = uk_like();
        assert_eq!(cal.nth_business_day(2024, 4, 1), Some(d("2024-04-02")));
        assert_eq!(cal.nth_business_day(2024, 4, 3), Some(d("2024-04-04")));
        assert_eq!(cal.nth_business_day(2024, 4, 30), None);
        assert_eq!(cal.last_business_day(2024, 3), Some(d("2024-03-28")));
        assert_eq!(cal.last_business_day(2024, 8), Some(d("2024-08-30")));
    }
}
