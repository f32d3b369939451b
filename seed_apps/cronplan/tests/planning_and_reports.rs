//! Window planning, upcoming triggers and the text reports.

use cronplan::report::{gantt, percentile, plan_table, summary, utilization, Align, Table};
use cronplan::{
    parse_spec, plan_window, simulate, upcoming, DateTime, Error, SimOptions, SkipReason, Spec,
};

fn dt(text: &str) -> DateTime {
    DateTime::parse(text).unwrap()
}

const OFFICE: &str = "
[calendar office]
weekend = sat, sun
holiday = \"Founders: 03-06\"

[job digest]
duration = 10m
schedule = \"0 1 * * *\"
calendar = office

[job sync]
duration = 50m
schedule = \"0 1,2 * * *\"
overlap = queue
";

fn office() -> Spec {
    parse_spec(OFFICE).unwrap()
}

#[test]
fn calendar_days_off_are_skipped() {
    let plan = plan_window(&office(), dt("2024-03-01"), dt("2024-03-08")).unwrap();
    let digests: Vec<String> = plan
        .runs_of("digest")
        .iter()
        .map(|r| r.start.date().to_string())
        .collect();
    assert_eq!(
        digests,
        ["2024-03-01", "2024-03-04", "2024-03-05", "2024-03-07"]
    );
    let skipped: Vec<String> = plan
        .skipped
        .iter()
        .map(|s| format!("{} {:?}", s.scheduled.date(), s.reason))
        .collect();
    assert_eq!(
        skipped,
        [
            "2024-03-02 NonBusinessDay",
            "2024-03-03 NonBusinessDay",
            "2024-03-06 NonBusinessDay"
        ]
    );
}

#[test]
fn runs_are_sorted_by_start_then_name() {
    let plan = plan_window(&office(), dt("2024-03-01"), dt("2024-03-01T12:00")).unwrap();
    let shown: Vec<String> = plan
        .runs
        .iter()
        .map(|r| format!("{:02}:{:02} {}", r.start.hour(), r.start.minute(), r.job))
        .collect();
    assert_eq!(shown, ["01:00 digest", "01:00 sync", "02:00 sync"]);
    assert_eq!(plan.max_concurrency(), 2);
}

#[test]
fn runs_per_day_counts_starts() {
    let plan = plan_window(&office(), dt("2024-03-01"), dt("2024-03-04")).unwrap();
    let per_day: Vec<(String, usize)> = plan
        .runs_per_day()
        .into_iter()
        .map(|(d, n)| (d.to_string(), n))
        .collect();
    assert_eq!(
        per_day,
        [
            ("2024-03-01".to_string(), 3),
            ("2024-03-02".to_string(), 2),
            ("2024-03-03".to_string(), 2)
        ]
    );
}

#[test]
fn queued_runs_may_end_after_the_window() {
    let spec =
        parse_spec("[job long]\nduration = 90m\nschedule = \"0 * * * *\"\noverlap = queue\n")
            .unwrap();
    let plan = plan_window(&spec, dt("2024-01-01T00:00"), dt("2024-01-01T03:00")).unwrap();
    let spans: Vec<String> = plan
        .runs
        .iter()
        .map(|r| format!("{}-{}", r.start.hour(), r.end))
        .collect();
    assert_eq!(
        spans,
        [
            "0-2024-01-01T01:30:00",
            "1-2024-01-01T03:00:00",
            "3-2024-01-01T04:30:00"
        ]
    );
    assert_eq!(plan.runs[2].delay().to_string(), "1h");
    assert_eq!(plan.max_concurrency(), 1);
}

#[test]
fn skip_reason_overlap_is_reported() {
    let spec = parse_spec("[job long]\nduration = 90m\nschedule = \"0 * * * *\"\noverlap = skip\n")
        .unwrap();
    let plan = plan_window(&spec, dt("2024-01-01T00:00"), dt("2024-01-01T04:00")).unwrap();
    assert_eq!(plan.runs.len(), 2);
    assert_eq!(plan.skipped.len(), 2);
    assert!(plan.skipped.iter().all(|s| s.reason == SkipReason::Overlap));
}

