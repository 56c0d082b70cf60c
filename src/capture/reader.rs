//! Streaming reader for classic pcap and pcapng over any `std::io::Read`.

use super::format::*;
use super::{
    CaptureError, Frame, MAX_FRAME_LEN, MAX_INTERFACES, MAX_LINK_TYPES_LISTED, MAX_META_BLOCK_LEN,
};
use crate::diag::{Code, Warning};
use std::fmt;
use std::io::{self, BufReader, Read};

const PCAP_HEADER_LEN: usize = 24;
const PCAP_RECORD_HEADER_LEN: usize = 16;
/// Fixed part of an Enhanced Packet Block body (interface, timestamp, lengths).
const EPB_FIXED: usize = 20;
/// Fixed part of an obsolete Packet Block body.
const PB_FIXED: usize = 20;
/// Every pcapng block: type, total length, …, total length again.
const BLOCK_OVERHEAD: usize = 12;

/// Where a capture ends early. Every frame before it was yielded; this is reported once
/// the reader runs out, as a warning rather than an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    /// Byte offset where the incomplete record (or block) starts.
    pub offset: u64,
    /// Bytes of it present before the end of the input.
    pub available: u64,
    /// Its full length when the header was complete enough to say.
    pub needed: Option<u64>,
    /// Number the cut frame would have had, when the cut record is a packet record.
    pub frame: Option<u64>,
    /// Complete frames read before the cut.
    pub frames_complete: u64,
    /// What was cut: "record header", "packet record", "block header", "block".
    pub what: &'static str,
}

impl Truncation {
    pub fn to_warning(&self) -> Warning {
        Warning::new(
            Code::TruncatedCapture,
            usize::try_from(self.offset).ok(),
            self.to_string(),
        )
    }
}

impl fmt::Display for Truncation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "capture cut at byte {} inside a {}",
            self.offset, self.what
        )?;
        if let Some(n) = self.frame {
            write!(f, " (frame {n})")?;
        }
        match self.needed {
            Some(needed) => write!(f, ": {} of {} bytes present", self.available, needed)?,
            None => write!(f, ": {} bytes present", self.available)?,
        }
        write!(f, "; {} complete frames read", self.frames_complete)
    }
}

#[derive(Debug, Clone, Copy)]
struct Interface {
    link_type: u32,
    snaplen: u32,
    resolution: TsResolution,
    offset_s: i64,
}

enum State {
    Pcap {
        endian: Endian,
        resolution: TsResolution,
        link_type: u32,
    },
    PcapNg {
        endian: Endian,
        interfaces: Vec<Interface>,
        /// File-wide index of this section's interface 0.
        first_interface: u32,
    },
}

/// Reads frames one at a time; the format is detected from the magic bytes.
pub struct CaptureReader {
    src: BufReader<Box<dyn Read + Send>>,
    format: CaptureFormat,
    state: State,
    /// Bytes consumed from the input so far.
    pos: u64,
    frames: u64,
    sections: u32,
    link_types: Vec<u32>,
    truncation: Option<Truncation>,
    finished: bool,
    /// Reused block body buffer (pcapng).
    block: Vec<u8>,
    last_ts_ns: i64,
}

