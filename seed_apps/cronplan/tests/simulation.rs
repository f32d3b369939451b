//! The workflow simulator: dependencies, pools, priorities, retries and failures.

use cronplan::{
    parse_spec, simulate, Backoff, DateTime, Duration, Error, JobSpec, JobState, RetryPolicy,
    RunLog, SimOptions, Spec,
};

fn mins(m: u64) -> Duration {
    Duration::from_mins(m)
}

fn start() -> DateTime {
    DateTime::parse("2024-05-01T00:00").unwrap()
}

fn run(spec: &Spec) -> RunLog {
    simulate(spec, start(), &SimOptions::default()).unwrap()
}

fn starts(log: &RunLog, job: &str) -> Vec<u64> {
    log.attempts_of(job).iter().map(|a| a.start).collect()
}

fn flaky(name: &str, minutes: u64, fail_times: u32, retry: &str) -> JobSpec {
    let mut job = JobSpec::new(name, mins(minutes));
    job.fail_times = fail_times;
    job.retry = RetryPolicy::parse(retry).unwrap();
    job
}

#[test]
fn diamond_waits_for_the_slower_branch() {
    let mut spec = Spec::new();
    spec.add_job(JobSpec::new("a", mins(10))).unwrap();
    spec.add_job(JobSpec::new("b", mins(20)).after(&["a"]))
        .unwrap();
    spec.add_job(JobSpec::new("c", mins(5)).after(&["a"]))
        .unwrap();
    spec.add_job(JobSpec::new("d", mins(10)).after(&["b", "c"]))
        .unwrap();
    let log = run(&spec);
    assert_eq!(starts(&log, "b"), [600]);
    assert_eq!(starts(&log, "c"), [600]);
    assert_eq!(starts(&log, "d"), [1_800]);
    assert_eq!(log.makespan(), mins(40));
    assert!(log.is_success());
}

#[test]
fn pool_capacity_limits_concurrency() {
    let mut spec = Spec::new();
    spec.add_pool("db", 2).unwrap();
    for name in ["j1", "j2", "j3", "j4"] {
        spec.add_job(JobSpec::new(name, mins(10)).in_pool("db"))
            .unwrap();
    }
    let log = run(&spec);
    assert_eq!(log.makespan(), mins(20));
    assert_eq!(log.max_parallelism(), 2);
    assert_eq!(starts(&log, "j2"), [0]);
    assert_eq!(starts(&log, "j3"), [600]);
}

#[test]
fn higher_priority_runs_first() {
    let mut spec = Spec::new();
    spec.add_pool("one", 1).unwrap();
    spec.add_job(JobSpec::new("a", mins(1)).in_pool("one"))
        .unwrap();
    spec.add_job(JobSpec::new("b", mins(1)).in_pool("one").with_priority(5))
        .unwrap();
    spec.add_job(JobSpec::new("c", mins(1)).in_pool("one").with_priority(1))
        .unwrap();
    let log = run(&spec);
    let order: Vec<&str> = log.attempts.iter().map(|a| a.job.as_str()).collect();
    assert_eq!(order, ["b", "c", "a"]);
    assert_eq!(starts(&log, "a"), [120]);
}

#[test]
fn priority_beats_a_longer_chain() {
    let mut spec = Spec::new();
    spec.add_pool("one", 1).unwrap();
    spec.add_job(JobSpec::new("long", mins(100)).in_pool("one"))
        .unwrap();
    spec.add_job(
        JobSpec::new("urgent", mins(1))
            .in_pool("one")
            .with_priority(1),
    )
    .unwrap();
    let log = run(&spec);
    assert_eq!(starts(&log, "urgent"), [0]);
    assert_eq!(starts(&log, "long"), [60]);
}

#[test]
fn longer_remaining_chain_breaks_priority_ties() {
    let mut spec = Spec::new();
    spec.add_pool("one", 1).unwrap();
    spec.add_job(JobSpec::new("alpha", mins(1)).in_pool("one"))
        .unwrap();
    spec.add_job(JobSpec::new("beta", mins(1)).in_pool("one"))
        .unwrap();
    spec.add_job(JobSpec::new("gamma", mins(30)).after(&["beta"]))
        .unwrap();
    let log = run(&spec);
    assert_eq!(starts(&log, "beta"), [0]);
    assert_eq!(starts(&log, "alpha"), [60]);
    assert_eq!(log.makespan(), mins(31));
}

#[test]
fn fixed_backoff_spaces_the_retries() {
    let mut spec = Spec::new();
    spec.add_job(flaky("f", 10, 2, "3 fixed 5m")).unwrap();
    let log = run(&spec);
    assert_eq!(starts(&log, "f"), [0, 900, 1_800]);
    let outcomes: Vec<bool> = log.attempts_of("f").iter().map(|a| a.succeeded).collect();
    assert_eq!(outcomes, [false, false, true]);
    assert_eq!(log.attempts_of("f")[1].ready_at, 900);
    assert_eq!(
        log.state("f"),
        Some(&JobState::Succeeded {
            attempts: 3,
            finished: 2_400
        })
    );
    assert_eq!(log.retries(), 2);
}

#[test]
fn exponential_backoff_grows() {
    let mut spec = Spec::new();
    spec.add_job(flaky("f", 1, 3, "4 exponential 1m x3"))
        .unwrap();
    let log = run(&spec);
    assert_eq!(starts(&log, "f"), [0, 120, 360, 960]);
    assert!(log.is_success());
}

