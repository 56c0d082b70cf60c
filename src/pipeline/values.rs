//! The values selection options and `-Y` take, parsed with the errors people need:
//! ranges of frames and times, opcodes and ship classes by name, object ids,
//! durations, and the "did you mean" of a misspelt name.

use crate::game::opcodes::{opcode_from_name, opcode_names};
use crate::game::ships::ShipCatalog;
use anyhow::{anyhow, bail, Context, Result};

/// An inclusive range with optional ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range<T> {
    pub from: Option<T>,
    pub to: Option<T>,
}

impl<T: PartialOrd + Copy> Range<T> {
    pub fn contains(&self, v: T) -> bool {
        self.from.is_none_or(|f| v >= f) && self.to.is_none_or(|t| v <= t)
    }
}

/// `A-B`, `A-`, `-B` or `A` (= `A-A`); the en dash that `info` prints (`1–3`) works as
/// the hyphen does. A range whose start is past its end is an error: it would select
/// nothing, and silently.
pub fn parse_range<T: std::str::FromStr + Copy + PartialOrd>(
    s: &str,
    what: &str,
) -> Result<Range<T>> {
    let parse = |x: &str| -> Result<Option<T>> {
        let x = x.trim();
        if x.is_empty() {
            return Ok(None);
        }
        x.parse::<T>()
            .map(Some)
            .map_err(|_| anyhow!("invalid {what} {x:?} in range {s:?} (try 10-20, 10-, -20 or 15)"))
    };
    let split = s.split_once('-').or_else(|| s.split_once('\u{2013}'));
    let r = match split {
        Some((a, b)) => Range {
            from: parse(a)?,
            to: parse(b)?,
        },
        None => {
            let v = parse(s)?;
            Range { from: v, to: v }
        }
    };
    if r.from.is_none() && r.to.is_none() {
        bail!("empty {what} range {s:?} (try 10-20, 10-, -20 or 15)");
    }
    if let (Some(f), Some(t)) = (r.from, r.to) {
        if f > t {
            bail!("{what} range {s:?} is reversed: its start is past its end");
        }
    }
    Ok(r)
}

/// `--frames`: frame numbers count from 1, as in every listing.
pub fn parse_frame_range(s: &str) -> Result<Range<u64>> {
    let r: Range<u64> = parse_range(s, "frame")?;
    if r.from == Some(0) || r.to == Some(0) {
        bail!("frame range {s:?} names frame 0; frames are numbered from 1");
    }
    Ok(r)
}

/// `--time`: seconds from the first frame. One value `T` is the second that starts
/// there, `T` up to (not including) `T+1`: a timestamp is never exactly a whole number.
pub fn parse_time_range(s: &str) -> Result<TimeRange> {
    let r: Range<f64> = parse_range(s, "time")?;
    if r.from.is_some_and(|v| !v.is_finite() || v < 0.0)
        || r.to.is_some_and(|v| !v.is_finite() || v < 0.0)
    {
        bail!("time range {s:?}: times are seconds from the first frame, 0 or more");
    }
    let single = !s.contains(['-', '\u{2013}']);
    Ok(TimeRange {
        from: r.from,
        to: r.to,
        to_exclusive: single,
    })
}

/// A time range in seconds; a single value's range leaves its end out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeRange {
    pub from: Option<f64>,
    pub to: Option<f64>,
    pub(crate) to_exclusive: bool,
}

impl TimeRange {
    pub fn contains(&self, v: f64) -> bool {
        if self.from.is_some_and(|f| v < f) {
            return false;
        }
        match self.to {
            None => true,
            Some(t) if self.to_exclusive => v < t + 1.0,
            Some(t) => v <= t,
        }
    }
}

/// An opcode given as a name (`StateUpdate`, case-insensitive) or a number (`0x1C`, `28`).
pub fn parse_opcode(s: &str) -> Result<u8> {
    let t = s.trim();
    let number = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u8::from_str_radix(h, 16).ok()
    } else {
        t.parse::<u8>().ok()
    };
    if let Some(op) = number.or_else(|| opcode_from_name(t)) {
        return Ok(op);
    }
    let names: Vec<&str> = opcode_names().map(|(_, n)| n).collect();
    let hint = did_you_mean(t, names.iter().copied())
        .map(|m| format!(" (did you mean {m}?)"))
        .unwrap_or_default();
    bail!(
        "unknown opcode {t:?}{hint}; give a number such as 0x1C or one of: {}",
        names.join(", ")
    )
}

/// A ship class as printed (`Kessok Heavy`) or as scripts name it (`KessokHeavy`); a
/// class the catalog does not hold is an error listing those it does.
pub fn parse_ship(s: &str, ships: &ShipCatalog) -> Result<String> {
    let key = ship_key(s);
    let known = ships
        .classes()
        .iter()
        .any(|c| ship_key(&c.name) == key || ship_key(&c.display_name) == key);
    if !known {
        let names: Vec<&str> = ships
            .classes()
            .iter()
            .map(|c| c.display_name.as_str())
            .collect();
        let hint = did_you_mean(s, names.iter().copied())
            .map(|m| format!(" (did you mean {m:?}?)"))
            .unwrap_or_default();
        bail!(
            "unknown ship class {s:?}{hint}; known classes: {}",
            names.join(", ")
        );
    }
    Ok(key)
}

/// An object id in hex (`0x3FFFFFFF`) or decimal.
pub fn parse_object_id(s: &str) -> Result<u32> {
    let t = s.trim();
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u32::from_str_radix(h, 16).ok()
    } else {
        t.parse::<u32>().ok()
    };
    v.with_context(|| format!("invalid object id {t:?}"))
}

/// A duration like `1s`, `500ms`, `2m`, `0.5` (seconds), in nanoseconds.
pub fn parse_duration_ns(s: &str) -> Result<i64> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60e9)
    } else {
        (t, 1e9)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| anyhow!("invalid duration {t:?} (try 1s, 500ms, 2m)"))?;
    if v.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) || !v.is_finite() {
        bail!("duration must be positive: {t:?}");
    }
    Ok((v * scale) as i64)
}

/// The candidate closest to `wanted` (case-insensitive), if it is close enough to be a
/// slip of the keyboard.
pub fn did_you_mean<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let w = wanted.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&w, &c.to_lowercase()), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// A ship class as typed: `KessokHeavy`, `Kessok Heavy` and `kessok_heavy` are one.
pub(crate) fn ship_key(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}