impl CaptureReader {
    /// Reads the file header from `r`; the first bytes decide between pcap and pcapng.
    pub fn new(r: impl Read + Send + 'static) -> Result<CaptureReader, CaptureError> {
        let src: Box<dyn Read + Send> = Box::new(r);
        let mut reader = CaptureReader {
            src: BufReader::with_capacity(1 << 16, src),
            format: CaptureFormat::PcapNg,
            state: State::PcapNg {
                endian: Endian::Little,
                interfaces: Vec::new(),
                first_interface: 0,
            },
            pos: 0,
            frames: 0,
            sections: 0,
            link_types: Vec::new(),
            truncation: None,
            finished: false,
            block: Vec::new(),
            last_ts_ns: 0,
        };
        let mut magic = [0u8; 4];
        let got = reader.read_full(&mut magic)?;
        let first = &magic[..got];
        let (resolution, endian) = match first {
            [0xD4, 0xC3, 0xB2, 0xA1] => (TsResolution::MICRO, Endian::Little),
            [0xA1, 0xB2, 0xC3, 0xD4] => (TsResolution::MICRO, Endian::Big),
            [0x4D, 0x3C, 0xB2, 0xA1] => (TsResolution::NANO, Endian::Little),
            [0xA1, 0xB2, 0x3C, 0x4D] => (TsResolution::NANO, Endian::Big),
            [0x0A, 0x0D, 0x0D, 0x0A] => {
                reader.read_section_header(0, None)?;
                if let Some(t) = &reader.truncation {
                    return Err(CaptureError::HeaderCut {
                        needed: t.needed.map_or(28, |n| n as usize),
                        got: t.available as usize,
                    });
                }
                return Ok(reader);
            }
            _ => {
                return Err(CaptureError::NotACapture {
                    first_bytes: first.to_vec(),
                })
            }
        };
        let mut header = [0u8; PCAP_HEADER_LEN - 4];
        let got = reader.read_full(&mut header)?;
        if got < header.len() {
            return Err(CaptureError::HeaderCut {
                needed: PCAP_HEADER_LEN,
                got: 4 + got,
            });
        }
        let major = endian.u16([header[0], header[1]]);
        let minor = endian.u16([header[2], header[3]]);
        let snaplen = endian.u32([header[12], header[13], header[14], header[15]]);
        // The upper bits of the link-type field carry FCS information, not the type.
        let link_type = endian.u32([header[16], header[17], header[18], header[19]]) & 0xFFFF;
        reader.format = CaptureFormat::Pcap {
            resolution,
            endian,
            version: (major, minor),
            snaplen,
        };
        reader.state = State::Pcap {
            endian,
            resolution,
            link_type,
        };
        reader.note_link_type(link_type);
        Ok(reader)
    }

    /// Opens a file, or standard input for `-`.
    pub fn open(path: &str) -> Result<CaptureReader, CaptureError> {
        if path == "-" {
            CaptureReader::new(io::stdin())
        } else {
            CaptureReader::new(std::fs::File::open(path)?)
        }
    }

    pub fn format(&self) -> CaptureFormat {
        self.format
    }

    /// Link types of the interfaces seen so far, in order of first appearance.
    pub fn link_types(&self) -> &[u32] {
        &self.link_types
    }

    /// Frames yielded so far.
    pub fn frames_read(&self) -> u64 {
        self.frames
    }

    /// pcapng sections seen so far (0 for classic pcap).
    pub fn sections(&self) -> u32 {
        self.sections
    }

    /// Bytes consumed from the input so far.
    pub fn bytes_read(&self) -> u64 {
        self.pos
    }

    /// Set once the input ended inside a record; `None` for a clean end.
    pub fn truncation(&self) -> Option<&Truncation> {
        self.truncation.as_ref()
    }

    /// Reads the next frame into `frame`, reusing its buffer. `Ok(false)` at the end of
    /// the input (check [`truncation`](Self::truncation) then). After an error for
    /// which [`CaptureError::is_fatal`] is false, reading may go on.
    pub fn read_into(&mut self, frame: &mut Frame) -> Result<bool, CaptureError> {
        if self.finished {
            return Ok(false);
        }
        let result = match self.state {
            State::Pcap { .. } => self.next_pcap(frame),
            State::PcapNg { .. } => self.next_pcapng(frame),
        };
        match &result {
            Ok(false) => self.finished = true,
            Err(e) if e.is_fatal() => self.finished = true,
            _ => {}
        }
        result
    }

