//! Packet header and transport messages of a decrypted game datagram (README §3–4,
//! variants.md): parse and emit.
//!
//! `[peer id][msg count][messages]`. Every message refers to its payload by a range into
//! the datagram; parsing allocates one `Vec` of messages per packet (reusable with
//! [`parse_into`]) and nothing per message unless it carries a warning. Every byte is
//! accounted for: a message, the undecoded remainder after an unknown type, or
//! `undecoded` bytes with a located warning. Offsets are datagram offsets.
//!
//! Why this file is long: the walk ends at about 860 lines; the rest is tests, with the
//! captured datagrams they check.

use super::low::{decode_body, LowBody, LowKind};
use crate::diag::{Code, Warning};
use std::borrow::Cow;
use std::ops::Range;

pub const TYPE_ACK: u8 = 0x01;
pub const TYPE_DATA: u8 = 0x32;

/// 0x32 and low-type `flags_len` bits.
pub const FLAG_RELIABLE: u16 = 0x8000;
pub const FLAG_ORDERED: u16 = 0x4000;
/// 0x32 only: this message is one fragment of a larger one.
pub const FLAG_FRAGMENT: u16 = 0x2000;
/// 0x32: 13-bit total length counting the type byte.
pub const DATA_LEN_MASK: u16 = 0x1FFF;
/// Low types: 14-bit total length counting the type byte.
pub const LOW_LEN_MASK: u16 = 0x3FFF;

/// ACK flag bit 0: the acknowledged message was a fragment; an index byte follows.
pub const ACK_FRAGMENT: u8 = 0x01;
/// ACK flag bit 1: the acknowledged message used the low-type counter.
pub const ACK_LOW: u8 = 0x02;
const ACK_STOCK_BITS: u8 = ACK_FRAGMENT | ACK_LOW;

/// The two independent sequence counters of a sender (README §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Counter {
    /// Types 0x00, 0x02–0x06.
    Low,
    /// Type 0x32.
    Data,
}

impl Counter {
    pub fn as_str(self) -> &'static str {
        match self {
            Counter::Low => "low",
            Counter::Data => "data",
        }
    }
}

/// A decrypted datagram split into transport messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Packet {
    /// Byte 0, the sender's peer id (0 when the datagram is empty).
    pub peer_id: u8,
    /// Byte 1, the number of messages the sender announced.
    pub msg_count: u8,
    pub messages: Vec<Message>,
    /// Packet-level problems: trailing bytes, count mismatch, unknown type, a header
    /// that could not be read.
    pub warnings: Vec<Warning>,
    /// Bytes not inside any message (always at the end of the datagram).
    pub undecoded: Option<Range<usize>>,
}

/// One transport message: `offset..offset + len` inside the datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub offset: usize,
    /// Bytes the message occupies in the datagram (less than its declared length when
    /// it overran the datagram; see the `message_overrun` warning).
    pub len: usize,
    pub body: MessageBody,
    /// Message-level problems and deviations from stock (`non_stock`, `message_overrun`).
    pub warnings: Vec<Warning>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessageBody {
    Data(DataMessage),
    Ack(Ack),
    Low(LowMessage),
    /// A type byte with no known layout; `rest` is everything after it up to the end of
    /// the datagram (the walk stops here).
    Unknown {
        type_byte: u8,
        rest: Range<usize>,
    },
}

/// Fragment header of a 0x32 message (README §4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FragmentHeader {
    pub index: u8,
    /// Number of fragments; present in fragment 0 only.
    pub total: Option<u8>,
}

impl FragmentHeader {
    fn wire_len(&self) -> usize {
        1 + usize::from(self.total.is_some())
    }
}

/// Type 0x32.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataMessage {
    pub flags_len: u16,
    pub reliable: bool,
    pub ordered: bool,
    pub seq: Option<u16>,
    pub fragment: Option<FragmentHeader>,
    /// Game bytes (a fragment's chunk), after the seq and fragment header.
    pub payload: Range<usize>,
}

impl DataMessage {
    /// Total length claimed by `flags_len`, counting the type byte.
    pub fn declared_len(&self) -> usize {
        usize::from(self.flags_len & DATA_LEN_MASK)
    }

    /// Bytes before the payload.
    pub fn header_len(&self) -> usize {
        3 + 2 * usize::from(self.seq.is_some()) + self.fragment.map_or(0, |f| f.wire_len())
    }

    /// The game opcode, if this message carries the first byte of a game message: the
    /// first payload byte of an unfragmented message or of fragment 0. Never the
    /// fragment index.
    pub fn opcode(&self, plain: &[u8]) -> Option<u8> {
        match self.fragment {
            Some(FragmentHeader { index: 0, .. }) | None => plain
                .get(self.payload.start)
                .copied()
                .filter(|_| !self.payload.is_empty()),
            Some(_) => None,
        }
    }

    /// Build a well-formed message (encoder side): reliable when `seq` is given,
    /// `flags_len` computed for `payload_len` payload bytes. `None` when the total does
    /// not fit the 13-bit length.
    pub fn new(
        seq: Option<u16>,
        ordered: bool,
        fragment: Option<FragmentHeader>,
        payload_len: usize,
    ) -> Option<DataMessage> {
        let mut m = DataMessage {
            flags_len: 0,
            reliable: seq.is_some(),
            ordered,
            seq,
            fragment,
            payload: 0..payload_len,
        };
        let total = u16::try_from(m.header_len() + payload_len)
            .ok()
            .filter(|&t| t <= DATA_LEN_MASK)?;
        m.flags_len = total
            | if m.reliable { FLAG_RELIABLE } else { 0 }
            | if ordered { FLAG_ORDERED } else { 0 }
            | if fragment.is_some() { FLAG_FRAGMENT } else { 0 };
        Some(m)
    }
}

