//! Sequential writer for game message streams: the encoder half of [`super::reader`].
//!
//! Mirrors the engine's writer: a packed-boolean group byte stays open while other
//! values are written after it, until it holds five booleans (`primitives.md` §2.1).

use super::compressed::{cf16_encode, cv3_encode};

#[derive(Debug, Default, Clone)]
pub struct Writer {
    buf: Vec<u8>,
    group_pos: usize,
    group_n: u8,
}

impl Writer {
    pub fn new() -> Writer {
        Writer::default()
    }
    pub fn with_opcode(opcode: u8) -> Writer {
        let mut w = Writer::new();
        w.u8(opcode);
        w
    }
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.buf.push(v);
        self
    }
    pub fn i8(&mut self, v: i8) -> &mut Self {
        self.u8(v as u8)
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn f32(&mut self, v: f32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(v);
        self
    }

    /// One packed boolean, OR-ed into the open group byte or a new one.
    pub fn bit(&mut self, v: bool) -> &mut Self {
        if self.group_n == 0 || self.group_n == 5 {
            self.group_pos = self.buf.len();
            self.buf.push(0);
            self.group_n = 0;
        }
        let b = &mut self.buf[self.group_pos];
        *b |= (v as u8) << self.group_n;
        self.group_n += 1;
        *b = (*b & 0x1F) | (self.group_n << 5);
        self
    }

    pub fn cf16(&mut self, v: f32) -> &mut Self {
        self.u16(cf16_encode(v))
    }
    pub fn cv3(&mut self, v: [f32; 3]) -> &mut Self {
        self.bytes(&cv3_encode(v))
    }
    /// `cv4`: unit direction + cf16 magnitude of `v`.
    pub fn cv4(&mut self, v: [f32; 3]) -> &mut Self {
        let m = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        self.cv3(v).cf16(m)
    }
    /// `cv4f`: unit direction + f32 magnitude of `v`.
    pub fn cv4f(&mut self, v: [f32; 3]) -> &mut Self {
        let m = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        self.cv3(v).f32(m)
    }
    pub fn str8(&mut self, s: &str) -> &mut Self {
        let b = &s.as_bytes()[..s.len().min(255)];
        self.u8(b.len() as u8).bytes(b)
    }
    pub fn str16(&mut self, s: &str) -> &mut Self {
        let b = &s.as_bytes()[..s.len().min(65535)];
        self.u16(b.len() as u16).bytes(b)
    }
    pub fn str32z(&mut self, s: &str) -> &mut Self {
        self.i32(s.len() as i32).bytes(s.as_bytes()).u8(0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::reader::Reader;
    use super::*;

    // primitives.md §2: Settings keeps three booleans in the byte after the game time.
    #[test]
    fn settings_bits_land_in_one_byte() {
        let mut w = Writer::with_opcode(0x00);
        w.f32(12.5)
            .bit(true)
            .bit(false)
            .u8(0)
            .str16("Multi1")
            .bit(false);
        let b = w.into_bytes();
        assert_eq!(b[5], 0x61);
        assert_eq!(b.len(), 1 + 4 + 1 + 1 + 2 + 6);
    }

    #[test]
    fn sixth_bit_opens_a_new_byte() {
        let mut w = Writer::new();
        for i in 0..6 {
            w.bit(i % 2 == 0);
        }
        assert_eq!(w.as_slice(), &[0xA0 | 0b10101, 0x20]);
        let mut r = Reader::new(w.as_slice());
        for i in 0..6 {
            assert_eq!(r.bit("b").unwrap(), i % 2 == 0);
        }
    }

    #[test]
    fn round_trip_mixed_stream() {
        let mut w = Writer::new();
        w.u8(7)
            .bit(true)
            .u16(0xBEEF)
            .bit(false)
            .f32(1.5)
            .str8("Bot1")
            .cf16(50.0)
            .bit(true);
        let bytes = w.into_bytes();
        let mut r = Reader::new(&bytes);
        assert_eq!(r.u8("a").unwrap(), 7);
        assert!(r.bit("b").unwrap());
        assert_eq!(r.u16("c").unwrap(), 0xBEEF);
        assert!(!r.bit("d").unwrap());
        assert_eq!(r.f32("e").unwrap(), 1.5);
        assert_eq!(r.str8("f").unwrap(), "Bot1");
        assert!((r.cf16("g").unwrap() - 49.978).abs() < 0.01);
        assert!(r.bit("h").unwrap());
        assert!(r.is_empty());
    }
}
