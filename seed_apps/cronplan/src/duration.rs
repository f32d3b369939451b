//! Whole-second durations with a compact text form such as `1h30m`.

use crate::error::{Error, Result};
use std::fmt;
use std::iter::Sum;
use std::ops::{Add, AddAssign, Div, Mul, Sub};
use std::str::FromStr;

/// The units of the text form, largest first.
const UNITS: [(char, u64); 4] = [('d', 86_400), ('h', 3_600), ('m', 60), ('s', 1)];

/// A non-negative span of time with one-second resolution.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration {
    secs: u64,
}

impl Duration {
    /// The empty duration.
    pub const ZERO: Duration = Duration { secs: 0 };
    /// The largest representable duration.
    pub const MAX: Duration = Duration { secs: u64::MAX };

    /// A duration of `secs` seconds.
    pub const fn from_secs(secs: u64) -> Duration {
        Duration { secs }
    }

    /// A duration of `mins` minutes; panics with "duration overflow" if it does not fit.
    pub fn from_mins(mins: u64) -> Duration {
        Duration::from_secs(mins.checked_mul(60).expect("duration overflow"))
    }

    /// A duration of `hours` hours; panics with "duration overflow" if it does not fit.
    pub fn from_hours(hours: u64) -> Duration {
        Duration::from_secs(hours.checked_mul(3_600).expect("duration overflow"))
    }

    /// A duration of `days` days; panics with "duration overflow" if it does not fit.
    pub fn from_days(days: u64) -> Duration {
        Duration::from_secs(days.checked_mul(86_400).expect("duration overflow"))
    }

    /// The whole number of seconds.
    pub const fn as_secs(self) -> u64 {
        self.secs
    }

    /// The whole number of minutes, rounded down.
    pub const fn as_mins(self) -> u64 {
        self.secs / 60
    }

    /// Whether this is the empty duration.
    pub const fn is_zero(self) -> bool {
        self.secs == 0
    }

    /// `self + other`, or `None` on overflow.
    pub fn checked_add(self, other: Duration) -> Option<Duration> {
        self.secs.checked_add(other.secs).map(Duration::from_secs)
    }

    /// `self * factor`, or `None` on overflow.
    pub fn checked_mul(self, factor: u64) -> Option<Duration> {
        self.secs.checked_mul(factor).map(Duration::from_secs)
    }

    /// `self * factor`, clamped to [`Duration::MAX`].
    pub fn saturating_mul(self, factor: u64) -> Duration {
        Duration::from_secs(self.secs.saturating_mul(factor))
    }

    /// `self - other`, clamped at zero.
    pub fn saturating_sub(self, other: Duration) -> Duration {
        Duration::from_secs(self.secs.saturating_sub(other.secs))
    }

    /// Scales by a non-negative factor, rounding to the nearest second.
    pub fn mul_f64(self, factor: f64) -> Duration {
        assert!(
            factor.is_finite() && factor >= 0.0,
            "factor must be finite and non-negative"
        );
        let scaled = (self.secs as f64 * factor).round();
        if scaled >= u64::MAX as f64 {
            Duration::MAX
        } else {
            Duration::from_secs(scaled as u64)
        }
    }

    /// Parses the compact form: one or more `<number><unit>` parts with units
    /// `d`, `h`, `m` and `s` in decreasing order, optionally separated by spaces.
    /// A bare `0` is also accepted.
    ///
    /// ```
    /// use cronplan::Duration;
    /// assert_eq!(Duration::parse("1h30m").unwrap().as_secs(), 5_400);
    /// assert_eq!(Duration::parse("2d 4h").unwrap().to_string(), "2d4h");
    /// assert!(Duration::parse("30m1h").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Duration> {
        let t = text.trim();
        let fail = |m: String| Error::InvalidDuration(m);
        if t.is_empty() {
            return Err(fail("empty duration".to_string()));
        }
        if t == "0" {
            return Ok(Duration::ZERO);
        }
        let mut total: u64 = 0;
        let mut last_unit: Option<usize> = None;
        let mut chars = t.chars().peekable();
        loop {
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            if chars.peek().is_none() {
                break;
            }
            let mut value: u64 = 0;
            let mut digits = 0;
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                value = value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(d)))
                    .ok_or_else(|| fail(format!("{t:?} is too large")))?;
                digits += 1;
                chars.next();
            }
            if digits == 0 {
                return Err(fail(format!("expected a number in {t:?}")));
            }
            let unit = match chars.next() {
                Some(c) => c.to_ascii_lowercase(),
                None => return Err(fail(format!("missing unit after {value} in {t:?}"))),
            };
            let idx = UNITS
                .iter()
                .position(|(u, _)| *u == unit)
                .ok_or_else(|| fail(format!("unknown unit {unit:?} in {t:?}")))?;
            if let Some(prev) = last_unit {
                if idx <= prev {
                    return Err(fail(format!("units out of order in {t:?}")));
                }
            }
            last_unit = Some(idx);
            total = value
                .checked_mul(UNITS[idx].1)
                .and_then(|v| total.checked_add(v))
                .ok_or_else(|| fail(format!("{t:?} is too large")))?;
        }
        Ok(Duration::from_secs(total))
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.secs == 0 {
            return f.write_str("0s");
        }
        let mut rest = self.secs;
        for (unit, size) in UNITS {
            let n = rest / size;
            rest %= size;
            if n > 0 {
                write!(f, "{n}{unit}")?;
            }
        }
        Ok(())
    }
}

