//! Plain-text reports: aligned tables, Gantt charts and run summaries.

use crate::plan::Plan;
use crate::sim::{JobState, RunLog};
use crate::spec::Spec;
use std::collections::BTreeMap;

/// Column alignment.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A text table with a header row and aligned columns.
#[derive(Clone, Debug)]
pub struct Table {
    headers: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with the given column headers, all left-aligned.
    pub fn new(headers: &[&str]) -> Table {
        Table {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            align: vec![Align::Left; headers.len()],
            rows: Vec::new(),
        }
    }

    /// Sets a column's alignment.
    pub fn align(mut self, column: usize, align: Align) -> Table {
        self.align[column] = align;
        self
    }

    /// Adds a row; panics if the cell count differs from the header count.
    pub fn add_row<S: ToString>(&mut self, cells: &[S]) {
        assert!(
            cells.len() == self.headers.len(),
            "row has {} cells, expected {}",
            cells.len(),
            self.headers.len()
        );
        self.rows
            .push(cells.iter().map(|c| c.to_string()).collect());
    }

    /// The number of data rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no data rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Renders the table: cells separated by ` | `, a dashed rule under the
    /// header, widths measured in characters, no trailing spaces.
    pub fn render(&self) -> String {
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain(std::iter::once(self.headers[c].chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| -> String {
            let padded: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(c, cell)| {
                    let pad = widths[c] - cell.chars().count();
                    match self.align[c] {
                        Align::Left => format!("{cell}{}", " ".repeat(pad)),
                        Align::Right => format!("{}{cell}", " ".repeat(pad)),
                    }
                })
                .collect();
            padded.join(" | ").trim_end().to_string()
        };
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        let mut out = vec![line(&self.headers), rule.join("-+-")];
        out.extend(self.rows.iter().map(|r| line(r)));
        let mut text = out.join("\n");
        text.push('\n');
        text
    }
}

/// The nearest-rank percentile of `values` (`p` in 0..=100); `None` if empty
/// or `p` is out of range.
pub fn percentile(values: &[u64], p: f64) -> Option<u64> {
    if values.is_empty() || !(0.0..=100.0).contains(&p) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Formats seconds as a compact duration (`1h5m`).
fn secs(s: u64) -> String {
    crate::duration::Duration::from_secs(s).to_string()
}

/// A Gantt chart of a run, `width` columns wide. Rows are jobs ordered by first
/// start (then name); `#` marks a successful attempt, `x` a failed one, `.`
/// idle time. Skipped jobs show a row of `-`.
pub fn gantt(log: &RunLog, width: usize) -> String {
    assert!(width > 0, "width must be positive");
    let span = log.makespan().as_secs();
    let mut rows: Vec<(Option<u64>, &str)> = log
        .states
        .keys()
        .map(|name| {
            let first = log
                .attempts
                .iter()
                .find(|a| &a.job == name)
                .map(|a| a.start);
            (first, name.as_str())
        })
        .collect();
    rows.sort_by_key(|&(first, name)| (first.is_none(), first, name));
    let name_width = rows
        .iter()
        .map(|(_, n)| n.chars().count())
        .max()
        .unwrap_or(0);
    let column = |t: u64| -> usize {
        if span == 0 {
            0
        } else {
            ((t as u128 * width as u128) / span as u128) as usize
        }
    };
    let mut out = String::new();
    for (_, name) in &rows {
        let mut bar = vec!['.'; width];
        if matches!(log.state(name), Some(JobState::Skipped { .. })) {
            bar = vec!['-'; width];
        }
        for a in log.attempts.iter().filter(|a| a.job == *name) {
            let from = column(a.start).min(width - 1);
            let to = if span == 0 {
                from + 1
            } else {
                // Round the end up so every attempt covers at least one column.
                ((a.end as u128 * width as u128).div_ceil(span as u128) as usize)
                    .clamp(from + 1, width)
            };
            let mark = if a.succeeded { '#' } else { 'x' };
            for cell in &mut bar[from..to] {
                *cell = mark;
            }
        }
        let bar: String = bar.into_iter().collect();
        out.push_str(&format!("{name:<name_width$} |{bar}|\n"));
    }
    let end_label = secs(span);
    let pad = width.saturating_sub(end_label.len());
    out.push_str(&format!(
        "{}0{}{end_label}\n",
        " ".repeat(name_width + 2),
        " ".repeat(pad)
    ));
    out
}

/// A short summary of a run.
pub fn summary(log: &RunLog) -> String {
    let waits: Vec<u64> = log.attempts.iter().map(|a| a.wait()).collect();
    let wait_line = match (percentile(&waits, 50.0), percentile(&waits, 90.0)) {
        (Some(p50), Some(p90)) => format!("wait p50 {} p90 {}", secs(p50), secs(p90)),
        _ => "wait n/a".to_string(),
    };
    format!(
        "jobs: {} succeeded, {} failed, {} skipped\nattempts: {} ({} retries)\nmakespan: {}\n{}\n",
        log.succeeded().len(),
        log.failed().len(),
        log.skipped().len(),
        log.attempts.len(),
        log.retries(),
        log.makespan(),
        wait_line
    )
}

/// Per-pool utilisation of a run: busy slot-seconds over capacity times makespan.
/// Pools are listed even when unused; all values are 0 for an empty run.
pub fn utilization(log: &RunLog, spec: &Spec) -> BTreeMap<String, f64> {
    let span = log.makespan().as_secs();
    let mut busy: BTreeMap<&str, u64> = BTreeMap::new();
    for a in &log.attempts {
        if let Some(pool) = spec.job(&a.job).and_then(|j| j.pool.as_deref()) {
            *busy.entry(pool).or_insert(0) += a.end - a.start;
        }
    }
    spec.pools
        .iter()
        .map(|p| {
            let used = busy.get(p.name.as_str()).copied().unwrap_or(0);
            let total = u64::from(p.capacity) * span;
            let ratio = if total == 0 {
                0.0
            } else {
                used as f64 / total as f64
            };
            (p.name.clone(), ratio)
        })
        .collect()
}

/// A table of planned runs: start, job, end and queueing delay.
pub fn plan_table(plan: &Plan) -> String {
    let mut table = Table::new(&["start", "job", "end", "delay"]).align(3, Align::Right);
    for run in &plan.runs {
        table.add_row(&[
            run.start.to_string(),
            run.job.clone(),
            run.end.to_string(),
            run.delay().to_string(),
        ]);
    }
    table.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_columns() {
        let mut t = Table::new(&["job", "secs"]).align(1, Align::Right);
        t.add_row(&["build", "5"]);
        t.add_row(&["a", "1200"]);
        assert_eq!(
            t.render(),
            "job   | secs\n------+-----\nbuild |    5\na     | 1200\n"
        );
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn table_trims_trailing_spaces_and_counts_chars() {
        let mut t = Table::new(&["name", "x"]);
        t.add_row(&["ünï", ""]);
        assert_eq!(t.render(), "name | x\n-----+--\nünï  |\n");
    }

    #[test]
    #[should_panic(expected = "row has 1 cells, expected 2")]
    fn table_rejects_ragged_rows() {
        let mut t = Table::new(&["a", "b"]);
        t.add_row(&["only"]);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v = [15, 20, 35, 40, 50];
        assert_eq!(percentile(&v, 30.0), Some(20));
        assert_eq!(percentile(&v, 40.0), Some(20));
        assert_eq!(percentile(&v, 50.0), Some(35));
        assert_eq!(percentile(&v, 100.0), Some(50));
        assert_eq!(percentile(&v, 0.0), Some(15));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&v, 101.0), None);
    }
}
