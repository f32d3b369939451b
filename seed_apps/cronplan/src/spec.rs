//! The job specification format: an INI-like file of `[job NAME]`,
//! `[pool NAME]` and `[calendar NAME]` sections.
//!
//! ```text
//! # nightly pipeline
//! [pool cpu]
//! capacity = 2
//!
//! [job build]
//! duration = 45m
//! after = fetch, lint
//! pool = cpu
//! retry = 3 exponential 30s max 10m
//! schedule = "0 2 * * mon-fri"   # quotes keep the '#' rule simple
//! ```

use crate::calendar::{Calendar, HolidayRule};
use crate::cron::CronExpr;
use crate::datetime::Weekday;
use crate::duration::Duration;
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::plan::Overlap;
use crate::retry::RetryPolicy;
use std::collections::BTreeMap;

/// One job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSpec {
    /// The unique job name.
    pub name: String,
    /// The line of the section header (0 for jobs built in code).
    pub line: usize,
    /// How long one attempt runs.
    pub duration: Duration,
    /// Jobs that must succeed first.
    pub after: Vec<String>,
    /// The resource pool an attempt occupies one slot of, if any.
    pub pool: Option<String>,
    /// Higher runs first when several jobs are ready.
    pub priority: i32,
    /// What happens after a failed attempt.
    pub retry: RetryPolicy,
    /// For simulation: how many attempts fail before one succeeds.
    pub fail_times: u32,
    /// When the job is triggered, for window planning.
    pub schedule: Option<CronExpr>,
    /// A business calendar restricting trigger days.
    pub calendar: Option<String>,
    /// What to do when a trigger arrives while the previous run is still going.
    pub overlap: Overlap,
}

impl JobSpec {
    /// A job with defaults: no dependencies, no pool, priority 0, no retries.
    pub fn new(name: &str, duration: Duration) -> JobSpec {
        JobSpec {
            name: name.to_string(),
            line: 0,
            duration,
            after: Vec::new(),
            pool: None,
            priority: 0,
            retry: RetryPolicy::none(),
            fail_times: 0,
            schedule: None,
            calendar: None,
            overlap: Overlap::Allow,
        }
    }

    /// Adds dependencies.
    pub fn after(mut self, deps: &[&str]) -> JobSpec {
        self.after.extend(deps.iter().map(|d| d.to_string()));
        self
    }

    /// Sets the pool.
    pub fn in_pool(mut self, pool: &str) -> JobSpec {
        self.pool = Some(pool.to_string());
        self
    }

    /// Sets the priority.
    pub fn with_priority(mut self, priority: i32) -> JobSpec {
        self.priority = priority;
        self
    }
}

/// A resource pool with a fixed number of slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolSpec {
    /// The pool name.
    pub name: String,
    /// How many attempts may hold a slot at once (at least 1).
    pub capacity: u32,
}

/// A whole specification.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spec {
    /// Jobs in definition order.
    pub jobs: Vec<JobSpec>,
    /// Pools in definition order.
    pub pools: Vec<PoolSpec>,
    /// Calendars in definition order.
    pub calendars: Vec<Calendar>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum SectionKind {
    Job,
    Pool,
    Calendar,
}

impl SectionKind {
    fn name(self) -> &'static str {
        match self {
            SectionKind::Job => "job",
            SectionKind::Pool => "pool",
            SectionKind::Calendar => "calendar",
        }
    }
}

struct Entry {
    key: String,
    value: String,
    line: usize,
}

struct Section {
    kind: SectionKind,
    name: String,
    line: usize,
    entries: Vec<Entry>,
}

/// Keys that may appear several times in one section.
const REPEATABLE: [&str; 1] = ["holiday"];

fn is_identifier(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Cuts a trailing `#` comment that is not inside double quotes.
fn strip_comment(line: &str) -> std::result::Result<&str, String> {
    let mut in_quotes = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if in_quotes => escaped = true,
            '"' => in_quotes = !in_quotes,
            '#' if !in_quotes => return Ok(&line[..i]),
            _ => {}
        }
    }
    if in_quotes {
        Err("unterminated string".to_string())
    } else {
        Ok(line)
    }
}

/// Removes surrounding double quotes and resolves `\"`, `\\` and `\n`.
fn unquote(value: &str) -> std::result::Result<String, String> {
    let Some(rest) = value.strip_prefix('"') else {
        if value.contains('"') {
            return Err("unexpected quote in value".to_string());
        }
        return Ok(value.to_string());
    };
    let Some(inner) = rest.strip_suffix('"') else {
        return Err("unterminated string".to_string());
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('n') => out.push('\n'),
                Some(other) => return Err(format!("unknown escape \\{other}")),
                None => return Err("unterminated string".to_string()),
            },
            '"' => return Err("unexpected quote inside string".to_string()),
            c => out.push(c),
        }
    }
    Ok(out)
}

