//! Retry policies: how many times a failed job is retried and how long to wait.

use crate::duration::Duration;
use crate::error::{Error, Result};
use crate::rng::SplitMix64;
use std::fmt;

/// How the wait before each retry grows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backoff {
    /// Retry at once.
    Immediate,
    /// The same wait every time.
    Fixed(Duration),
    /// `initial`, then `initial + step`, `initial + 2*step`, ...
    Linear { initial: Duration, step: Duration },
    /// `initial`, then `initial * factor`, `initial * factor^2`, ...
    Exponential { initial: Duration, factor: u32 },
}

/// How much randomness is applied to each wait.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Jitter {
    /// The wait is exactly the backoff.
    #[default]
    None,
    /// Uniform between zero and the backoff.
    Full,
    /// Half the backoff plus a uniform share of the other half.
    Equal,
}

impl Jitter {
    fn parse(text: &str) -> Result<Jitter> {
        match text {
            "none" => Ok(Jitter::None),
            "full" => Ok(Jitter::Full),
            "equal" => Ok(Jitter::Equal),
            other => Err(Error::InvalidRetry(format!("unknown jitter {other:?}"))),
        }
    }
}

/// A retry policy: up to `max_retries` further attempts after the first one fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries allowed after the first attempt.
    pub max_retries: u32,
    /// The wait schedule.
    pub backoff: Backoff,
    /// An upper bound on any single wait.
    pub max_delay: Option<Duration>,
    /// Randomisation of each wait.
    pub jitter: Jitter,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy::none()
    }
}

impl RetryPolicy {
    /// Never retry.
    pub fn none() -> RetryPolicy {
        RetryPolicy::new(0, Backoff::Immediate)
    }

    /// `max_retries` retries with the given backoff, no cap and no jitter.
    pub fn new(max_retries: u32, backoff: Backoff) -> RetryPolicy {
        RetryPolicy {
            max_retries,
            backoff,
            max_delay: None,
            jitter: Jitter::None,
        }
    }

    /// Caps every wait at `max`.
    pub fn with_max_delay(mut self, max: Duration) -> RetryPolicy {
        self.max_delay = Some(max);
        self
    }

    /// Sets the jitter.
    pub fn with_jitter(mut self, jitter: Jitter) -> RetryPolicy {
        self.jitter = jitter;
        self
    }

    /// Whether attempt number `attempt` (1 is the first run) may happen.
    pub fn allows(&self, attempt: u32) -> bool {
        attempt >= 1 && attempt - 1 <= self.max_retries
    }

    /// The wait before retry number `retry` (1-based) without jitter, capped.
    pub fn base_delay(&self, retry: u32) -> Duration {
        if retry == 0 {
            return Duration::ZERO;
        }
        let n = u64::from(retry - 1);
        let raw = match &self.backoff {
            Backoff::Immediate => Duration::ZERO,
            Backoff::Fixed(d) => *d,
            Backoff::Linear { initial, step } => step
                .checked_mul(n)
                .and_then(|s| initial.checked_add(s))
                .unwrap_or(Duration::MAX),
            Backoff::Exponential { initial, factor } => u64::from(*factor)
                .checked_pow(u32::try_from(n).unwrap_or(u32::MAX))
                .and_then(|m| initial.checked_mul(m))
                .unwrap_or(Duration::MAX),
        };
        match self.max_delay {
            Some(cap) if raw > cap => cap,
            _ => raw,
        }
    }

    /// The wait before retry number `retry`, with jitter drawn from `rng`.
    pub fn delay(&self, retry: u32, rng: &mut SplitMix64) -> Duration {
        let base = self.base_delay(retry).as_secs();
        let secs = match self.jitter {
            Jitter::None => base,
            Jitter::Full => rng.range_inclusive(0, base),
            Jitter::Equal => {
                let half = base / 2;
                half + rng.range_inclusive(0, base - half)
            }
        };
        Duration::from_secs(secs)
    }

    /// The waits before every allowed retry, in order.
    pub fn delays(&self, rng: &mut SplitMix64) -> Vec<Duration> {
        (1..=self.max_retries).map(|r| self.delay(r, rng)).collect()
    }

    /// The longest total wait the policy can produce (jitter never lengthens a wait).
    pub fn worst_case_wait(&self) -> Duration {
        (1..=self.max_retries)
            .map(|r| self.base_delay(r))
            .fold(Duration::ZERO, |acc, d| {
                acc.checked_add(d).unwrap_or(Duration::MAX)
            })
    }

