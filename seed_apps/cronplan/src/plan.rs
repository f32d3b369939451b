//! Planning scheduled jobs over a time window: expanding cron triggers,
//! filtering by business calendar and applying each job's overlap policy.

use crate::datetime::{Date, DateTime};
use crate::error::{Error, Result};
use crate::queue::MinHeap;
use crate::spec::Spec;
use std::collections::BTreeMap;

/// What happens when a job is triggered while its previous run is still going.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Overlap {
    /// Start another run alongside.
    #[default]
    Allow,
    /// Drop the new trigger.
    Skip,
    /// Start the new run as soon as the previous one ends.
    Queue,
}

impl Overlap {
    /// Parses `allow`, `skip` or `queue`.
    pub fn parse(text: &str) -> Result<Overlap> {
        match text.trim().to_ascii_lowercase().as_str() {
            "allow" => Ok(Overlap::Allow),
            "skip" => Ok(Overlap::Skip),
            "queue" => Ok(Overlap::Queue),
            other => Err(Error::InvalidArgument(format!(
                "unknown overlap policy {other:?} (expected allow, skip or queue)"
            ))),
        }
    }
}

/// A run that will happen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedRun {
    /// The job.
    pub job: String,
    /// When the trigger fired.
    pub scheduled: DateTime,
    /// When the run starts (later than `scheduled` if it was queued).
    pub start: DateTime,
    /// When the run ends.
    pub end: DateTime,
}

impl PlannedRun {
    /// How long the run waited behind its predecessor.
    pub fn delay(&self) -> crate::duration::Duration {
        self.start.duration_since(self.scheduled)
    }
}

/// Why a trigger did not produce a run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// The previous run was still going and the job's policy is `skip`.
    Overlap,
    /// The trigger fell on a day its calendar does not work.
    NonBusinessDay,
}

/// A trigger that did not produce a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedRun {
    /// The job.
    pub job: String,
    /// When the trigger fired.
    pub scheduled: DateTime,
    /// Why it was dropped.
    pub reason: SkipReason,
}

/// Every run and dropped trigger in a window.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Runs sorted by start, then job name.
    pub runs: Vec<PlannedRun>,
    /// Dropped triggers sorted by trigger time, then job name.
    pub skipped: Vec<SkippedRun>,
}

impl Plan {
    /// The runs of one job.
    pub fn runs_of(&self, job: &str) -> Vec<&PlannedRun> {
        self.runs.iter().filter(|r| r.job == job).collect()
    }

    /// How many runs start on each date.
    pub fn runs_per_day(&self) -> BTreeMap<Date, usize> {
        let mut out = BTreeMap::new();
        for run in &self.runs {
            *out.entry(run.start.date()).or_insert(0) += 1;
        }
        out
    }

    /// The largest number of runs in progress at one instant. A run ending at
    /// the moment another starts does not overlap it.
    pub fn max_concurrency(&self) -> usize {
        // (time, +1 start / -1 end); ends sort before starts at equal times.
        let mut events: Vec<(i64, i32)> = Vec::with_capacity(self.runs.len() * 2);
        for run in &self.runs {
            if run.end > run.start {
                events.push((run.start.timestamp(), 1));
                events.push((run.end.timestamp(), -1));
            }
        }
        events.sort();
        let mut current: i32 = 0;
        let mut best: i32 = 0;
        for (_, delta) in events {
            current += delta;
            best = best.max(current);
        }
        best as usize
    }
}

/// Plans every scheduled job in `[from, until)`.
///
/// A run that was queued may start (and end) after `until`; a trigger at or
/// after `until` is never considered.
pub fn plan_window(spec: &Spec, from: DateTime, until: DateTime) -> Result<Plan> {
    if until <= from {
        return Err(Error::InvalidArgument(format!(
            "window end {until} is not after its start {from}"
        )));
    }
    spec.validate()?;
    let mut plan = Plan::default();
    for job in &spec.jobs {
        let Some(schedule) = &job.schedule else {
            continue;
        };
        let calendar = match job.calendar.as_deref() {
            Some(name) => Some(
                spec.calendar(name)
                    .ok_or_else(|| Error::UnknownCalendar(name.to_string()))?,
            ),
            None => None,
        };
        let mut busy_until: Option<DateTime> = None;
        for trigger in schedule.occurrences(from, until) {
            if calendar.is_some_and(|c| !c.is_business_day(trigger.date())) {
                plan.skipped.push(SkippedRun {
                    job: job.name.clone(),
                    scheduled: trigger,
                    reason: SkipReason::NonBusinessDay,
                });
                continue;
            }
            let still_running = busy_until.filter(|&b| b > trigger);
            let start = match (job.overlap, still_running) {
                (Overlap::Skip, Some(_)) => {
                    plan.skipped.push(SkippedRun {
                        job: job.name.clone(),
                        scheduled: trigger,
                        reason: SkipReason::Overlap,
                    });
                    continue;
                }
                (Overlap::Queue, Some(busy)) => busy,
                _ => trigger,
            };
            let end = start.plus(job.duration);
            busy_until = Some(busy_until.map_or(end, |b| b.max(end)));
            plan.runs.push(PlannedRun {
                job: job.name.clone(),
                scheduled: trigger,
                start,
                end,
            });
        }
    }
    plan.runs
        .sort_by(|a, b| (a.start, &a.job, a.scheduled).cmp(&(b.start, &b.job, b.scheduled)));
    plan.skipped
        .sort_by(|a, b| (a.scheduled, &a.job).cmp(&(b.scheduled, &b.job)));
    Ok(plan)
}

