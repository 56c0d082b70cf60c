//! Sub-update framing: raw updates and delta updates (seed 002, "The compression algorithm").
//!
//! A raw update is `[size be u16, including itself][data]` with the top bit of the size
//! clear. A delta update starts with a bitfield of `(prev_len + 8) >> 3` bytes whose top
//! bit is set. The bitfield is one **big-endian integer**: its top bit is the delta flag
//! and bit `i` (counted from the least significant bit) means "keep byte `i` of the
//! previous update"; each clear bit takes the next byte from the stream. The seed's
//! pseudo-code iterates the bitfield *bytes* instead of its bits and does not produce
//! its own worked example (see the tests); the reading here does.

use crate::diag::{Code, Warning};

/// Largest previous update (data bytes, size field excluded) a delta can refer to:
/// 63 keep-bits plus the flag fill the 8-byte maximum bitfield.
pub const MAX_DELTA_BASE: usize = 0x3f;
/// Largest raw update size field: the top bit of the first byte must stay clear.
pub const MAX_RAW_SIZE: usize = 0x7fff;

/// How a sub-update was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubKind {
    /// `size` is the wire size field (data length + 2).
    Raw { size: u16 },
    /// `bitfield` read as a big-endian integer of `len` bytes (flag bit included).
    Delta { bitfield: u64, len: u8 },
}

impl SubKind {
    pub fn name(&self) -> &'static str {
        match self {
            SubKind::Raw { .. } => "raw",
            SubKind::Delta { .. } => "delta",
        }
    }
}

/// One sub-update as sent and as rebuilt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubUpdate {
    /// Offset of its first byte in the packet buffer.
    pub offset: usize,
    pub kind: SubKind,
    /// Bytes it took from the stream (size field / bitfield included).
    pub taken: usize,
    /// The update data, rebuilt for deltas (size field excluded).
    pub data: Vec<u8>,
}

/// Result of splitting a stream into sub-updates.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Split {
    pub updates: Vec<SubUpdate>,
    /// Framing errors; after the first one the rest of the stream cannot be framed.
    pub warnings: Vec<Warning>,
    /// Bytes left unframed after an error: `(offset, len)` in the packet buffer.
    pub undecoded: Option<(usize, usize)>,
}

/// Split `stream` (the bytes after the tick) into sub-updates. `base` is the offset of
/// `stream[0]` in the packet buffer, so offsets in the result are packet offsets.
/// Deltas refer to the previous sub-update of the same stream.
pub fn split(stream: &[u8], base: usize) -> Split {
    let mut out = Split::default();
    let mut pos = 0usize;
    while pos < stream.len() {
        match next(stream, pos, out.updates.last().map(|u| u.data.as_slice())) {
            Ok((update, warning)) => {
                let update = SubUpdate {
                    offset: base + pos,
                    ..update
                };
                if let Some(w) = warning {
                    out.warnings.push(Warning::new(w.0, Some(base + pos), w.1));
                }
                pos += update.taken;
                out.updates.push(update);
            }
            Err((code, msg)) => {
                let index = out.updates.len();
                out.warnings.push(Warning::new(
                    code,
                    Some(base + pos),
                    format!("sub-update #{index}: {msg}"),
                ));
                out.undecoded = Some((base + pos, stream.len() - pos));
                break;
            }
        }
    }
    out
}

type Problem = (Code, String);

