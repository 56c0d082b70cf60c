//! Diagnostics attached to the thing they describe (a datagram, a message, a session).
//!
//! Decoding never aborts on bad input: it records a [`Warning`] and goes on.

mod code;

pub use code::{Code, Kind, Layer, Severity};
use serde_json::{json, Value as Json};
use std::borrow::Cow;
use std::fmt;

/// A located problem or deviation. `offset` is relative to what the warning is attached
/// to (the datagram for transport warnings, the game message for decode warnings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// What the problem is; its text form is the stable name in JSON.
    pub code: Code,
    pub offset: Option<usize>,
    pub message: Cow<'static, str>,
}

impl Warning {
    pub fn new(
        code: Code,
        offset: Option<usize>,
        message: impl Into<Cow<'static, str>>,
    ) -> Warning {
        Warning {
            code,
            offset,
            message: message.into(),
        }
    }

    pub fn to_json(&self) -> Json {
        json!({ "code": self.code.as_str(), "offset": self.offset, "message": self.message })
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{} at offset {}: {}", self.code, o, self.message),
            None => write!(f, "{}: {}", self.code, self.message),
        }
    }
}

/// Which way a datagram travels relative to the game server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Client to server (host).
    C2S,
    /// Server (host) to client.
    S2C,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::C2S => "c2s",
            Direction::S2C => "s2c",
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many of `warnings` are non-stock: the one count `info`, `stats` and the report
/// give for it.
pub fn non_stock_count(warnings: &[Warning]) -> u64 {
    warnings.iter().filter(|w| w.code == Code::NonStock).count() as u64
}