fn parse_header(content: &str) -> std::result::Result<(SectionKind, String), String> {
    let inner = content
        .strip_prefix('[')
        .and_then(|c| c.strip_suffix(']'))
        .ok_or("unterminated section header")?;
    let words: Vec<&str> = inner.split_whitespace().collect();
    let [kind, name] = words.as_slice() else {
        return Err("a section header must look like [kind name]".to_string());
    };
    let kind = match *kind {
        "job" => SectionKind::Job,
        "pool" => SectionKind::Pool,
        "calendar" => SectionKind::Calendar,
        other => return Err(format!("unknown section kind '{other}'")),
    };
    if !is_identifier(name) {
        return Err(format!("invalid name '{name}'"));
    }
    Ok((kind, name.to_string()))
}

/// Splits a comma-separated list, rejecting empty items and repeats.
fn parse_list(value: &str) -> std::result::Result<Vec<String>, String> {
    if value.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut out: Vec<String> = Vec::new();
    for item in value.split(',').map(str::trim) {
        if item.is_empty() {
            return Err("empty item in list".to_string());
        }
        if out.iter().any(|x| x == item) {
            return Err(format!("'{item}' is listed twice"));
        }
        out.push(item.to_string());
    }
    Ok(out)
}

fn build_job(section: &Section) -> Result<JobSpec> {
    let mut job = JobSpec::new(&section.name, Duration::ZERO);
    job.line = section.line;
    let mut has_duration = false;
    for e in &section.entries {
        let at = |m: String| Error::spec(e.line, m);
        match e.key.as_str() {
            "duration" => {
                job.duration = Duration::parse(&e.value).map_err(|err| at(err.to_string()))?;
                has_duration = true;
            }
            "after" => job.after = parse_list(&e.value).map_err(at)?,
            "pool" => {
                if !is_identifier(&e.value) {
                    return Err(at(format!("invalid pool name {:?}", e.value)));
                }
                job.pool = Some(e.value.clone());
            }
            "priority" => {
                job.priority = e
                    .value
                    .parse()
                    .map_err(|_| at(format!("priority must be an integer, found {:?}", e.value)))?;
            }
            "retry" => {
                job.retry = RetryPolicy::parse(&e.value).map_err(|err| at(err.to_string()))?
            }
            "fail" => {
                job.fail_times = e
                    .value
                    .parse()
                    .map_err(|_| at(format!("fail must be a count, found {:?}", e.value)))?;
            }
            "schedule" => {
                job.schedule = Some(CronExpr::parse(&e.value).map_err(|err| at(err.to_string()))?);
            }
            "calendar" => job.calendar = Some(e.value.clone()),
            "overlap" => {
                job.overlap = Overlap::parse(&e.value).map_err(|err| at(err.to_string()))?
            }
            other => {
                return Err(at(format!(
                    "unknown key '{other}' in job '{}'",
                    section.name
                )));
            }
        }
    }
    if !has_duration {
        return Err(Error::spec(
            section.line,
            format!("job '{}' has no duration", section.name),
        ));
    }
    Ok(job)
}

fn build_pool(section: &Section) -> Result<PoolSpec> {
    let mut capacity = None;
    for e in &section.entries {
        match e.key.as_str() {
            "capacity" => match e.value.parse::<u32>() {
                Ok(c) if c >= 1 => capacity = Some(c),
                _ => {
                    return Err(Error::spec(
                        e.line,
                        format!("capacity must be a positive integer, found {:?}", e.value),
                    ))
                }
            },
            other => {
                return Err(Error::spec(
                    e.line,
                    format!("unknown key '{other}' in pool '{}'", section.name),
                ))
            }
        }
    }
    let capacity = capacity.ok_or_else(|| {
        Error::spec(
            section.line,
            format!("pool '{}' has no capacity", section.name),
        )
    })?;
    Ok(PoolSpec {
        name: section.name.clone(),
        capacity,
    })
}

fn build_calendar(section: &Section) -> Result<Calendar> {
    let mut calendar = Calendar::new(&section.name);
    for e in &section.entries {
        let at = |m: String| Error::spec(e.line, m);
        match e.key.as_str() {
            "weekend" => {
                let days = parse_list(&e.value)
                    .map_err(at)?
                    .iter()
                    .map(|d| Weekday::parse(d))
                    .collect::<Result<Vec<Weekday>>>()
                    .map_err(|err| at(err.to_string()))?;
                calendar = calendar
                    .with_weekend(&days)
                    .map_err(|err| at(err.to_string()))?;
            }
            "holiday" => {
                let (name, rule) = e
                    .value
                    .split_once(':')
                    .ok_or_else(|| at("a holiday must look like \"Name: rule\"".to_string()))?;
                let rule = HolidayRule::parse(rule).map_err(|err| at(err.to_string()))?;
                calendar.add_holiday(name.trim(), rule);
            }
            other => {
                return Err(at(format!(
                    "unknown key '{other}' in calendar '{}'",
                    section.name
                )))
            }
        }
    }
    Ok(calendar)
}

