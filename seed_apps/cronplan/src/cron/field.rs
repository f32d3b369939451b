//! Single cron fields: `*`, lists, ranges, steps and names, parsed into bit sets.

use std::fmt;

/// A set of small integers (0-63) stored as bits.
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash)]
pub struct BitSet64(u64);

impl BitSet64 {
    /// The empty set.
    pub const EMPTY: BitSet64 = BitSet64(0);

    /// The set whose members are the set bits of `bits`.
    pub fn from_bits(bits: u64) -> BitSet64 {
        BitSet64(bits)
    }

    /// The raw bits.
    pub fn bits(self) -> u64 {
        self.0
    }

    /// `lo, lo+step, ...` up to and including `hi`.
    pub fn range(lo: u8, hi: u8, step: u8) -> BitSet64 {
        assert!(step > 0, "step must be positive");
        let mut set = BitSet64::EMPTY;
        let mut v = u16::from(lo);
        while v <= u16::from(hi) {
            set.insert(v as u8);
            v += u16::from(step);
        }
        set
    }

    /// Adds `v` (0-63).
    pub fn insert(&mut self, v: u8) {
        assert!(v < 64, "value {v} does not fit in a BitSet64");
        self.0 |= 1 << v;
    }

    /// Removes `v`.
    pub fn remove(&mut self, v: u8) {
        if v < 64 {
            self.0 &= !(1 << v);
        }
    }

    /// Whether `v` is a member.
    pub fn contains(self, v: u8) -> bool {
        v < 64 && self.0 & (1 << v) != 0
    }

    /// The number of members.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The smallest member.
    pub fn min(self) -> Option<u8> {
        (self.0 != 0).then(|| self.0.trailing_zeros() as u8)
    }

    /// The largest member.
    pub fn max(self) -> Option<u8> {
        (self.0 != 0).then(|| 63 - self.0.leading_zeros() as u8)
    }

    /// The smallest member that is `>= v`.
    pub fn next_from(self, v: u8) -> Option<u8> {
        if v >= 64 {
            return None;
        }
        BitSet64(self.0 & (u64::MAX << v)).min()
    }

    /// The largest member that is `<= v`.
    pub fn prev_from(self, v: u8) -> Option<u8> {
        let mask = if v >= 63 {
            u64::MAX
        } else {
            (1u64 << (v + 1)) - 1
        };
        BitSet64(self.0 & mask).max()
    }

    /// The members in ascending order.
    pub fn iter(self) -> impl Iterator<Item = u8> {
        (0..64u8).filter(move |&v| self.contains(v))
    }

    /// Members of either set.
    pub fn union(self, other: BitSet64) -> BitSet64 {
        BitSet64(self.0 | other.0)
    }

    /// Members of both sets.
    pub fn intersection(self, other: BitSet64) -> BitSet64 {
        BitSet64(self.0 & other.0)
    }
}

impl fmt::Debug for BitSet64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// Which of the five cron fields a piece of text belongs to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FieldKind {
    Minute,
    Hour,
    DayOfMonth,
    Month,
    DayOfWeek,
}

const MONTH_NAMES: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DOW_NAMES: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

impl FieldKind {
    /// The fields in expression order.
    pub const ALL: [FieldKind; 5] = [
        FieldKind::Minute,
        FieldKind::Hour,
        FieldKind::DayOfMonth,
        FieldKind::Month,
        FieldKind::DayOfWeek,
    ];

    /// The name used in error messages.
    pub fn name(self) -> &'static str {
        match self {
            FieldKind::Minute => "minute",
            FieldKind::Hour => "hour",
            FieldKind::DayOfMonth => "day-of-month",
            FieldKind::Month => "month",
            FieldKind::DayOfWeek => "day-of-week",
        }
    }

    /// The smallest and largest value a parsed field holds (day-of-week: 0 is Sunday).
    pub fn bounds(self) -> (u8, u8) {
        match self {
            FieldKind::Minute => (0, 59),
            FieldKind::Hour => (0, 23),
            FieldKind::DayOfMonth => (1, 31),
            FieldKind::Month => (1, 12),
            FieldKind::DayOfWeek => (0, 6),
        }
    }

    /// Bounds accepted in text: day-of-week also accepts 7 for Sunday.
    fn text_bounds(self) -> (u8, u8) {
        match self {
            FieldKind::DayOfWeek => (0, 7),
            other => other.bounds(),
        }
    }

    fn parse_value(self, text: &str) -> Result<u8, String> {
        if text.is_empty() {
            return Err("missing value".to_string());
        }
        if text.bytes().all(|b| b.is_ascii_digit()) {
            let v: u32 = text
                .parse()
                .map_err(|_| format!("value {text} is too large"))?;
            let (lo, hi) = self.text_bounds();
            if v < u32::from(lo) || v > u32::from(hi) {
                return Err(format!("value {v} out of range {lo}-{hi}"));
            }
            return Ok(v as u8);
        }
        let lower = text.to_ascii_lowercase();
        let (names, base): (&[&str], u8) = match self {
            FieldKind::Month => (&MONTH_NAMES, 1),
            FieldKind::DayOfWeek => (&DOW_NAMES, 0),
            _ => return Err(format!("expected a number, found {text:?}")),
        };
        names
            .iter()
            .position(|n| *n == lower)
            .map(|i| i as u8 + base)
            .ok_or_else(|| format!("unknown name {text:?}"))
    }
}

