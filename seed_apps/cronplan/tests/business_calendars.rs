//! Business calendars: holiday rules, observance and business-day arithmetic.

use cronplan::{easter_sunday, Calendar, Date, Error, HolidayRule, Roll, Weekday};

fn d(text: &str) -> Date {
    Date::parse(text).unwrap()
}

fn us_like() -> Calendar {
    let mut cal = Calendar::new("us");
    for (name, rule) in [
        ("New Year", "01-01 observed"),
        ("MLK", "3rd mon of jan"),
        ("Memorial", "last mon of may"),
        ("Independence", "07-04 observed"),
        ("Labor", "1st mon of sep"),
        ("Thanksgiving", "4th thu of nov"),
        ("Christmas", "12-25 observed"),
    ] {
        cal.add_holiday(name, HolidayRule::parse(rule).unwrap());
    }
    cal
}

fn listed(cal: &Calendar, year: i32) -> Vec<String> {
    cal.holidays_in_year(year)
        .into_iter()
        .map(|(date, name)| format!("{date} {name}"))
        .collect()
}

#[test]
fn holidays_of_2024() {
    assert_eq!(
        listed(&us_like(), 2024),
        [
            "2024-01-01 New Year",
            "2024-01-15 MLK",
            "2024-05-27 Memorial",
            "2024-07-04 Independence",
            "2024-09-02 Labor",
            "2024-11-28 Thanksgiving",
            "2024-12-25 Christmas"
        ]
    );
}

#[test]
fn saturday_holidays_move_to_friday() {
    let cal = us_like();
    // 2026-07-04 is a Saturday.
    assert_eq!(cal.holiday_name(d("2026-07-03")), Some("Independence"));
    assert_eq!(cal.holiday_name(d("2026-07-04")), None);
    assert!(!cal.is_business_day(d("2026-07-03")));
}

#[test]
fn observed_dates_can_land_in_the_previous_year() {
    let holidays = listed(&us_like(), 2027);
    assert_eq!(holidays.len(), 8);
    assert_eq!(holidays[6], "2027-12-24 Christmas");
    assert_eq!(holidays[7], "2027-12-31 New Year");
    assert_eq!(listed(&us_like(), 2028)[0], "2028-01-17 MLK");
}

#[test]
fn counting_business_days() {
    let cal = us_like();
    assert_eq!(
        cal.business_days_between(d("2024-11-01"), d("2024-12-01")),
        20
    );
    assert_eq!(
        cal.business_days_between(d("2024-01-01"), d("2025-01-01")),
        255
    );
}

#[test]
fn adding_business_days_around_thanksgiving() {
    let cal = us_like();
    assert_eq!(cal.add_business_days(d("2024-11-27"), 1), d("2024-11-29"));
    assert_eq!(cal.add_business_days(d("2024-11-27"), 3), d("2024-12-03"));
    assert_eq!(cal.add_business_days(d("2024-12-02"), -2), d("2024-11-27"));
}

#[test]
fn adding_then_counting_round_trips() {
    let cal = us_like();
    let start = d("2024-12-20");
    for n in 1..=15 {
        let end = cal.add_business_days(start, n);
        assert_eq!(
            cal.business_days_between(start.succ(), end.succ()),
            n,
            "n = {n}"
        );
    }
}

#[test]
fn first_and_last_business_days() {
    let cal = us_like();
    assert_eq!(cal.nth_business_day(2024, 9, 1), Some(d("2024-09-03")));
    assert_eq!(cal.nth_business_day(2024, 1, 1), Some(d("2024-01-02")));
    assert_eq!(cal.last_business_day(2024, 12), Some(d("2024-12-31")));
    assert_eq!(cal.last_business_day(2027, 12), Some(d("2027-12-30")));
}

