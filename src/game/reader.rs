//! Sequential reader for game message streams (`primitives.md`).
//!
//! One reader per message: packed booleans share a group byte across interleaved byte
//! reads, so the bit state must live as long as the message. Every read reports where it
//! was, so errors are located and fields carry spans.
//!
//! Why this file is long: the code ends at about 765 lines; the rest is tests. Each
//! read comes twice, on the bare reader and on the field reader that hands it with
//! its span to a visitor, and both share the one packed-bit state.

use super::compressed::{cf16_decode, cv3_decode};
use super::field::{Field, Span, Value};
use super::registry::{FieldId, FieldName};
use super::walk::{Lean, Mark, Visitor};
use std::borrow::Cow;
use std::fmt;

/// A read that could not be satisfied, located inside the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset inside the game message where the failing read started.
    pub offset: usize,
    /// Which field or structure was being read.
    pub field: Cow<'static, str>,
    /// What the bytes should have been ("4 bytes", "bit count 1..5", …).
    pub expected: Cow<'static, str>,
    /// How many bytes were left at `offset`.
    pub available: usize,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "offset {}: {}: expected {}, {} byte(s) left",
            self.offset, self.field, self.expected, self.available
        )
    }
}

impl std::error::Error for DecodeError {}

/// Boxed so that a successful read returns in registers: every field read goes through
/// a `DecodeResult`, and an inline error made each of them a 70-byte value.
pub type DecodeResult<T> = Result<T, Box<DecodeError>>;