    /// Reads the next frame into a new buffer; `None` at the end.
    pub fn next_frame(&mut self) -> Option<Result<Frame, CaptureError>> {
        let mut frame = Frame::default();
        match self.read_into(&mut frame) {
            Ok(true) => Some(Ok(frame)),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }

    fn next_pcap(&mut self, frame: &mut Frame) -> Result<bool, CaptureError> {
        let State::Pcap {
            endian,
            resolution,
            link_type,
        } = self.state
        else {
            return Ok(false);
        };
        let start = self.pos;
        let mut h = [0u8; PCAP_RECORD_HEADER_LEN];
        let got = self.read_full(&mut h)?;
        if got == 0 {
            return Ok(false);
        }
        if got < h.len() {
            self.cut(start, got, None, Some(self.frames + 1), "record header");
            return Ok(false);
        }
        let sec = endian.u32([h[0], h[1], h[2], h[3]]);
        let frac = endian.u32([h[4], h[5], h[6], h[7]]);
        let caplen = endian.u32([h[8], h[9], h[10], h[11]]);
        let orig_len = endian.u32([h[12], h[13], h[14], h[15]]);
        let len = caplen as usize;
        if len > MAX_FRAME_LEN {
            return Err(CaptureError::Corrupt {
                offset: start,
                frame: Some(self.frames + 1),
                what: format!("record claims {len} captured bytes (limit {MAX_FRAME_LEN})"),
            });
        }
        frame.data.clear();
        frame.data.resize(len, 0);
        let got = self.read_full(&mut frame.data)?;
        if got < len {
            let needed = (PCAP_RECORD_HEADER_LEN + len) as u64;
            self.cut(
                start,
                PCAP_RECORD_HEADER_LEN + got,
                Some(needed),
                Some(self.frames + 1),
                "packet record",
            );
            frame.data.clear();
            return Ok(false);
        }
        self.frames += 1;
        let ns = i128::from(sec) * 1_000_000_000 + resolution.to_ns(u64::from(frac));
        frame.number = self.frames;
        frame.ts_ns = clamp_ns(ns);
        frame.interface = 0;
        frame.link_type = link_type;
        frame.orig_len = orig_len;
        self.last_ts_ns = frame.ts_ns;
        Ok(true)
    }

    fn next_pcapng(&mut self, frame: &mut Frame) -> Result<bool, CaptureError> {
        loop {
            let start = self.pos;
            let mut h = [0u8; 8];
            let got = self.read_full(&mut h)?;
            if got == 0 {
                return Ok(false);
            }
            if got < h.len() {
                self.cut(start, got, None, None, "block header");
                return Ok(false);
            }
            let endian = match self.state {
                State::PcapNg { endian, .. } => endian,
                State::Pcap { .. } => return Ok(false),
            };
            let block_type = endian.u32([h[0], h[1], h[2], h[3]]);
            if block_type == PCAPNG_SHB {
                // The length must be read in the new section's byte order.
                self.read_section_header(start, Some([h[4], h[5], h[6], h[7]]))?;
                if self.truncation.is_some() {
                    return Ok(false);
                }
                continue;
            }
            let total = endian.u32([h[4], h[5], h[6], h[7]]) as usize;
            let is_packet = matches!(block_type, PCAPNG_EPB | PCAPNG_SPB | PCAPNG_PB_OBSOLETE);
            let limit = if is_packet {
                MAX_FRAME_LEN + MAX_META_BLOCK_LEN
            } else {
                usize::MAX
            };
            if total < BLOCK_OVERHEAD || !total.is_multiple_of(4) || total > limit {
                return Err(CaptureError::Corrupt {
                    offset: start,
                    frame: None,
                    what: format!("block type {block_type:#x} has impossible length {total}"),
                });
            }
            let frame_no = is_packet.then_some(self.frames + 1);
            let body_len = total - BLOCK_OVERHEAD;
            if !is_packet && block_type != PCAPNG_IDB {
                // Skip without buffering: statistics, name resolution, custom blocks…
                let skipped =
                    io::copy(&mut (&mut self.src).take(body_len as u64), &mut io::sink())?;
                self.pos += skipped;
                if skipped < body_len as u64 {
                    self.cut(
                        start,
                        8 + skipped as usize,
                        Some(total as u64),
                        None,
                        "block",
                    );
                    return Ok(false);
                }
                if !self.read_trailer(start, total, endian, None)? {
                    return Ok(false);
                }
                continue;
            }
            if body_len > MAX_FRAME_LEN + MAX_META_BLOCK_LEN {
                return Err(CaptureError::Corrupt {
                    offset: start,
                    frame: None,
                    what: format!("interface description block of {total} bytes"),
                });
            }
            let mut body = std::mem::take(&mut self.block);
            body.clear();
            body.resize(body_len, 0);
            let got = self.read_full(&mut body)?;
            if got < body_len {
                self.block = body;
                let what = if is_packet { "packet record" } else { "block" };
                self.cut(start, 8 + got, Some(total as u64), frame_no, what);
                return Ok(false);
            }
            let trailer_ok = self.read_trailer(start, total, endian, frame_no);
            let result = match trailer_ok {
                Ok(true) => self.interpret_block(block_type, start, &body, endian, frame),
                Ok(false) => Ok(false),
                Err(e) => Err(e),
            };
            self.block = body;
            match result {
                Ok(true) if is_packet => return Ok(true),
                Ok(true) => continue,
                Ok(false) if self.truncation.is_some() || self.finished => return Ok(false),
                Ok(false) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Acts on one complete block body (trailer excluded). `Ok(true)` when `frame` was
    /// filled (packet blocks) or the block was understood (others).
    fn interpret_block(
        &mut self,
        block_type: u32,
        start: u64,
        body: &[u8],
        endian: Endian,
        frame: &mut Frame,
    ) -> Result<bool, CaptureError> {
        let u32_at = |i: usize| -> u32 {
            body.get(i..i + 4)
                .and_then(|s| s.try_into().ok())
                .map_or(0, |b| endian.u32(b))
        };
        match block_type {
            PCAPNG_IDB => {
                let (link_type, snaplen) = if body.len() >= 8 {
                    (
                        u32::from(endian.u16([body[0], body[1]])),
                        endian.u32([body[4], body[5], body[6], body[7]]),
                    )
                } else {
                    return Err(CaptureError::Corrupt {
                        offset: start,
                        frame: None,
                        what: "interface description block shorter than 8 bytes".into(),
                    });
                };
                let mut iface = Interface {
                    link_type,
                    snaplen,
                    resolution: TsResolution::MICRO,
                    offset_s: 0,
                };
                let bad_option = parse_idb_options(&body[8..], endian, &mut iface);
                self.note_link_type(link_type);
                let State::PcapNg { interfaces, .. } = &mut self.state else {
                    return Ok(false);
                };
                if interfaces.len() >= MAX_INTERFACES {
                    return Err(CaptureError::Corrupt {
                        offset: start,
                        frame: None,
                        what: format!("more than {MAX_INTERFACES} interfaces in one section"),
                    });
                }
                interfaces.push(iface);
                match bad_option {
                    Some(what) => Err(CaptureError::BadRecord {
                        offset: start,
                        frame: None,
                        what,
                    }),
                    None => Ok(true),
                }
            }
            PCAPNG_EPB | PCAPNG_PB_OBSOLETE => {
                let (iface_id, fixed) = if block_type == PCAPNG_EPB {
                    (u32_at(0), EPB_FIXED)
                } else {
                    (
                        u32::from(body.get(0..2).map_or(0, |b| endian.u16([b[0], b[1]]))),
                        PB_FIXED,
                    )
                };
                let ts_units = (u64::from(u32_at(4)) << 32) | u64::from(u32_at(8));
                let caplen = u32_at(12) as usize;
                let orig_len = u32_at(16);
                self.frames += 1;
                let number = self.frames;
                let data = body
                    .get(fixed..)
                    .and_then(|rest| rest.get(..caplen))
                    .filter(|_| body.len() >= fixed);
                let Some(data) = data else {
                    return Err(self.bad_packet(
                        start,
                        number,
                        "captured length overruns the block",
                    ));
                };
                let Some((iface, global)) = self.interface(iface_id) else {
                    return Err(self.bad_packet(start, number, "unknown interface id"));
                };
                let ns =
                    iface.resolution.to_ns(ts_units) + i128::from(iface.offset_s) * 1_000_000_000;
                self.fill(
                    frame,
                    number,
                    clamp_ns(ns),
                    global,
                    iface.link_type,
                    orig_len,
                    data,
                );
                Ok(true)
            }
            PCAPNG_SPB => {
                self.frames += 1;
                let number = self.frames;
                let Some((iface, global)) = self.interface(0) else {
                    return Err(self.bad_packet(
                        start,
                        number,
                        "simple packet block without interface 0",
                    ));
                };
                let orig_len = u32_at(0);
                let room = body.len().saturating_sub(4);
                let mut caplen = (orig_len as usize).min(room);
                if iface.snaplen != 0 {
                    caplen = caplen.min(iface.snaplen as usize);
                }
                let data = body.get(4..4 + caplen).unwrap_or(&[]);
                // Simple packet blocks carry no timestamp: keep the previous frame's.
                let ts = self.last_ts_ns;
                self.fill(frame, number, ts, global, iface.link_type, orig_len, data);
                Ok(true)
            }
            _ => Ok(true),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn fill(
        &mut self,
        frame: &mut Frame,
        number: u64,
        ts_ns: i64,
        interface: u32,
        link_type: u32,
        orig_len: u32,
        data: &[u8],
    ) {
        frame.number = number;
        frame.ts_ns = ts_ns;
        frame.interface = interface;
        frame.link_type = link_type;
        frame.orig_len = orig_len;
        frame.data.clear();
        frame.data.extend_from_slice(data);
        self.last_ts_ns = ts_ns;
    }

    fn bad_packet(&self, offset: u64, number: u64, what: &str) -> CaptureError {
        CaptureError::BadRecord {
            offset,
            frame: Some(number),
            what: what.to_string(),
        }
    }

    /// The interface of the current section and its file-wide index.
    fn interface(&self, id: u32) -> Option<(Interface, u32)> {
        match &self.state {
            State::PcapNg {
                interfaces,
                first_interface,
                ..
            } => interfaces
                .get(id as usize)
                .map(|i| (*i, first_interface.saturating_add(id))),
            State::Pcap { .. } => None,
        }
    }

    /// Reads the trailing length copy of a block; `Ok(false)` if the input ended.
    fn read_trailer(
        &mut self,
        start: u64,
        total: usize,
        endian: Endian,
        frame: Option<u64>,
    ) -> Result<bool, CaptureError> {
        let mut t = [0u8; 4];
        let got = self.read_full(&mut t)?;
        if got < 4 {
            let what = if frame.is_some() {
                "packet record"
            } else {
                "block"
            };
            self.cut(start, total - 4 + got, Some(total as u64), frame, what);
            return Ok(false);
        }
        let trailer = endian.u32(t) as usize;
        if trailer != total {
            return Err(CaptureError::Corrupt {
                offset: start,
                frame: None,
                what: format!("block length {total} does not match its trailing copy {trailer}"),
            });
        }
        Ok(true)
    }

    /// Reads the rest of a section header whose type (and, from the block loop, the
    /// length bytes `len_bytes`, whose byte order is not yet known) was consumed.
    /// Sets `truncation` if the input ends inside it.
    fn read_section_header(
        &mut self,
        start: u64,
        len_bytes: Option<[u8; 4]>,
    ) -> Result<(), CaptureError> {
        let len_bytes = match len_bytes {
            Some(b) => b,
            None => {
                let mut b = [0u8; 4];
                let got = self.read_full(&mut b)?;
                if got < 4 {
                    self.cut(start, 4 + got, None, None, "section header");
                    return Ok(());
                }
                b
            }
        };
        let mut magic = [0u8; 4];
        let got = self.read_full(&mut magic)?;
        if got < 4 {
            self.cut(start, 8 + got, None, None, "section header");
            return Ok(());
        }
        let endian = match magic {
            [0x4D, 0x3C, 0x2B, 0x1A] => Endian::Little,
            [0x1A, 0x2B, 0x3C, 0x4D] => Endian::Big,
            other => {
                return Err(CaptureError::Corrupt {
                    offset: start,
                    frame: None,
                    what: format!(
                        "section header byte-order magic {} is not 1A2B3C4D in either order",
                        super::hex(&other)
                    ),
                })
            }
        };
        debug_assert_eq!(endian.u32(magic), PCAPNG_BYTE_ORDER);
        let total = endian.u32(len_bytes) as usize;
        if total < 28 || !total.is_multiple_of(4) {
            return Err(CaptureError::Corrupt {
                offset: start,
                frame: None,
                what: format!("section header has impossible length {total}"),
            });
        }
        // Version, section length and options are not needed: skip them unbuffered.
        let remaining = (total - BLOCK_OVERHEAD - 4) as u64;
        let skipped = io::copy(&mut (&mut self.src).take(remaining), &mut io::sink())?;
        self.pos += skipped;
        if skipped < remaining {
            self.cut(
                start,
                12 + skipped as usize,
                Some(total as u64),
                None,
                "section header",
            );
            return Ok(());
        }
        if !self.read_trailer(start, total, endian, None)? {
            return Ok(());
        }
        let first_interface = match &self.state {
            State::PcapNg {
                interfaces,
                first_interface,
                ..
            } => first_interface.saturating_add(interfaces.len() as u32),
            State::Pcap { .. } => 0,
        };
        self.state = State::PcapNg {
            endian,
            interfaces: Vec::new(),
            first_interface,
        };
        self.sections += 1;
        Ok(())
    }

    fn cut(
        &mut self,
        offset: u64,
        available: usize,
        needed: Option<u64>,
        frame: Option<u64>,
        what: &'static str,
    ) {
        self.truncation = Some(Truncation {
            offset,
            available: available as u64,
            needed,
            frame,
            frames_complete: self.frames,
            what,
        });
    }

    fn note_link_type(&mut self, link_type: u32) {
        if !self.link_types.contains(&link_type) && self.link_types.len() < MAX_LINK_TYPES_LISTED {
            self.link_types.push(link_type);
        }
    }

    /// Reads until `buf` is full or the input ends; returns the count read.
    fn read_full(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match self.src.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.pos += n as u64;
        Ok(n)
    }
}

impl Iterator for CaptureReader {
    type Item = Result<Frame, CaptureError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_frame()
    }
}

/// Reads interface options; returns a description of the first malformed one.
fn parse_idb_options(mut opts: &[u8], endian: Endian, iface: &mut Interface) -> Option<String> {
    while opts.len() >= 4 {
        let code = endian.u16([opts[0], opts[1]]);
        let len = endian.u16([opts[2], opts[3]]) as usize;
        if code == OPT_END {
            return None;
        }
        let padded = (len + 3) & !3;
        let Some(value) = opts.get(4..4 + len) else {
            return Some(format!("interface option {code} overruns the block"));
        };
        match code {
            OPT_IF_TSRESOL => match value.first() {
                Some(&r) => iface.resolution = TsResolution(r),
                None => return Some("if_tsresol option is empty".into()),
            },
            OPT_IF_TSOFFSET => match <[u8; 8]>::try_from(value) {
                Ok(b) => iface.offset_s = endian.u64(b) as i64,
                Err(_) => return Some(format!("if_tsoffset option has {len} bytes, not 8")),
            },
            _ => {}
        }
        opts = opts.get(4 + padded..).unwrap_or(&[]);
    }
    None
}

fn clamp_ns(ns: i128) -> i64 {
    i64::try_from(ns).unwrap_or(if ns < 0 { i64::MIN } else { i64::MAX })
}