fn finish_section(section: Section, spec: &mut Spec) -> Result<()> {
    match section.kind {
        SectionKind::Job => spec.jobs.push(build_job(&section)?),
        SectionKind::Pool => spec.pools.push(build_pool(&section)?),
        SectionKind::Calendar => spec.calendars.push(build_calendar(&section)?),
    }
    Ok(())
}

/// Parses a specification. Syntax errors carry their line number; references
/// between sections are checked later by [`Spec::validate`].
pub fn parse_spec(text: &str) -> Result<Spec> {
    let mut spec = Spec::default();
    let mut current: Option<Section> = None;
    let mut defined: BTreeMap<(SectionKind, String), usize> = BTreeMap::new();
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        let content = strip_comment(raw).map_err(|m| Error::spec(line, m))?.trim();
        if content.is_empty() {
            continue;
        }
        if content.starts_with('[') {
            let (kind, name) = parse_header(content).map_err(|m| Error::spec(line, m))?;
            if let Some(first) = defined.get(&(kind, name.clone())) {
                return Err(Error::spec(
                    line,
                    format!(
                        "duplicate {} '{name}' (first defined on line {first})",
                        kind.name()
                    ),
                ));
            }
            defined.insert((kind, name.clone()), line);
            if let Some(section) = current.take() {
                finish_section(section, &mut spec)?;
            }
            current = Some(Section {
                kind,
                name,
                line,
                entries: Vec::new(),
            });
            continue;
        }
        let Some((key, value)) = content.split_once('=') else {
            return Err(Error::spec(
                line,
                format!("expected 'key = value' or a [section], found {content:?}"),
            ));
        };
        let key = key.trim();
        if !is_identifier(key) {
            return Err(Error::spec(line, format!("invalid key {key:?}")));
        }
        let value = unquote(value.trim()).map_err(|m| Error::spec(line, m))?;
        let Some(section) = current.as_mut() else {
            return Err(Error::spec(
                line,
                format!("key '{key}' appears before any section"),
            ));
        };
        if !REPEATABLE.contains(&key) {
            if let Some(first) = section.entries.iter().find(|e| e.key == key) {
                return Err(Error::spec(
                    line,
                    format!("duplicate key '{key}' (first set on line {})", first.line),
                ));
            }
        }
        section.entries.push(Entry {
            key: key.to_string(),
            value,
            line,
        });
    }
    if let Some(section) = current {
        finish_section(section, &mut spec)?;
    }
    Ok(spec)
}

impl Spec {
    /// An empty specification.
    pub fn new() -> Spec {
        Spec::default()
    }

    /// Adds a job built in code; names must be unique.
    pub fn add_job(&mut self, job: JobSpec) -> Result<()> {
        if self.job(&job.name).is_some() {
            return Err(Error::InvalidArgument(format!(
                "duplicate job '{}'",
                job.name
            )));
        }
        self.jobs.push(job);
        Ok(())
    }

    /// Adds a pool built in code; names must be unique and capacity positive.
    pub fn add_pool(&mut self, name: &str, capacity: u32) -> Result<()> {
        if capacity == 0 {
            return Err(Error::InvalidArgument(format!(
                "pool '{name}' has capacity 0"
            )));
        }
        if self.pool(name).is_some() {
            return Err(Error::InvalidArgument(format!("duplicate pool '{name}'")));
        }
        self.pools.push(PoolSpec {
            name: name.to_string(),
            capacity,
        });
        Ok(())
    }

    /// The job called `name`.
    pub fn job(&self, name: &str) -> Option<&JobSpec> {
        self.jobs.iter().find(|j| j.name == name)
    }

    /// The pool called `name`.
    pub fn pool(&self, name: &str) -> Option<&PoolSpec> {
        self.pools.iter().find(|p| p.name == name)
    }

    /// The calendar called `name`.
    pub fn calendar(&self, name: &str) -> Option<&Calendar> {
        self.calendars.iter().find(|c| c.name() == name)
    }

    /// The dependency graph: an edge from each dependency to its dependent.
    pub fn graph(&self) -> Graph<String> {
        let mut graph = Graph::new();
        for job in &self.jobs {
            graph.add_node(job.name.clone());
        }
        for job in &self.jobs {
            for dep in &job.after {
                graph.add_edge(dep.clone(), job.name.clone());
            }
        }
        graph
    }

