//! MSB-first bit stream used inside Scrap Mechanic updates.
//!
//! The game reads every update body as one stream of bits, most significant bit first:
//! a 1-bit flag shifts every later field off byte boundaries (UpdateCharacter,
//! UpdateContainer), so byte readers cannot be used. Multi-byte fields are big-endian
//! unless the layout says `le` (UUIDs), which the caller handles by reversing bytes.

use crate::game::reader::{DecodeError, DecodeResult};

/// Reads bits MSB-first from a byte slice; every read is bounds-checked.
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    buf: &'a [u8],
    /// Position in bits from the start of `buf`.
    bit: usize,
}

impl<'a> BitReader<'a> {
    pub fn new(buf: &'a [u8]) -> BitReader<'a> {
        BitReader { buf, bit: 0 }
    }

    pub fn bit_pos(&self) -> usize {
        self.bit
    }
    /// Byte the next bit comes from.
    pub fn byte_pos(&self) -> usize {
        self.bit / 8
    }
    /// Byte offset just past the last bit read (a partly read byte counts as read).
    pub fn byte_end(&self) -> usize {
        self.bit.div_ceil(8)
    }
    pub fn bits_left(&self) -> usize {
        self.buf.len() * 8 - self.bit
    }
    pub fn is_aligned(&self) -> bool {
        self.bit.is_multiple_of(8)
    }

    fn error(&self, field: &'static str, bits: usize) -> Box<DecodeError> {
        let expected = if bits.is_multiple_of(8) && self.is_aligned() {
            format!("{} byte(s)", bits / 8)
        } else {
            format!("{bits} bit(s) at bit {}", self.bit % 8)
        };
        Box::new(DecodeError {
            offset: self.byte_pos(),
            field: field.into(),
            expected: expected.into(),
            available: self.buf.len().saturating_sub(self.byte_pos()),
        })
    }

    /// Read `n` (0..=64) bits as an unsigned integer, first bit most significant.
    pub fn bits(&mut self, n: usize, field: &'static str) -> DecodeResult<u64> {
        if n > 64 || self.bits_left() < n {
            return Err(self.error(field, n));
        }
        let mut v = 0u64;
        let mut left = n;
        while left > 0 {
            let byte = self.buf[self.bit / 8];
            let used = self.bit % 8;
            let take = (8 - used).min(left);
            let chunk = (byte >> (8 - used - take)) & ((1u16 << take) - 1) as u8;
            v = (v << take) | chunk as u64;
            self.bit += take;
            left -= take;
        }
        Ok(v)
    }

    pub fn flag(&mut self, field: &'static str) -> DecodeResult<bool> {
        Ok(self.bits(1, field)? == 1)
    }
    pub fn u8(&mut self, field: &'static str) -> DecodeResult<u8> {
        Ok(self.bits(8, field)? as u8)
    }
    pub fn u16(&mut self, field: &'static str) -> DecodeResult<u16> {
        Ok(self.bits(16, field)? as u16)
    }
    pub fn u32(&mut self, field: &'static str) -> DecodeResult<u32> {
        Ok(self.bits(32, field)? as u32)
    }
    pub fn u64(&mut self, field: &'static str) -> DecodeResult<u64> {
        self.bits(64, field)
    }
    pub fn f32(&mut self, field: &'static str) -> DecodeResult<f32> {
        Ok(f32::from_bits(self.u32(field)?))
    }
    /// A big-endian IEEE 754 half-precision float, widened exactly to f32.
    pub fn f16(&mut self, field: &'static str) -> DecodeResult<f32> {
        Ok(f16_to_f32(self.u16(field)?))
    }
    /// Sixteen bytes in stream order (for u128 values of either byte order).
    pub fn bytes16(&mut self, field: &'static str) -> DecodeResult<[u8; 16]> {
        if self.bits_left() < 128 {
            return Err(self.error(field, 128));
        }
        let mut out = [0u8; 16];
        for b in &mut out {
            *b = self.u8(field)?;
        }
        Ok(out)
    }
    /// Go back to an earlier bit position (after a failed read, to report the bytes
    /// of a half-read structure as undecoded).
    pub fn rewind(&mut self, bit: usize) {
        self.bit = bit.min(self.bit);
    }
    /// Consume everything that is left.
    pub fn skip_to_end(&mut self) {
        self.bit = self.buf.len() * 8;
    }
    /// Skip to the next byte boundary; returns the skipped bits (padding).
    pub fn align(&mut self) -> u8 {
        let pad = (8 - self.bit % 8) % 8;
        if pad == 0 {
            0
        } else {
            self.bits(pad, "padding").unwrap_or(0) as u8
        }
    }
    /// Whole bytes after the current (aligned-up) position.
    pub fn rest_bytes(&self) -> &'a [u8] {
        let start = self.byte_end().min(self.buf.len());
        &self.buf[start..]
    }
}

/// IEEE 754 binary16 → binary32. Every half value is exactly representable as an f32,
/// so this is a re-encoding, not a rounding; NaN payloads and the sign of zero survive.
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let mant = (h & 0x3ff) as u32;
    let bits = match (exp, mant) {
        (0, 0) => sign,
        // Subnormal: mant × 2^-24, normalised into the f32 exponent range.
        (0, _) => {
            let shift = mant.leading_zeros() - 21; // bring the top set bit to bit 10
            let m = (mant << shift) & 0x3ff;
            let e = 127 - 15 + 1 - shift;
            sign | (e << 23) | (m << 13)
        }
        (0x1f, _) => sign | (0xff << 23) | (mant << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (mant << 13),
    };
    f32::from_bits(bits)
}

