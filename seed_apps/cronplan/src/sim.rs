//! A deterministic discrete-event simulation of one workflow run: jobs start
//! when their dependencies have succeeded and a pool slot is free, failed
//! attempts are retried after their policy's backoff, and a job that runs out
//! of retries blocks everything downstream.

use crate::datetime::DateTime;
use crate::duration::Duration;
use crate::error::{Error, Result};
use crate::queue::EventQueue;
use crate::rng::SplitMix64;
use crate::spec::Spec;
use std::cmp::Reverse;
use std::collections::BTreeMap;

/// Simulation settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimOptions {
    /// Seed for retry jitter.
    pub seed: u64,
    /// A limit on attempts running at once across all pools.
    pub max_parallel: Option<u32>,
}

/// One attempt of one job. Times are seconds after the run's start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The job.
    pub job: String,
    /// 1 for the first attempt, 2 for the first retry, ...
    pub number: u32,
    /// When the attempt could have started (dependencies done or backoff over).
    pub ready_at: u64,
    /// When it started.
    pub start: u64,
    /// When it ended.
    pub end: u64,
    /// Whether it succeeded.
    pub succeeded: bool,
}

impl Attempt {
    /// Time spent waiting for a slot.
    pub fn wait(&self) -> u64 {
        self.start - self.ready_at
    }
}

/// How a job ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobState {
    /// An attempt succeeded.
    Succeeded { attempts: u32, finished: u64 },
    /// Every allowed attempt failed.
    Failed { attempts: u32, finished: u64 },
    /// Never ran because an upstream job failed.
    Skipped { blocked_by: String },
}

/// The outcome of a simulation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunLog {
    /// When the run started.
    pub start: DateTime,
    /// Every attempt, in start order.
    pub attempts: Vec<Attempt>,
    /// The final state of every job.
    pub states: BTreeMap<String, JobState>,
}

impl RunLog {
    /// The time from the start to the end of the last attempt.
    pub fn makespan(&self) -> Duration {
        Duration::from_secs(self.attempts.iter().map(|a| a.end).max().unwrap_or(0))
    }

    /// The final state of a job.
    pub fn state(&self, job: &str) -> Option<&JobState> {
        self.states.get(job)
    }

    fn names_where(&self, pred: impl Fn(&JobState) -> bool) -> Vec<&str> {
        self.states
            .iter()
            .filter(|(_, s)| pred(s))
            .map(|(n, _)| n.as_str())
            .collect()
    }

    /// Jobs that succeeded, sorted.
    pub fn succeeded(&self) -> Vec<&str> {
        self.names_where(|s| matches!(s, JobState::Succeeded { .. }))
    }

    /// Jobs that failed, sorted.
    pub fn failed(&self) -> Vec<&str> {
        self.names_where(|s| matches!(s, JobState::Failed { .. }))
    }

    /// Jobs that were skipped, sorted.
    pub fn skipped(&self) -> Vec<&str> {
        self.names_where(|s| matches!(s, JobState::Skipped { .. }))
    }

    /// Whether every job succeeded.
    pub fn is_success(&self) -> bool {
        self.states
            .values()
            .all(|s| matches!(s, JobState::Succeeded { .. }))
    }

    /// The attempts of one job, in order.
    pub fn attempts_of(&self, job: &str) -> Vec<&Attempt> {
        self.attempts.iter().filter(|a| a.job == job).collect()
    }

    /// The number of attempts that were retries.
    pub fn retries(&self) -> usize {
        self.attempts.iter().filter(|a| a.number > 1).count()
    }

    /// When a job first started.
    pub fn started_at(&self, job: &str) -> Option<DateTime> {
        let first = self.attempts.iter().find(|a| a.job == job)?;
        Some(self.start.plus(Duration::from_secs(first.start)))
    }

