//! Streaming reader for classic pcap and pcapng over any `std::io::Read`.
//!
//! Why this file is long: about 1,130 lines; pcap and pcapng each need buffering over a `Read`, located errors,
//! interface state and the cases pcap-file refuses, in one reader with one buffer.

use super::compress::{Compression, Counted};
use super::error::{hex, CaptureError};
use super::format::*;
use super::frame::{
    Frame, MAX_FRAME_LEN, MAX_INTERFACES, MAX_LINK_TYPES_LISTED, MAX_META_BLOCK_LEN,
};
use crate::diag::{Code, Warning};
use pcap_file::pcap::{PcapParseError, PcapParser, PcapTsResolution};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketOption;
use pcap_file::pcapng::blocks::opt_common::CommonOption;
use pcap_file::pcapng::{Block, PcapNgParseError, PcapNgParser, RawBlock};
use pcap_file::Endianness;
use std::error::Error as _;
use std::fmt;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const PCAP_HEADER_LEN: usize = 24;
const PCAP_RECORD_HEADER_LEN: usize = 16;
/// Fixed part of an Enhanced Packet Block body (interface, timestamp, lengths).
const EPB_FIXED: usize = 20;
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
    /// Before the file header is read.
    Opening,
    Pcap {
        parser: PcapParser,
        resolution: TsResolution,
        link_type: u32,
        snaplen: u32,
    },
    PcapNg {
        parser: Box<PcapNgParser>,
        interfaces: Vec<Interface>,
        /// File-wide index of this section's interface 0.
        first_interface: u32,
    },
}

/// Reads frames one at a time; the format is detected from the magic bytes.
///
/// Records and blocks are cut out by `pcap-file`'s slice parsers over this reader's own
/// buffer, which holds the unread part of the input and grows only to the largest
/// record. Because the reader knows the file offset of every slice it hands over, each
/// error and cut is located exactly.
pub struct CaptureReader {
    src: Box<dyn Read + Send>,
    /// `buf[start..end]` is read from the input but not yet consumed.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// File offset of `buf[0]`.
    base: u64,
    eof: bool,
    format: CaptureFormat,
    state: State,
    frames: u64,
    sections: u32,
    link_types: Vec<u32>,
    truncation: Option<Truncation>,
    finished: bool,
    last_ts_ns: i64,
    /// Flaws read past (a record over the snap length, options ignored); see
    /// [`take_notes`](Self::take_notes).
    notes: Vec<Warning>,
    compression: Option<Compression>,
    compressed_bytes: Arc<AtomicU64>,
}

/// Bytes asked of the input at a time.
const READ_CHUNK: usize = 1 << 16;
/// Largest record or block held in the buffer whole.
const MAX_BUFFERED: usize = MAX_FRAME_LEN + MAX_META_BLOCK_LEN;
/// Notes kept between two calls of [`CaptureReader::take_notes`].
const MAX_NOTES: usize = 64;

impl CaptureReader {
    /// Reads the file header from `r`; the first bytes decide between pcap and pcapng,
    /// after undoing gzip, Zstandard or LZ4 compression if they announce one.
    pub fn new(r: impl Read + Send + 'static) -> Result<CaptureReader, CaptureError> {
        let mut reader = CaptureReader {
            src: Box::new(r),
            buf: vec![0; READ_CHUNK],
            start: 0,
            end: 0,
            base: 0,
            eof: false,
            format: CaptureFormat::PcapNg,
            state: State::Opening,
            frames: 0,
            sections: 0,
            link_types: Vec::new(),
            truncation: None,
            finished: false,
            last_ts_ns: 0,
            notes: Vec::new(),
            compression: None,
            compressed_bytes: Arc::new(AtomicU64::new(0)),
        };
        reader.fill(4)?;
        if let Some(kind) = Compression::detect(reader.pending()) {
            // The decoder starts from the bytes already taken from the input.
            let head = reader.pending().to_vec();
            reader
                .compressed_bytes
                .store(head.len() as u64, Ordering::Relaxed);
            let raw = std::mem::replace(&mut reader.src, Box::new(io::empty()));
            let counted = Counted {
                inner: raw,
                count: reader.compressed_bytes.clone(),
            };
            reader.src = kind.decoder(Box::new(io::Cursor::new(head).chain(counted)))?;
            reader.compression = Some(kind);
            reader.end = 0;
            reader.eof = false;
            reader.fill(4)?;
        }
        let first = reader.pending();
        match first {
            [0x0A, 0x0D, 0x0D, 0x0A, ..] => reader.open_pcapng()?,
            [0xD4, 0xC3, 0xB2, 0xA1, ..]
            | [0xA1, 0xB2, 0xC3, 0xD4, ..]
            | [0x4D, 0x3C, 0xB2, 0xA1, ..]
            | [0xA1, 0xB2, 0x3C, 0x4D, ..] => reader.open_pcap()?,
            _ => {
                return Err(CaptureError::NotACapture {
                    first_bytes: first[..first.len().min(4)].to_vec(),
                })
            }
        }
        Ok(reader)
    }