    /// Parses `none`, or `N [fixed D | linear D[+STEP] | exponential D [xF]] [max D] [jitter full|equal|none]`.
    pub fn parse(text: &str) -> Result<RetryPolicy> {
        let fail = |m: String| Error::InvalidRetry(m);
        let lower = text.trim().to_ascii_lowercase();
        let tokens: Vec<&str> = lower.split_whitespace().collect();
        let Some(first) = tokens.first() else {
            return Err(fail("empty retry policy".to_string()));
        };
        if *first == "none" {
            if tokens.len() > 1 {
                return Err(fail("nothing may follow 'none'".to_string()));
            }
            return Ok(RetryPolicy::none());
        }
        let max_retries: u32 = first
            .parse()
            .map_err(|_| fail(format!("expected a retry count, found {first:?}")))?;
        let duration_after = |i: usize, what: &str| -> Result<Duration> {
            let token = tokens
                .get(i)
                .ok_or_else(|| fail(format!("expected a duration after '{what}'")))?;
            Duration::parse(token).map_err(|e| fail(e.to_string()))
        };
        let mut i = 1;
        let mut backoff = Backoff::Immediate;
        match tokens.get(1).copied() {
            Some("fixed") => {
                backoff = Backoff::Fixed(duration_after(2, "fixed")?);
                i = 3;
            }
            Some("linear") => {
                let token = tokens
                    .get(2)
                    .ok_or_else(|| fail("expected a duration after 'linear'".to_string()))?;
                let (initial, step) = match token.split_once('+') {
                    Some((a, b)) => (a, b),
                    None => (*token, *token),
                };
                let parse = |t: &str| Duration::parse(t).map_err(|e| fail(e.to_string()));
                backoff = Backoff::Linear {
                    initial: parse(initial)?,
                    step: parse(step)?,
                };
                i = 3;
            }
            Some("exponential") => {
                let initial = duration_after(2, "exponential")?;
                let mut factor = 2;
                i = 3;
                if let Some(f) = tokens.get(3).and_then(|t| t.strip_prefix('x')) {
                    factor = f.parse().map_err(|_| fail(format!("bad factor {f:?}")))?;
                    if factor < 2 {
                        return Err(fail("factor must be at least 2".to_string()));
                    }
                    i = 4;
                }
                backoff = Backoff::Exponential { initial, factor };
            }
            _ => {}
        }
        let mut policy = RetryPolicy::new(max_retries, backoff);
        let mut seen_max = false;
        let mut seen_jitter = false;
        while i < tokens.len() {
            match tokens[i] {
                "max" if !seen_max => {
                    policy.max_delay = Some(duration_after(i + 1, "max")?);
                    seen_max = true;
                }
                "jitter" if !seen_jitter => {
                    let token = tokens.get(i + 1).ok_or_else(|| {
                        fail("expected full, equal or none after 'jitter'".to_string())
                    })?;
                    policy.jitter = Jitter::parse(token)?;
                    seen_jitter = true;
                }
                "max" | "jitter" => return Err(fail(format!("'{}' given twice", tokens[i]))),
                other => return Err(fail(format!("unexpected {other:?}"))),
            }
            i += 2;
        }
        Ok(policy)
    }
}

