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
mod error;
mod format;
mod frame;
mod reader;
pub mod writer;

pub use compress::Compression;
pub use error::CaptureError;
pub use format::{CaptureFormat, Endian, TsResolution};
pub use frame::{
    link_type, Frame, MAX_FRAME_LEN, MAX_INTERFACES, MAX_LINK_TYPES_LISTED, MAX_META_BLOCK_LEN,
};
pub use reader::{CaptureReader, Truncation};
pub use writer::CaptureWriter;

#[cfg(test)]
pub mod shared_captures;
#[cfg(test)]
mod tests;