#[test]
fn modified_following_stays_in_the_month() {
    let cal = us_like();
    // 2025-05-31 is a Saturday; the following business day is in June.
    assert_eq!(cal.roll(d("2025-05-31"), Roll::Following), d("2025-06-02"));
    assert_eq!(
        cal.roll(d("2025-05-31"), Roll::ModifiedFollowing),
        d("2025-05-30")
    );
    // Memorial Day 2025 (05-26) rolls forward within May.
    assert_eq!(
        cal.roll(d("2025-05-26"), Roll::ModifiedFollowing),
        d("2025-05-27")
    );
    assert_eq!(cal.roll(d("2025-05-26"), Roll::Preceding), d("2025-05-23"));
}

#[test]
fn one_off_and_easter_holidays() {
    let mut cal = Calendar::new("extra");
    cal.add_holiday("Good Friday", HolidayRule::parse("easter-2").unwrap());
    cal.add_holiday("Closure", HolidayRule::parse("2025-01-09").unwrap());
    assert_eq!(easter_sunday(2025), d("2025-04-20"));
    assert_eq!(cal.holiday_name(d("2025-04-18")), Some("Good Friday"));
    assert_eq!(cal.holiday_name(d("2025-01-09")), Some("Closure"));
    assert_eq!(cal.holiday_name(d("2026-01-09")), None);
    assert_eq!(cal.holidays_in_year(2026).len(), 1);
}

#[test]
fn first_matching_rule_names_a_shared_date() {
    let mut cal = Calendar::new("dup");
    cal.add_holiday("First", HolidayRule::parse("03-01").unwrap());
    cal.add_holiday("Second", HolidayRule::parse("1st fri of mar").unwrap());
    // 2024-03-01 is a Friday, so both rules land on it.
    assert_eq!(cal.holiday_name(d("2024-03-01")), Some("First"));
    assert_eq!(cal.holidays_in_year(2024).len(), 2);
}

#[test]
fn friday_saturday_weekend() {
    let cal = Calendar::new("gulf")
        .with_weekend(&[Weekday::Fri, Weekday::Sat])
        .unwrap();
    // Thursday 2024-03-07 + 1 business day skips Fri and Sat.
    assert_eq!(cal.add_business_days(d("2024-03-07"), 1), d("2024-03-10"));
    assert_eq!(cal.name(), "gulf");
    let err = Calendar::new("closed")
        .with_weekend(&Weekday::ALL)
        .unwrap_err();
    assert_eq!(
        err,
        Error::InvalidArgument("calendar 'closed' has no working days".into())
    );
}

#[test]
fn holiday_rule_errors() {
    let err = HolidayRule::parse("fifth monday in may").unwrap_err();
    assert!(matches!(err, Error::InvalidHoliday(_)));
    assert!(err.to_string().contains("\"fifth monday in may\""), "{err}");
    assert!(HolidayRule::parse("00-10").is_err());
}

#[test]
fn a_month_without_a_business_day_has_no_first_or_last_one() {
    // Only Sundays are working days, and every Sunday of February 2025 is a holiday.
    let mut cal = Calendar::new("sundays")
        .with_weekend(&[
            Weekday::Mon,
            Weekday::Tue,
            Weekday::Wed,
            Weekday::Thu,
            Weekday::Fri,
            Weekday::Sat,
        ])
        .unwrap();
    for day in ["2025-02-02", "2025-02-09", "2025-02-16", "2025-02-23"] {
        cal.add_holiday(day, HolidayRule::Once(d(day)));
    }
    assert_eq!(cal.last_business_day(2025, 2), None);
    assert_eq!(cal.nth_business_day(2025, 2, 1), None);
    assert_eq!(cal.last_business_day(2025, 3), Some(d("2025-03-30")));
}

#[test]
fn a_holiday_observed_after_new_year_is_named_in_the_new_year() {
    // 2023-12-31 was a Sunday: observed on Monday 2024-01-01, in the next year.
    let mut cal = Calendar::new("eve");
    cal.add_holiday("New Year's Eve", HolidayRule::parse("12-31 observed").unwrap());
    assert_eq!(cal.holiday_name(d("2024-01-01")), Some("New Year's Eve"));
    assert_eq!(cal.holiday_name(d("2023-12-31")), None);
    assert!(!cal.is_business_day(d("2024-01-01")));
    assert_eq!(cal.holiday_name(d("2024-12-31")), Some("New Year's Eve"));
}
