//! Capture files: classic pcap and pcapng, plain or gzip/zstd/lz4-compressed, read as a
//! stream of [`Frame`]s, and written.
//!
//! Records and blocks are parsed by `pcap-file`'s slice parsers over the reader's own
//! buffer (not its `PcapReader`/`PcapNgReader`): the reader knows where every slice
//! starts, so truncations and errors keep their exact byte offsets; the raw packet
//! API lets records longer than the snap length through (with a warning); and
//! timestamps are computed as signed nanoseconds, since a negative `if_tsoffset` may
//! move one before 1970, which pcap-file's `Duration` cannot hold. Writing goes
//! through pcap-file's `PcapWriter` and `PcapNgWriter`.

mod compress;
mod format;
mod reader;
pub mod writer;

pub use compress::Compression;
pub use format::{CaptureFormat, Endian, TsResolution};
pub use reader::{CaptureReader, Truncation};
pub use writer::CaptureWriter;

use std::fmt;

/// Link-layer header types (tcpdump.org `LINKTYPE_*` values) this crate knows.
pub mod link_type {
    /// BSD loopback: 4-byte address family in the writer's byte order.
    pub const NULL: u32 = 0;
    pub const ETHERNET: u32 = 1;
    /// Raw IPv4 or IPv6, version from the first nibble.
    pub const RAW: u32 = 101;
    /// OpenBSD loopback: 4-byte address family in network byte order.
    pub const LOOP: u32 = 108;
    /// Linux cooked capture v1.
    pub const LINUX_SLL: u32 = 113;
    pub const IPV4: u32 = 228;
    pub const IPV6: u32 = 229;
    /// Linux cooked capture v2.
    pub const LINUX_SLL2: u32 = 276;

    /// Short name for reports.
    pub fn name(link_type: u32) -> &'static str {
        match link_type {
            NULL => "NULL",
            ETHERNET => "ETHERNET",
            RAW => "RAW",
            LOOP => "LOOP",
            LINUX_SLL => "LINUX_SLL",
            IPV4 => "IPV4",
            IPV6 => "IPV6",
            LINUX_SLL2 => "LINUX_SLL2",
            _ => "unknown",
        }
    }
}

/// Largest frame the reader accepts (bytes captured). Real link layers stay far below;
/// the bound stops a corrupt length field from allocating gigabytes.
pub const MAX_FRAME_LEN: usize = 1 << 20;
/// Largest non-packet pcapng block whose body is read into memory (interface
/// descriptions with their options). Other blocks are skipped without buffering.
pub const MAX_META_BLOCK_LEN: usize = 1 << 16;
/// Interfaces per pcapng section; more is treated as a corrupt file.
pub const MAX_INTERFACES: usize = 1 << 12;
/// Distinct link types remembered for [`CaptureReader::link_types`].
pub const MAX_LINK_TYPES_LISTED: usize = 64;

/// One captured frame, as stored in the file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frame {
    /// 1-based position among all packet records of the file.
    pub number: u64,
    /// Nanoseconds since the Unix epoch (negative before 1970).
    pub ts_ns: i64,
    /// Interface index counted over the whole file (later pcapng sections continue
    /// the numbering); always 0 for classic pcap.
    pub interface: u32,
    /// `LINKTYPE_*` of the interface the frame was captured on.
    pub link_type: u32,
    /// Length of the frame on the wire (may exceed `data.len()` when snapped).
    pub orig_len: u32,
    pub data: Vec<u8>,
    /// The pcapng packet comments (`opt_comment`), in their order.
    pub comments: Vec<String>,
    /// Digits of a second the frame's timestamp unit gives ([`TsResolution::digits`]):
    /// how many its time is printed with.
    pub ts_digits: u8,
}

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

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&format!("{b:02X}"));
    }
    s
}

#[cfg(test)]
mod tests;