    /// Checks that every referenced job, pool and calendar exists and that the
    /// dependencies form no cycle.
    pub fn validate(&self) -> Result<()> {
        for job in &self.jobs {
            if let Some(dep) = job.after.iter().find(|d| self.job(d).is_none()) {
                return Err(Error::UnknownJob(dep.clone()));
            }
            if let Some(pool) = job.pool.as_deref() {
                if self.pool(pool).is_none() {
                    return Err(Error::UnknownPool(pool.to_string()));
                }
            }
            if let Some(cal) = job.calendar.as_deref() {
                if self.calendar(cal).is_none() {
                    return Err(Error::UnknownCalendar(cal.to_string()));
                }
            }
        }
        self.graph()
            .topo_order()
            .map(|_| ())
            .map_err(|c| Error::Cycle(c.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_respect_quotes() {
        assert_eq!(strip_comment("a = 1 # note").unwrap(), "a = 1 ");
        assert_eq!(
            strip_comment("a = \"x # y\" # z").unwrap(),
            "a = \"x # y\" "
        );
        assert_eq!(strip_comment("a = \"q\\\"#\"").unwrap(), "a = \"q\\\"#\"");
        assert!(strip_comment("a = \"open").is_err());
    }

    #[test]
    fn unquoting() {
        assert_eq!(unquote("plain").unwrap(), "plain");
        assert_eq!(
            unquote("\"a \\\"b\\\" \\\\ c\\n\"").unwrap(),
            "a \"b\" \\ c\n"
        );
        assert_eq!(unquote("\"\"").unwrap(), "");
        assert!(unquote("\"abc").is_err());
        assert!(unquote("\"a\\q\"").is_err());
        assert!(unquote("ab\"c").is_err());
        assert!(unquote("\"a\"b\"").is_err());
    }

    #[test]
    fn headers() {
        assert_eq!(
            parse_header("[job build-1]").unwrap(),
            (SectionKind::Job, "build-1".to_string())
        );
        assert_eq!(
            parse_header("[ pool   cpu ]").unwrap(),
            (SectionKind::Pool, "cpu".to_string())
        );
        assert!(parse_header("[job]").unwrap_err().contains("[kind name]"));
        assert!(parse_header("[task x]")
            .unwrap_err()
            .contains("unknown section kind 'task'"));
        assert!(parse_header("[job a/b]")
            .unwrap_err()
            .contains("invalid name"));
        assert!(parse_header("[job x").unwrap_err().contains("unterminated"));
    }

    #[test]
    fn lists() {
        assert_eq!(parse_list("a, b ,c").unwrap(), ["a", "b", "c"]);
        assert!(parse_list("").unwrap().is_empty());
        assert!(parse_list("a,,b").is_err());
        assert_eq!(parse_list("a, a").unwrap_err(), "'a' is listed twice");
    }

    #[test]
    fn minimal_job() {
        let spec = parse_spec("[job a]\nduration = 5m\n").unwrap();
        assert_eq!(spec.jobs.len(), 1);
        let job = &spec.jobs[0];
        assert_eq!(job.name, "a");
        assert_eq!(job.line, 1);
        assert_eq!(job.duration, Duration::from_mins(5));
        assert_eq!(job.retry, RetryPolicy::none());
        assert_eq!(job.overlap, Overlap::Allow);
    }

    #[test]
    fn add_job_and_pool_reject_duplicates() {
        let mut spec = Spec::new();
        spec.add_job(JobSpec::new("a", Duration::from_secs(1)))
            .unwrap();
        assert!(spec
            .add_job(JobSpec::new("a", Duration::from_secs(2)))
            .is_err());
        spec.add_pool("cpu", 2).unwrap();
        assert!(spec.add_pool("cpu", 3).is_err());
        assert!(spec.add_pool("gpu", 0).is_err());
    }

    #[test]
    fn validate_reports_unknown_references() {
        let mut spec = Spec::new();
        spec.add_job(JobSpec::new("a", Duration::ZERO).after(&["ghost"]))
            .unwrap();
        assert_eq!(spec.validate(), Err(Error::UnknownJob("ghost".into())));
        let mut spec = Spec::new();
        spec.add_job(JobSpec::new("a", Duration::ZERO).in_pool("gpu"))
            .unwrap();
        assert_eq!(spec.validate(), Err(Error::UnknownPool("gpu".into())));
    }

    #[test]
    fn validate_reports_cycles() {
        let mut spec = Spec::new();
        spec.add_job(JobSpec::new("a", Duration::ZERO).after(&["b"]))
            .unwrap();
        spec.add_job(JobSpec::new("b", Duration::ZERO).after(&["a"]))
            .unwrap();
        assert_eq!(
            spec.validate(),
            Err(Error::Cycle(vec!["a".into(), "b".into(), "a".into()]))
        );
    }
}
