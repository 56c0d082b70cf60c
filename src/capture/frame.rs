//! A captured frame as the reader hands it on, the link types it knows, and the
//! bounds that keep a corrupt length field from allocating without limit.

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