#[test]
fn jitter_is_bounded_and_reproducible() {
    let mut spec = Spec::new();
    spec.add_job(flaky("f", 1, 4, "5 fixed 10m jitter full"))
        .unwrap();
    let options = SimOptions {
        seed: 7,
        ..SimOptions::default()
    };
    let a = simulate(&spec, start(), &options).unwrap();
    let b = simulate(&spec, start(), &options).unwrap();
    assert_eq!(a, b);
    let attempts = a.attempts_of("f");
    assert_eq!(attempts.len(), 5);
    for pair in attempts.windows(2) {
        let gap = pair[1].start - pair[0].end;
        assert!(gap <= 600, "gap {gap}");
    }
}

#[test]
fn failure_skips_only_downstream_jobs() {
    let mut spec = Spec::new();
    spec.add_job(flaky("a", 5, 1, "none")).unwrap();
    spec.add_job(JobSpec::new("b", mins(5)).after(&["a"]))
        .unwrap();
    spec.add_job(JobSpec::new("c", mins(5))).unwrap();
    spec.add_job(JobSpec::new("d", mins(5)).after(&["b", "c"]))
        .unwrap();
    let log = run(&spec);
    assert_eq!(log.failed(), ["a"]);
    assert_eq!(log.succeeded(), ["c"]);
    assert_eq!(log.skipped(), ["b", "d"]);
    assert_eq!(
        log.state("d"),
        Some(&JobState::Skipped {
            blocked_by: "a".into()
        })
    );
    assert!(log.attempts_of("d").is_empty());
}

#[test]
fn waiting_for_a_slot_is_recorded() {
    let mut spec = Spec::new();
    spec.add_pool("one", 1).unwrap();
    spec.add_job(JobSpec::new("x", mins(10)).in_pool("one"))
        .unwrap();
    spec.add_job(JobSpec::new("y", mins(10)).in_pool("one"))
        .unwrap();
    let log = run(&spec);
    let y = log.attempts_of("y")[0];
    assert_eq!((y.ready_at, y.start, y.wait()), (0, 600, 600));
}

#[test]
fn wall_clock_times_cross_midnight() {
    let mut spec = Spec::new();
    spec.add_job(JobSpec::new("a", mins(15))).unwrap();
    spec.add_job(JobSpec::new("b", mins(15)).after(&["a"]))
        .unwrap();
    let t = DateTime::parse("2024-05-01T23:50").unwrap();
    let log = simulate(&spec, t, &SimOptions::default()).unwrap();
    assert_eq!(
        log.started_at("b").unwrap().to_string(),
        "2024-05-02T00:05:00"
    );
    assert_eq!(
        log.finished_at("b").unwrap().to_string(),
        "2024-05-02T00:20:00"
    );
    assert_eq!(log.started_at("zzz"), None);
}

#[test]
fn zero_duration_jobs_complete_instantly() {
    let mut spec = Spec::new();
    spec.add_job(JobSpec::new("a", Duration::ZERO)).unwrap();
    spec.add_job(JobSpec::new("b", Duration::ZERO).after(&["a"]))
        .unwrap();
    spec.add_job(JobSpec::new("c", mins(5)).after(&["b"]))
        .unwrap();
    let log = run(&spec);
    assert_eq!(starts(&log, "c"), [0]);
    assert_eq!(log.makespan(), mins(5));
}

#[test]
fn empty_specs_and_bad_references() {
    let log = run(&Spec::new());
    assert!(log.is_success() && log.attempts.is_empty());
    assert_eq!(log.makespan(), Duration::ZERO);
    let mut spec = Spec::new();
    spec.add_job(JobSpec::new("a", mins(1)).after(&["nope"]))
        .unwrap();
    assert_eq!(
        simulate(&spec, start(), &SimOptions::default()),
        Err(Error::UnknownJob("nope".into()))
    );
}

#[test]
fn global_limit_applies_across_pools() {
    let mut spec = Spec::new();
    for name in ["p", "q", "r"] {
        spec.add_job(JobSpec::new(name, mins(10))).unwrap();
    }
    let options = SimOptions {
        max_parallel: Some(2),
        ..SimOptions::default()
    };
    let log = simulate(&spec, start(), &options).unwrap();
    assert_eq!(log.makespan(), mins(20));
    assert_eq!(starts(&log, "r"), [600]);
}

#[test]
fn parsed_pipeline_end_to_end() {
    let spec = parse_spec(
        "[pool db]\ncapacity = 1\n[pool cpu]\ncapacity = 2\n\
         [job extract]\nduration = 20m\npool = db\n\
         [job transform]\nduration = 1h\nafter = extract\npool = cpu\nfail = 1\nretry = 3 exponential 30s\n\
         [job load]\nduration = 15m\nafter = transform\npool = db\n\
         [job report]\nduration = 5m\nafter = load, transform\n",
    )
    .unwrap();
    let log = run(&spec);
    assert_eq!(starts(&log, "transform"), [1_200, 4_830]);
    assert_eq!(starts(&log, "report"), [9_330]);
    assert_eq!(log.makespan().to_string(), "2h40m30s");
    assert_eq!(
        RetryPolicy::parse("3 exponential 30s").unwrap().backoff,
        Backoff::Exponential {
            initial: Duration::from_secs(30),
            factor: 2
        }
    );
}