/// Byte reader with the engine's packed-boolean state machine.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    group_byte: u8,
    group_pos: usize,
    bits_left: u8,
    bit_next: u8,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader {
            buf,
            pos: 0,
            group_byte: 0,
            group_pos: 0,
            bits_left: 0,
            bit_next: 0,
        }
    }

    /// Start reading at `pos` (e.g. 1 to skip the opcode byte).
    pub fn at(buf: &'a [u8], pos: usize) -> Reader<'a> {
        let mut r = Reader::new(buf);
        r.pos = pos.min(buf.len());
        r
    }

    pub fn pos(&self) -> usize {
        self.pos
    }
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }
    pub fn buffer(&self) -> &'a [u8] {
        self.buf
    }
    /// Position of the packed byte the last bit came from.
    pub fn last_bit_pos(&self) -> usize {
        self.group_pos
    }
    /// Bits still available in the open packed group.
    pub fn open_bits(&self) -> u8 {
        self.bits_left
    }
    /// Everything reading on from here depends on: the open packed byte's state and
    /// the bytes left (to remember what reading on found).
    pub fn state_key(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&[self.bits_left, self.group_byte, self.bit_next]);
        out.extend_from_slice(&self.buf[self.pos..]);
    }

    #[cold]
    pub fn error(
        &self,
        field: impl Into<Cow<'static, str>>,
        expected: impl Into<Cow<'static, str>>,
    ) -> Box<DecodeError> {
        Box::new(DecodeError {
            offset: self.pos,
            field: field.into(),
            expected: expected.into(),
            available: self.remaining(),
        })
    }

    /// The error of a read of `n` bytes past the end, out of line: reads are inlined
    /// everywhere and almost never fail.
    #[cold]
    #[inline(never)]
    fn too_short(&self, field: &'static str, n: usize) -> Box<DecodeError> {
        // Third-party peers send short fields often enough that formatting the
        // usual counts shows in a profile.
        const COUNTS: [&str; 9] = [
            "0 byte(s)",
            "1 byte(s)",
            "2 byte(s)",
            "3 byte(s)",
            "4 byte(s)",
            "5 byte(s)",
            "6 byte(s)",
            "7 byte(s)",
            "8 byte(s)",
        ];
        match COUNTS.get(n) {
            Some(&text) => self.error(field, text),
            None => self.error(field, format!("{n} byte(s)")),
        }
    }

    #[cold]
    #[inline(never)]
    fn bad_bit_group(&self, field: &'static str, b: u8) -> Box<DecodeError> {
        self.error(
            field,
            format!("packed-bit byte with count 1..5, got {b:#04x}"),
        )
    }

    /// Take `n` bytes.
    #[inline]
    pub fn bytes(&mut self, n: usize, field: &'static str) -> DecodeResult<&'a [u8]> {
        // Two comparisons (the position within the buffer, `n` within the rest) where
        // slicing `pos..pos + n` made three, an overflow check among them.
        let buf: &'a [u8] = self.buf;
        match buf.get(self.pos..).and_then(|rest| rest.get(..n)) {
            Some(s) => {
                self.pos += n;
                Ok(s)
            }
            None => Err(self.too_short(field, n)),
        }
    }

    /// Take `N` bytes as an array: a fixed-size group of fields (a header, a vector)
    /// checked once rather than once a field. Fails as [`Reader::bytes`] of `N` does.
    #[inline]
    pub fn take<const N: usize>(&mut self, field: &'static str) -> DecodeResult<[u8; N]> {
        let rest = self.buf.get(self.pos..);
        match rest.and_then(|rest| rest.first_chunk::<N>()) {
            Some(a) => {
                self.pos += N;
                Ok(*a)
            }
            None => Err(self.too_short(field, N)),
        }
    }

    #[inline]
    fn array<const N: usize>(&mut self, field: &'static str) -> DecodeResult<[u8; N]> {
        self.take(field)
    }

    /// Everything up to the end of the message.
    pub fn rest(&mut self) -> &'a [u8] {
        // In bounds: `pos` only advances through `bytes` (which checks `remaining()`)
        // and otherwise moves back to an earlier position.
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }

    #[inline]
    pub fn u8(&mut self, field: &'static str) -> DecodeResult<u8> {
        Ok(self.array::<1>(field)?[0])
    }
    #[inline]
    pub fn i8(&mut self, field: &'static str) -> DecodeResult<i8> {
        Ok(self.u8(field)? as i8)
    }
    #[inline]
    pub fn u16(&mut self, field: &'static str) -> DecodeResult<u16> {
        Ok(u16::from_le_bytes(self.array(field)?))
    }
    #[inline]
    pub fn u32(&mut self, field: &'static str) -> DecodeResult<u32> {
        Ok(u32::from_le_bytes(self.array(field)?))
    }
    #[inline]
    pub fn i32(&mut self, field: &'static str) -> DecodeResult<i32> {
        Ok(i32::from_le_bytes(self.array(field)?))
    }
    #[inline]
    pub fn f32(&mut self, field: &'static str) -> DecodeResult<f32> {
        Ok(f32::from_le_bytes(self.array(field)?))
    }

    /// One packed boolean (`primitives.md` §2): opens a group byte when none is open.
    #[inline]
    pub fn bit(&mut self, field: &'static str) -> DecodeResult<bool> {
        if self.bits_left == 0 {
            let at = self.pos;
            let b = self.u8(field)?;
            let count = b >> 5;
            if !(1..=5).contains(&count) {
                self.pos = at;
                return Err(self.bad_bit_group(field, b));
            }
            self.group_byte = b;
            self.group_pos = at;
            self.bits_left = count;
            self.bit_next = 0;
        }
        let v = (self.group_byte >> self.bit_next) & 1 == 1;
        self.bit_next += 1;
        self.bits_left -= 1;
        Ok(v)
    }

    pub fn cf16(&mut self, field: &'static str) -> DecodeResult<f32> {
        Ok(cf16_decode(self.u16(field)?))
    }
    pub fn cv3(&mut self, field: &'static str) -> DecodeResult<[f32; 3]> {
        Ok(cv3_decode(self.array(field)?))
    }
    /// `cv4`: direction bytes and a cf16 magnitude; returns the scaled vector.
    pub fn cv4(&mut self, field: &'static str) -> DecodeResult<[f32; 3]> {
        let d = cv3_decode(self.array(field)?);
        let m = self.cf16(field)?;
        Ok([d[0] * m, d[1] * m, d[2] * m])
    }
    /// `cv4f`: direction bytes and an f32 magnitude; returns the scaled vector.
    pub fn cv4f(&mut self, field: &'static str) -> DecodeResult<[f32; 3]> {
        let d = cv3_decode(self.array(field)?);
        let m = self.f32(field)?;
        Ok([d[0] * m, d[1] * m, d[2] * m])
    }

    /// String with a u8 / u16 / i32 byte count; invalid UTF-8 is replaced, not rejected.
    pub fn str8(&mut self, field: &'static str) -> DecodeResult<String> {
        let at = self.pos;
        let n = self.u8(field)? as usize;
        self.counted_text(at, 1, n, field)
    }
    pub fn str16(&mut self, field: &'static str) -> DecodeResult<String> {
        let at = self.pos;
        let n = self.u16(field)? as usize;
        self.counted_text(at, 2, n, field)
    }
    /// The `n` text bytes after a count of `count_len` bytes at `at`; a count running past
    /// the end is reported at the count, with the reader back there.
    fn counted_text(
        &mut self,
        at: usize,
        count_len: usize,
        n: usize,
        field: &'static str,
    ) -> DecodeResult<String> {
        if n > self.remaining() {
            self.pos = at;
            let mut e = self.error(field, format!("string of {n} byte(s)"));
            e.available = self.remaining().saturating_sub(count_len);
            e.expected = format!("string of {n} byte(s) after its count").into();
            return Err(e);
        }
        Ok(String::from_utf8_lossy(self.bytes(n, field)?).into_owned())
    }
    /// `str32z`: i32 count, bytes, one terminating zero byte.
    pub fn str32z(&mut self, field: &'static str) -> DecodeResult<String> {
        let at = self.pos;
        let n = self.i32(field)?;
        if n < 0 || n as usize >= self.remaining() {
            self.pos = at;
            return Err(self.error(field, format!("string of {n} byte(s) plus terminator")));
        }
        let s = String::from_utf8_lossy(self.bytes(n as usize, field)?).into_owned();
        self.u8(field)?;
        Ok(s)
    }
}