/// A parsed field: its values, and whether it was written starting with `*`
/// (which decides how day-of-month and day-of-week combine).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// The values the field allows.
    pub values: BitSet64,
    /// Whether the text started with `*` (or `?`).
    pub star: bool,
}

fn parse_step(text: &str) -> Result<u8, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("invalid step {text:?}"));
    }
    let step: u32 = text
        .parse()
        .map_err(|_| format!("step {text} is too large"))?;
    if step == 0 {
        return Err("step must be at least 1".to_string());
    }
    u8::try_from(step).map_err(|_| format!("step {step} is too large"))
}

/// Parses one field: a comma-separated list of `*`, `N`, `A-B`, each optionally
/// followed by `/STEP` (`N/STEP` runs from N to the field's maximum). Months and
/// weekdays also accept three-letter English names; day-of-week accepts 7 for Sunday.
pub fn parse_field(text: &str, kind: FieldKind) -> Result<Field, String> {
    if text.is_empty() {
        return Err("empty field".to_string());
    }
    let (min, max) = kind.bounds();
    let mut values = BitSet64::EMPTY;
    for item in text.split(',') {
        if item.is_empty() {
            return Err("empty list item".to_string());
        }
        let (range, step) = match item.split_once('/') {
            Some((r, s)) => (r, Some(parse_step(s)?)),
            None => (item, None),
        };
        let (lo, hi) = if range == "*" || range == "?" {
            (min, max)
        } else if let Some((a, b)) = range.split_once('-') {
            (kind.parse_value(a)?, kind.parse_value(b)?)
        } else {
            let v = kind.parse_value(range)?;
            if step.is_some() {
                (v, max.max(v))
            } else {
                (v, v)
            }
        };
        if lo > hi {
            return Err(format!("range {lo}-{hi} is reversed"));
        }
        let step = u16::from(step.unwrap_or(1));
        let mut v = u16::from(lo);
        while v <= u16::from(hi) {
            let value = if kind == FieldKind::DayOfWeek && v == 7 {
                0
            } else {
                v as u8
            };
            values.insert(value);
            v += step;
        }
    }
    Ok(Field {
        values,
        star: text.starts_with('*') || text.starts_with('?'),
    })
}