    fn open_pcap(&mut self) -> Result<(), CaptureError> {
        self.fill(PCAP_HEADER_LEN)?;
        let (parser, header) = match PcapParser::new(self.pending()) {
            Ok((_, parser)) => {
                let header = parser.header();
                (parser, header)
            }
            Err(_) => {
                return Err(CaptureError::HeaderCut {
                    needed: PCAP_HEADER_LEN,
                    got: self.pending().len(),
                })
            }
        };
        self.start += PCAP_HEADER_LEN;
        let resolution = match header.ts_resolution {
            PcapTsResolution::MicroSecond => TsResolution::MICRO,
            PcapTsResolution::NanoSecond => TsResolution::NANO,
        };
        let endian = match header.endianness {
            Endianness::Little => Endian::Little,
            Endianness::Big => Endian::Big,
        };
        // The upper bits of the link-type field carry FCS information, not the type.
        let link_type = u32::from(header.datalink) & 0xFFFF;
        self.format = CaptureFormat::Pcap {
            resolution,
            endian,
            version: (header.version_major, header.version_minor),
            snaplen: header.snaplen,
        };
        self.state = State::Pcap {
            parser,
            resolution,
            link_type,
            snaplen: header.snaplen,
        };
        self.note_link_type(link_type);
        Ok(())
    }