/// Frame one sub-update at `pos`. Returns the update (offset relative to the stream)
/// and an optional non-fatal note.
fn next(
    stream: &[u8],
    pos: usize,
    prev: Option<&[u8]>,
) -> Result<(SubUpdate, Option<Problem>), Problem> {
    let first = stream[pos];
    if first & 0x80 == 0 {
        let Some(size_bytes) = stream.get(pos..pos + 2) else {
            return Err((
                Code::RawTruncated,
                "raw update: expected a 2-byte size, 1 byte left".into(),
            ));
        };
        let size = u16::from_be_bytes([size_bytes[0], size_bytes[1]]);
        if size < 2 {
            return Err((
                Code::RawSizeInvalid,
                format!("raw update size {size} is smaller than its own 2-byte size field"),
            ));
        }
        let end = pos + size as usize;
        let Some(data) = stream.get(pos + 2..end) else {
            return Err((
                Code::RawTruncated,
                format!(
                    "raw update of size {size}: expected {} data byte(s), {} left",
                    size - 2,
                    stream.len() - pos - 2
                ),
            ));
        };
        let update = SubUpdate {
            offset: pos,
            kind: SubKind::Raw { size },
            taken: size as usize,
            data: data.to_vec(),
        };
        return Ok((update, None));
    }

    let Some(prev) = prev else {
        return Err((
            Code::DeltaWithoutPrevious,
            "delta update with no previous update to apply it to".into(),
        ));
    };
    if prev.len() > MAX_DELTA_BASE {
        return Err((
            Code::DeltaBaseTooLarge,
            format!(
                "delta update after a {}-byte update: a delta can only follow one of at most {MAX_DELTA_BASE} bytes",
                prev.len()
            ),
        ));
    }
    let len = (prev.len() + 8) >> 3;
    let Some(field) = stream.get(pos..pos + len) else {
        return Err((
            Code::BitfieldTruncated,
            format!(
                "delta update: expected a {len}-byte bitfield, {} byte(s) left",
                stream.len() - pos
            ),
        ));
    };
    let bitfield = field.iter().fold(0u64, |acc, &b| (acc << 8) | b as u64);
    let mut data = prev.to_vec();
    let mut cursor = pos + len;
    for (i, byte) in data.iter_mut().enumerate() {
        if (bitfield >> i) & 1 == 0 {
            let Some(&b) = stream.get(cursor) else {
                return Err((
                    Code::DeltaTruncated,
                    format!(
                        "delta update (bitfield {}): byte {i} of {} must come from the stream, which ended",
                        hex(field),
                        prev.len()
                    ),
                ));
            };
            *byte = b;
            cursor += 1;
        }
    }
    // Bits between the last keep-bit and the flag bit mean nothing.
    let flag_bit = len * 8 - 1;
    let unused = bitfield & !(1u64 << flag_bit) & !low_mask(prev.len());
    let note = (unused != 0).then(|| {
        (
            Code::DeltaUnusedBits,
            format!(
                "delta bitfield {} sets bits beyond the {}-byte previous update",
                hex(field),
                prev.len()
            ),
        )
    });
    let update = SubUpdate {
        offset: pos,
        kind: SubKind::Delta {
            bitfield,
            len: len as u8,
        },
        taken: cursor - pos,
        data,
    };
    Ok((update, note))
}

fn low_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

fn hex(b: &[u8]) -> String {
    crate::game::field::hex_string(b)
}

/// A sub-update that cannot be encoded as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmitError {
    RawTooLarge(usize),
    DeltaBaseTooLarge(usize),
    DeltaSizeMismatch { prev: usize, next: usize },
}

impl std::fmt::Display for EmitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmitError::RawTooLarge(n) => write!(f, "raw update of {n} data bytes exceeds 0x7ffd"),
            EmitError::DeltaBaseTooLarge(n) => write!(f, "delta base of {n} bytes exceeds 63"),
            EmitError::DeltaSizeMismatch { prev, next } => {
                write!(f, "delta needs equal sizes, previous {prev}, next {next}")
            }
        }
    }
}

impl std::error::Error for EmitError {}

/// Append a raw update carrying `data`.
pub fn emit_raw(data: &[u8], out: &mut Vec<u8>) -> Result<(), EmitError> {
    let size = data.len() + 2;
    if size > MAX_RAW_SIZE {
        return Err(EmitError::RawTooLarge(data.len()));
    }
    out.extend_from_slice(&(size as u16).to_be_bytes());
    out.extend_from_slice(data);
    Ok(())
}

/// Append a delta update turning `prev` into `next`; returns the bitfield written.
pub fn emit_delta(prev: &[u8], next: &[u8], out: &mut Vec<u8>) -> Result<u64, EmitError> {
    if prev.len() > MAX_DELTA_BASE {
        return Err(EmitError::DeltaBaseTooLarge(prev.len()));
    }
    if prev.len() != next.len() {
        return Err(EmitError::DeltaSizeMismatch {
            prev: prev.len(),
            next: next.len(),
        });
    }
    let len = (prev.len() + 8) >> 3;
    let mut bitfield = 1u64 << (len * 8 - 1);
    for (i, (a, b)) in prev.iter().zip(next).enumerate() {
        if a == b {
            bitfield |= 1 << i;
        }
    }
    out.extend_from_slice(&bitfield.to_be_bytes()[8 - len..]);
    for (a, b) in prev.iter().zip(next) {
        if a != b {
            out.push(*b);
        }
    }
    Ok(bitfield)
}