/// Renders a value set compactly: `*`, `*/N` (for three or more values), or a
/// list of values and `A-B` runs.
pub fn format_field(values: BitSet64, kind: FieldKind) -> String {
    let (min, max) = kind.bounds();
    if values == BitSet64::range(min, max, 1) {
        return "*".to_string();
    }
    let items: Vec<u8> = values.iter().collect();
    if items.len() >= 3 && items[0] == min {
        let step = items[1] - items[0];
        let last = *items.last().expect("at least three items");
        if step > 1
            && items.windows(2).all(|w| w[1] - w[0] == step)
            && u16::from(last) + u16::from(step) > u16::from(max)
        {
            return format!("*/{step}");
        }
    }
    let mut parts = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let mut j = i;
        while j + 1 < items.len() && items[j + 1] == items[j] + 1 {
            j += 1;
        }
        if j - i >= 2 {
            parts.push(format!("{}-{}", items[i], items[j]));
        } else {
            parts.extend(items[i..=j].iter().map(|v| v.to_string()));
        }
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str, kind: FieldKind) -> Vec<u8> {
        parse_field(text, kind).unwrap().values.iter().collect()
    }

    #[test]
    fn bitset_neighbour_queries() {
        let set = BitSet64::from_bits(0b1010_0100);
        assert_eq!(set.min(), Some(2));
        assert_eq!(set.max(), Some(7));
        assert_eq!(set.next_from(3), Some(5));
        assert_eq!(set.next_from(5), Some(5));
        assert_eq!(set.next_from(8), None);
        assert_eq!(set.prev_from(4), Some(2));
        assert_eq!(set.prev_from(1), None);
        assert_eq!(set.prev_from(200), Some(7));
        assert_eq!(set.len(), 3);
        assert_eq!(BitSet64::EMPTY.min(), None);
    }

    #[test]
    fn bitset_edges_at_bit_63() {
        let mut set = BitSet64::EMPTY;
        set.insert(63);
        set.insert(0);
        assert_eq!(set.next_from(1), Some(63));
        assert_eq!(set.prev_from(62), Some(0));
        assert_eq!(set.max(), Some(63));
        set.remove(63);
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![0]);
        assert_eq!(format!("{set:?}"), "{0}");
    }

    #[test]
    fn star_and_steps() {
        assert_eq!(values("*", FieldKind::Hour).len(), 24);
        assert_eq!(values("*/15", FieldKind::Minute), vec![0, 15, 30, 45]);
        assert_eq!(values("5/20", FieldKind::Minute), vec![5, 25, 45]);
        assert_eq!(values("10-20/5", FieldKind::Minute), vec![10, 15, 20]);
        assert_eq!(
            values("*/5", FieldKind::DayOfMonth),
            vec![1, 6, 11, 16, 21, 26, 31]
        );
    }

    #[test]
    fn lists_ranges_and_names() {
        assert_eq!(values("1,5,9-11", FieldKind::Hour), vec![1, 5, 9, 10, 11]);
        assert_eq!(values("JAN,mar-May", FieldKind::Month), vec![1, 3, 4, 5]);
        assert_eq!(values("mon-fri", FieldKind::DayOfWeek), vec![1, 2, 3, 4, 5]);
    }

    #[test]
    fn seven_is_sunday() {
        assert_eq!(values("7", FieldKind::DayOfWeek), vec![0]);
        assert_eq!(values("5-7", FieldKind::DayOfWeek), vec![0, 5, 6]);
        assert_eq!(values("*", FieldKind::DayOfWeek), vec![0, 1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn star_flag_follows_the_text() {
        assert!(parse_field("*", FieldKind::DayOfMonth).unwrap().star);
        assert!(parse_field("*/2", FieldKind::DayOfMonth).unwrap().star);
        assert!(parse_field("?", FieldKind::DayOfWeek).unwrap().star);
        assert!(!parse_field("1-31", FieldKind::DayOfMonth).unwrap().star);
    }

    #[test]
    fn parse_errors_are_specific() {
        let cases = [
            ("", FieldKind::Minute, "empty field"),
            ("1,,2", FieldKind::Minute, "empty list item"),
            ("60", FieldKind::Minute, "value 60 out of range 0-59"),
            ("0", FieldKind::DayOfMonth, "value 0 out of range 1-31"),
            ("5-1", FieldKind::Hour, "range 5-1 is reversed"),
            ("*/0", FieldKind::Minute, "step must be at least 1"),
            ("*/x", FieldKind::Minute, "invalid step \"x\""),
            ("mon", FieldKind::Hour, "expected a number, found \"mon\""),
            ("foo", FieldKind::Month, "unknown name \"foo\""),
            ("1-", FieldKind::Hour, "missing value"),
            ("*/300", FieldKind::Minute, "step 300 is too large"),
        ];
        for (text, kind, expected) in cases {
            assert_eq!(parse_field(text, kind).unwrap_err(), expected, "{text:?}");
        }
    }

    #[test]
    fn formatting_compacts_sets() {
        let fmt = |t: &str, k: FieldKind| format_field(parse_field(t, k).unwrap().values, k);
        assert_eq!(fmt("*", FieldKind::Minute), "*");
        assert_eq!(fmt("0-59", FieldKind::Minute), "*");
        assert_eq!(fmt("*/15", FieldKind::Minute), "*/15");
        assert_eq!(fmt("0,20,40", FieldKind::Minute), "*/20");
        assert_eq!(fmt("mon-fri", FieldKind::DayOfWeek), "1-5");
        assert_eq!(fmt("1,2,5,6,7,9", FieldKind::Hour), "1,2,5-7,9");
        assert_eq!(fmt("5/20", FieldKind::Minute), "5,25,45");
        assert_eq!(fmt("1,7", FieldKind::Month), "1,7");
        assert_eq!(fmt("1,5,9", FieldKind::Month), "*/4");
        assert_eq!(fmt("2,7", FieldKind::Month), "2,7");
        assert_eq!(fmt("*/5", FieldKind::DayOfMonth), "*/5");
        assert_eq!(fmt("2-31/5", FieldKind::DayOfMonth), "2,7,12,17,22,27");
    }
}