/// Type 0x01: 4 or 5 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    pub seq: u16,
    pub flags: u8,
    pub fragment_index: Option<u8>,
}

impl Ack {
    /// Build a stock ACK (encoder side).
    pub fn new(seq: u16, counter: Counter, fragment_index: Option<u8>) -> Ack {
        let mut flags = if counter == Counter::Low { ACK_LOW } else { 0 };
        if fragment_index.is_some() {
            flags |= ACK_FRAGMENT;
        }
        Ack {
            seq,
            flags,
            fragment_index,
        }
    }

    /// Which of the sender's counters this ACK refers to.
    pub fn counter(&self) -> Counter {
        if self.flags & ACK_LOW != 0 {
            Counter::Low
        } else {
            Counter::Data
        }
    }

    pub fn wire_len(&self) -> usize {
        4 + usize::from(self.fragment_index.is_some())
    }
}

/// How a low-type message spells its length and flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LowHeader {
    /// Stock: u16 LE, bit 15 reliable, bit 14 ordered, 14-bit total length.
    FlagsLen(u16),
    /// Third-party: `[len u8][flags u8]` where the u16 reading would overrun
    /// (e.g. client connect `03 08 01 …`).
    ShortLen { len: u8, flags: u8 },
    /// Third-party: `[len u8]` only, a 2-byte message (e.g. disconnect `06 02`).
    LenOnly(u8),
}

impl LowHeader {
    pub fn declared_len(&self) -> usize {
        match *self {
            LowHeader::FlagsLen(fl) => usize::from(fl & LOW_LEN_MASK),
            LowHeader::ShortLen { len, .. } | LowHeader::LenOnly(len) => usize::from(len),
        }
    }
    /// The flags as the high byte of a stock `flags_len` would carry them.
    pub fn flags_byte(&self) -> Option<u8> {
        match *self {
            LowHeader::FlagsLen(fl) => Some((fl >> 8) as u8),
            LowHeader::ShortLen { flags, .. } => Some(flags),
            LowHeader::LenOnly(_) => None,
        }
    }
    fn wire_len(&self) -> usize {
        match self {
            LowHeader::FlagsLen(_) | LowHeader::ShortLen { .. } => 2,
            LowHeader::LenOnly(_) => 1,
        }
    }
    pub fn is_stock(&self) -> bool {
        matches!(self, LowHeader::FlagsLen(_))
    }
}

/// Types 0x00, 0x02–0x06 (connection management).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LowMessage {
    pub kind: LowKind,
    pub header: LowHeader,
    pub reliable: bool,
    pub ordered: bool,
    pub seq: Option<u16>,
    /// Bytes after the header and seq.
    pub payload: Range<usize>,
    /// Decoded payload (a view; [`emit_message`] writes the payload bytes it is given).
    pub body: LowBody,
}

impl LowMessage {
    /// Whether this message ends the client's stay: a disconnect, or a boot other than
    /// the one that says "connection accepted" (which lets the client in).
    pub fn ends_stay(&self) -> bool {
        match (self.kind, &self.body) {
            (LowKind::Disconnect | LowKind::ShortDisconnect, _) => true,
            (LowKind::Boot, LowBody::Boot { reason, .. }) => {
                super::low::boot_ends_stay(Some(*reason))
            }
            (LowKind::Boot, _) => super::low::boot_ends_stay(None),
            _ => false,
        }
    }

    /// Build a stock low-type message (encoder side); `None` if the total length does
    /// not fit 14 bits. The body is left [`LowBody::Raw`]: pass the payload to emit.
    pub fn new(
        kind: LowKind,
        seq: Option<u16>,
        ordered: bool,
        payload_len: usize,
    ) -> Option<LowMessage> {
        let total = 3 + 2 * usize::from(seq.is_some()) + payload_len;
        let total = u16::try_from(total).ok().filter(|&t| t <= LOW_LEN_MASK)?;
        let flags_len = total
            | if seq.is_some() { FLAG_RELIABLE } else { 0 }
            | if ordered { FLAG_ORDERED } else { 0 };
        Some(LowMessage {
            kind,
            header: LowHeader::FlagsLen(flags_len),
            reliable: seq.is_some(),
            ordered,
            seq,
            payload: 0..payload_len,
            body: LowBody::Raw,
        })
    }
}

impl Message {
    /// The message's bytes in the datagram.
    pub fn bytes<'a>(&self, plain: &'a [u8]) -> &'a [u8] {
        plain
            .get(self.offset..self.offset + self.len)
            .unwrap_or(&[])
    }

    /// `(counter, seq)` for a reliable message.
    pub fn reliable_seq(&self) -> Option<(Counter, u16)> {
        match &self.body {
            MessageBody::Data(d) => d.seq.map(|s| (Counter::Data, s)),
            MessageBody::Low(l) => l.seq.map(|s| (Counter::Low, s)),
            _ => None,
        }
    }

    pub fn type_byte(&self) -> u8 {
        match &self.body {
            MessageBody::Data(_) => TYPE_DATA,
            MessageBody::Ack(_) => TYPE_ACK,
            MessageBody::Low(l) => l.kind.type_byte(),
            MessageBody::Unknown { type_byte, .. } => *type_byte,
        }
    }
}

