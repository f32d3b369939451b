//! # cronplan
//!
//! Job scheduling built from scratch with no dependencies:
//!
//! - [`datetime`] and [`duration`]: civil dates, times and compact durations
//! - [`cron`]: five-field cron expressions with next/previous fire times
//! - [`calendar`]: business calendars with holiday rules and rolling conventions
//! - [`graph`]: dependency graphs (topological order, cycles, critical paths)
//! - [`retry`] and [`rng`]: retry policies with seeded jitter
//! - [`spec`]: the INI-like job specification format
//! - [`plan`]: expanding cron triggers over a window with overlap policies
//! - [`sim`]: a deterministic discrete-event workflow simulator on [`queue`]
//! - [`report`]: text tables, Gantt charts and summaries
//!
//! ```
//! use cronplan::{parse_spec, plan_window, DateTime};
//! let spec = parse_spec("
//! [job backup]
//! duration = 40m
//! schedule = \"0 */12 * * *\"
//! ").unwrap();
//! let from = DateTime::parse("2024-01-01T00:00").unwrap();
//! let until = DateTime::parse("2024-01-03T00:00").unwrap();
//! let plan = plan_window(&spec, from, until).unwrap();
//! assert_eq!(plan.runs.len(), 4);
//! ```

pub mod calendar;
pub mod cron;
pub mod datetime;
pub mod duration;
pub mod error;
pub mod graph;
pub mod plan;
pub mod queue;
pub mod report;
pub mod retry;
pub mod rng;
pub mod sim;
pub mod spec;

pub use calendar::{easter_sunday, Calendar, HolidayRule, Roll};
pub use cron::CronExpr;
pub use datetime::{days_in_month, is_leap_year, Date, DateTime, Weekday};
pub use duration::Duration;
pub use error::{Error, Result};
pub use graph::{CycleError, Graph};
pub use plan::{plan_window, upcoming, Overlap, Plan, PlannedRun, SkipReason, SkippedRun};
pub use queue::{EventQueue, MinHeap};
pub use retry::{Backoff, Jitter, RetryPolicy};
pub use rng::SplitMix64;
pub use sim::{simulate, Attempt, JobState, RunLog, SimOptions};
pub use spec::{parse_spec, JobSpec, PoolSpec, Spec};