    fn open_pcapng(&mut self) -> Result<(), CaptureError> {
        self.fill(12)?;
        if self.pending().len() < 12 {
            return Err(CaptureError::HeaderCut {
                needed: 28,
                got: self.pending().len(),
            });
        }
        let total = match shb_length(self.pending()) {
            Some(total) => total,
            None => {
                return Err(CaptureError::Corrupt {
                    offset: 0,
                    frame: None,
                    what: byte_order_magic_error(&self.pending()[8..12]),
                })
            }
        };
        if total > MAX_META_BLOCK_LEN {
            return Err(CaptureError::Corrupt {
                offset: 0,
                frame: None,
                what: format!("section header has impossible length {total}"),
            });
        }
        self.fill(total)?;
        let got = self.pending().len();
        let parsed = PcapNgParser::new(self.pending()).map(|(rem, p)| (got - rem.len(), p));
        match parsed {
            Ok((used, parser)) => {
                self.start += used;
                self.state = State::PcapNg {
                    parser: Box::new(parser),
                    interfaces: Vec::new(),
                    first_interface: 0,
                };
                self.sections = 1;
                Ok(())
            }
            Err(PcapNgParseError::IncompleteBuffer(..)) => {
                Err(CaptureError::HeaderCut { needed: total, got })
            }
            Err(PcapNgParseError::BlockConversion(e)) => {
                // Options pcap-file refuses (not UTF-8, wrong size): the section is
                // read without them, as later ones are (see `next_pcapng`).
                let endian = if self.pending()[8] == 0x4D {
                    Endian::Little
                } else {
                    Endian::Big
                };
                let parser = stand_in_block(PCAPNG_SHB, endian, self.pending())
                    .and_then(|b| PcapNgParser::new(&b).ok().map(|(_, p)| p));
                let Some(parser) = parser else {
                    return Err(CaptureError::Corrupt {
                        offset: 0,
                        frame: None,
                        what: format!("section header: {}", describe_source(&e)),
                    });
                };
                self.start += total;
                self.state = State::PcapNg {
                    parser: Box::new(parser),
                    interfaces: Vec::new(),
                    first_interface: 0,
                };
                self.sections = 1;
                self.notes.push(Warning::new(
                    Code::CaptureBlockMalformed,
                    Some(0),
                    format!(
                        "section header: {}; the section is kept without its options",
                        describe_source(&e)
                    ),
                ));
                Ok(())
            }
            Err(e) => Err(CaptureError::Corrupt {
                offset: 0,
                frame: None,
                what: format!("section header: {}", describe_ng(&e)),
            }),
        }
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

    /// The compression undone while reading, if any.
    pub fn compression(&self) -> Option<Compression> {
        self.compression
    }

    /// Compressed bytes taken from the input so far (equal to
    /// [`bytes_read`](Self::bytes_read) plus read-ahead for an uncompressed one).
    pub fn compressed_bytes_read(&self) -> u64 {
        match self.compression {
            Some(_) => self.compressed_bytes.load(Ordering::Relaxed),
            None => self.base + self.end as u64,
        }
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

    /// Bytes of the (decompressed) capture consumed so far: the end of the last record
    /// or block read.
    pub fn bytes_read(&self) -> u64 {
        self.offset()
    }

    /// Set once the input ended inside a record; `None` for a clean end.
    pub fn truncation(&self) -> Option<&Truncation> {
        self.truncation.as_ref()
    }

    /// Warnings about flaws read past: a record longer than its interface's snap length
    /// (`record_over_snaplen`), a first section header whose options were ignored
    /// (`capture_block_malformed`); oldest first, at most a few dozen kept between two
    /// calls.
    pub fn take_notes(&mut self) -> Vec<Warning> {
        std::mem::take(&mut self.notes)
    }

    /// True when [`take_notes`](Self::take_notes) has something.
    pub fn has_notes(&self) -> bool {
        !self.notes.is_empty()
    }

    /// Reads the next frame into `frame`, reusing its buffer. `Ok(false)` at the end of
    /// the input (check [`truncation`](Self::truncation) then). After an error for
    /// which [`CaptureError::is_fatal`] is false, reading may go on.
    pub fn read_into(&mut self, frame: &mut Frame) -> Result<bool, CaptureError> {
        if self.finished {
            return Ok(false);
        }
        let result = match self.state {
            State::Opening => Ok(false),
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
        loop {
            let State::Pcap {
                parser,
                resolution,
                link_type,
                snaplen,
            } = &self.state
            else {
                return Ok(false);
            };
            let slice = &self.buf[self.start..self.end];
            let avail = slice.len();
            match parser.next_raw_packet(slice) {
                Ok((_, raw)) if raw.incl_len as usize > MAX_FRAME_LEN => {
                    let len = raw.incl_len as usize;
                    return Err(self.too_long(len));
                }
                Ok((rem, raw)) => {
                    let used = avail - rem.len();
                    let number = self.frames + 1;
                    let ns = i128::from(raw.ts_sec) * 1_000_000_000
                        + resolution.to_ns(u64::from(raw.ts_frac));
                    let over_snaplen = *snaplen != 0 && raw.incl_len > *snaplen;
                    frame.number = number;
                    frame.ts_ns = clamp_ns(ns);
                    frame.interface = 0;
                    frame.link_type = *link_type;
                    frame.orig_len = raw.orig_len;
                    frame.data.clear();
                    frame.data.extend_from_slice(&raw.data);
                    frame.comments.clear();
                    frame.ts_digits = resolution.digits();
                    if over_snaplen {
                        let (caplen, snaplen) = (raw.incl_len, *snaplen);
                        self.note_over_snaplen(number, caplen, snaplen);
                    }
                    self.frames = number;
                    self.last_ts_ns = frame.ts_ns;
                    self.start += used;
                    return Ok(true);
                }
                Err(PcapParseError::IncompleteBuffer(needed, _)) => {
                    // Below 16 bytes `needed` is the record header, else its data.
                    let want = if avail < PCAP_RECORD_HEADER_LEN {
                        PCAP_RECORD_HEADER_LEN
                    } else {
                        if needed > MAX_FRAME_LEN {
                            return Err(self.too_long(needed));
                        }
                        PCAP_RECORD_HEADER_LEN + needed
                    };
                    if avail >= want {
                        // Cannot happen with a sound parser; stops rather than spins.
                        return Err(CaptureError::Corrupt {
                            offset: self.offset(),
                            frame: None,
                            what: format!("parser asked for more than the {want} bytes present"),
                        });
                    }
                    if self.eof {
                        // Everything left is in the buffer: the input ends in a record.
                        if avail > 0 {
                            let (needed, what) = if avail < PCAP_RECORD_HEADER_LEN {
                                (None, "record header")
                            } else {
                                (Some(want as u64), "packet record")
                            };
                            self.cut(avail, needed, Some(self.frames + 1), what);
                        }
                        return Ok(false);
                    }
                    self.fill(want)?;
                }
                Err(e) => {
                    return Err(CaptureError::Corrupt {
                        offset: self.offset(),
                        frame: Some(self.frames + 1),
                        what: e.to_string(),
                    })
                }
            }
        }
    }

    fn next_pcapng(&mut self, frame: &mut Frame) -> Result<bool, CaptureError> {
        loop {
            let State::PcapNg { parser, .. } = &self.state else {
                return Ok(false);
            };
            let endian = match parser.state().endianness() {
                Endianness::Little => Endian::Little,
                Endianness::Big => Endian::Big,
            };
            let avail = self.end - self.start;
            let head = peek_block(self.pending(), endian);
            // The block borrows the buffer while the reader's state changes, so the
            // buffer is lent out for the step.
            let buf = std::mem::take(&mut self.buf);
            let step = self.pcapng_step(&buf[self.start..self.end], endian, frame);
            self.buf = buf;
            match step {
                Ok(Step::Frame) => return Ok(true),
                Ok(Step::Again) => continue,
                Err(StepError::Done(e)) => return Err(e),
                Err(StepError::Parse(PcapNgParseError::IncompleteBuffer(needed, _))) => {
                    // Below 12 bytes `needed` is the block's fixed part; past it, the
                    // block's length less its first 8 bytes.
                    let want = if avail < BLOCK_OVERHEAD {
                        BLOCK_OVERHEAD
                    } else {
                        needed + 8
                    };
                    let is_packet = head.is_some_and(|(t, _)| is_packet_block(t));
                    let is_state = head.is_some_and(|(t, _)| t == PCAPNG_SHB || t == PCAPNG_IDB);
                    if want > MAX_BUFFERED {
                        if is_packet || is_state {
                            let block_type = head.map_or(0, |(t, _)| t);
                            return Err(CaptureError::Corrupt {
                                offset: self.offset(),
                                frame: None,
                                what: format!(
                                    "block type {block_type:#x} has impossible length {want}"
                                ),
                            });
                        }
                        // Statistics, name resolution, custom blocks… of any size are
                        // passed over without being held.
                        if !self.skip_block(want, endian)? {
                            return Ok(false);
                        }
                        continue;
                    }
                    if avail >= want {
                        // Cannot happen with a sound parser; stops rather than spins.
                        return Err(CaptureError::Corrupt {
                            offset: self.offset(),
                            frame: None,
                            what: format!("parser asked for more than the {want} bytes present"),
                        });
                    }
                    if self.eof {
                        // Everything left is in the buffer: the input ends in a block.
                        if avail > 0 {
                            let frame_no = is_packet.then_some(self.frames + 1);
                            let (needed, what) = match head {
                                None => (None, "block header"),
                                Some((PCAPNG_SHB, _)) if avail < BLOCK_OVERHEAD => {
                                    (None, "section header")
                                }
                                Some((PCAPNG_SHB, _)) => (Some(want as u64), "section header"),
                                Some(_) if is_packet => (Some(want as u64), "packet record"),
                                Some((_, total)) => (Some(u64::from(total)), "block"),
                            };
                            self.cut(avail, needed, frame_no, what);
                        }
                        return Ok(false);
                    }
                    self.fill(want)?;
                }
                Err(StepError::Parse(PcapNgParseError::StateUpdate(e)))
                    if head.is_some_and(|(t, _)| t == PCAPNG_IDB || t == PCAPNG_SHB) =>
                {
                    // pcap-file refused the block's content (an option, a reserved
                    // field). Its fixed part is sound, so a stand-in without options
                    // takes its place in pcap-file's state and in ours: later blocks
                    // keep their byte order and interface ids.
                    let offset = self.offset();
                    let Some((block_type, total)) = head else {
                        return Ok(false);
                    };
                    let Some(stand_in) = stand_in_block(block_type, endian, self.pending()) else {
                        return Err(CaptureError::Corrupt {
                            offset,
                            frame: None,
                            what: describe_ng(&PcapNgParseError::StateUpdate(e)),
                        });
                    };
                    self.start += total as usize;
                    if let State::PcapNg { parser, .. } = &mut self.state {
                        if let Ok((_, raw)) = parser.next_raw_block(&stand_in) {
                            self.interpret_block(&raw, endian, frame)?;
                        }
                    }
                    let what = if block_type == PCAPNG_SHB {
                        "the section is kept without its options"
                    } else {
                        "the interface is kept without its options"
                    };
                    return Err(CaptureError::BadRecord {
                        offset,
                        frame: None,
                        what: format!(
                            "{}; {what}",
                            e.source().map_or_else(|| e.to_string(), describe_source)
                        ),
                    });
                }
                Err(StepError::Parse(e)) => {
                    let what = match head {
                        Some((PCAPNG_SHB, _)) => match self.pending().get(8..12) {
                            Some(m) if shb_length(self.pending()).is_none() => {
                                byte_order_magic_error(m)
                            }
                            _ => format!("section header: {}", describe_ng(&e)),
                        },
                        Some((t, total)) => {
                            format!("block type {t:#x} of length {total}: {}", describe_ng(&e))
                        }
                        None => describe_ng(&e),
                    };
                    return Err(CaptureError::Corrupt {
                        offset: self.offset(),
                        frame: None,
                        what,
                    });
                }
            }
        }
    }

    /// Parses the block at the start of `slice` (the unconsumed part of the buffer) and
    /// acts on it, consuming it.
    fn pcapng_step(
        &mut self,
        slice: &[u8],
        endian: Endian,
        frame: &mut Frame,
    ) -> Result<Step, StepError> {
        let State::PcapNg { parser, .. } = &mut self.state else {
            return Ok(Step::Again);
        };
        let (rem, raw) = parser.next_raw_block(slice).map_err(StepError::Parse)?;
        let used = slice.len() - rem.len();
        let done = self.interpret_block(&raw, endian, frame);
        self.start += used;
        match done {
            Ok(true) => Ok(Step::Frame),
            Ok(false) => Ok(Step::Again),
            Err(e) => Err(StepError::Done(e)),
        }
    }

    /// Acts on one complete block. `Ok(true)` when `frame` was filled.
    fn interpret_block(
        &mut self,
        raw: &RawBlock<'_>,
        endian: Endian,
        frame: &mut Frame,
    ) -> Result<bool, CaptureError> {
        let start = self.offset();
        let body: &[u8] = &raw.body;
        let u32_at = |i: usize| -> u32 {
            body.get(i..i + 4)
                .and_then(|s| s.try_into().ok())
                .map_or(0, |b| endian.u32(b))
        };
        match raw.type_ {
            PCAPNG_SHB => {
                let State::PcapNg {
                    interfaces,
                    first_interface,
                    ..
                } = &mut self.state
                else {
                    return Ok(false);
                };
                *first_interface = first_interface.saturating_add(interfaces.len() as u32);
                interfaces.clear();
                self.sections += 1;
                Ok(false)
            }
            PCAPNG_IDB => {
                let State::PcapNg { parser, .. } = &self.state else {
                    return Ok(false);
                };
                // pcap-file decoded the block (options included) to keep its own state;
                // its last interface is this one.
                let Some(idb) = parser.interfaces().last() else {
                    return Ok(false);
                };
                let iface = Interface {
                    link_type: u32::from(idb.linktype) & 0xFFFF,
                    snaplen: idb.snaplen,
                    resolution: TsResolution(idb.ts_resolution().to_u8()),
                    offset_s: idb.ts_offset(),
                };
                self.add_interface(start, iface)?;
                Ok(false)
            }
            PCAPNG_EPB | PCAPNG_PB_OBSOLETE => {
                // pcap-file delimits the block (`RawBlock`); its five fixed fields are
                // taken from the raw body rather than the typed block, which refuses a
                // time that a negative if_tsoffset moves before 1970 and a captured
                // length above the original length, both in real files (the test
                // `pcap_file_typed_packet_blocks_refuse_what_the_reader_keeps` shows
                // it, and fails once pcap-file accepts them). The comment, an option,
                // is decoded by pcap-file below.
                let iface_id = if raw.type_ == PCAPNG_EPB {
                    u32_at(0)
                } else {
                    u32::from(body.get(0..2).map_or(0, |b| endian.u16([b[0], b[1]])))
                };
                let ts_units = (u64::from(u32_at(4)) << 32) | u64::from(u32_at(8));
                let caplen = u32_at(12) as usize;
                let orig_len = u32_at(16);
                self.frames += 1;
                let number = self.frames;
                let data = body
                    .get(EPB_FIXED..)
                    .and_then(|rest| rest.get(..caplen))
                    .filter(|_| body.len() >= EPB_FIXED);
                let Some(data) = data else {
                    return Err(bad_packet(
                        start,
                        number,
                        "captured length overruns the block",
                    ));
                };
                let Some((iface, global)) = self.interface(iface_id) else {
                    return Err(bad_packet(start, number, "unknown interface id"));
                };
                let ns =
                    iface.resolution.to_ns(ts_units) + i128::from(iface.offset_s) * 1_000_000_000;
                self.fill_frame(
                    frame,
                    number,
                    clamp_ns(ns),
                    global,
                    iface.link_type,
                    orig_len,
                    data,
                );
                frame.ts_digits = iface.resolution.digits();
                if iface.snaplen != 0 && caplen > iface.snaplen as usize {
                    self.note_over_snaplen(number, caplen as u32, iface.snaplen);
                }
                // Options follow the padded data; only then is the typed block worth
                // decoding, for its comment.
                frame.comments.clear();
                if raw.type_ == PCAPNG_EPB && body.len() > EPB_FIXED + ((caplen + 3) & !3) {
                    self.packet_comments(raw, &mut frame.comments);
                }
                Ok(true)
            }
            PCAPNG_SPB => {
                self.frames += 1;
                let number = self.frames;
                let Some((iface, global)) = self.interface(0) else {
                    return Err(bad_packet(
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
                self.fill_frame(frame, number, ts, global, iface.link_type, orig_len, data);
                frame.ts_digits = iface.resolution.digits();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// The `opt_comment`s of an enhanced packet block, decoded by pcap-file, in order.
    fn packet_comments(&self, raw: &RawBlock<'_>, out: &mut Vec<String>) {
        let State::PcapNg { parser, .. } = &self.state else {
            return;
        };
        let Ok(Block::EnhancedPacket(epb)) = raw.clone().try_into_block(parser.state()) else {
            return;
        };
        out.extend(epb.options.into_iter().filter_map(|o| match o {
            EnhancedPacketOption::Common(CommonOption::Comment(c)) => Some(c.into_owned()),
            _ => None,
        }));
    }

    fn too_long(&self, len: usize) -> CaptureError {
        CaptureError::Corrupt {
            offset: self.offset(),
            frame: Some(self.frames + 1),
            what: format!("record claims {len} captured bytes (limit {MAX_FRAME_LEN})"),
        }
    }

    fn add_interface(&mut self, offset: u64, iface: Interface) -> Result<(), CaptureError> {
        let State::PcapNg { interfaces, .. } = &mut self.state else {
            return Ok(());
        };
        if interfaces.len() >= MAX_INTERFACES {
            return Err(CaptureError::Corrupt {
                offset,
                frame: None,
                what: format!("more than {MAX_INTERFACES} interfaces in one section"),
            });
        }
        interfaces.push(iface);
        self.note_link_type(iface.link_type);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn fill_frame(
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
        frame.comments.clear();
        self.last_ts_ns = ts_ns;
    }

    fn note_over_snaplen(&mut self, number: u64, caplen: u32, snaplen: u32) {
        if self.notes.len() < MAX_NOTES {
            self.notes.push(Warning::new(
                Code::RecordOverSnaplen,
                usize::try_from(self.offset()).ok(),
                format!(
                    "frame {number}: {caplen} bytes captured, more than the snap length {snaplen}; read all the same"
                ),
            ));
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
            _ => None,
        }
    }

    /// Passes over a block of `total` bytes too large to hold, without buffering it,
    /// and checks its trailing length. `Ok(false)` if the input ended inside it.
    fn skip_block(&mut self, total: usize, endian: Endian) -> Result<bool, CaptureError> {
        let offset = self.offset();
        let mut left = (total - 4) as u64;
        loop {
            let take = (self.end - self.start).min(usize::try_from(left).unwrap_or(usize::MAX));
            self.start += take;
            left -= take as u64;
            if left == 0 {
                break;
            }
            if !self.more(1)? {
                self.cut_at(
                    offset,
                    total as u64 - 4 - left,
                    Some(total as u64),
                    None,
                    "block",
                );
                return Ok(false);
            }
        }
        if !self.more(4)? {
            let avail = (self.end - self.start) as u64;
            self.cut_at(
                offset,
                total as u64 - 4 + avail,
                Some(total as u64),
                None,
                "block",
            );
            return Ok(false);
        }
        let t = &self.buf[self.start..self.start + 4];
        let trailer = endian.u32([t[0], t[1], t[2], t[3]]) as usize;
        if trailer != total {
            return Err(CaptureError::Corrupt {
                offset,
                frame: None,
                what: format!("block length {total} does not match its trailing copy {trailer}"),
            });
        }
        self.start += 4;
        Ok(true)
    }

    fn cut(
        &mut self,
        available: usize,
        needed: Option<u64>,
        frame: Option<u64>,
        what: &'static str,
    ) {
        let offset = self.offset();
        self.cut_at(offset, available as u64, needed, frame, what);
    }

    fn cut_at(
        &mut self,
        offset: u64,
        available: u64,
        needed: Option<u64>,
        frame: Option<u64>,
        what: &'static str,
    ) {
        self.truncation = Some(Truncation {
            offset,
            available,
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

    /// File offset of the first unconsumed byte.
    fn offset(&self) -> u64 {
        self.base + self.start as u64
    }

    /// The unconsumed bytes in the buffer.
    fn pending(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Reads until `want` unconsumed bytes are buffered; false if the input ended first
    /// (or had ended already) without adding any.
    fn more(&mut self, want: usize) -> Result<bool, CaptureError> {
        let before = self.end - self.start;
        if self.eof {
            return Ok(before >= want);
        }
        self.fill(want)?;
        let now = self.end - self.start;
        Ok(now >= want || (now > before && !self.eof))
    }

    /// Buffers at least `want` unconsumed bytes unless the input ends first. The buffer
    /// grows only when a single record needs more room than it has.
    fn fill(&mut self, want: usize) -> io::Result<()> {
        if self.end - self.start >= want || self.eof {
            return Ok(());
        }
        if self.buf.len() - self.start < want {
            self.buf.copy_within(self.start..self.end, 0);
            self.base += self.start as u64;
            self.end -= self.start;
            self.start = 0;
            if self.buf.len() < want {
                self.buf.resize(want.next_multiple_of(READ_CHUNK), 0);
            }
        }
        while self.end - self.start < want {
            if self.end == self.buf.len() {
                // Room is left only before `start`: move the pending bytes down.
                self.buf.copy_within(self.start..self.end, 0);
                self.base += self.start as u64;
                self.end -= self.start;
                self.start = 0;
            }
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl Iterator for CaptureReader {
    type Item = Result<Frame, CaptureError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_frame()
    }
}

enum Step {
    Frame,
    Again,
}

enum StepError {
    /// From pcap-file: more input needed, or the block is malformed.
    Parse(PcapNgParseError),
    /// From the reader, about a block pcap-file parsed.
    Done(CaptureError),
}

fn bad_packet(offset: u64, number: u64, what: &str) -> CaptureError {
    CaptureError::BadRecord {
        offset,
        frame: Some(number),
        what: what.to_string(),
    }
}

/// A section header or interface description block without options, standing in for
/// the one at the start of `block` whose options pcap-file refused: the same byte
/// order, link type and snap length. `None` if the fixed part is not there.
fn stand_in_block(block_type: u32, endian: Endian, block: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::with_capacity(16);
    if block_type == PCAPNG_SHB {
        let magic = block.get(8..12)?;
        let endian = match magic {
            [0x4D, 0x3C, 0x2B, 0x1A] => Endian::Little,
            [0x1A, 0x2B, 0x3C, 0x4D] => Endian::Big,
            _ => return None,
        };
        body.extend_from_slice(magic);
        body.extend_from_slice(&endian.u16_bytes(1));
        body.extend_from_slice(&endian.u16_bytes(0));
        body.extend_from_slice(&[0xFF; 8]);
        return Some(frame_block(PCAPNG_SHB, endian, &body));
    }
    let fixed = block.get(8..16)?;
    body.extend_from_slice(&fixed[0..2]);
    body.extend_from_slice(&[0, 0]);
    body.extend_from_slice(&fixed[4..8]);
    Some(frame_block(block_type, endian, &body))
}

fn frame_block(block_type: u32, endian: Endian, body: &[u8]) -> Vec<u8> {
    let total = (body.len() + 12) as u32;
    let mut b = Vec::with_capacity(body.len() + 12);
    b.extend_from_slice(&endian.u32_bytes(block_type));
    b.extend_from_slice(&endian.u32_bytes(total));
    b.extend_from_slice(body);
    b.extend_from_slice(&endian.u32_bytes(total));
    b
}

fn is_packet_block(block_type: u32) -> bool {
    matches!(block_type, PCAPNG_EPB | PCAPNG_SPB | PCAPNG_PB_OBSOLETE)
}

/// Type and length of the block at the start of `slice`, for sizing and reports,
/// once its first 8 bytes are there. A section header's length is read in the byte
/// order its magic announces (0 until the magic is there).
fn peek_block(slice: &[u8], endian: Endian) -> Option<(u32, u32)> {
    let h: [u8; 8] = slice.get(..8)?.try_into().ok()?;
    let block_type = endian.u32([h[0], h[1], h[2], h[3]]);
    if block_type == PCAPNG_SHB {
        return Some((PCAPNG_SHB, shb_length(slice).map_or(0, |t| t as u32)));
    }
    Some((block_type, endian.u32([h[4], h[5], h[6], h[7]])))
}

/// Length of a section header block from its first 12 bytes, in the byte order its
/// magic announces; `None` if the magic is neither order (or not there yet).
fn shb_length(slice: &[u8]) -> Option<usize> {
    let len: [u8; 4] = slice.get(4..8)?.try_into().ok()?;
    match slice.get(8..12)? {
        [0x4D, 0x3C, 0x2B, 0x1A] => Some(u32::from_le_bytes(len) as usize),
        [0x1A, 0x2B, 0x3C, 0x4D] => Some(u32::from_be_bytes(len) as usize),
        _ => None,
    }
}

fn byte_order_magic_error(magic: &[u8]) -> String {
    format!(
        "section header byte-order magic {} is not 1A2B3C4D in either order",
        hex(magic)
    )
}

/// pcap-file's error with its causes, in one line.
fn describe_ng(e: &PcapNgParseError) -> String {
    match e {
        PcapNgParseError::InvalidFormat(f) => f.to_string(),
        other => describe_source(other),
    }
}

fn describe_source(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

fn clamp_ns(ns: i128) -> i64 {
    i64::try_from(ns).unwrap_or(if ns < 0 { i64::MIN } else { i64::MAX })
}