    /// When a job's last attempt ended.
    pub fn finished_at(&self, job: &str) -> Option<DateTime> {
        let last = self.attempts.iter().rev().find(|a| a.job == job)?;
        Some(self.start.plus(Duration::from_secs(last.end)))
    }

    /// The largest number of attempts running at one instant.
    pub fn max_parallelism(&self) -> usize {
        let mut events: Vec<(u64, i32)> = Vec::new();
        for a in self.attempts.iter().filter(|a| a.end > a.start) {
            events.push((a.start, 1));
            events.push((a.end, -1));
        }
        events.sort();
        let mut current = 0;
        let mut best = 0;
        for (_, delta) in events {
            current += delta;
            best = best.max(current);
        }
        best as usize
    }
}

#[derive(Clone, Debug)]
enum Event {
    Finish { job: usize, attempt: u32, ok: bool },
    Retry { job: usize, attempt: u32 },
}

#[derive(Clone, Debug)]
struct Ready {
    job: usize,
    attempt: u32,
    since: u64,
}

struct Simulation<'a> {
    spec: &'a Spec,
    options: &'a SimOptions,
    index: BTreeMap<&'a str, usize>,
    dependents: Vec<Vec<usize>>,
    waiting_on: Vec<usize>,
    bottom_level: Vec<u64>,
    free: BTreeMap<&'a str, u32>,
    running: u32,
    ready: Vec<Ready>,
    states: Vec<Option<JobState>>,
    queue: EventQueue<Event>,
    rng: SplitMix64,
    attempts: Vec<Attempt>,
    now: u64,
}

