//! Message selection for `decode`, `show` and `stats` (`--opcode`, `--client`, …).

use super::names::Names;
use crate::diag::Direction;
use crate::game::opcodes::opcode_from_name;
use crate::pipeline::record::{MessageRecord, PacketRecord};
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

/// `A-B`, `A-`, `-B` or `A` (= `A-A`).
pub fn parse_range<T: std::str::FromStr + Copy>(s: &str, what: &str) -> Result<Range<T>> {
    let parse = |x: &str| -> Result<Option<T>> {
        let x = x.trim();
        if x.is_empty() {
            return Ok(None);
        }
        x.parse::<T>()
            .map(Some)
            .map_err(|_| anyhow!("invalid {what} {x:?} in range {s:?}"))
    };
    match s.split_once('-') {
        Some((a, b)) => Ok(Range {
            from: parse(a)?,
            to: parse(b)?,
        }),
        None => {
            let v = parse(s)?;
            if v.is_none() {
                bail!("empty {what} range");
            }
            Ok(Range { from: v, to: v })
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
    number.or_else(|| opcode_from_name(t)).with_context(|| {
        format!("unknown opcode {t:?} (give a name such as StateUpdate or a number such as 0x1C)")
    })
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

/// What to select, as the user wrote it; the command line converts its flags into this.
#[derive(Debug, Clone, Default)]
pub struct FilterSpec {
    pub opcode: Vec<String>,
    pub exclude: Vec<String>,
    pub direction: Option<String>,
    pub client: Option<String>,
    pub object: Option<String>,
    pub ship: Option<String>,
    pub frames: Option<String>,
    pub time: Option<String>,
}

/// Which client a `--client` value names.
#[derive(Debug, Clone, PartialEq)]
enum ClientSel {
    Name(String),
    PortOrPeer(u16),
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    opcodes: Vec<u8>,
    exclude: Vec<u8>,
    direction: Option<Direction>,
    client: Option<ClientSel>,
    object: Option<u32>,
    ship: Option<String>,
    frames: Option<Range<u64>>,
    time: Option<Range<f64>>,
}

impl Filter {
    pub fn from_spec(a: &FilterSpec) -> Result<Filter> {
        Ok(Filter {
            opcodes: a
                .opcode
                .iter()
                .map(|s| parse_opcode(s))
                .collect::<Result<_>>()?,
            exclude: a
                .exclude
                .iter()
                .map(|s| parse_opcode(s))
                .collect::<Result<_>>()?,
            direction: a.direction.as_deref().map(|d| {
                if d == "c2s" {
                    Direction::C2S
                } else {
                    Direction::S2C
                }
            }),
            client: a.client.as_deref().map(|c| match c.parse::<u16>() {
                Ok(n) => ClientSel::PortOrPeer(n),
                Err(_) => match c
                    .strip_prefix("0x")
                    .and_then(|h| u16::from_str_radix(h, 16).ok())
                {
                    Some(n) => ClientSel::PortOrPeer(n),
                    None => ClientSel::Name(c.to_lowercase()),
                },
            }),
            object: a.object.as_deref().map(parse_object_id).transpose()?,
            ship: a.ship.as_ref().map(|s| s.to_lowercase()),
            frames: a
                .frames
                .as_deref()
                .map(|s| parse_range(s, "frame"))
                .transpose()?,
            time: a
                .time
                .as_deref()
                .map(|s| parse_range(s, "time"))
                .transpose()?,
        })
    }

    /// True when no message-level condition is set (every message of a kept packet is kept).
    pub fn selects_all_messages(&self) -> bool {
        self.opcodes.is_empty()
            && self.exclude.is_empty()
            && self.object.is_none()
            && self.ship.is_none()
    }

    /// Packet-level conditions: frame, time, direction, client.
    pub fn keep_packet(&self, p: &PacketRecord, first_ts_ns: i64, names: &dyn Names) -> bool {
        if self.frames.is_some_and(|r| !r.contains(p.frame)) {
            return false;
        }
        if let Some(r) = self.time {
            if !r.contains((p.ts_ns - first_ts_ns) as f64 / 1e9) {
                return false;
            }
        }
        if self.direction.is_some_and(|d| d != p.direction) {
            return false;
        }
        match &self.client {
            None => true,
            Some(ClientSel::Name(n)) => names
                .client_name(p.session, p.client)
                .is_some_and(|c| c.to_lowercase() == *n),
            Some(ClientSel::PortOrPeer(n)) => {
                let port = p.client_port();
                let peer = match &p.body {
                    crate::pipeline::record::PacketBody::Game(g) => Some(g.peer_id as u16),
                    _ => None,
                };
                port == *n || (*n < 256 && peer == Some(*n))
            }
        }
    }

    /// Message-level conditions: opcode, object, ship class.
    pub fn keep_message(&self, m: &MessageRecord, session: usize, names: &dyn Names) -> bool {
        if self.selects_all_messages() {
            return true;
        }
        let game = m.game.as_ref().or(m.assembled.as_ref().map(|a| &a.game));
        let Some(g) = game else {
            // Non-game messages (ACKs, connection management) only pass unfiltered.
            return self.opcodes.is_empty() && self.object.is_none() && self.ship.is_none();
        };
        if !self.opcodes.is_empty() && !self.opcodes.contains(&g.opcode) {
            return false;
        }
        if self.exclude.contains(&g.opcode) {
            return false;
        }
        let obj = g.object_id();
        if let Some(want) = self.object {
            if !mentions_object(g, want) {
                return false;
            }
        }
        if let Some(ship) = &self.ship {
            let class = obj.and_then(|o| names.object_class(session, o));
            if class.is_none_or(|c| c.to_lowercase() != *ship) {
                return false;
            }
        }
        true
    }
}

fn mentions_object(g: &crate::game::GameMessage, id: u32) -> bool {
    use crate::game::Value;
    fn walk(fields: &[crate::game::Field], id: u32) -> bool {
        fields.iter().any(|f| match &f.value {
            Value::ObjectId(v) => *v == id,
            Value::Group(c) => walk(c, id),
            _ => false,
        })
    }
    g.state_update().is_some_and(|s| s.object_id == id) || walk(&g.fields, id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        let r: Range<u64> = parse_range("10-20", "frame").unwrap();
        assert!(r.contains(10) && r.contains(20) && !r.contains(21));
        let r: Range<u64> = parse_range("-5", "frame").unwrap();
        assert!(r.contains(0) && !r.contains(6));
        let r: Range<u64> = parse_range("7", "frame").unwrap();
        assert!(r.contains(7) && !r.contains(8));
        assert!(parse_range::<u64>("x-2", "frame").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("1s").unwrap(), 1_000_000_000);
        assert_eq!(parse_duration_ns("500ms").unwrap(), 500_000_000);
        assert_eq!(parse_duration_ns("2m").unwrap(), 120_000_000_000);
        assert!(parse_duration_ns("0s").is_err());
        assert!(parse_duration_ns("fast").is_err());
    }

    #[test]
    fn opcodes_by_number() {
        assert_eq!(parse_opcode("0x1C").unwrap(), 0x1C);
        assert_eq!(parse_opcode("28").unwrap(), 28);
        assert!(parse_opcode("NoSuchOpcode").is_err());
    }
}