#[test]
fn planning_validates_the_spec() {
    let spec = parse_spec("[job a]\nduration = 1m\nafter = a\nschedule = @daily\n").unwrap();
    assert!(matches!(
        plan_window(&spec, dt("2024-01-01"), dt("2024-01-02")),
        Err(Error::Cycle(_))
    ));
    assert!(matches!(
        plan_window(&office(), dt("2024-01-02"), dt("2024-01-01")),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn upcoming_respects_calendars() {
    let spec = office();
    // From Friday evening, the next eight triggers are the weekend syncs,
    // then Monday's digest and syncs, then Tuesday's digest.
    let next = upcoming(&spec, dt("2024-03-01T18:00"), 8).unwrap();
    let digests: Vec<String> = next
        .iter()
        .filter(|(_, job)| job == "digest")
        .map(|(t, _)| t.date().to_string())
        .collect();
    assert_eq!(digests, ["2024-03-04", "2024-03-05"]);
    assert_eq!(next[0], (dt("2024-03-02T01:00"), "sync".to_string()));
    assert_eq!(next.len(), 8);
    let only_digest = parse_spec(
        "[calendar office]\nholiday = \"F: 03-06\"\n[job digest]\nduration = 1m\nschedule = \"0 1 * * *\"\ncalendar = office\n",
    )
    .unwrap();
    // Wednesday 2024-03-06 is a holiday.
    let days: Vec<String> = upcoming(&only_digest, dt("2024-03-01T18:00"), 3)
        .unwrap()
        .into_iter()
        .map(|(t, _)| t.date().to_string())
        .collect();
    assert_eq!(days, ["2024-03-04", "2024-03-05", "2024-03-07"]);
}

#[test]
fn upcoming_edge_cases() {
    assert!(upcoming(&office(), dt("2024-03-01"), 0).unwrap().is_empty());
    let unscheduled = parse_spec("[job a]\nduration = 1m\n").unwrap();
    assert!(upcoming(&unscheduled, dt("2024-03-01"), 5)
        .unwrap()
        .is_empty());
}

#[test]
fn plan_table_is_aligned() {
    let plan = plan_window(&office(), dt("2024-03-01"), dt("2024-03-01T12:00")).unwrap();
    assert_eq!(
        plan_table(&plan),
        "start               | job    | end                 | delay\n\
         --------------------+--------+---------------------+------\n\
         2024-03-01T01:00:00 | digest | 2024-03-01T01:10:00 |    0s\n\
         2024-03-01T01:00:00 | sync   | 2024-03-01T01:50:00 |    0s\n\
         2024-03-01T02:00:00 | sync   | 2024-03-01T02:50:00 |    0s\n"
    );
}

fn pipeline_log() -> (Spec, cronplan::RunLog) {
    let spec = parse_spec(
        "[pool db]\ncapacity = 1\n\
         [job a]\nduration = 10m\npool = db\n\
         [job b]\nduration = 10m\npool = db\n\
         [job c]\nduration = 20m\nafter = a\nfail = 1\nretry = 1\n",
    )
    .unwrap();
    let log = simulate(&spec, dt("2024-01-01"), &SimOptions::default()).unwrap();
    (spec, log)
}

#[test]
fn gantt_marks_failures_and_successes() {
    let (_, log) = pipeline_log();
    assert_eq!(
        gantt(&log, 10),
        "a |##........|\n\
         b |..##......|\n\
         c |..xxxx####|\n   \
         0       50m\n"
    );
}

#[test]
fn gantt_shows_skipped_jobs_last() {
    let spec =
        parse_spec("[job up]\nduration = 1m\nfail = 1\n[job down]\nduration = 1m\nafter = up\n")
            .unwrap();
    let log = simulate(&spec, dt("2024-01-01"), &SimOptions::default()).unwrap();
    assert_eq!(gantt(&log, 4), "up   |xxxx|\ndown |----|\n      0  1m\n");
}

#[test]
fn summary_counts_outcomes() {
    let (_, log) = pipeline_log();
    assert_eq!(
        summary(&log),
        "jobs: 3 succeeded, 0 failed, 0 skipped\n\
         attempts: 4 (1 retries)\n\
         makespan: 50m\n\
         wait p50 0s p90 10m\n"
    );
}

#[test]
fn pool_utilization() {
    let (spec, log) = pipeline_log();
    let u = utilization(&log, &spec);
    assert_eq!(u.len(), 1);
    assert!((u["db"] - 0.4).abs() < 1e-9, "{}", u["db"]);
}

#[test]
fn percentiles_of_waits() {
    let (_, log) = pipeline_log();
    let waits: Vec<u64> = log.attempts.iter().map(|a| a.wait()).collect();
    assert_eq!(percentile(&waits, 100.0), Some(600));
    assert_eq!(percentile(&waits, 25.0), Some(0));
}

#[test]
fn tables_with_mixed_alignment() {
    let mut t = Table::new(&["pool", "used", "cap"])
        .align(1, Align::Right)
        .align(2, Align::Right);
    assert!(t.is_empty());
    t.add_row(&["db", "1", "10"]);
    t.add_row(&["scratch", "12", "4"]);
    assert_eq!(
        t.render(),
        "pool    | used | cap\n--------+------+----\ndb      |    1 |  10\nscratch |   12 |   4\n"
    );
}

#[test]
fn unused_pools_and_empty_runs_have_no_utilization() {
    let spec = parse_spec(
        "[pool db]\ncapacity = 2\n[pool idle]\ncapacity = 3\n\
         [job a]\nduration = 30m\npool = db\n",
    )
    .unwrap();
    let log = simulate(&spec, dt("2024-01-01"), &SimOptions::default()).unwrap();
    let u = utilization(&log, &spec);
    assert_eq!(u.keys().collect::<Vec<_>>(), ["db", "idle"]);
    assert_eq!(u["db"], 0.5);
    assert_eq!(u["idle"], 0.0);
}

#[test]
fn a_one_second_run_on_one_slot_is_fully_used() {
    let spec = parse_spec("[pool solo]\ncapacity = 1\n[job tick]\nduration = 1s\npool = solo\n")
        .unwrap();
    let log = simulate(&spec, dt("2024-01-01"), &SimOptions::default()).unwrap();
    assert_eq!(log.makespan().as_secs(), 1);
    assert_eq!(utilization(&log, &spec)["solo"], 1.0);
}