impl fmt::Display for RetryPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.max_retries == 0
            && self.backoff == Backoff::Immediate
            && self.max_delay.is_none()
            && self.jitter == Jitter::None
        {
            return f.write_str("none");
        }
        write!(f, "{}", self.max_retries)?;
        match &self.backoff {
            Backoff::Immediate => {}
            Backoff::Fixed(d) => write!(f, " fixed {d}")?,
            Backoff::Linear { initial, step } => write!(f, " linear {initial}+{step}")?,
            Backoff::Exponential { initial, factor } => {
                write!(f, " exponential {initial} x{factor}")?
            }
        }
        if let Some(max) = self.max_delay {
            write!(f, " max {max}")?;
        }
        match self.jitter {
            Jitter::None => {}
            Jitter::Full => f.write_str(" jitter full")?,
            Jitter::Equal => f.write_str(" jitter equal")?,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(policy: &RetryPolicy) -> Vec<u64> {
        (1..=policy.max_retries)
            .map(|r| policy.base_delay(r).as_secs())
            .collect()
    }

    #[test]
    fn attempts_allowed() {
        let p = RetryPolicy::new(2, Backoff::Immediate);
        assert!(!p.allows(0));
        assert!(p.allows(1) && p.allows(3));
        assert!(!p.allows(4));
        assert!(RetryPolicy::none().allows(1));
        assert!(!RetryPolicy::none().allows(2));
    }

    #[test]
    fn fixed_and_linear_backoff() {
        let fixed = RetryPolicy::new(3, Backoff::Fixed(Duration::from_secs(30)));
        assert_eq!(secs(&fixed), [30, 30, 30]);
        let linear = RetryPolicy::new(
            4,
            Backoff::Linear {
                initial: Duration::from_secs(10),
                step: Duration::from_secs(5),
            },
        );
        assert_eq!(secs(&linear), [10, 15, 20, 25]);
        assert_eq!(linear.base_delay(0), Duration::ZERO);
    }

    #[test]
    fn exponential_backoff_is_capped() {
        let p = RetryPolicy::new(
            6,
            Backoff::Exponential {
                initial: Duration::from_secs(10),
                factor: 3,
            },
        )
        .with_max_delay(Duration::from_mins(5));
        assert_eq!(secs(&p), [10, 30, 90, 270, 300, 300]);
        assert_eq!(p.worst_case_wait(), Duration::from_secs(1_000));
    }

    #[test]
    fn exponential_overflow_saturates() {
        let p = RetryPolicy::new(
            100,
            Backoff::Exponential {
                initial: Duration::from_secs(1),
                factor: 10,
            },
        );
        assert_eq!(p.base_delay(100), Duration::MAX);
        assert_eq!(p.worst_case_wait(), Duration::MAX);
    }

    #[test]
    fn jitter_stays_within_bounds_and_is_reproducible() {
        let p = RetryPolicy::new(5, Backoff::Fixed(Duration::from_secs(100)));
        let full = p.clone().with_jitter(Jitter::Full);
        let equal = p.clone().with_jitter(Jitter::Equal);
        let mut rng = SplitMix64::new(9);
        for _ in 0..50 {
            assert!(full.delay(1, &mut rng).as_secs() <= 100);
            let e = equal.delay(1, &mut rng).as_secs();
            assert!((50..=100).contains(&e), "{e}");
        }
        let a = full.delays(&mut SplitMix64::new(1));
        let b = full.delays(&mut SplitMix64::new(1));
        assert_eq!(a, b);
        assert_eq!(a.len(), 5);
        assert_eq!(
            p.delays(&mut SplitMix64::new(1)),
            vec![Duration::from_secs(100); 5]
        );
    }

    #[test]
    fn parses_every_form() {
        assert_eq!(RetryPolicy::parse("none").unwrap(), RetryPolicy::none());
        assert_eq!(
            RetryPolicy::parse("3").unwrap(),
            RetryPolicy::new(3, Backoff::Immediate)
        );
        assert_eq!(
            RetryPolicy::parse("2 fixed 1m").unwrap(),
            RetryPolicy::new(2, Backoff::Fixed(Duration::from_mins(1)))
        );
        assert_eq!(
            RetryPolicy::parse("4 linear 30s+15s").unwrap().backoff,
            Backoff::Linear {
                initial: Duration::from_secs(30),
                step: Duration::from_secs(15)
            }
        );
        assert_eq!(
            RetryPolicy::parse("4 linear 30s").unwrap().backoff,
            Backoff::Linear {
                initial: Duration::from_secs(30),
                step: Duration::from_secs(30)
            }
        );
        let p = RetryPolicy::parse("5 Exponential 30s x3 max 10m jitter equal").unwrap();
        assert_eq!(
            p.backoff,
            Backoff::Exponential {
                initial: Duration::from_secs(30),
                factor: 3
            }
        );
        assert_eq!(p.max_delay, Some(Duration::from_mins(10)));
        assert_eq!(p.jitter, Jitter::Equal);
        let default_factor = RetryPolicy::parse("1 exponential 1s").unwrap();
        assert_eq!(
            default_factor.backoff,
            Backoff::Exponential {
                initial: Duration::from_secs(1),
                factor: 2
            }
        );
    }

    #[test]
    fn parse_errors() {
        let cases = [
            ("", "empty retry policy"),
            ("none 3", "nothing may follow 'none'"),
            ("many", "expected a retry count"),
            ("3 fixed", "expected a duration after 'fixed'"),
            ("3 exponential 1s x1", "factor must be at least 2"),
            ("3 exponential 1s xx", "bad factor"),
            ("3 max 1m max 2m", "'max' given twice"),
            ("3 jitter sometimes", "unknown jitter"),
            ("3 jitter", "expected full, equal or none"),
            ("3 hourly", "unexpected \"hourly\""),
            ("3 fixed 5x", "unknown unit"),
        ];
        for (text, expected) in cases {
            let err = RetryPolicy::parse(text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "none",
            "3",
            "2 fixed 1m",
            "4 linear 30s+15s",
            "5 exponential 30s x3 max 10m jitter full",
            "1 max 5m jitter equal",
        ] {
            let p = RetryPolicy::parse(text).unwrap();
            assert_eq!(p.to_string(), text);
            assert_eq!(RetryPolicy::parse(&p.to_string()).unwrap(), p);
        }
    }
}
