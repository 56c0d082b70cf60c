//! Why a capture could not be read (further), with the byte offset where it went
//! wrong.

use std::fmt;

/// Why a capture could not be read (further).
#[derive(Debug)]
pub enum CaptureError {
    /// The first bytes are not a pcap or pcapng magic number.
    NotACapture {
        first_bytes: Vec<u8>,
    },
    /// The file ends inside its global header, before any frame.
    HeaderCut {
        needed: usize,
        got: usize,
    },
    /// A structure is inconsistent so the reader cannot find the next record;
    /// `offset` is where the record or block starts. Reading stops.
    Corrupt {
        offset: u64,
        frame: Option<u64>,
        what: String,
    },
    /// One block is malformed but its length is sound: it is skipped and reading may
    /// go on (a packet block still counts as a frame number).
    BadRecord {
        offset: u64,
        frame: Option<u64>,
        what: String,
    },
    Io(std::io::Error),
}

impl CaptureError {
    /// True when reading cannot go on after this error.
    pub fn is_fatal(&self) -> bool {
        !matches!(self, CaptureError::BadRecord { .. })
    }
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureError::NotACapture { first_bytes } if first_bytes.is_empty() => {
                f.write_str("not a capture file: the input is empty")
            }
            CaptureError::NotACapture { first_bytes } => {
                write!(
                    f,
                    "not a capture file: the first bytes {} are neither a pcap nor a pcapng magic number",
                    hex(first_bytes)
                )
            }
            CaptureError::HeaderCut { needed, got } => write!(
                f,
                "capture header cut short: {got} of {needed} bytes present, no frame can be read"
            ),
            CaptureError::Corrupt {
                offset,
                frame,
                what,
            }
            | CaptureError::BadRecord {
                offset,
                frame,
                what,
            } => {
                let verdict = if self.is_fatal() {
                    "corrupt"
                } else {
                    "malformed block in"
                };
                write!(f, "{verdict} capture at byte {offset}")?;
                if let Some(n) = frame {
                    write!(f, " (frame {n})")?;
                }
                write!(f, ": {what}")
            }
            CaptureError::Io(e) => write!(f, "cannot read capture: {e}"),
        }
    }
}

impl std::error::Error for CaptureError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CaptureError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for CaptureError {
    fn from(e: std::io::Error) -> Self {
        CaptureError::Io(e)
    }
}

pub(super) fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&format!("{b:02X}"));
    }
    s
}