impl MessageBody {
    /// The range emit copies after the header (empty for ACKs).
    pub fn payload_range(&self) -> Range<usize> {
        match self {
            MessageBody::Data(d) => d.payload.clone(),
            MessageBody::Low(l) => l.payload.clone(),
            MessageBody::Unknown { rest, .. } => rest.clone(),
            MessageBody::Ack(_) => 0..0,
        }
    }
}

/// Parse a decrypted datagram.
pub fn parse(plain: &[u8]) -> Packet {
    let mut p = Packet::default();
    parse_into(plain, &mut p);
    p
}

/// Parse into an existing packet, reusing its message buffer.
pub fn parse_into(plain: &[u8], out: &mut Packet) {
    out.messages.clear();
    out.warnings.clear();
    out.undecoded = None;
    out.peer_id = plain.first().copied().unwrap_or(0);
    out.msg_count = 0;
    let Some(&count) = plain.get(1) else {
        out.warnings.push(Warning::new(
            Code::TruncatedHeader,
            Some(plain.len()),
            format!(
                "datagram of {} byte(s) has no message count byte",
                plain.len()
            ),
        ));
        return;
    };
    out.msg_count = count;
    // The list gets its room once rather than growing push by push (a fresh list grew
    // about 5,000 times in 100,000 stock datagrams). Every message that lets the walk
    // go on takes at least 2 bytes and only the last may take 1, so a datagram of
    // `len` bytes holds at most `(len - 1) / 2`: a large announced count in a short
    // datagram asks for no more than the bytes allow.
    out.messages
        .reserve(usize::from(count).min((plain.len() - 1) / 2));
    let mut pos = 2;
    let mut clean_end = true;
    for _ in 0..count {
        if pos >= plain.len() {
            break;
        }
        match parse_message(plain, pos, &mut out.messages) {
            Step::Next(next) => pos = next,
            Step::Last => {
                pos = plain.len();
                clean_end = false;
                break;
            }
            Step::Undecodable(w) => {
                out.warnings.push(w);
                out.undecoded = Some(pos..plain.len());
                pos = plain.len();
                clean_end = false;
                break;
            }
        }
    }
    if !clean_end {
        return;
    }
    let found = out.messages.len();
    if found < usize::from(count) {
        out.warnings.push(Warning::new(
            Code::CountMismatch,
            Some(plain.len()),
            format!("header announces {count} message(s), the datagram holds {found}"),
        ));
    } else if pos < plain.len() {
        out.warnings.push(Warning::new(
            Code::TrailingBytes,
            Some(pos),
            format!(
                "{} byte(s) after the {count} announced message(s)",
                plain.len() - pos
            ),
        ));
        out.undecoded = Some(pos..plain.len());
    }
}

/// How the walk goes on after a message. The message itself is pushed onto the
/// packet's list where it is parsed: carried out in the step, each one was moved twice
/// more before it landed there.
enum Step {
    /// A message was pushed; the walk goes on at the given offset.
    Next(usize),
    /// A message was pushed that ends the walk (unknown type, overrun).
    Last,
    /// Nothing usable at this offset; the rest is undecoded.
    Undecodable(Warning),
}

fn u16_at(plain: &[u8], at: usize) -> Option<u16> {
    match plain.get(at..at.checked_add(2)?)? {
        &[lo, hi] => Some(u16::from_le_bytes([lo, hi])),
        _ => None,
    }
}

// The warnings below are built out of line and marked cold: inlined into the walk, their
// formatting took registers and stack from the path every well-formed message takes.

#[cold]
#[inline(never)]
fn overrun(at: usize, what: &str, need: usize, left: usize) -> Warning {
    Warning::new(
        Code::MessageOverrun,
        Some(at),
        format!("{what} needs {need} byte(s), {left} left in the datagram"),
    )
}

fn parse_message(plain: &[u8], pos: usize, out: &mut Vec<Message>) -> Step {
    let t = plain[pos];
    match t {
        TYPE_DATA => parse_data(plain, pos, out),
        TYPE_ACK => parse_ack(plain, pos, out),
        _ => match LowKind::from_type(t) {
            Some(kind) => parse_low(plain, pos, kind, out),
            None => {
                let w = unknown_type(t, pos, plain.len() - pos);
                out.push(Message {
                    offset: pos,
                    len: plain.len() - pos,
                    body: MessageBody::Unknown {
                        type_byte: t,
                        rest: pos + 1..plain.len(),
                    },
                    warnings: vec![w],
                });
                Step::Last
            }
        },
    }
}

#[cold]
#[inline(never)]
fn unknown_type(t: u8, pos: usize, left: usize) -> Warning {
    Warning::new(
        Code::UnknownTransportType,
        Some(pos),
        format!("transport type {t:#04x} has no known layout; {left} byte(s) left undecoded"),
    )
}

#[cold]
#[inline(never)]
fn data_too_short(pos: usize, flags_len: u16, declared: usize, header_len: usize) -> Warning {
    Warning::new(
        Code::MessageTooShort,
        Some(pos),
        format!(
            "0x32 flags_len {flags_len:#06x} declares {declared} byte(s), less than its own {header_len}-byte header"
        ),
    )
}

