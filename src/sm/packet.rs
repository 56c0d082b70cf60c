//! Packet framing around NetworkUpdate streams: the LZ4 wire form, packets 21/22, and
//! the compound packet 29.
//!
//! - wire: `[id u8][LZ4 raw block, no size prefix]` (the id byte is not compressed)
//! - packet 21 / 22: `[id][tick be u32][sub-updates…]`
//! - packet 29: `[0x1d]([size be u32 = 1 + data length][id u8][data])…`, compressed once
//!   as a whole; the inner packets are not compressed again.

use crate::diag::{Code, Warning};

pub const INITIALIZATION_UPDATE: u8 = 0x15;
pub const NETWORK_UPDATE: u8 = 0x16;
pub const COMPOUND: u8 = 0x1d;

/// Default cap on the decompressed size of one packet.
pub const DEFAULT_MAX_OUTPUT: usize = 512 * 1024;
/// Largest cap a caller may ask for (the buffer is allocated up front).
pub const MAX_OUTPUT_LIMIT: usize = 64 * 1024 * 1024;

pub fn packet_name(id: u8) -> Option<&'static str> {
    match id {
        INITIALIZATION_UPDATE => Some("initialization_update"),
        NETWORK_UPDATE => Some("network_update"),
        COMPOUND => Some("compound"),
        _ => None,
    }
}

/// Whether `id` carries `[tick][sub-updates]`.
pub fn is_update_stream(id: u8) -> bool {
    id == INITIALIZATION_UPDATE || id == NETWORK_UPDATE
}

/// Decompress a wire packet into `buf` as `[id][decompressed body]` and return the
/// length of that packet buffer. The body may not exceed `max_output` bytes. `buf` is
/// sized (and zeroed) once to the cap and then reused, so a run of many packets does not
/// clear half a megabyte per packet.
pub fn decompress(wire: &[u8], max_output: usize, buf: &mut Vec<u8>) -> Result<usize, Warning> {
    let Some((&id, block)) = wire.split_first() else {
        return Err(Warning::new(
            Code::InputEmpty,
            Some(0),
            "empty input: expected a packet id byte",
        ));
    };
    check_id(id)?;
    if buf.len() != max_output + 1 {
        buf.clear();
        buf.resize(max_output + 1, 0);
    }
    buf[0] = id;
    match lz4_flex::block::decompress_into(block, &mut buf[1..]) {
        Ok(n) => Ok(n + 1),
        Err(lz4_flex::block::DecompressError::OutputTooSmall { expected, .. }) => Err(Warning::new(
            Code::Lz4OutputOverCap,
            Some(1),
            format!(
                "LZ4 block needs at least {expected} output bytes, over the {max_output}-byte cap (--max-output)"
            ),
        )),
        Err(e) => Err(Warning::new(
            Code::Lz4Invalid,
            Some(1),
            format!("LZ4 block of {} byte(s) is not valid: {e}", block.len()),
        )),
    }
}

/// The packet id must be one this decoder understands.
pub fn check_id(id: u8) -> Result<(), Warning> {
    if packet_name(id).is_some() {
        Ok(())
    } else {
        Err(Warning::new(
            Code::PacketIdUnsupported,
            Some(0),
            format!("packet id {id:#04x} ({id}): expected 0x15 (21), 0x16 (22) or 0x1d (29)"),
        ))
    }
}

/// Compress a packet buffer (`[id][body]`) into its wire form.
pub fn emit_wire(packet: &[u8]) -> Vec<u8> {
    let Some((&id, body)) = packet.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(body.len() / 2 + 16);
    out.push(id);
    out.extend_from_slice(&lz4_flex::block::compress(body));
    out
}

/// `[id][tick be u32][stream]`.
pub fn emit_update_packet(id: u8, tick: u32, stream: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + stream.len());
    out.push(id);
    out.extend_from_slice(&tick.to_be_bytes());
    out.extend_from_slice(stream);
    out
}

/// One packet inside a compound packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inner {
    /// Offset of its size field in the packet buffer.
    pub offset: usize,
    pub id: u8,
    /// Range of its data (after the id byte) in the packet buffer.
    pub data: std::ops::Range<usize>,
}

