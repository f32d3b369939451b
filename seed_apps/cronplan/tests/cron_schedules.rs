//! Cron expressions: parsing, matching and fire-time searches.

use cronplan::cron::FieldKind;
use cronplan::{CronExpr, DateTime, Error};

fn cron(text: &str) -> CronExpr {
    CronExpr::parse(text).unwrap()
}

fn dt(text: &str) -> DateTime {
    DateTime::parse(text).unwrap()
}

fn fires(expr: &str, from: &str, until: &str) -> Vec<String> {
    cron(expr)
        .occurrences(dt(from), dt(until))
        .map(|t| t.to_string())
        .collect()
}

#[test]
fn every_minute_fires_on_the_next_minute() {
    let e = cron("* * * * *");
    assert_eq!(
        e.next_after(dt("2024-05-05T10:00:00")).unwrap(),
        dt("2024-05-05T10:01")
    );
    assert_eq!(
        e.next_after(dt("2024-05-05T10:00:59")).unwrap(),
        dt("2024-05-05T10:01")
    );
}

#[test]
fn business_hours_skip_the_weekend() {
    let e = cron("*/30 9-17 * * mon-fri");
    // 2024-03-01 is a Friday.
    assert_eq!(
        e.next_after(dt("2024-03-01T17:30")).unwrap(),
        dt("2024-03-04T09:00")
    );
    assert_eq!(
        e.next_after(dt("2024-03-01T08:59")).unwrap(),
        dt("2024-03-01T09:00")
    );
    assert_eq!(
        e.next_after(dt("2024-03-01T12:10")).unwrap(),
        dt("2024-03-01T12:30")
    );
}

#[test]
fn five_minute_schedule_fires_288_times_a_day() {
    let count = cron("*/5 * * * *")
        .occurrences(dt("2024-01-01"), dt("2024-01-02"))
        .count();
    assert_eq!(count, 288);
}

#[test]
fn daily_macro_counts_days_in_a_leap_february() {
    assert_eq!(fires("@daily", "2024-02-01", "2024-03-01").len(), 29);
    assert_eq!(fires("@daily", "2023-02-01", "2023-03-01").len(), 28);
}

#[test]
fn last_day_of_february_over_three_years() {
    assert_eq!(
        fires("0 0 L 2 *", "2023-01-01", "2026-01-01"),
        [
            "2023-02-28T00:00:00",
            "2024-02-29T00:00:00",
            "2025-02-28T00:00:00"
        ]
    );
}

#[test]
fn first_and_fifteenth_of_each_month() {
    assert_eq!(
        fires("0 6 1,15 * *", "2024-01-10", "2024-03-02"),
        [
            "2024-01-15T06:00:00",
            "2024-02-01T06:00:00",
            "2024-02-15T06:00:00",
            "2024-03-01T06:00:00"
        ]
    );
}

#[test]
fn quarterly_schedule_jumps_whole_months() {
    assert_eq!(
        fires("0 0 1 */3 *", "2024-01-02", "2025-01-02"),
        [
            "2024-04-01T00:00:00",
            "2024-07-01T00:00:00",
            "2024-10-01T00:00:00",
            "2025-01-01T00:00:00"
        ]
    );
}

#[test]
fn sunday_is_zero_or_seven() {
    let a = cron("0 8 * * 0");
    let b = cron("0 8 * * 7");
    let c = cron("0 8 * * SUN");
    assert_eq!(a.normalized(), b.normalized());
    assert_eq!(b.normalized(), c.normalized());
    assert_eq!(
        a.next_after(dt("2024-03-01")).unwrap(),
        dt("2024-03-03T08:00")
    );
}

#[test]
fn weekday_or_month_day_when_both_are_restricted() {
    // The 1st of the month or any Monday.
    assert_eq!(
        fires("0 0 1 * mon", "2024-04-25", "2024-05-15"),
        [
            "2024-04-29T00:00:00",
            "2024-05-01T00:00:00",
            "2024-05-06T00:00:00",
            "2024-05-13T00:00:00"
        ]
    );
}

#[test]
fn prev_before_crosses_midnight_and_leap_day() {
    let e = cron("59 23 * * *");
    assert_eq!(
        e.prev_before(dt("2024-03-01T00:00")).unwrap(),
        dt("2024-02-29T23:59")
    );
    let hourly = cron("@hourly");
    assert_eq!(
        hourly.prev_before(dt("2024-03-01T00:30")).unwrap(),
        dt("2024-03-01T00:00")
    );
}

#[test]
fn prev_before_skips_unselected_months() {
    let e = cron("0 12 15 jun,dec *");
    assert_eq!(
        e.prev_before(dt("2024-06-15T12:00")).unwrap(),
        dt("2023-12-15T12:00")
    );
    assert_eq!(
        e.prev_before(dt("2024-11-01")).unwrap(),
        dt("2024-06-15T12:00")
    );
}