impl FromStr for Duration {
    type Err = Error;

    fn from_str(s: &str) -> Result<Duration> {
        Duration::parse(s)
    }
}

impl Add for Duration {
    type Output = Duration;

    fn add(self, other: Duration) -> Duration {
        self.checked_add(other).expect("duration overflow")
    }
}

impl AddAssign for Duration {
    fn add_assign(&mut self, other: Duration) {
        *self = *self + other;
    }
}

/// Subtraction saturates at zero: durations are never negative.
impl Sub for Duration {
    type Output = Duration;

    fn sub(self, other: Duration) -> Duration {
        self.saturating_sub(other)
    }
}

impl Mul<u64> for Duration {
    type Output = Duration;

    fn mul(self, factor: u64) -> Duration {
        self.checked_mul(factor).expect("duration overflow")
    }
}

impl Div<u64> for Duration {
    type Output = Duration;

    fn div(self, divisor: u64) -> Duration {
        Duration::from_secs(self.secs / divisor)
    }
}

impl Sum for Duration {
    fn sum<I: Iterator<Item = Duration>>(iter: I) -> Duration {
        iter.fold(Duration::ZERO, |acc, d| acc + d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_single_units() {
        assert_eq!(Duration::parse("45s").unwrap(), Duration::from_secs(45));
        assert_eq!(Duration::parse("10m").unwrap(), Duration::from_mins(10));
        assert_eq!(Duration::parse("3h").unwrap(), Duration::from_hours(3));
        assert_eq!(Duration::parse("2d").unwrap(), Duration::from_days(2));
    }

    #[test]
    fn parses_compound_forms_with_spaces_and_capitals() {
        assert_eq!(Duration::parse("1h30m").unwrap().as_secs(), 5_400);
        assert_eq!(Duration::parse(" 1d 2h 3m 4s ").unwrap().as_secs(), 93_784);
        assert_eq!(Duration::parse("1H30M").unwrap().as_secs(), 5_400);
        assert_eq!(Duration::parse("0").unwrap(), Duration::ZERO);
    }

    #[test]
    fn rejects_malformed_text() {
        for bad in [
            "", "  ", "h", "10", "10x", "1m1h", "1h1h", "1 h", "-5m", "1.5h",
        ] {
            assert!(Duration::parse(bad).is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn rejects_overflow() {
        let err = Duration::parse("99999999999999999999s").unwrap_err();
        assert!(err.to_string().contains("too large"), "{err}");
        assert!(Duration::parse("300000000000000d").is_err());
    }

    #[test]
    fn displays_canonical_form() {
        assert_eq!(Duration::ZERO.to_string(), "0s");
        assert_eq!(Duration::from_secs(5_400).to_string(), "1h30m");
        assert_eq!(Duration::from_secs(93_784).to_string(), "1d2h3m4s");
        assert_eq!(Duration::from_secs(86_400).to_string(), "1d");
        assert_eq!(Duration::from_secs(61).to_string(), "1m1s");
    }

    #[test]
    fn display_round_trips_through_parse() {
        for secs in [1, 59, 60, 3_599, 3_600, 86_399, 86_401, 1_000_000] {
            let d = Duration::from_secs(secs);
            assert_eq!(Duration::parse(&d.to_string()).unwrap(), d);
        }
    }

    #[test]
    fn arithmetic_saturates_or_panics_as_documented() {
        let a = Duration::from_mins(5);
        let b = Duration::from_mins(7);
        assert_eq!(a + b, Duration::from_mins(12));
        assert_eq!(a - b, Duration::ZERO);
        assert_eq!(b - a, Duration::from_mins(2));
        assert_eq!(a * 3, Duration::from_mins(15));
        assert_eq!(b / 2, Duration::from_secs(210));
        assert_eq!(Duration::MAX.checked_add(a), None);
        assert_eq!(Duration::MAX.saturating_mul(2), Duration::MAX);
    }

    #[test]
    #[should_panic(expected = "duration overflow")]
    fn adding_past_the_maximum_panics() {
        let _ = Duration::MAX + Duration::from_secs(1);
    }

    #[test]
    fn mul_f64_rounds_to_nearest_second() {
        assert_eq!(
            Duration::from_secs(10).mul_f64(1.25),
            Duration::from_secs(13)
        );
        assert_eq!(Duration::from_secs(10).mul_f64(0.0), Duration::ZERO);
        assert_eq!(
            Duration::from_secs(u64::MAX / 2).mul_f64(4.0),
            Duration::MAX
        );
    }

    #[test]
    fn sums_iterators() {
        let total: Duration = [1u64, 2, 3].iter().map(|&m| Duration::from_mins(m)).sum();
        assert_eq!(total, Duration::from_mins(6));
    }
}