/// The entries of a `cvb` group's two members (the direction and the raw magnitude),
/// which sit under the group's own entry.
#[derive(Debug, Clone, Copy)]
pub struct CvbMembers {
    pub direction: FieldName,
    pub magnitude_raw: FieldName,
}

/// A reader that hands every value it reads, with its span, to a [`Visitor`].
///
/// Decoders written against it read like the layout tables in `opcodes.md`; what the
/// fields become (a tree, nothing, a selection) is the visitor's business.
pub struct FieldReader<'a, 'v> {
    pub r: Reader<'a>,
    visitor: &'v mut dyn Visitor,
    /// The visitor's [`Visitor::building`], asked once: false for a lean decode, where
    /// values are read (and checked) exactly the same but never built or handed over.
    keep: bool,
}

impl fmt::Debug for FieldReader<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FieldReader")
            .field("r", &self.r)
            .field("keep", &self.keep)
            .finish()
    }
}

impl<'a, 'v> FieldReader<'a, 'v> {
    /// Read a whole game message, starting after its opcode byte, handing its fields to
    /// `visitor`.
    pub fn after_opcode(msg: &'a [u8], visitor: &'v mut dyn Visitor) -> FieldReader<'a, 'v> {
        FieldReader {
            r: Reader::at(msg, 1),
            keep: visitor.building(),
            visitor,
        }
    }

    /// Like [`FieldReader::after_opcode`] with the visitor that wants nothing: for
    /// callers that only need the typed values and the warnings.
    pub fn after_opcode_lean(msg: &'a [u8]) -> FieldReader<'a, 'v> {
        // `Lean` has no size: leaking its box allocates nothing.
        FieldReader::after_opcode(msg, Box::leak(Box::new(Lean)))
    }

    /// Whether fields are handed over at all; decoders skip building derived fields
    /// when not.
    #[inline]
    pub fn keeps_fields(&self) -> bool {
        self.keep
    }

    /// Whether the visitor wants a field of this name: asked before building a value
    /// that costs something (text, bytes, a derived label).
    #[inline]
    pub fn wants(&self, id: FieldId) -> bool {
        self.keep && self.visitor.wants(id)
    }

    // Inlined so that a lean read, which drops `value`, compiles to nothing for the
    // variants that own no heap data.
    #[inline]
    pub fn push(&mut self, name: FieldName, value: Value, start: usize) {
        if self.keep {
            let span = Span::new(start, self.r.pos());
            self.visitor
                .field(name.id, Cow::Borrowed(name.local), value, span);
        } else {
            match value {
                // Nothing to free: skip the out-of-line drop, which the compiler cannot
                // see through even when it knows the variant.
                Value::Bool(_)
                | Value::Uint(_)
                | Value::Int(_)
                | Value::Float(_)
                | Value::ObjectId(_)
                | Value::Hex(_)
                | Value::Vec3(_) => std::mem::forget(value),
                owned => drop(owned),
            }
        }
    }