/// Encode a sequence of updates the way a server would: a delta whenever one is
/// possible and shorter than the raw form, a raw update otherwise.
pub fn encode_stream(updates: &[&[u8]], out: &mut Vec<u8>) -> Result<(), EmitError> {
    let mut prev: Option<&[u8]> = None;
    for &data in updates {
        match prev {
            Some(p) if p.len() == data.len() && p.len() <= MAX_DELTA_BASE => {
                let changed = p.iter().zip(data).filter(|(a, b)| a != b).count();
                if (p.len() + 8) / 8 + changed < data.len() + 2 {
                    emit_delta(p, data, out)?;
                } else {
                    emit_raw(data, out)?;
                }
            }
            _ => emit_raw(data, out)?,
        }
        prev = Some(data);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PREV_RAW: [u8; 10] = [0x00, 0x0a, 0x64, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00];
    const DELTA: [u8; 3] = [0x80, 0xef, 0x02];

    // Seed 002 worked example, byte for byte.
    #[test]
    fn seed_worked_example() {
        let mut stream = PREV_RAW.to_vec();
        stream.extend_from_slice(&DELTA);
        let s = split(&stream, 5);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert_eq!(s.updates.len(), 2);
        let raw = &s.updates[0];
        assert_eq!((raw.offset, raw.taken), (5, 10));
        assert_eq!(raw.kind, SubKind::Raw { size: 10 });
        assert_eq!(raw.data, [0x64, 0, 0, 0, 0x01, 0, 0, 0]);
        let d = &s.updates[1];
        assert_eq!((d.offset, d.taken), (15, 3));
        assert_eq!(
            d.kind,
            SubKind::Delta {
                bitfield: 0x80ef,
                len: 2
            }
        );
        assert_eq!(d.data, [0x64, 0, 0, 0, 0x02, 0, 0, 0]);
    }

    // The seed's pseudo-code read literally: `keep` is a whole bitfield byte, iterated
    // from the last byte. It keeps bytes 0 and 1 (ef, 80 are truthy) and never reads
    // the 02, so it cannot give the example's `64 00 00 00 02 00 00 00`.
    #[test]
    fn literal_pseudo_code_contradicts_the_example() {
        let prev = [0x64u8, 0, 0, 0, 0x01, 0, 0, 0];
        let bitfield = [0x80u8, 0xef];
        let mut rest = [0x02u8].iter();
        let mut literal = prev;
        for (i, keep) in bitfield.iter().rev().enumerate() {
            if i >= prev.len() {
                break;
            }
            if *keep == 0 {
                literal[i] = *rest.next().unwrap_or(&0);
            }
        }
        assert_ne!(literal, [0x64, 0, 0, 0, 0x02, 0, 0, 0]);
        assert_eq!(literal, prev);
    }

    #[test]
    fn emit_reproduces_the_seed_delta() {
        let mut out = Vec::new();
        let bf = emit_delta(
            &[0x64, 0, 0, 0, 0x01, 0, 0, 0],
            &[0x64, 0, 0, 0, 0x02, 0, 0, 0],
            &mut out,
        )
        .unwrap();
        assert_eq!(bf, 0x80ef);
        assert_eq!(out, DELTA);
        let mut raw = Vec::new();
        emit_raw(&PREV_RAW[2..], &mut raw).unwrap();
        assert_eq!(raw, PREV_RAW);
    }

    #[test]
    fn round_trip_raw_and_delta_sequences() {
        let mut seed = 0xC0FFEEu32;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        for _ in 0..300 {
            let mut updates: Vec<Vec<u8>> = Vec::new();
            for _ in 0..(rnd() % 8 + 1) {
                let same = !updates.is_empty() && rnd() % 3 != 0;
                let next = if same {
                    let mut u = updates.last().cloned().unwrap_or_default();
                    for b in u.iter_mut() {
                        if rnd() % 4 == 0 {
                            *b = rnd() as u8;
                        }
                    }
                    u
                } else {
                    let n = (rnd() % 80) as usize;
                    (0..n).map(|_| rnd() as u8).collect()
                };
                updates.push(next);
            }
            let refs: Vec<&[u8]> = updates.iter().map(|u| u.as_slice()).collect();
            let mut stream = Vec::new();
            encode_stream(&refs, &mut stream).unwrap();
            let s = split(&stream, 0);
            assert!(s.warnings.is_empty(), "{:?}", s.warnings);
            let back: Vec<Vec<u8>> = s.updates.into_iter().map(|u| u.data).collect();
            assert_eq!(back, updates);
        }
    }

    #[test]
    fn every_bitfield_width_round_trips() {
        for n in 0..=MAX_DELTA_BASE {
            let prev: Vec<u8> = (0..n as u8).collect();
            let next: Vec<u8> = prev
                .iter()
                .map(|b| if b % 3 == 0 { b ^ 0x55 } else { *b })
                .collect();
            let mut stream = Vec::new();
            emit_raw(&prev, &mut stream).unwrap();
            let bf = emit_delta(&prev, &next, &mut stream).unwrap();
            let s = split(&stream, 0);
            assert!(s.warnings.is_empty(), "n={n}: {:?}", s.warnings);
            assert_eq!(s.updates[1].data, next);
            assert_eq!(
                s.updates[1].kind,
                SubKind::Delta {
                    bitfield: bf,
                    len: ((n + 8) >> 3) as u8
                }
            );
        }
    }

    fn first_error(stream: &[u8]) -> (&'static str, Option<usize>, Option<(usize, usize)>) {
        let s = split(stream, 5);
        let w = s.warnings.first().expect("an error");
        (w.code.as_str(), w.offset, s.undecoded)
    }

    #[test]
    fn delta_first_has_no_previous() {
        assert_eq!(
            first_error(&DELTA),
            ("delta_without_previous", Some(5), Some((5, 3)))
        );
    }

    #[test]
    fn delta_after_large_update_is_rejected() {
        let mut stream = Vec::new();
        emit_raw(&[0u8; 64], &mut stream).unwrap();
        stream.extend_from_slice(&[0xff; 9]);
        let (code, offset, undecoded) = first_error(&stream);
        assert_eq!(code, "delta_base_too_large");
        assert_eq!(offset, Some(5 + 66));
        assert_eq!(undecoded, Some((71, 9)));
        let mut out = Vec::new();
        assert_eq!(
            emit_delta(&[0; 64], &[0; 64], &mut out),
            Err(EmitError::DeltaBaseTooLarge(64))
        );
    }

    #[test]
    fn bitfield_ending_early() {
        let mut stream = PREV_RAW.to_vec();
        stream.push(0x80);
        assert_eq!(first_error(&stream).0, "bitfield_truncated");
    }

    #[test]
    fn delta_stream_ending_early() {
        let mut stream = PREV_RAW.to_vec();
        stream.extend_from_slice(&[0x80, 0x00, 0x01]);
        let s = split(&stream, 0);
        assert_eq!(s.updates.len(), 1);
        assert_eq!(s.warnings[0].code, Code::DeltaTruncated);
        assert!(s.warnings[0].message.contains("byte 1 of 8"));
    }

    #[test]
    fn bad_raw_sizes() {
        assert_eq!(first_error(&[0x00, 0x01]).0, "raw_size_invalid");
        assert_eq!(first_error(&[0x00, 0x00]).0, "raw_size_invalid");
        assert_eq!(first_error(&[0x00]).0, "raw_truncated");
        assert_eq!(first_error(&[0x00, 0x05, 1, 2]).0, "raw_truncated");
        let mut out = Vec::new();
        assert!(emit_raw(&vec![0; 0x7ffe], &mut out).is_err());
    }

    #[test]
    fn unused_bitfield_bits_are_noted_not_fatal() {
        let mut stream = PREV_RAW.to_vec();
        stream.extend_from_slice(&[0x81, 0xff]);
        let s = split(&stream, 0);
        assert_eq!(s.updates.len(), 2);
        assert_eq!(s.warnings[0].code, Code::DeltaUnusedBits);
        assert!(s.undecoded.is_none());
    }
}