/// Split the body of a compound packet. `base` is the offset of `body[0]` in the packet
/// buffer. Stops at the first framing error.
pub fn split_compound(body: &[u8], base: usize) -> (Vec<Inner>, Option<Warning>) {
    let mut inners = Vec::new();
    let mut pos = 0usize;
    while pos < body.len() {
        let at = base + pos;
        let n = inners.len();
        let Some(size) = body.get(pos..pos + 4) else {
            return (
                inners,
                Some(Warning::new(
                    Code::CompoundTruncated,
                    Some(at),
                    format!(
                        "inner packet #{n}: expected a 4-byte size, {} byte(s) left",
                        body.len() - pos
                    ),
                )),
            );
        };
        let size = u32::from_be_bytes([size[0], size[1], size[2], size[3]]) as usize;
        if size == 0 {
            return (
                inners,
                Some(Warning::new(
                    Code::CompoundSizeInvalid,
                    Some(at),
                    format!("inner packet #{n}: size 0 leaves no room for its id byte"),
                )),
            );
        }
        let left = body.len() - pos - 4;
        if size > left {
            return (
                inners,
                Some(Warning::new(
                    Code::CompoundTruncated,
                    Some(at),
                    format!("inner packet #{n}: size {size}, only {left} byte(s) left"),
                )),
            );
        }
        let id = body[pos + 4];
        inners.push(Inner {
            offset: at,
            id,
            data: at + 5..at + 4 + size,
        });
        pos += 4 + size;
    }
    (inners, None)
}

/// `[0x1d]` followed by each `(id, data)` as `[size][id][data]`.
pub fn emit_compound(inners: &[(u8, &[u8])]) -> Vec<u8> {
    let mut out = vec![COMPOUND];
    for (id, data) in inners {
        out.extend_from_slice(&((data.len() + 1) as u32).to_be_bytes());
        out.push(*id);
        out.extend_from_slice(data);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_round_trip() {
        let packet = emit_update_packet(NETWORK_UPDATE, 77, &[0, 4, 1, 2]);
        let wire = emit_wire(&packet);
        assert_eq!(wire[0], NETWORK_UPDATE);
        let mut out = Vec::new();
        let n = decompress(&wire, DEFAULT_MAX_OUTPUT, &mut out).unwrap();
        assert_eq!(&out[..n], &packet[..]);
        // The buffer is reused: a shorter packet next does not see stale bytes.
        let short = emit_update_packet(INITIALIZATION_UPDATE, 1, &[]);
        let n = decompress(&emit_wire(&short), DEFAULT_MAX_OUTPUT, &mut out).unwrap();
        assert_eq!(&out[..n], &short[..]);
    }

    #[test]
    fn output_over_cap_is_refused() {
        let packet = emit_update_packet(NETWORK_UPDATE, 1, &[0u8; 4000]);
        let wire = emit_wire(&packet);
        let mut out = Vec::new();
        let e = decompress(&wire, 1000, &mut out).unwrap_err();
        assert_eq!(e.code, Code::Lz4OutputOverCap);
        assert!(decompress(&wire, 4004, &mut out).is_ok());
        assert!(decompress(&wire, 4003, &mut out).is_err());
    }

    #[test]
    fn garbage_and_bad_ids() {
        let mut out = Vec::new();
        let e = decompress(&[0x16, 0xff], DEFAULT_MAX_OUTPUT, &mut out).unwrap_err();
        assert_eq!(e.code, Code::Lz4Invalid);
        let e = decompress(&[0x17, 0x00], DEFAULT_MAX_OUTPUT, &mut out).unwrap_err();
        assert_eq!(e.code, Code::PacketIdUnsupported);
        let e = decompress(&[], DEFAULT_MAX_OUTPUT, &mut out).unwrap_err();
        assert_eq!(e.code, Code::InputEmpty);
    }

    #[test]
    fn compound_round_trip_and_errors() {
        let a = emit_update_packet(NETWORK_UPDATE, 5, &[])[1..].to_vec();
        let packet = emit_compound(&[(NETWORK_UPDATE, &a), (0x08, &[1, 2])]);
        let (inners, err) = split_compound(&packet[1..], 1);
        assert!(err.is_none());
        assert_eq!(inners.len(), 2);
        assert_eq!(inners[0].id, NETWORK_UPDATE);
        assert_eq!(&packet[inners[0].data.clone()], &a[..]);
        assert_eq!(inners[1].offset, 1 + 4 + 1 + 4);
        assert_eq!(&packet[inners[1].data.clone()], &[1, 2]);

        let (_, err) = split_compound(&[0, 0, 0, 0, 0x16], 1);
        assert_eq!(err.unwrap().code, Code::CompoundSizeInvalid);
        let (_, err) = split_compound(&[0, 0, 0, 9, 0x16], 1);
        assert_eq!(err.unwrap().code, Code::CompoundTruncated);
        let (_, err) = split_compound(&[0, 0], 1);
        assert_eq!(err.unwrap().code, Code::CompoundTruncated);
    }
}