impl<'a> Simulation<'a> {
    fn new(spec: &'a Spec, options: &'a SimOptions) -> Result<Simulation<'a>> {
        let graph = spec.graph();
        let bottom = graph
            .bottom_levels(|name| spec.job(name).map_or(0, |j| j.duration.as_secs()))
            .map_err(|c| Error::Cycle(c.path))?;
        let index: BTreeMap<&str, usize> = spec
            .jobs
            .iter()
            .enumerate()
            .map(|(i, j)| (j.name.as_str(), i))
            .collect();
        let dependents = spec
            .jobs
            .iter()
            .map(|j| {
                graph
                    .successors(&j.name)
                    .iter()
                    .map(|s| index[s.as_str()])
                    .collect()
            })
            .collect();
        let waiting_on = spec
            .jobs
            .iter()
            .map(|j| graph.predecessors(&j.name).len())
            .collect();
        let bottom_level = spec.jobs.iter().map(|j| bottom[&j.name]).collect();
        let free = spec
            .pools
            .iter()
            .map(|p| (p.name.as_str(), p.capacity))
            .collect();
        Ok(Simulation {
            spec,
            options,
            index,
            dependents,
            waiting_on,
            bottom_level,
            free,
            running: 0,
            ready: Vec::new(),
            states: vec![None; spec.jobs.len()],
            queue: EventQueue::new(),
            rng: SplitMix64::new(options.seed),
            attempts: Vec::new(),
            now: 0,
        })
    }

    /// Starts every ready attempt that can get a slot, best first: higher
    /// priority, then longer remaining chain, then name.
    fn dispatch(&mut self) {
        let spec = self.spec;
        let bottom = &self.bottom_level;
        self.ready.sort_by_key(|r| {
            let job = &spec.jobs[r.job];
            (
                Reverse(job.priority),
                Reverse(bottom[r.job]),
                job.name.as_str(),
                r.attempt,
            )
        });
        let pending = std::mem::take(&mut self.ready);
        for r in pending {
            let job = &spec.jobs[r.job];
            let pool_free = match job.pool.as_deref() {
                Some(p) => self.free.get(p).copied().unwrap_or(0) > 0,
                None => true,
            };
            let under_limit = self.options.max_parallel.is_none_or(|m| self.running < m);
            if !(pool_free && under_limit) {
                self.ready.push(r);
                continue;
            }
            if let Some(p) = job.pool.as_deref() {
                *self.free.get_mut(p).expect("pool exists") -= 1;
            }
            self.running += 1;
            let ok = r.attempt > job.fail_times;
            let end = self.now + job.duration.as_secs();
            self.attempts.push(Attempt {
                job: job.name.clone(),
                number: r.attempt,
                ready_at: r.since,
                start: self.now,
                end,
                succeeded: ok,
            });
            self.queue.schedule(
                end as i64,
                Event::Finish {
                    job: r.job,
                    attempt: r.attempt,
                    ok,
                },
            );
        }
    }

    fn block_downstream(&mut self, failed: usize) {
        let name = &self.spec.jobs[failed].name;
        for d in self.spec.graph().descendants(name) {
            let i = self.index[d.as_str()];
            if self.states[i].is_none() {
                self.states[i] = Some(JobState::Skipped {
                    blocked_by: name.clone(),
                });
            }
        }
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Finish { job, attempt, ok } => {
                let all: &'a Spec = self.spec;
                let spec = &all.jobs[job];
                self.running -= 1;
                if let Some(p) = spec.pool.as_deref() {
                    *self.free.get_mut(p).expect("pool exists") += 1;
                }
                if ok {
                    self.states[job] = Some(JobState::Succeeded {
                        attempts: attempt,
                        finished: self.now,
                    });
                    for k in 0..self.dependents[job].len() {
                        let d = self.dependents[job][k];
                        self.waiting_on[d] -= 1;
                        if self.waiting_on[d] == 0 && self.states[d].is_none() {
                            self.ready.push(Ready {
                                job: d,
                                attempt: 1,
                                since: self.now,
                            });
                        }
                    }
                } else if spec.retry.allows(attempt + 1) {
                    let delay = spec.retry.delay(attempt, &mut self.rng);
                    self.queue.schedule(
                        (self.now + delay.as_secs()) as i64,
                        Event::Retry {
                            job,
                            attempt: attempt + 1,
                        },
                    );
                } else {
                    self.states[job] = Some(JobState::Failed {
                        attempts: attempt,
                        finished: self.now,
                    });
                    self.block_downstream(job);
                }
            }
            Event::Retry { job, attempt } => self.ready.push(Ready {
                job,
                attempt,
                since: self.now,
            }),
        }
    }

    fn run(mut self, start: DateTime) -> Result<RunLog> {
        for (i, waiting) in self.waiting_on.iter().enumerate() {
            if *waiting == 0 {
                self.ready.push(Ready {
                    job: i,
                    attempt: 1,
                    since: 0,
                });
            }
        }
        loop {
            self.dispatch();
            let Some(t) = self.queue.peek_time() else {
                break;
            };
            self.now = t as u64;
            for (_, event) in self.queue.pop_due(t) {
                self.handle(event);
            }
        }
        if !self.ready.is_empty() {
            let names: Vec<&str> = self
                .ready
                .iter()
                .map(|r| self.spec.jobs[r.job].name.as_str())
                .collect();
            return Err(Error::Stalled(format!(
                "{} can never start",
                names.join(", ")
            )));
        }
        let mut states = BTreeMap::new();
        for (job, state) in self.spec.jobs.iter().zip(self.states) {
            let state =
                state.ok_or_else(|| Error::Stalled(format!("{} never finished", job.name)))?;
            states.insert(job.name.clone(), state);
        }
        Ok(RunLog {
            start,
            attempts: self.attempts,
            states,
        })
    }
}

