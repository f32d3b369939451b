//! The job specification format: parsing, error positions and validation.

use cronplan::{parse_spec, Duration, Error, Overlap, Weekday};

const NIGHTLY: &str = r#"
# The nightly data pipeline.
[pool db]
capacity = 2

[pool cpu]
capacity = 4   # shared build hosts

[calendar ops]
weekend = sat, sun
holiday = "New Year: 01-01 observed"
holiday = "Year-end freeze: 12-31"

[job extract]
duration = 20m
pool = db
schedule = "0 1 * * *"
calendar = ops
overlap = skip

[job transform]
duration = 1h
after = extract
pool = cpu
priority = 5
retry = 3 exponential 30s x2 max 5m jitter full
fail = 1

[job load]
duration = 15m
after = transform
pool = db

[job report]
duration = 5m
after = load, transform
schedule = "30 7 * * mon-fri" # weekday mornings
"#;

fn line_of(text: &str) -> Option<usize> {
    parse_spec(text).unwrap_err().line()
}

#[test]
fn sections_are_collected_in_order() {
    let spec = parse_spec(NIGHTLY).unwrap();
    let jobs: Vec<&str> = spec.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(jobs, ["extract", "transform", "load", "report"]);
    let pools: Vec<(&str, u32)> = spec
        .pools
        .iter()
        .map(|p| (p.name.as_str(), p.capacity))
        .collect();
    assert_eq!(pools, [("db", 2), ("cpu", 4)]);
    assert_eq!(spec.calendars.len(), 1);
    spec.validate().unwrap();
}

#[test]
fn job_fields_are_typed() {
    let spec = parse_spec(NIGHTLY).unwrap();
    let t = spec.job("transform").unwrap();
    assert_eq!(t.duration, Duration::from_hours(1));
    assert_eq!(t.after, ["extract"]);
    assert_eq!(t.pool.as_deref(), Some("cpu"));
    assert_eq!(t.priority, 5);
    assert_eq!(t.fail_times, 1);
    assert_eq!(
        t.retry.to_string(),
        "3 exponential 30s x2 max 5m jitter full"
    );
    assert_eq!(t.line, 21);
    let e = spec.job("extract").unwrap();
    assert_eq!(e.schedule.as_ref().unwrap().normalized(), "0 1 * * *");
    assert_eq!(e.calendar.as_deref(), Some("ops"));
    assert_eq!(e.overlap, Overlap::Skip);
    assert_eq!(spec.job("load").unwrap().overlap, Overlap::Allow);
}

#[test]
fn quoted_values_keep_hashes_but_cron_rejects_them() {
    // The quoted schedule keeps its '#', which then is not valid cron syntax.
    let text = "[job x]\nduration = 1m\nschedule = \"0 0 * * * # hi\"\n";
    let err = parse_spec(text).unwrap_err();
    assert_eq!(err.line(), Some(3));
    assert!(
        err.to_string().contains("expected 5 fields, found 7"),
        "{err}"
    );
    let ok = parse_spec("[job x]\nduration = \"1m\" # trailing\n").unwrap();
    assert_eq!(ok.jobs[0].duration, Duration::from_mins(1));
}

#[test]
fn calendar_sections() {
    let spec = parse_spec(NIGHTLY).unwrap();
    let ops = spec.calendar("ops").unwrap();
    let names: Vec<&str> = ops.holidays().iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["New Year", "Year-end freeze"]);
    let weekend = parse_spec("[calendar c]\nweekend = fri, saturday\n").unwrap();
    let cal = &weekend.calendars[0];
    assert!(cal.is_weekend(cronplan::Date::ymd(2024, 3, 1)));
    assert_eq!(cronplan::Date::ymd(2024, 3, 1).weekday(), Weekday::Fri);
    assert!(!cal.is_weekend(cronplan::Date::ymd(2024, 3, 3)));
}

#[test]
fn windows_line_endings_and_blank_files() {
    let spec = parse_spec("[job a]\r\nduration = 2m\r\n").unwrap();
    assert_eq!(spec.jobs[0].duration, Duration::from_mins(2));
    assert!(parse_spec("").unwrap().jobs.is_empty());
    assert!(parse_spec("\n# only comments\n\n").unwrap().jobs.is_empty());
}

#[test]
fn key_before_any_section() {
    let err = parse_spec("duration = 5m\n[job a]\n").unwrap_err();
    assert_eq!(
        err,
        Error::Spec {
            line: 1,
            message: "key 'duration' appears before any section".into()
        }
    );
}