    /// [`FieldReader::push`] for a value that owns no heap data (a number, flag or
    /// vector), from the scalar readers below: inlined into every decoder, so the
    /// handing over is kept out of line, where a lean read never goes.
    #[inline(always)]
    fn push_plain(&mut self, name: FieldName, value: Value, start: usize) {
        debug_assert!(!matches!(
            value,
            Value::Text(_) | Value::Bytes(_) | Value::List(_) | Value::Group(_)
        ));
        if self.keep {
            self.keep_plain(name, value, start);
        } else {
            std::mem::forget(value);
        }
    }

    /// [`FieldReader::push_plain`] for a value read over `span` as part of a group
    /// taken at once ([`Reader::take`]).
    #[inline(always)]
    pub fn push_plain_over(&mut self, name: FieldName, value: Value, span: Span) {
        debug_assert!(!matches!(
            value,
            Value::Text(_) | Value::Bytes(_) | Value::List(_) | Value::Group(_)
        ));
        if self.keep {
            self.keep_over(name, value, span);
        } else {
            std::mem::forget(value);
        }
    }

    #[inline(never)]
    fn keep_over(&mut self, name: FieldName, value: Value, span: Span) {
        self.visitor
            .field(name.id, Cow::Borrowed(name.local), value, span);
    }

    /// A field read from `start` that the visitor does not want: its span only.
    fn skip(&mut self, start: usize) {
        if self.keep {
            let span = Span::new(start, self.r.pos());
            self.visitor.skipped(span);
        }
    }

    #[inline(never)]
    fn keep_plain(&mut self, name: FieldName, value: Value, start: usize) {
        let span = Span::new(start, self.r.pos());
        self.visitor
            .field(name.id, Cow::Borrowed(name.local), value, span);
    }

    /// Record a value the reader did not read itself (a derived flag, a count, bytes
    /// left over) under its registry name, over `span` (nothing in a lean read).
    pub fn push_value(&mut self, name: FieldName, value: Value, span: Span) {
        if self.keep {
            self.visitor
                .field(name.id, Cow::Borrowed(name.local), value, span);
        }
    }

    /// Record an already built field under the registry entry it carries (nothing in a
    /// lean read).
    pub fn push_field(&mut self, field: Field) {
        if self.keep {
            self.visitor
                .field(field.id, field.name, field.value, field.span);
        }
    }