#[cold]
#[inline(never)]
fn unreliable_fragment(pos: usize) -> Warning {
    Warning::new(
        Code::NonStock,
        Some(pos + 1),
        "fragment without the reliable bit (stock fragments are always reliable)",
    )
}

#[cold]
#[inline(never)]
fn odd_ack_flags(pos: usize, flags: u8, odd: u8) -> Warning {
    Warning::new(
        Code::NonStock,
        Some(pos + 3),
        // Third-party test clients set 0x80 in every ACK: keep that case free of
        // formatting, it is on the hot path for such captures.
        if odd == 0x80 {
            Cow::Borrowed(
                "ACK flag bit 0x80 is not used by stock peers (0x01 fragment, 0x02 low type)",
            )
        } else {
            Cow::Owned(format!("ACK flags {flags:#04x}: bits {odd:#04x} are not used by stock peers (0x01 fragment, 0x02 low type)"))
        },
    )
}

fn parse_data(plain: &[u8], pos: usize, out: &mut Vec<Message>) -> Step {
    let left = plain.len() - pos;
    let Some(flags_len) = u16_at(plain, pos + 1) else {
        return Step::Undecodable(overrun(pos, "0x32 header", 3, left));
    };
    let reliable = flags_len & FLAG_RELIABLE != 0;
    let ordered = flags_len & FLAG_ORDERED != 0;
    let is_fragment = flags_len & FLAG_FRAGMENT != 0;
    let mut at = pos + 3;
    let seq = if reliable {
        let Some(s) = u16_at(plain, at) else {
            return Step::Undecodable(overrun(pos, "reliable 0x32 header", 5, left));
        };
        at += 2;
        Some(s)
    } else {
        None
    };
    let fragment = if is_fragment {
        let Some(&index) = plain.get(at) else {
            return Step::Undecodable(overrun(pos, "0x32 fragment header", at + 1 - pos, left));
        };
        at += 1;
        let total = if index == 0 {
            let Some(&n) = plain.get(at) else {
                return Step::Undecodable(overrun(
                    pos,
                    "0x32 fragment 0 header",
                    at + 1 - pos,
                    left,
                ));
            };
            at += 1;
            Some(n)
        } else {
            None
        };
        Some(FragmentHeader { index, total })
    } else {
        None
    };
    let header_len = at - pos;
    let declared = usize::from(flags_len & DATA_LEN_MASK);
    if declared < header_len {
        return Step::Undecodable(data_too_short(pos, flags_len, declared, header_len));
    }
    let mut warnings = Vec::new();
    if is_fragment && !reliable {
        warnings.push(unreliable_fragment(pos));
    }
    let end = pos + declared;
    let (len, next) = if end <= plain.len() {
        (declared, Some(end))
    } else {
        warnings.push(overrun(pos, "0x32 message", declared, left));
        (left, None)
    };
    out.push(Message {
        offset: pos,
        len,
        body: MessageBody::Data(DataMessage {
            flags_len,
            reliable,
            ordered,
            seq,
            fragment,
            payload: at..pos + len,
        }),
        warnings,
    });
    match next {
        Some(n) => Step::Next(n),
        None => Step::Last,
    }
}

fn parse_ack(plain: &[u8], pos: usize, out: &mut Vec<Message>) -> Step {
    let left = plain.len() - pos;
    let Some(&[s0, s1, flags]) = plain.get(pos + 1..pos + 4) else {
        return Step::Undecodable(overrun(pos, "ACK", 4, left));
    };
    let seq = u16::from_le_bytes([s0, s1]);
    let fragment_index = if flags & ACK_FRAGMENT != 0 {
        let Some(&i) = plain.get(pos + 4) else {
            return Step::Undecodable(overrun(pos, "fragment ACK", 5, left));
        };
        Some(i)
    } else {
        None
    };
    let ack = Ack {
        seq,
        flags,
        fragment_index,
    };
    let mut warnings = Vec::new();
    let odd = flags & !ACK_STOCK_BITS;
    if odd != 0 {
        warnings.push(odd_ack_flags(pos, flags, odd));
    }
    let len = ack.wire_len();
    out.push(Message {
        offset: pos,
        len,
        body: MessageBody::Ack(ack),
        warnings,
    });
    Step::Next(pos + len)
}

/// Reading of a low-type header: which form, whether reliable/ordered, header size.
#[derive(Clone, Copy)]
struct LowLayout {
    header: LowHeader,
    reliable: bool,
    ordered: bool,
    header_len: usize,
}

impl LowLayout {
    fn from_header(header: LowHeader) -> LowLayout {
        let flags = header.flags_byte().unwrap_or(0);
        let reliable = flags & 0x80 != 0;
        LowLayout {
            header,
            reliable,
            ordered: flags & 0x40 != 0,
            header_len: 1 + header.wire_len() + 2 * usize::from(reliable),
        }
    }
    fn fits(&self, left: usize) -> bool {
        let n = self.header.declared_len();
        n >= self.header_len && n <= left
    }
}

