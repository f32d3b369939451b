//! Five-field cron expressions: `minute hour day-of-month month day-of-week`.

mod expr;
mod field;

pub use expr::{CronExpr, Occurrences};
pub use field::{format_field, parse_field, BitSet64, Field, FieldKind};