    #[inline]
    pub fn u8(&mut self, name: FieldName) -> DecodeResult<u8> {
        let at = self.r.pos();
        let v = self.r.u8(name.local)?;
        self.push_plain(name, Value::Uint(v as u64), at);
        Ok(v)
    }
    #[inline]
    pub fn hex8(&mut self, name: FieldName) -> DecodeResult<u8> {
        let at = self.r.pos();
        let v = self.r.u8(name.local)?;
        self.push_plain(name, Value::Hex(v as u64), at);
        Ok(v)
    }
    #[inline]
    pub fn i8(&mut self, name: FieldName) -> DecodeResult<i8> {
        let at = self.r.pos();
        let v = self.r.i8(name.local)?;
        self.push_plain(name, Value::Int(v as i64), at);
        Ok(v)
    }
    #[inline]
    pub fn u16(&mut self, name: FieldName) -> DecodeResult<u16> {
        let at = self.r.pos();
        let v = self.r.u16(name.local)?;
        self.push_plain(name, Value::Uint(v as u64), at);
        Ok(v)
    }
    #[inline]
    pub fn u32(&mut self, name: FieldName) -> DecodeResult<u32> {
        let at = self.r.pos();
        let v = self.r.u32(name.local)?;
        self.push_plain(name, Value::Uint(v as u64), at);
        Ok(v)
    }
    #[inline]
    pub fn hex32(&mut self, name: FieldName) -> DecodeResult<u32> {
        let at = self.r.pos();
        let v = self.r.u32(name.local)?;
        self.push_plain(name, Value::Hex(v as u64), at);
        Ok(v)
    }
    #[inline]
    pub fn i32(&mut self, name: FieldName) -> DecodeResult<i32> {
        let at = self.r.pos();
        let v = self.r.i32(name.local)?;
        self.push_plain(name, Value::Int(v as i64), at);
        Ok(v)
    }
    #[inline]
    pub fn f32(&mut self, name: FieldName) -> DecodeResult<f32> {
        let at = self.r.pos();
        let v = self.r.f32(name.local)?;
        self.push_plain(name, Value::Float(v as f64), at);
        Ok(v)
    }
    /// An `objref` (object id).
    #[inline]
    pub fn object_id(&mut self, name: FieldName) -> DecodeResult<u32> {
        let at = self.r.pos();
        let v = self.r.u32(name.local)?;
        self.push_plain(name, Value::ObjectId(v), at);
        Ok(v)
    }
    /// A packed boolean; its span is the group byte it lives in.
    pub fn bit(&mut self, name: FieldName) -> DecodeResult<bool> {
        let v = self.r.bit(name.local)?;
        let at = self.r.last_bit_pos();
        let span = Span::new(at, at + 1);
        if self.keep {
            self.visitor
                .field(name.id, Cow::Borrowed(name.local), Value::Bool(v), span);
        }
        Ok(v)
    }
    /// A whole byte used as a boolean (`WriteBool`).
    #[inline]
    pub fn bool8(&mut self, name: FieldName) -> DecodeResult<bool> {
        let at = self.r.pos();
        let v = self.r.u8(name.local)? != 0;
        self.push_plain(name, Value::Bool(v), at);
        Ok(v)
    }
    #[inline]
    pub fn cf16(&mut self, name: FieldName) -> DecodeResult<f32> {
        let at = self.r.pos();
        let v = self.r.cf16(name.local)?;
        self.push_plain(name, Value::Float(v as f64), at);
        Ok(v)
    }
    #[inline]
    pub fn cv3(&mut self, name: FieldName) -> DecodeResult<[f32; 3]> {
        let at = self.r.pos();
        let v = self.r.cv3(name.local)?;
        self.push_plain(name, Value::Vec3(v), at);
        Ok(v)
    }
    #[inline]
    pub fn cv4(&mut self, name: FieldName) -> DecodeResult<[f32; 3]> {
        let at = self.r.pos();
        let v = self.r.cv4(name.local)?;
        self.push_plain(name, Value::Vec3(v), at);
        Ok(v)
    }
    #[inline]
    pub fn cv4f(&mut self, name: FieldName) -> DecodeResult<[f32; 3]> {
        let at = self.r.pos();
        let v = self.r.cv4f(name.local)?;
        self.push_plain(name, Value::Vec3(v), at);
        Ok(v)
    }
    #[inline]
    pub fn vec3_f32(&mut self, name: FieldName) -> DecodeResult<[f32; 3]> {
        let at = self.r.pos();
        let x = self.r.f32(name.local)?;
        let y = self.r.f32(name.local)?;
        let z = self.r.f32(name.local)?;
        self.push_plain(name, Value::Vec3([x, y, z]), at);
        Ok([x, y, z])
    }
    pub fn str8(&mut self, name: FieldName) -> DecodeResult<String> {
        let at = self.r.pos();
        let v = self.r.str8(name.local)?;
        if self.wants(name.id) {
            self.push(name, Value::Text(v.clone()), at);
        } else {
            self.skip(at);
        }
        Ok(v)
    }
    pub fn str16(&mut self, name: FieldName) -> DecodeResult<String> {
        let at = self.r.pos();
        let v = self.r.str16(name.local)?;
        if self.wants(name.id) {
            self.push(name, Value::Text(v.clone()), at);
        } else {
            self.skip(at);
        }
        Ok(v)
    }
    pub fn str32z(&mut self, name: FieldName) -> DecodeResult<String> {
        let at = self.r.pos();
        let v = self.r.str32z(name.local)?;
        if self.wants(name.id) {
            self.push(name, Value::Text(v.clone()), at);
        } else {
            self.skip(at);
        }
        Ok(v)
    }
    pub fn bytes(&mut self, name: FieldName, n: usize) -> DecodeResult<&'a [u8]> {
        let at = self.r.pos();
        let v = self.r.bytes(n, name.local)?;
        if self.wants(name.id) {
            self.push(name, Value::Bytes(v.to_vec()), at);
        } else {
            self.skip(at);
        }
        Ok(v)
    }
    /// A `cv3` kept as its wire bytes (so it re-encodes exactly); the field shows the vector.
    pub fn cv3_raw(&mut self, name: FieldName) -> DecodeResult<[u8; 3]> {
        let at = self.r.pos();
        let s = self.r.bytes(3, name.local)?;
        let raw = [s[0], s[1], s[2]];
        self.push(name, Value::Vec3(cv3_decode(raw)), at);
        Ok(raw)
    }
    /// A `cf16` kept as its raw `u16`; the field shows the decoded float.
    pub fn cf16_raw(&mut self, name: FieldName) -> DecodeResult<u16> {
        let at = self.r.pos();
        let raw = self.r.u16(name.local)?;
        self.push(name, Value::Float(cf16_decode(raw) as f64), at);
        Ok(raw)
    }
    /// A `cv4` kept as (direction bytes, raw cf16 magnitude); the field shows the vector.
    pub fn cv4_raw(&mut self, name: FieldName) -> DecodeResult<([u8; 3], u16)> {
        let at = self.r.pos();
        let s = self.r.bytes(3, name.local)?;
        let dir = [s[0], s[1], s[2]];
        let mag = self.r.u16(name.local)?;
        let d = cv3_decode(dir);
        let m = cf16_decode(mag);
        self.push(name, Value::Vec3([d[0] * m, d[1] * m, d[2] * m]), at);
        Ok((dir, mag))
    }
    /// A `cv4f` kept as (direction bytes, f32 magnitude); the field shows the vector.
    pub fn cv4f_raw(&mut self, name: FieldName) -> DecodeResult<([u8; 3], f32)> {
        let at = self.r.pos();
        let s = self.r.bytes(3, name.local)?;
        let dir = [s[0], s[1], s[2]];
        let mag = self.r.f32(name.local)?;
        let d = cv3_decode(dir);
        self.push(name, Value::Vec3([d[0] * mag, d[1] * mag, d[2] * mag]), at);
        Ok((dir, mag))
    }
    /// A `cvb`: unit direction plus a magnitude byte whose scale is unknown, shown as a
    /// group of the direction and the raw magnitude.
    pub fn cvb(&mut self, name: FieldName, members: CvbMembers) -> DecodeResult<[u8; 4]> {
        let at = self.r.pos();
        let s = self.r.bytes(4, name.local)?;
        let raw = [s[0], s[1], s[2], s[3]];
        let group = vec![
            Field::new(
                members.direction,
                Value::Vec3(cv3_decode([raw[0], raw[1], raw[2]])),
                Span::new(at, at + 3),
            ),
            Field::new(
                members.magnitude_raw,
                Value::Uint(raw[3] as u64),
                Span::new(at + 3, at + 4),
            ),
        ];
        self.push(name, Value::Group(group), at);
        Ok(raw)
    }
    /// A derived label for the bytes of an already-pushed field (e.g. the name of a code).
    pub fn label(&mut self, name: FieldName, text: &'static str, span: Span) {
        if self.wants(name.id) {
            self.visitor.field(
                name.id,
                Cow::Borrowed(name.local),
                Value::Text(text.to_string()),
                span,
            );
        }
    }
    /// Span of the last pushed field (empty at the current position if there is none).
    pub fn last_span(&self) -> Span {
        let last = if self.keep {
            self.visitor.last_span()
        } else {
            None
        };
        last.unwrap_or_else(|| Span::new(self.r.pos(), self.r.pos()))
    }

    /// Where the furthest top-level field handed over ends (none in a lean read).
    pub fn furthest_end(&self) -> Option<u32> {
        if self.keep {
            self.visitor.furthest_end()
        } else {
            None
        }
    }

    /// Open a group or list here; [`FieldReader::group_from`] or
    /// [`FieldReader::list_from`] closes it with the mark returned.
    #[inline]
    pub fn mark(&mut self) -> Mark {
        if self.keep {
            self.visitor.begin()
        } else {
            0
        }
    }

    /// Fold the fields pushed since mark `first` into one group field that starts at
    /// byte `start` (the fields keep their own spans).
    pub fn group_from(&mut self, name: FieldName, first: Mark, start: usize) {
        if self.keep {
            let span = Span::new(start, self.r.pos());
            self.visitor
                .end_group(name.id, Cow::Borrowed(name.local), first, span);
        }
    }

    /// Fold the fields pushed since mark `first` into one list field (their values,
    /// in order) that starts at byte `start`: a list of groups keeps every inner span.
    pub fn list_from(&mut self, name: FieldName, first: Mark, start: usize) {
        if self.keep {
            let span = Span::new(start, self.r.pos());
            self.visitor
                .end_list(name.id, Cow::Borrowed(name.local), first, span);
        }
    }

    /// [`FieldReader::group_from`] over bytes read before (a block read ahead to see
    /// whether it fits): the group spans `span`.
    pub fn group_over(&mut self, name: FieldName, first: Mark, span: Span) {
        if self.keep {
            self.visitor
                .end_group(name.id, Cow::Borrowed(name.local), first, span);
        }
    }

    /// [`FieldReader::list_from`] over bytes read before: the list spans `span`.
    pub fn list_over(&mut self, name: FieldName, first: Mark, span: Span) {
        if self.keep {
            self.visitor
                .end_list(name.id, Cow::Borrowed(name.local), first, span);
        }
    }

    /// The rest of the message as a labelled raw field (nothing if it is empty).
    pub fn rest(&mut self, name: FieldName) -> &'a [u8] {
        let at = self.r.pos();
        let v = self.r.rest();
        if !v.is_empty() {
            if self.wants(name.id) {
                self.push(name, Value::Bytes(v.to_vec()), at);
            } else {
                self.skip(at);
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::registry::field;
    use crate::game::walk::TreeBuilder;

    #[test]
    fn packed_bits_share_a_byte_across_byte_reads() {
        // Settings-like: two bits, then a byte, then a third bit in the same group byte.
        let buf = [0x61, 0x07, 0x20];
        let mut r = Reader::new(&buf);
        assert!(r.bit("a").unwrap());
        assert!(!r.bit("b").unwrap());
        assert_eq!(r.u8("slot").unwrap(), 0x07);
        assert!(!r.bit("c").unwrap());
        assert_eq!(r.last_bit_pos(), 0);
        // The group held three bits; the fourth opens a new byte.
        assert!(!r.bit("d").unwrap());
        assert_eq!(r.last_bit_pos(), 2);
        assert!(r.is_empty());
    }

    #[test]
    fn malformed_bit_count_is_a_located_error() {
        let buf = [0x00, 0xE0];
        let mut r = Reader::new(&buf);
        let e = r.bit("flag").unwrap_err();
        assert_eq!(e.offset, 0);
        assert_eq!(r.pos(), 0);
        assert!(e.to_string().contains("count 1..5"));
    }

    #[test]
    fn short_reads_say_where_and_what() {
        let buf = [1, 2, 3];
        let mut r = Reader::at(&buf, 1);
        let e = r.u32("object_id").unwrap_err();
        assert_eq!((e.offset, e.available), (1, 2));
        assert_eq!(
            e.to_string(),
            "offset 1: object_id: expected 4 byte(s), 2 byte(s) left"
        );
    }

    #[test]
    fn strings_are_bounded_by_the_message() {
        let buf = [0xFF, 0xFF, b'h', b'i'];
        assert!(Reader::new(&buf).str16("name").is_err());
        let buf = [2, 0, b'h', b'i'];
        assert_eq!(Reader::new(&buf).str16("name").unwrap(), "hi");
        let buf = [2, 0, 0, 0, b'h', b'i', 0];
        assert_eq!(Reader::new(&buf).str32z("set").unwrap(), "hi");
        let buf = [0x10, 0, 0, 0x80, 0];
        assert!(Reader::new(&buf).str32z("set").is_err());
    }

    #[test]
    fn field_reader_records_spans() {
        let msg = [0x14, 0xFF, 0xFF, 0xFF, 0x3F, 0x21];
        let mut tree = TreeBuilder::new();
        let mut f = FieldReader::after_opcode(&msg, &mut tree);
        f.object_id(field!("object_id")).unwrap();
        f.bit(field!("hash_present")).unwrap();
        let fields = tree.into_fields();
        assert_eq!(fields[0].span, Span { start: 1, len: 4 });
        assert_eq!(fields[1].span, Span { start: 5, len: 1 });
        assert_eq!(fields[1].value, Value::Bool(true));
    }
}