fn parse_low(plain: &[u8], pos: usize, kind: LowKind, out: &mut Vec<Message>) -> Step {
    let left = plain.len() - pos;
    let stock = u16_at(plain, pos + 1).map(|fl| LowLayout::from_header(LowHeader::FlagsLen(fl)));
    // Third-party peers write `[len u8][flags u8]` or just `[len u8]`
    // (variants.md): used only when the stock u16 reading does not fit.
    let chosen = match stock {
        Some(s) if s.fits(left) => Some(s),
        _ => plain.get(pos + 1).and_then(|&len| {
            if len == 2 {
                Some(LowLayout::from_header(LowHeader::LenOnly(len)))
            } else {
                let flags = *plain.get(pos + 2)?;
                Some(LowLayout::from_header(LowHeader::ShortLen { len, flags }))
                    .filter(|l| l.fits(left))
            }
        }),
    };
    let Some(layout) = chosen.filter(|l| l.fits(left)) else {
        return Step::Undecodable(low_overrun(plain, pos, kind, stock.as_ref(), left));
    };
    let mut warnings = Vec::new();
    if !kind.is_stock() {
        warnings.push(Warning::new(
            Code::NonStock,
            Some(pos),
            format!(
                "transport type {:#04x} ({}) is not sent by stock peers",
                kind.type_byte(),
                kind.name()
            ),
        ));
    }
    match layout.header {
        LowHeader::FlagsLen(fl) => {
            let flags = (fl >> 8) & 0xC0;
            if flags != 0xC0 {
                warnings.push(Warning::new(
                    Code::NonStock,
                    Some(pos + 2),
                    if flags == 0x80 {
                        Cow::Borrowed("low-type flags 0x80 (reliable, not ordered); stock peers send 0xc0 (reliable + ordered)")
                    } else {
                        Cow::Owned(format!("low-type flags {flags:#04x}; stock peers send 0xc0 (reliable + ordered)"))
                    },
                ));
            }
        }
        LowHeader::ShortLen { len, flags } => warnings.push(Warning::new(
            Code::NonStock,
            Some(pos + 1),
            format!(
                "one-byte length form: length {len} then flags {flags:#04x} (as a stock u16 flags_len {:#06x} it would claim {} bytes)",
                u16::from_le_bytes([len, flags]),
                u16::from_le_bytes([len, flags]) & LOW_LEN_MASK
            ),
        )),
        LowHeader::LenOnly(len) => warnings.push(Warning::new(
            Code::NonStock,
            Some(pos + 1),
            format!("length-only header: {len}-byte message without flags or seq"),
        )),
    }
    let seq_at = pos + 1 + layout.header.wire_len();
    let seq = if layout.reliable {
        u16_at(plain, seq_at)
    } else {
        None
    };
    let len = layout.header.declared_len();
    let payload = pos + layout.header_len..pos + len;
    let (body, body_warning) = decode_body(kind, plain, payload.clone());
    warnings.extend(body_warning);
    out.push(Message {
        offset: pos,
        len,
        body: MessageBody::Low(LowMessage {
            kind,
            header: layout.header,
            reliable: layout.reliable,
            ordered: layout.ordered,
            seq,
            payload,
            body,
        }),
        warnings,
    });
    Step::Next(pos + len)
}

fn low_overrun(
    plain: &[u8],
    pos: usize,
    kind: LowKind,
    stock: Option<&LowLayout>,
    left: usize,
) -> Warning {
    let what = format!("low-type {:#04x} ({})", kind.type_byte(), kind.name());
    match stock {
        None => overrun(pos, &format!("{what} header"), 3, left),
        Some(s) => {
            let n = s.header.declared_len();
            if n < s.header_len {
                Warning::new(
                    Code::MessageTooShort,
                    Some(pos),
                    format!(
                        "{what} flags_len {:#06x} declares {n} byte(s), less than its own {}-byte header; one-byte length {} does not fit either",
                        u16_at(plain, pos + 1).unwrap_or(0),
                        s.header_len,
                        plain.get(pos + 1).copied().unwrap_or(0)
                    ),
                )
            } else {
                overrun(pos, &what, n, left)
            }
        }
    }
}

/// Append one message (encoder side). Header fields are written exactly as stored, so
/// re-emitting a parsed message reproduces its bytes; `payload` is written after them.
pub fn emit_message(out: &mut Vec<u8>, body: &MessageBody, payload: &[u8]) {
    match body {
        MessageBody::Data(d) => {
            out.push(TYPE_DATA);
            out.extend_from_slice(&d.flags_len.to_le_bytes());
            if let Some(s) = d.seq {
                out.extend_from_slice(&s.to_le_bytes());
            }
            if let Some(f) = d.fragment {
                out.push(f.index);
                out.extend(f.total);
            }
        }
        MessageBody::Ack(a) => {
            out.push(TYPE_ACK);
            out.extend_from_slice(&a.seq.to_le_bytes());
            out.push(a.flags);
            out.extend(a.fragment_index);
        }
        MessageBody::Low(l) => {
            out.push(l.kind.type_byte());
            match l.header {
                LowHeader::FlagsLen(fl) => out.extend_from_slice(&fl.to_le_bytes()),
                LowHeader::ShortLen { len, flags } => out.extend_from_slice(&[len, flags]),
                LowHeader::LenOnly(len) => out.push(len),
            }
            if let Some(s) = l.seq {
                out.extend_from_slice(&s.to_le_bytes());
            }
        }
        MessageBody::Unknown { type_byte, .. } => out.push(*type_byte),
    }
    out.extend_from_slice(payload);
}

/// Build a plain datagram from `(message, payload)` pairs (encoder side). `None` when
/// there are more than 255 messages.
pub fn emit_packet(peer_id: u8, parts: &[(&MessageBody, &[u8])]) -> Option<Vec<u8>> {
    let count = u8::try_from(parts.len()).ok()?;
    let mut out = Vec::with_capacity(2 + parts.iter().map(|(_, p)| p.len() + 7).sum::<usize>());
    out.push(peer_id);
    out.push(count);
    for (body, payload) in parts {
        emit_message(&mut out, body, payload);
    }
    Some(out)
}