/// Writes bits MSB-first: the encoder half of [`BitReader`].
#[derive(Debug, Default, Clone)]
pub struct BitWriter {
    buf: Vec<u8>,
    bit: usize,
}

impl BitWriter {
    pub fn new() -> BitWriter {
        BitWriter::default()
    }
    /// Append the low `n` (0..=64) bits of `v`, most significant first.
    pub fn bits(&mut self, v: u64, n: usize) -> &mut Self {
        for i in (0..n.min(64)).rev() {
            if self.bit.is_multiple_of(8) {
                self.buf.push(0);
            }
            if (v >> i) & 1 == 1 {
                let last = self.buf.len() - 1;
                self.buf[last] |= 0x80 >> (self.bit % 8);
            }
            self.bit += 1;
        }
        self
    }
    pub fn flag(&mut self, v: bool) -> &mut Self {
        self.bits(v as u64, 1)
    }
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.bits(v as u64, 8)
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.bits(v as u64, 16)
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.bits(v as u64, 32)
    }
    pub fn i16(&mut self, v: i16) -> &mut Self {
        self.u16(v as u16)
    }
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.u32(v as u32)
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.bits(v, 64)
    }
    pub fn f32(&mut self, v: f32) -> &mut Self {
        self.u32(v.to_bits())
    }
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        for &b in v {
            self.u8(b);
        }
        self
    }
    /// Zero bits up to the next byte boundary.
    pub fn align(&mut self) -> &mut Self {
        let pad = (8 - self.bit % 8) % 8;
        self.bits(0, pad)
    }
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_msb_first_across_bytes() {
        // 0x64 = 011 00100: update type 3, object type 4 (seed 002 example).
        let buf = [0x64, 0xAB, 0xCD];
        let mut r = BitReader::new(&buf);
        assert_eq!(r.bits(3, "t").unwrap(), 3);
        assert_eq!(r.bits(5, "o").unwrap(), 4);
        assert_eq!(r.bits(4, "n").unwrap(), 0xA);
        assert_eq!(r.bits(8, "x").unwrap(), 0xBC);
        assert_eq!(r.byte_end(), 3);
        assert_eq!(r.bits_left(), 4);
        let e = r.u8("late").unwrap_err();
        assert_eq!(e.offset, 2);
        assert!(e.to_string().contains("8 bit(s) at bit 4"));
    }

    #[test]
    fn half_floats_from_hand_written_bit_patterns() {
        let cases: [(u16, f32); 10] = [
            (0x3c00, 1.0),
            (0xc000, -2.0),
            (0x3555, 0.333_251_95),    // nearest half to 1/3
            (0x7bff, 65504.0),         // largest finite half
            (0x0400, 6.103_515_6e-5),  // smallest normal, 2^-14
            (0x0001, 5.960_464_5e-8),  // smallest subnormal, 2^-24
            (0x03ff, 6.097_555e-5),    // largest subnormal, 1023 × 2^-24
            (0x8200, -3.051_757_8e-5), // negative subnormal, -512 × 2^-24
            (0x7c00, f32::INFINITY),
            (0xfc00, f32::NEG_INFINITY),
        ];
        for (h, want) in cases {
            assert_eq!(f16_to_f32(h), want, "{h:#06x}");
        }
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x03ff), 1023.0 * 2f32.powi(-24));
        assert!(f16_to_f32(0x7e00).is_nan());
        assert!(f16_to_f32(0x8000).is_sign_negative() && f16_to_f32(0x8000) == 0.0);
        // Unaligned after a flag, like every other field of an update body.
        let mut w = BitWriter::new();
        w.flag(true).u16(0x3c00);
        let b = w.into_bytes();
        let mut r = BitReader::new(&b);
        r.flag("f").unwrap();
        assert_eq!(r.f16("h").unwrap(), 1.0);
        assert!(r.f16("h").is_err());
    }

    #[test]
    fn unaligned_u16_after_a_flag() {
        let mut w = BitWriter::new();
        w.flag(true).u16(0x1234).align().u8(0xEE);
        let b = w.into_bytes();
        assert_eq!(b, vec![0x89, 0x1A, 0x00, 0xEE]);
        let mut r = BitReader::new(&b);
        assert!(r.flag("f").unwrap());
        assert_eq!(r.u16("c").unwrap(), 0x1234);
        assert_eq!(r.align(), 0);
        assert_eq!(r.u8("e").unwrap(), 0xEE);
    }

    #[test]
    fn writer_and_reader_agree_on_random_widths() {
        let mut seed = 0x1234_5678u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        let items: Vec<(u64, usize)> = (0..200)
            .map(|_| {
                let n = (next() % 64 + 1) as usize;
                let v = ((next() as u64) << 32 | next() as u64) & (u64::MAX >> (64 - n));
                (v, n)
            })
            .collect();
        let mut w = BitWriter::new();
        for &(v, n) in &items {
            w.bits(v, n);
        }
        let b = w.into_bytes();
        let mut r = BitReader::new(&b);
        for &(v, n) in &items {
            assert_eq!(r.bits(n, "v").unwrap(), v);
        }
        assert!(r.bits_left() < 8);
    }
}