/// The next `count` triggers across all scheduled jobs strictly after `after`,
/// merged in time order (ties by job name), skipping non-business days of a
/// job's calendar.
pub fn upcoming(spec: &Spec, after: DateTime, count: usize) -> Result<Vec<(DateTime, String)>> {
    spec.validate()?;
    let next_for = |index: usize, from: DateTime| -> Option<DateTime> {
        let job = &spec.jobs[index];
        let schedule = job.schedule.as_ref()?;
        let calendar = job.calendar.as_deref().and_then(|c| spec.calendar(c));
        let mut cursor = from;
        // A calendar cannot close more than a few hundred days in a row.
        for _ in 0..10_000 {
            let t = schedule.next_after(cursor)?;
            if calendar.is_none_or(|c| c.is_business_day(t.date())) {
                return Some(t);
            }
            cursor = t;
        }
        None
    };
    let mut heap: MinHeap<(DateTime, &str, usize)> = MinHeap::new();
    for (i, job) in spec.jobs.iter().enumerate() {
        if let Some(t) = next_for(i, after) {
            heap.push((t, job.name.as_str(), i));
        }
    }
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let Some((t, name, i)) = heap.pop() else {
            break;
        };
        out.push((t, name.to_string()));
        if let Some(next) = next_for(i, t) {
            heap.push((next, name, i));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cron::CronExpr;
    use crate::duration::Duration;
    use crate::spec::JobSpec;

    fn dt(text: &str) -> DateTime {
        DateTime::parse(text).unwrap()
    }

    fn scheduled(name: &str, cron: &str, minutes: u64, overlap: Overlap) -> JobSpec {
        let mut job = JobSpec::new(name, Duration::from_mins(minutes));
        job.schedule = Some(CronExpr::parse(cron).unwrap());
        job.overlap = overlap;
        job
    }

    #[test]
    fn overlap_parsing() {
        assert_eq!(Overlap::parse("Skip").unwrap(), Overlap::Skip);
        assert_eq!(Overlap::parse(" queue ").unwrap(), Overlap::Queue);
        assert!(Overlap::parse("maybe").is_err());
    }

    #[test]
    fn window_must_be_non_empty() {
        let spec = Spec::new();
        let t = dt("2024-01-01T00:00");
        assert!(plan_window(&spec, t, t).is_err());
        assert!(plan_window(&spec, t, t.add_seconds(60))
            .unwrap()
            .runs
            .is_empty());
    }

    #[test]
    fn skip_policy_drops_overlapping_triggers() {
        let mut spec = Spec::new();
        spec.add_job(scheduled("slow", "*/10 * * * *", 25, Overlap::Skip))
            .unwrap();
        let plan = plan_window(&spec, dt("2024-01-01T00:00"), dt("2024-01-01T01:00")).unwrap();
        let starts: Vec<String> = plan.runs.iter().map(|r| r.start.to_string()).collect();
        assert_eq!(starts, ["2024-01-01T00:00:00", "2024-01-01T00:30:00"]);
        assert_eq!(plan.skipped.len(), 4);
        assert!(plan.skipped.iter().all(|s| s.reason == SkipReason::Overlap));
    }

    #[test]
    fn queue_policy_delays_runs() {
        let mut spec = Spec::new();
        spec.add_job(scheduled("slow", "*/10 * * * *", 15, Overlap::Queue))
            .unwrap();
        let plan = plan_window(&spec, dt("2024-01-01T00:00"), dt("2024-01-01T00:30")).unwrap();
        let starts: Vec<(String, u64)> = plan
            .runs
            .iter()
            .map(|r| (r.start.to_string(), r.delay().as_mins()))
            .collect();
        assert_eq!(
            starts,
            [
                ("2024-01-01T00:00:00".to_string(), 0),
                ("2024-01-01T00:15:00".to_string(), 5),
                ("2024-01-01T00:30:00".to_string(), 10)
            ]
        );
    }

    #[test]
    fn allow_policy_overlaps_runs() {
        let mut spec = Spec::new();
        spec.add_job(scheduled("slow", "*/10 * * * *", 25, Overlap::Allow))
            .unwrap();
        let plan = plan_window(&spec, dt("2024-01-01T00:00"), dt("2024-01-01T01:00")).unwrap();
        assert_eq!(plan.runs.len(), 6);
        assert_eq!(plan.max_concurrency(), 3);
    }

    #[test]
    fn back_to_back_runs_do_not_overlap() {
        let mut spec = Spec::new();
        spec.add_job(scheduled("a", "0 * * * *", 60, Overlap::Allow))
            .unwrap();
        let plan = plan_window(&spec, dt("2024-01-01T00:00"), dt("2024-01-01T05:00")).unwrap();
        assert_eq!(plan.max_concurrency(), 1);
        assert_eq!(
            plan.runs_per_day().values().copied().collect::<Vec<_>>(),
            [5]
        );
    }

    #[test]
    fn upcoming_merges_jobs_in_time_order() {
        let mut spec = Spec::new();
        spec.add_job(scheduled("hourly", "0 * * * *", 1, Overlap::Allow))
            .unwrap();
        spec.add_job(scheduled("half", "30 * * * *", 1, Overlap::Allow))
            .unwrap();
        spec.add_job(scheduled("also-hourly", "0 * * * *", 1, Overlap::Allow))
            .unwrap();
        let next = upcoming(&spec, dt("2024-01-01T00:10"), 5).unwrap();
        let shown: Vec<String> = next
            .iter()
            .map(|(t, j)| format!("{:02}:{:02} {j}", t.hour(), t.minute()))
            .collect();
        assert_eq!(
            shown,
            [
                "00:30 half",
                "01:00 also-hourly",
                "01:00 hourly",
                "01:30 half",
                "02:00 also-hourly"
            ]
        );
    }
}