impl Packet {
    /// Re-emit the datagram this packet was parsed from (`plain`): byte-exact,
    /// including overrunning messages, unknown remainders and undecoded bytes.
    pub fn emit(&self, plain: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(plain.len());
        if plain.is_empty() {
            return out;
        }
        out.push(self.peer_id);
        if plain.len() < 2 {
            return out;
        }
        out.push(self.msg_count);
        for m in &self.messages {
            let payload = plain.get(m.body.payload_range()).unwrap_or(&[]);
            emit_message(&mut out, &m.body, payload);
        }
        if let Some(r) = &self.undecoded {
            out.extend_from_slice(plain.get(r.clone()).unwrap_or(&[]));
        }
        out
    }

    /// All warnings: packet-level then per message.
    pub fn all_warnings(&self) -> impl Iterator<Item = &Warning> {
        self.warnings
            .iter()
            .chain(self.messages.iter().flat_map(|m| m.warnings.iter()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::cipher::{decrypt, encrypt};
    use super::super::low::{
        connect_request_payload, disconnect_payload, peer_info_payload, utf16le_to_string,
    };
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|h| u8::from_str_radix(h, 16).unwrap())
            .collect()
    }

    fn codes(p: &Packet) -> Vec<&'static str> {
        p.all_warnings().map(|w| w.code.as_str()).collect()
    }

    /// emit → encrypt → decrypt → parse → emit again; returns the parsed packet.
    fn round_trip(peer: u8, parts: &[(&MessageBody, &[u8])]) -> (Vec<u8>, Packet) {
        let plain = emit_packet(peer, parts).unwrap();
        let mut wire = plain.clone();
        encrypt(&mut wire);
        assert_ne!(wire[1..], plain[1..], "cipher changed nothing");
        decrypt(&mut wire);
        assert_eq!(wire, plain);
        let p = parse(&wire);
        assert_eq!(p.emit(&wire), plain, "re-emit");
        assert_eq!(p.messages.len(), parts.len());
        assert_eq!(p.undecoded, None);
        for (m, (body, payload)) in p.messages.iter().zip(parts) {
            let mut one = Vec::new();
            emit_message(&mut one, body, payload);
            assert_eq!(m.bytes(&wire), &one[..], "message bytes");
            assert_eq!(&wire[m.body.payload_range()], *payload);
        }
        (plain, p)
    }

    #[test]
    fn every_message_type_round_trips() {
        let chat = hex("2C 02 00 00 00 0E 00 68 65 6C 6C 6F");
        let su = hex("1C FF FF FF 3F 00 80");
        let info = peer_info_payload(2, [192, 168, 1, 20], "Picard");
        let req = connect_request_payload([192, 168, 1, 20], [0xD4, 0x31], [0; 4]);
        let disc = disconnect_payload(2, [192, 168, 1, 20]);
        let chunk = hex("21 02 03 0A 11");
        let chunk1 = hex("40 41 42");
        let rel =
            MessageBody::Data(DataMessage::new(Some(0x0123), false, None, chat.len()).unwrap());
        let unrel = MessageBody::Data(DataMessage::new(None, false, None, su.len()).unwrap());
        let ordered = MessageBody::Data(DataMessage::new(Some(9), true, None, su.len()).unwrap());
        let frag0 = MessageBody::Data(
            DataMessage::new(
                Some(0x11),
                false,
                Some(FragmentHeader {
                    index: 0,
                    total: Some(4),
                }),
                chunk.len(),
            )
            .unwrap(),
        );
        let frag2 = MessageBody::Data(
            DataMessage::new(
                Some(0x11),
                false,
                Some(FragmentHeader {
                    index: 2,
                    total: None,
                }),
                chunk1.len(),
            )
            .unwrap(),
        );
        let ack = MessageBody::Ack(Ack::new(7, Counter::Data, None));
        let ack_frag = MessageBody::Ack(Ack::new(0x0102, Counter::Data, Some(2)));
        let ack_low = MessageBody::Ack(Ack::new(1, Counter::Low, None));
        let low = |kind, seq, n| MessageBody::Low(LowMessage::new(kind, seq, true, n).unwrap());
        let peer_info = low(LowKind::PeerInfo, Some(1), info.len());
        let connect = low(LowKind::Connect, Some(0), req.len());
        let reply = low(LowKind::Connect, Some(0), 1);
        let boot = low(LowKind::Boot, Some(4), 2);
        let t02 = low(LowKind::Type02, Some(5), 2);
        let disconnect = low(LowKind::Disconnect, Some(6), disc.len());
        let parts: Vec<(&MessageBody, &[u8])> = vec![
            (&rel, &chat),
            (&unrel, &su),
            (&ordered, &su),
            (&frag0, &chunk),
            (&frag2, &chunk1),
            (&ack, &[]),
            (&ack_frag, &[]),
            (&ack_low, &[]),
            (&peer_info, &info),
            (&connect, &req),
            (&reply, &[3]),
            (&boot, &[4, 1]),
            (&t02, &[9, 9]),
            (&disconnect, &disc),
        ];
        let (plain, p) = round_trip(2, &parts);
        assert!(codes(&p).is_empty(), "{:?}", codes(&p));
        assert_eq!((p.peer_id, p.msg_count), (2, 14));
        // Field checks on a few decodes.
        match &p.messages[0].body {
            MessageBody::Data(d) => {
                assert_eq!(
                    (d.reliable, d.seq, d.flags_len),
                    (true, Some(0x0123), 0x8000 | 17)
                );
                assert_eq!(d.opcode(&plain), Some(0x2C));
            }
            b => panic!("{b:?}"),
        }
        match &p.messages[4].body {
            MessageBody::Data(d) => {
                assert_eq!(
                    d.fragment,
                    Some(FragmentHeader {
                        index: 2,
                        total: None
                    })
                );
                assert_eq!(d.opcode(&plain), None);
            }
            b => panic!("{b:?}"),
        }
        match &p.messages[6].body {
            MessageBody::Ack(a) => assert_eq!(
                (a.seq, a.fragment_index, a.counter()),
                (0x0102, Some(2), Counter::Data)
            ),
            b => panic!("{b:?}"),
        }
        assert!(matches!(&p.messages[7].body, MessageBody::Ack(a) if a.counter() == Counter::Low));
        match &p.messages[8].body {
            MessageBody::Low(LowMessage {
                body: LowBody::PeerInfo {
                    peer_id: 2, name, ..
                },
                seq: Some(1),
                ..
            }) => {
                assert_eq!(utf16le_to_string(&plain[name.clone()]), "Picard")
            }
            b => panic!("{b:?}"),
        }
        assert!(matches!(
            &p.messages[9].body,
            MessageBody::Low(LowMessage {
                body: LowBody::ConnectRequest { .. },
                ..
            })
        ));
        assert!(matches!(
            &p.messages[10].body,
            MessageBody::Low(LowMessage {
                body: LowBody::ConnectReply {
                    assigned_peer_id: 3
                },
                ..
            })
        ));
        assert!(matches!(
            &p.messages[11].body,
            MessageBody::Low(LowMessage {
                body: LowBody::Boot { reason: 4, slot: 1 },
                ..
            })
        ));
        assert!(matches!(
            &p.messages[13].body,
            MessageBody::Low(LowMessage {
                body: LowBody::Disconnect { peer_id: 2, .. },
                ..
            })
        ));
    }