#[test]
fn duplicate_sections_point_at_the_first() {
    let err = parse_spec("[job a]\nduration = 1m\n\n[job a]\nduration = 2m\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 4: duplicate job 'a' (first defined on line 1)"
    );
    // The same name may be used by different kinds of section.
    assert!(parse_spec("[job a]\nduration = 1m\n[pool a]\ncapacity = 1\n").is_ok());
}

#[test]
fn duplicate_keys_but_repeatable_holidays() {
    let err = parse_spec("[job a]\nduration = 1m\nduration = 2m\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 3: duplicate key 'duration' (first set on line 2)"
    );
    let ok = parse_spec("[calendar c]\nholiday = \"A: 01-01\"\nholiday = \"B: 01-02\"\n").unwrap();
    assert_eq!(ok.calendars[0].holidays().len(), 2);
}

#[test]
fn unknown_keys_are_named() {
    let err = parse_spec("[job a]\nduration = 1m\ncolour = red\n").unwrap_err();
    assert_eq!(err.to_string(), "line 3: unknown key 'colour' in job 'a'");
    let err = parse_spec("[pool p]\ncapacity = 1\nsize = 2\n").unwrap_err();
    assert_eq!(err.to_string(), "line 3: unknown key 'size' in pool 'p'");
}

#[test]
fn missing_required_keys_point_at_the_header() {
    assert_eq!(line_of("\n\n[job a]\npriority = 1\n"), Some(3));
    let err = parse_spec("[pool p]\n").unwrap_err();
    assert_eq!(err.to_string(), "line 1: pool 'p' has no capacity");
}

#[test]
fn bad_values_point_at_their_line() {
    assert_eq!(line_of("[job a]\nduration = soon\n"), Some(2));
    assert_eq!(
        line_of("[job a]\nduration = 1m\npriority = high\n"),
        Some(3)
    );
    assert_eq!(line_of("[job a]\nduration = 1m\nretry = lots\n"), Some(3));
    assert_eq!(
        line_of("[job a]\nduration = 1m\noverlap = maybe\n"),
        Some(3)
    );
    assert_eq!(line_of("[job a]\nduration = 1m\nafter = b, b\n"), Some(3));
    assert_eq!(line_of("[pool p]\ncapacity = 0\n"), Some(2));
    assert_eq!(line_of("[calendar c]\nholiday = 01-01\n"), Some(2));
    assert_eq!(line_of("[calendar c]\nweekend = funday\n"), Some(2));
}

#[test]
fn malformed_lines() {
    let err = parse_spec("[job a]\nduration 5m\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 2: expected 'key = value' or a [section], found \"duration 5m\""
    );
    assert_eq!(line_of("[job a]\nduration = \"5m\n"), Some(2));
    assert_eq!(line_of("[job a\n"), Some(1));
    assert_eq!(line_of("[job a]\nbad key = 1\n"), Some(2));
}

#[test]
fn validation_finds_dangling_references() {
    let unknown_pool = parse_spec("[job a]\nduration = 1m\npool = gpu\n").unwrap();
    assert_eq!(
        unknown_pool.validate(),
        Err(Error::UnknownPool("gpu".into()))
    );
    let unknown_cal = parse_spec("[job a]\nduration = 1m\ncalendar = xmas\n").unwrap();
    assert_eq!(
        unknown_cal.validate(),
        Err(Error::UnknownCalendar("xmas".into()))
    );
    let unknown_job = parse_spec("[job a]\nduration = 1m\nafter = ghost\n").unwrap();
    assert_eq!(
        unknown_job.validate().unwrap_err().to_string(),
        "unknown job 'ghost'"
    );
}

#[test]
fn validation_finds_cycles() {
    let spec = parse_spec(
        "[job a]\nduration = 1m\nafter = c\n[job b]\nduration = 1m\nafter = a\n[job c]\nduration = 1m\nafter = b\n",
    )
    .unwrap();
    assert_eq!(
        spec.validate().unwrap_err().to_string(),
        "dependency cycle: a -> b -> c -> a"
    );
    let self_loop = parse_spec("[job a]\nduration = 1m\nafter = a\n").unwrap();
    assert_eq!(
        self_loop.validate(),
        Err(Error::Cycle(vec!["a".into(), "a".into()]))
    );
}