/// Simulates one run of every job in `spec`, starting at `start`.
///
/// ```
/// use cronplan::{parse_spec, simulate, DateTime, SimOptions};
/// let spec = parse_spec("
/// [job fetch]
/// duration = 10m
/// [job build]
/// duration = 20m
/// after = fetch
/// fail = 1
/// retry = 2 fixed 5m
/// ").unwrap();
/// let start = DateTime::parse("2024-05-01T02:00").unwrap();
/// let log = simulate(&spec, start, &SimOptions::default()).unwrap();
/// assert!(log.is_success());
/// assert_eq!(log.makespan().to_string(), "55m");
/// assert_eq!(log.finished_at("build").unwrap().to_string(), "2024-05-01T02:55:00");
/// ```
pub fn simulate(spec: &Spec, start: DateTime, options: &SimOptions) -> Result<RunLog> {
    if options.max_parallel == Some(0) {
        return Err(Error::InvalidArgument(
            "max_parallel must be at least 1".to_string(),
        ));
    }
    spec.validate()?;
    Simulation::new(spec, options)?.run(start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retry::{Backoff, RetryPolicy};
    use crate::spec::JobSpec;

    fn mins(m: u64) -> Duration {
        Duration::from_mins(m)
    }

    fn t0() -> DateTime {
        DateTime::parse("2024-01-01T00:00").unwrap()
    }

    #[test]
    fn independent_jobs_run_in_parallel() {
        let mut spec = Spec::new();
        spec.add_job(JobSpec::new("a", mins(10))).unwrap();
        spec.add_job(JobSpec::new("b", mins(20))).unwrap();
        let log = simulate(&spec, t0(), &SimOptions::default()).unwrap();
        assert_eq!(log.makespan(), mins(20));
        assert_eq!(log.max_parallelism(), 2);
        assert_eq!(log.succeeded(), ["a", "b"]);
    }

    #[test]
    fn chain_runs_sequentially() {
        let mut spec = Spec::new();
        spec.add_job(JobSpec::new("a", mins(10))).unwrap();
        spec.add_job(JobSpec::new("b", mins(5)).after(&["a"]))
            .unwrap();
        let log = simulate(&spec, t0(), &SimOptions::default()).unwrap();
        assert_eq!(log.attempts_of("b")[0].start, 600);
        assert_eq!(log.makespan(), mins(15));
    }

    #[test]
    fn global_limit_serialises_by_bottom_level() {
        let mut spec = Spec::new();
        spec.add_job(JobSpec::new("short", mins(1))).unwrap();
        spec.add_job(JobSpec::new("long", mins(10))).unwrap();
        let options = SimOptions {
            max_parallel: Some(1),
            ..SimOptions::default()
        };
        let log = simulate(&spec, t0(), &options).unwrap();
        let order: Vec<&str> = log.attempts.iter().map(|a| a.job.as_str()).collect();
        assert_eq!(order, ["long", "short"]);
        assert_eq!(log.attempts[1].wait(), 600);
    }

    #[test]
    fn zero_parallelism_is_rejected() {
        let options = SimOptions {
            max_parallel: Some(0),
            ..SimOptions::default()
        };
        assert!(matches!(
            simulate(&Spec::new(), t0(), &options),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn exhausted_retries_fail_the_job_and_skip_dependents() {
        let mut spec = Spec::new();
        let mut flaky = JobSpec::new("flaky", mins(1));
        flaky.fail_times = 5;
        flaky.retry = RetryPolicy::new(1, Backoff::Fixed(mins(2)));
        spec.add_job(flaky).unwrap();
        spec.add_job(JobSpec::new("next", mins(1)).after(&["flaky"]))
            .unwrap();
        spec.add_job(JobSpec::new("last", mins(1)).after(&["next"]))
            .unwrap();
        let log = simulate(&spec, t0(), &SimOptions::default()).unwrap();
        assert_eq!(
            log.state("flaky"),
            Some(&JobState::Failed {
                attempts: 2,
                finished: 240
            })
        );
        assert_eq!(log.skipped(), ["last", "next"]);
        assert_eq!(
            log.state("last"),
            Some(&JobState::Skipped {
                blocked_by: "flaky".into()
            })
        );
        assert!(!log.is_success());
        assert_eq!(log.retries(), 1);
    }
}