    #[test]
    fn cipher_vectors_parse_as_documented() {
        // V6: reliable chat seq 0x0123; V7: connect request; V8: peer info;
        // V10: fragment 0 of 4; V4: fragment ACK seq 0x0102.
        let v6 = parse(&hex(
            "01 01 32 1A 80 23 01 2C 02 00 00 00 0E 00 68 65 6C 6C 6F 2C 20 63 61 70 74 61 69 6E",
        ));
        assert!(v6.warnings.is_empty());
        assert!(
            matches!(&v6.messages[0].body, MessageBody::Data(d) if d.seq == Some(0x0123) && d.payload == (7..28))
        );
        let v7 = parse(&hex("FF 01 03 0F C0 00 00 C0 A8 01 14 D4 31 00 00 00 00"));
        assert!(codes(&v7).is_empty());
        assert!(matches!(
            &v7.messages[0].body,
            MessageBody::Low(LowMessage {
                body: LowBody::ConnectRequest {
                    ipv4: [192, 168, 1, 20],
                    ..
                },
                ..
            })
        ));
        let v8 = parse(&hex(
            "02 01 00 18 C0 01 00 02 C0 A8 01 14 50 00 69 00 63 00 61 00 72 00 64 00 00 00",
        ));
        assert!(codes(&v8).is_empty());
        let v10 = hex("02 01 32 2F A0 11 00 00 04 21 02 03 0A 11 18 1F 26 2D 34 3B 42 49 50 57 5E 65 6C 73 7A 81 88 8F 96 9D A4 AB B2 B9 C0 C7 CE D5 DC E3 EA F1 F8 FF 06");
        let p10 = parse(&v10);
        assert!(codes(&p10).is_empty());
        match &p10.messages[0].body {
            MessageBody::Data(d) => {
                assert_eq!(
                    d.fragment,
                    Some(FragmentHeader {
                        index: 0,
                        total: Some(4)
                    })
                );
                assert_eq!(d.payload.start, 9);
                assert_eq!(d.opcode(&v10), Some(0x21));
            }
            b => panic!("{b:?}"),
        }
        let v4 = parse(&hex("01 01 01 02 01 01 02"));
        assert!(matches!(
            v4.messages[0].body,
            MessageBody::Ack(Ack {
                seq: 0x0102,
                flags: 1,
                fragment_index: Some(2)
            })
        ));
    }

    /// Existing trace decoders read the byte after a fragment's seq as the opcode. For
    /// fragment k ≥ 1 that byte is the index; for fragment 0 index and total precede it.
    #[test]
    fn fragment_index_is_never_read_as_the_opcode() {
        for index in 0u8..=5 {
            // The index byte takes the value of a plausible opcode (0x1C StateUpdate,
            // 0x02 ObjCreate …) to make a wrong reading visible.
            let total = (index == 0).then_some(0x1C);
            let chunk = [0xAB, 0xCD];
            let body = MessageBody::Data(
                DataMessage::new(
                    Some(3),
                    false,
                    Some(FragmentHeader { index, total }),
                    chunk.len(),
                )
                .unwrap(),
            );
            let plain = emit_packet(2, &[(&body, &chunk)]).unwrap();
            let p = parse(&plain);
            let MessageBody::Data(d) = &p.messages[0].body else {
                panic!()
            };
            assert_eq!(&plain[d.payload.clone()], &chunk);
            assert_eq!(d.opcode(&plain), (index == 0).then_some(0xAB));
            assert_eq!(d.fragment.unwrap().index, index);
        }
    }