#[test]
fn next_and_prev_bracket_any_instant() {
    let exprs = [
        "*/7 * * * *",
        "15 3 * * 1-5",
        "0 0 L * *",
        "30 */4 10 * fri",
        "0 12 29 2 *",
    ];
    let instants = [
        "2024-01-01T00:00",
        "2024-02-29T13:37:10",
        "2023-12-31T23:59:59",
        "2025-06-15T08:00",
    ];
    for expr in exprs {
        let e = cron(expr);
        for instant in instants {
            let t = dt(instant);
            let next = e.next_after(t).unwrap();
            let prev = e.prev_before(t).unwrap();
            assert!(prev < t && t < next, "{expr} around {instant}");
            assert!(e.matches(next) && e.matches(prev), "{expr}");
            assert!(
                e.prev_before(next).unwrap() <= t,
                "{expr} has a fire time inside ({t}, {next})"
            );
            assert!(
                e.next_after(prev).unwrap() >= t,
                "{expr} has a fire time inside ({prev}, {t})"
            );
        }
    }
}

#[test]
fn matches_agrees_with_occurrences_over_a_day() {
    for expr in ["*/13 */5 * * *", "0,30 9-17 * * *", "45 23 * * *"] {
        let e = cron(expr);
        let start = dt("2024-07-04");
        let listed: Vec<DateTime> = e.occurrences(start, start.add_seconds(86_400)).collect();
        let brute: Vec<DateTime> = (0..1_440)
            .map(|m| start.add_seconds(m * 60))
            .filter(|&t| e.matches(t))
            .collect();
        assert_eq!(listed, brute, "{expr}");
    }
}

#[test]
fn normalized_forms() {
    let cases = [
        ("0 0 * * *", "0 0 * * *"),
        ("00 09 * * MON-FRI", "0 9 * * 1-5"),
        ("0-59/15 * * * *", "*/15 * * * *"),
        ("5 0 1 JAN,jul *", "5 0 1 1,7 *"),
        ("0 0 * * sat,sun", "0 0 * * 0,6"),
        ("0 0 l * *", "0 0 L * *"),
        ("@monthly", "0 0 1 * *"),
    ];
    for (input, expected) in cases {
        assert_eq!(cron(input).normalized(), expected, "{input}");
    }
}

#[test]
fn invalid_expressions() {
    let cases = [
        ("61 * * * *", "minute field: value 61 out of range 0-59"),
        ("* * * * * *", "expected 5 fields, found 6"),
        ("@reboot", "unknown macro @reboot"),
        ("a * * * *", "minute field: expected a number"),
        ("*/0 * * * *", "minute field: step must be at least 1"),
        ("0 0 31 2 *", "day-of-month 31 never occurs"),
        ("0 0 * 0 *", "month field: value 0 out of range 1-12"),
        ("0 0 * * 8", "day-of-week field: value 8 out of range 0-7"),
        ("", "expected 5 fields, found 0"),
    ];
    for (input, reason) in cases {
        match CronExpr::parse(input) {
            Err(Error::InvalidCron { expr, reason: got }) => {
                assert_eq!(expr, input.trim());
                assert!(got.contains(reason), "{input:?}: {got}");
            }
            other => panic!("{input:?} gave {other:?}"),
        }
    }
}

#[test]
fn field_accessor_and_from_str() {
    let e: CronExpr = "15,45 8-10 * * *".parse().unwrap();
    assert_eq!(
        e.field(FieldKind::Minute).iter().collect::<Vec<_>>(),
        [15, 45]
    );
    assert_eq!(e.field(FieldKind::Hour).len(), 3);
    assert_eq!(e.field(FieldKind::DayOfMonth).len(), 31);
    assert_eq!(cron("0 0 L * *").field(FieldKind::DayOfMonth).len(), 0);
}

#[test]
#[ignore = "brute-force sweep of every minute in four years; slow in debug builds"]
fn next_after_matches_a_brute_force_sweep() {
    for expr in ["0 0 L * *", "*/20 6-8 * * mon,thu", "0 12 13 * fri"] {
        let e = cron(expr);
        let start = dt("2023-01-01");
        let mut expected = Vec::new();
        for m in 0..(4 * 366 * 1_440) {
            let t = start.add_seconds(m * 60);
            if e.matches(t) {
                expected.push(t);
            }
        }
        let end = start.add_seconds(4 * 366 * 1_440 * 60);
        let found: Vec<DateTime> = e.occurrences(start, end).collect();
        assert_eq!(found, expected, "{expr}");
    }
}
