//! The crate-wide error type.

use std::fmt;

/// Everything that can go wrong while parsing, validating or planning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A calendar date that does not exist or could not be parsed.
    InvalidDate(String),
    /// A time of day that does not exist or could not be parsed.
    InvalidTime(String),
    /// A duration literal such as `1h30m` that could not be parsed.
    InvalidDuration(String),
    /// A cron expression that could not be parsed or can never fire.
    InvalidCron {
        /// The expression as written.
        expr: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A retry policy that could not be parsed.
    InvalidRetry(String),
    /// A holiday rule that could not be parsed.
    InvalidHoliday(String),
    /// A syntax or semantic error in a job specification, at a 1-based line.
    Spec {
        /// The 1-based line the problem was found on.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A job referred to by name that is not defined.
    UnknownJob(String),
    /// A resource pool referred to by name that is not defined.
    UnknownPool(String),
    /// A business calendar referred to by name that is not defined.
    UnknownCalendar(String),
    /// A dependency cycle, given as a closed path (the first name is repeated last).
    Cycle(Vec<String>),
    /// A bad argument to a planning or simulation call.
    InvalidArgument(String),
    /// The simulator ended with jobs that could never start.
    Stalled(String),
}

impl Error {
    pub(crate) fn spec(line: usize, message: impl Into<String>) -> Error {
        Error::Spec {
            line,
            message: message.into(),
        }
    }

    /// The specification line the error refers to, if any.
    pub fn line(&self) -> Option<usize> {
        match self {
            Error::Spec { line, .. } => Some(*line),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidDate(m) => write!(f, "invalid date: {m}"),
            Error::InvalidTime(m) => write!(f, "invalid time: {m}"),
            Error::InvalidDuration(m) => write!(f, "invalid duration: {m}"),
            Error::InvalidCron { expr, reason } => {
                write!(f, "invalid cron expression {expr:?}: {reason}")
            }
            Error::InvalidRetry(m) => write!(f, "invalid retry policy: {m}"),
            Error::InvalidHoliday(m) => write!(f, "invalid holiday rule: {m}"),
            Error::Spec { line, message } => write!(f, "line {line}: {message}"),
            Error::UnknownJob(name) => write!(f, "unknown job '{name}'"),
            Error::UnknownPool(name) => write!(f, "unknown pool '{name}'"),
            Error::UnknownCalendar(name) => write!(f, "unknown calendar '{name}'"),
            Error::Cycle(path) => write!(f, "dependency cycle: {}", path.join(" -> ")),
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::Stalled(m) => write!(f, "simulation stalled: {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_errors_carry_their_line() {
        let err = Error::spec(7, "bad key");
        assert_eq!(err.line(), Some(7));
        assert_eq!(err.to_string(), "line 7: bad key");
        assert_eq!(Error::UnknownJob("x".into()).line(), None);
    }

    #[test]
    fn cycle_display_joins_the_path() {
        let err = Error::Cycle(vec!["a".into(), "b".into(), "a".into()]);
        assert_eq!(err.to_string(), "dependency cycle: a -> b -> a");
    }

    #[test]
    fn cron_display_quotes_the_expression() {
        let err = Error::InvalidCron {
            expr: "* *".into(),
            reason: "expected 5 fields, found 2".into(),
        };
        assert_eq!(
            err.to_string(),
            "invalid cron expression \"* *\": expected 5 fields, found 2"
        );
    }
}