    #[test]
    fn third_party_low_forms_decode_with_non_stock_warnings() {
        // Client connect in the one-byte length form.
        let plain = hex("FF 01 03 08 01 00 00 00 7F 00");
        let p = parse(&plain);
        assert!(p.warnings.is_empty());
        let m = &p.messages[0];
        assert_eq!((m.offset, m.len), (2, 8));
        let MessageBody::Low(l) = &m.body else {
            panic!()
        };
        assert_eq!(l.header, LowHeader::ShortLen { len: 8, flags: 1 });
        assert_eq!((l.reliable, l.seq, l.payload.clone()), (false, None, 5..10));
        assert!(m.warnings.iter().all(|w| w.code == Code::NonStock));
        assert_eq!(m.warnings.iter().filter(|w| w.offset == Some(3)).count(), 1);
        assert_eq!(p.emit(&plain), plain);
        // Disconnect `06 02`, alone and followed by another message.
        for plain in [hex("02 01 06 02"), hex("02 02 06 02 01 05 00 00")] {
            let p = parse(&plain);
            assert!(p.warnings.is_empty(), "{:?}", p.warnings);
            let MessageBody::Low(l) = &p.messages[0].body else {
                panic!()
            };
            assert_eq!(
                (l.kind, l.header, p.messages[0].len),
                (LowKind::ShortDisconnect, LowHeader::LenOnly(2), 2)
            );
            assert_eq!(p.messages.len(), usize::from(p.msg_count));
            assert_eq!(p.emit(&plain), plain);
        }
        // ACK flags 0x80.
        let p = parse(&hex("02 01 01 00 00 80"));
        assert_eq!(codes(&p), ["non_stock"]);
        assert_eq!(p.messages[0].warnings[0].offset, Some(5));
        // Peer info with flags 0x80 (reliable, not ordered).
        let p = parse(&hex(
            "02 01 00 12 80 00 00 02 7F 00 00 01 53 00 65 00 70 00 00 00",
        ));
        assert_eq!(codes(&p), ["non_stock"]);
    }

    #[test]
    fn malformed_datagrams_are_located_and_re_emitted_exactly() {
        type Case<'a> = (&'a str, &'a [&'a str], Option<Range<usize>>, usize);
        let cases: &[Case] = &[
            // trailing bytes after the announced messages
            (
                "02 01 01 07 00 00 AA BB",
                &["trailing_bytes"],
                Some(6..8),
                1,
            ),
            // count says 3, only 1 message
            ("02 03 01 07 00 00", &["count_mismatch"], None, 1),
            // 0x32 claims 40 bytes in a short datagram
            ("02 01 32 28 80 01 00 2C 00", &["message_overrun"], None, 1),
            // unknown type after one good ACK
            (
                "02 02 01 07 00 00 47 01 02",
                &["unknown_transport_type"],
                None,
                2,
            ),
            // ACK cut short
            ("02 01 01 07", &["message_overrun"], Some(2..4), 0),
            // fragment ACK without its index byte
            ("02 01 01 07 00 01", &["message_overrun"], Some(2..6), 0),
            // 0x32 length smaller than its header
            (
                "02 01 32 02 80 01 00",
                &["message_too_short"],
                Some(2..7),
                0,
            ),
            // low type that fits neither reading
            ("02 01 00 30 C0 01", &["message_overrun"], Some(2..6), 0),
            // no count byte
            ("02", &["truncated_header"], None, 0),
            ("", &["truncated_header"], None, 0),
        ];
        for (h, want, undecoded, n) in cases {
            let plain = hex(h);
            let p = parse(&plain);
            assert_eq!(codes(&p), *want, "{h}");
            assert_eq!(&p.undecoded, undecoded, "{h}");
            assert_eq!(p.messages.len(), *n, "{h}");
            assert_eq!(p.emit(&plain), plain, "{h}");
            for w in p.all_warnings() {
                assert!(w.offset.is_some(), "{h}: unlocated {w}");
            }
        }
        // The overrun message keeps what is there.
        let plain = hex("02 01 32 28 80 01 00 2C 00");
        let p = parse(&plain);
        assert!(matches!(&p.messages[0].body, MessageBody::Data(d) if d.payload == (7..9)));
        assert_eq!(p.messages[0].len, 7);
    }

    #[test]
    fn never_panics_on_arbitrary_bytes() {
        let mut x = 0x9E37_79B9u32;
        for len in 0..200usize {
            for _ in 0..20 {
                let buf: Vec<u8> = (0..len)
                    .map(|i| {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        // Bias towards known type bytes so the walk goes deep.
                        match (x >> 24) % 5 {
                            0 if i > 1 => 0x32,
                            1 if i > 1 => 0x01,
                            _ => x as u8,
                        }
                    })
                    .collect();
                let p = parse(&buf);
                assert_eq!(p.emit(&buf), buf);
                let covered: usize = p.messages.iter().map(|m| m.len).sum::<usize>()
                    + p.undecoded.as_ref().map_or(0, |r| r.len());
                assert_eq!(covered + buf.len().min(2), buf.len(), "{buf:02x?}");
            }
        }
    }
}
