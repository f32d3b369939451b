//! Civil dates, times and durations through the public API.

use cronplan::{days_in_month, is_leap_year, Date, DateTime, Duration, Error, Weekday};

fn d(text: &str) -> Date {
    text.parse().unwrap()
}

fn dt(text: &str) -> DateTime {
    text.parse().unwrap()
}

#[test]
fn weekdays_across_centuries() {
    assert_eq!(d("1900-01-01").weekday(), Weekday::Mon);
    assert_eq!(d("2000-02-29").weekday(), Weekday::Tue);
    assert_eq!(d("2100-03-01").weekday(), Weekday::Mon);
    assert_eq!(d("1999-12-31").weekday(), Weekday::Fri);
    assert_eq!(d("2024-07-04").weekday(), Weekday::Thu);
}

#[test]
fn day_arithmetic_over_leap_days() {
    assert_eq!(d("2024-02-28").add_days(2), d("2024-03-01"));
    assert_eq!(d("2023-02-28").add_days(1), d("2023-03-01"));
    assert_eq!(d("2024-03-01").add_days(-1), d("2024-02-29"));
    assert_eq!(d("2024-01-01").add_days(366), d("2025-01-01"));
    assert_eq!(d("2024-03-01").days_until(d("2024-02-01")), -29);
}

#[test]
fn month_arithmetic_clamps_and_sticks() {
    let jan31 = d("2024-01-31");
    let feb = jan31.add_months(1);
    assert_eq!(feb, d("2024-02-29"));
    assert_eq!(feb.add_months(1), d("2024-03-29"));
    assert_eq!(jan31.add_months(2), d("2024-03-31"));
    assert_eq!(jan31.add_months(12), d("2025-01-31"));
    assert_eq!(jan31.add_months(-2), d("2023-11-30"));
}

#[test]
fn leap_year_and_month_length_helpers() {
    let leap: Vec<i32> = (1896..=1912).filter(|&y| is_leap_year(y)).collect();
    assert_eq!(leap, [1896, 1904, 1908, 1912]);
    let total: u32 = (1..=12).map(|m| u32::from(days_in_month(2023, m))).sum();
    assert_eq!(total, 365);
}

#[test]
fn iso_week_numbers() {
    assert_eq!(d("2020-12-31").iso_week(), (2020, 53));
    assert_eq!(d("2021-01-04").iso_week(), (2021, 1));
    assert_eq!(d("2016-01-01").iso_week(), (2015, 53));
    assert_eq!(d("2027-01-01").iso_week(), (2026, 53));
}

#[test]
fn dates_order_chronologically() {
    let mut dates = [
        d("2024-03-01"),
        d("2023-12-31"),
        d("2024-02-29"),
        d("2024-01-15"),
    ];
    dates.sort();
    let shown: Vec<String> = dates.iter().map(|x| x.to_string()).collect();
    assert_eq!(
        shown,
        ["2023-12-31", "2024-01-15", "2024-02-29", "2024-03-01"]
    );
}

#[test]
#[should_panic(expected = "invalid date")]
fn ymd_panics_on_a_missing_day() {
    Date::ymd(2023, 2, 29);
}

#[test]
fn date_errors_explain_the_problem() {
    assert_eq!(
        "2024-13-01".parse::<Date>().unwrap_err(),
        Error::InvalidDate("month 13 out of range 1..=12".into())
    );
    assert_eq!(
        "2024-1-01".parse::<Date>().unwrap_err().to_string(),
        "invalid date: expected YYYY-MM-DD, got \"2024-1-01\""
    );
}

#[test]
fn unix_timestamps() {
    assert_eq!(
        DateTime::from_timestamp(1_700_000_000).to_string(),
        "2023-11-14T22:13:20"
    );
    assert_eq!(dt("2023-11-14T22:13:20").timestamp(), 1_700_000_000);
    assert_eq!(dt("1970-01-01").timestamp(), 0);
}

#[test]
fn time_components_and_truncation() {
    let t = dt("2024-06-30 23:59:58");
    assert_eq!((t.hour(), t.minute(), t.second()), (23, 59, 58));
    assert_eq!(t.seconds_of_day(), 86_398);
    assert_eq!(t.truncate_to_minute().to_string(), "2024-06-30T23:59:00");
    assert_eq!(t.add_seconds(2).to_string(), "2024-07-01T00:00:00");
    assert!(t < t.add_seconds(1));
}

#[test]
fn datetime_plus_durations() {
    let t = dt("2024-01-31T12:00");
    assert_eq!(
        (t + Duration::from_days(1)).to_string(),
        "2024-02-01T12:00:00"
    );
    assert_eq!(
        t.plus("1d12h".parse().unwrap()).to_string(),
        "2024-02-02T00:00:00"
    );
    assert_eq!(
        (t - Duration::from_hours(13)).to_string(),
        "2024-01-30T23:00:00"
    );
    assert_eq!(dt("2024-02-02").duration_since(t).to_string(), "1d12h");
}

#[test]
fn datetime_errors() {
    assert_eq!(
        DateTime::parse("2024-01-01T24:00").unwrap_err().to_string(),
        "invalid time: 24:00:00 is not a time of day"
    );
    assert!(matches!(
        DateTime::parse("2024-01-01T7:00"),
        Err(Error::InvalidTime(_))
    ));
    assert!(matches!(
        DateTime::parse("yesterday"),
        Err(Error::InvalidDate(_))
    ));
}

#[test]
fn durations_parse_and_print_canonically() {
    let cases = [
        ("90s", "1m30s"),
        ("1d 24h", "2d"),
        ("0", "0s"),
        ("3600s", "1h"),
        ("2h0m5s", "2h5s"),
    ];
    for (input, shown) in cases {
        assert_eq!(
            Duration::parse(input).unwrap().to_string(),
            shown,
            "{input}"
        );
    }
}

#[test]
fn duration_errors_quote_the_input() {
    let err = Duration::parse("5 minutes").unwrap_err();
    assert!(matches!(err, Error::InvalidDuration(_)));
    assert_eq!(
        err.to_string(),
        "invalid duration: unknown unit ' ' in \"5 minutes\""
    );
    assert_eq!(
        Duration::parse("5").unwrap_err().to_string(),
        "invalid duration: missing unit after 5 in \"5\""
    );
}

#[test]
fn weekday_cycle_closes() {
    let mut day = Weekday::Wed;
    for _ in 0..7 {
        day = day.succ();
    }
    assert_eq!(day, Weekday::Wed);
    let names: Vec<String> = Weekday::ALL.iter().map(|w| w.to_string()).collect();
    assert_eq!(names, ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]);
    assert!(Weekday::Sun.is_weekend() && !Weekday::Fri.is_weekend());
}

#[test]
fn a_time_of_day_is_checked_field_by_field() {
    let date = d("2024-02-29");
    assert!(DateTime::new(date, 23, 59, 59).is_ok());
    for (h, m, s) in [(24, 0, 0), (0, 60, 0), (0, 0, 60), (23, 60, 59), (23, 59, 60)] {
        assert!(
            matches!(DateTime::new(date, h, m, s), Err(Error::InvalidTime(_))),
            "{h:02}:{m:02}:{s:02} was accepted"
        );
    }
}

#[test]
#[should_panic(expected = "factor must be finite and non-negative")]
fn scaling_by_a_negative_factor_panics() {
    let _ = Duration::from_secs(60).mul_f64(-0.5);
}

#[test]
#[should_panic(expected = "factor must be finite and non-negative")]
fn scaling_by_nan_panics() {
    let _ = Duration::from_secs(60).mul_f64(f64::NAN);
}
