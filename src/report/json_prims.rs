//! JSON's primitive values written straight into a byte buffer: integers, booleans,
//! floats (through [`super::json_float`], with a cache of recent `f32` texts), escaped
//! strings, hex twins and byte strings. The record writers of [`super::json_stream`]
//! and [`super::json_state_update`] are built on these.

// Writing into a Vec cannot fail: the io::Results below are ignored on purpose.

/// `,"name":` as bytes, for the writers' `key!` with a constant name.
pub(crate) const fn key_bytes<const N: usize>(name: &str) -> [u8; N] {
    let name = name.as_bytes();
    let mut out = [0u8; N];
    out[0] = b',';
    out[1] = b'"';
    let mut i = 0;
    while i < name.len() {
        out[2 + i] = name[i];
        i += 1;
    }
    out[N - 2] = b'"';
    out[N - 1] = b':';
    out
}

/// An integer. Most are below 100 (offsets, lengths, indices, percentages): those are
/// written inline, at a length the compiler knows; the rest by [`u64_digits`].
#[inline(always)]
pub(crate) fn u64_json(out: &mut Vec<u8>, n: u64) {
    use crate::report::json_float::PAIRS;
    if n < 10 {
        out.push(b'0' + n as u8);
    } else if n < 100 {
        let i = 2 * n as usize;
        out.extend_from_slice(&[PAIRS[i], PAIRS[i + 1]]);
    } else {
        u64_digits(out, n);
    }
}

/// The eight digits of `n` (below 10^8), leading zeros included.
#[inline(always)]
fn eight_digits(n: u64) -> [u8; 8] {
    use crate::report::json_float::PAIRS;
    let (hi, lo) = ((n / 10_000) as usize, (n % 10_000) as usize);
    let pair = |i: usize| [PAIRS[2 * i], PAIRS[2 * i + 1]];
    let [a, b] = pair(hi / 100);
    let [c, d] = pair(hi % 100);
    let [e, f] = pair(lo / 100);
    let [g, h] = pair(lo % 100);
    [a, b, c, d, e, f, g, h]
}

/// An integer from 100 up.
pub(crate) fn u64_digits(out: &mut Vec<u8>, n: u64) {
    use crate::report::json_float::PAIRS;
    match n {
        0..=999 => {
            let i = 2 * (n % 100) as usize;
            out.extend_from_slice(&[b'0' + (n / 100) as u8, PAIRS[i], PAIRS[i + 1]]);
        }
        1_000..=99_999_999 => {
            // Eight digits (leading zeros included) as pairs, the zeros then shifted
            // out of a big-endian word: one copy of a known length, no loop.
            let len = n.ilog10() as usize + 1;
            let word = u64::from_be_bytes(eight_digits(n)) << (8 * (8 - len));
            push_prefix(out, &word.to_be_bytes(), len);
        }
        _ => {
            // Digits written in place, last first, into room made by one copy of a
            // known length (`itoa`'s text would be copied at a length known only then).
            let len = n.ilog10() as usize + 1;
            let at = out.len();
            out.extend_from_slice(&[b'0'; 20]);
            let digits = &mut out[at..at + len];
            let (mut n, mut end) = (n, len);
            while n >= 100 {
                let r = 2 * (n % 100) as usize;
                n /= 100;
                digits[end - 2] = PAIRS[r];
                digits[end - 1] = PAIRS[r + 1];
                end -= 2;
            }
            if n >= 10 {
                digits[end - 2] = PAIRS[2 * n as usize];
                digits[end - 1] = PAIRS[2 * n as usize + 1];
            } else {
                digits[end - 1] = b'0' + n as u8;
            }
            out.truncate(at + len);
        }
    }
}

/// The first `len` bytes of `text`: all of it copied (a length the compiler knows, so
/// no call to `memcpy`), then the rest taken off again.
#[inline(always)]
pub(crate) fn push_prefix<const N: usize>(out: &mut Vec<u8>, text: &[u8; N], len: usize) {
    let at = out.len();
    out.extend_from_slice(text);
    out.truncate(at + len.min(N));
}

pub(crate) fn i64_json(out: &mut Vec<u8>, n: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

pub(crate) fn opt_u64_json(out: &mut Vec<u8>, n: Option<u64>) {
    match n {
        Some(n) => u64_json(out, n),
        None => out.extend_from_slice(b"null"),
    }
}

pub(crate) fn bool_json(out: &mut Vec<u8>, b: bool) {
    // One copy per branch: each has a length the compiler knows.
    if b {
        out.extend_from_slice(b"true");
    } else {
        out.extend_from_slice(b"false");
    }
}

/// An `f64` number (`null` when not finite).
pub(crate) fn f64_json(out: &mut Vec<u8>, f: f64) {
    crate::report::json_float::write_f64(out, f);
}

/// A time or delay in seconds, `v`, computed from `ns` nanoseconds: the text
/// [`f64_json`] writes for `v`, without its shortest-digits search when `ns` is a
/// whole number of microseconds, from 10 µs up, whose six-decimal text reads back
/// as `v` (most capture times, and the delays of a capture with microsecond stamps).
///
/// Why the texts agree: below 2^32 s an `f64`'s rounding interval is at most 2^-20 s
/// wide, under 10^-6, so it holds at most one number of six decimals or fewer. When
/// `us / 10^6` reads back as `v` it lies in that interval, and any other decimal in it
/// with no more significant digits than it has no more decimals (its first digit is
/// in the same place or higher) — so there is none: `us / 10^6` without its trailing
/// zeros is the shortest round-trip text, the one `f64_json` writes. From 10^-5 s up
/// that is written positionally (`0.00001`, `1014854400.489688`); a whole second as
/// `1.0`. (`us / 10^6` is a single correctly rounded division of exact operands, so
/// it is the `f64` nearest to that decimal.) The tests compare with serde_json.
pub(crate) fn seconds_json(out: &mut Vec<u8>, v: f64, ns: i64) {
    use crate::report::json_float::PAIRS;
    const MAX_US: i64 = (1 << 32) * 1_000_000;
    let us = ns / 1000;
    if ns % 1000 != 0 || !(10..=MAX_US).contains(&us) || us as f64 / 1e6 != v {
        f64_json(out, v);
        return;
    }
    // Up to ten digits of whole seconds (below 2^32): the first two, then eight.
    let whole = (us / 1_000_000) as u64;
    if whole < 100_000_000 {
        u64_json(out, whole);
    } else {
        u64_json(out, whole / 100_000_000);
        out.extend_from_slice(&eight_digits(whole % 100_000_000));
    }
    let frac = (us % 1_000_000) as usize;
    if frac == 0 {
        out.extend_from_slice(b".0");
        return;
    }
    let pair = |i: usize| [PAIRS[2 * i], PAIRS[2 * i + 1]];
    let [a, b] = pair(frac / 10_000);
    let [c, d] = pair(frac / 100 % 100);
    let [e, f] = pair(frac % 100);
    let text = [b'.', a, b, c, d, e, f, b'0'];
    // The point and the digits up to the last that is not 0.
    let mut len = 7;
    while text[len - 1] == b'0' {
        len -= 1;
    }
    push_prefix(out, &text, len);
}

/// The text of the capture times of one second, kept for the next record: a
/// capture's times come in order, many a second, so their whole seconds repeat.
#[derive(Default)]
pub(crate) struct TimeText {
    /// The whole seconds `text` holds (0: none yet; a time under a second is written
    /// without the cache).
    whole: u64,
    len: u8,
    text: [u8; 16],
}

impl TimeText {
    /// A capture time `ns` nanoseconds since the epoch: its seconds as [`seconds_json`]
    /// writes them (`v` = `ns` / 10^9), then `ns_key` and `ns` as an integer.
    ///
    /// A time from one second up in whole microseconds is written from one set of
    /// digits: the whole seconds (kept here) and the six of the microseconds, followed
    /// by `000` for the nanoseconds and, when [`seconds_json`] writes the seconds by
    /// position (their six-decimal text reads back as `v`), trimmed of their trailing
    /// zeros for the seconds. The tests compare with serde_json and itoa.
    pub(crate) fn write<const K: usize>(
        &mut self,
        out: &mut Vec<u8>,
        v: f64,
        ns: i64,
        ns_key: &[u8; K],
    ) {
        use crate::report::json_float::PAIRS;
        const MAX_US: i64 = (1 << 32) * 1_000_000;
        let us = ns / 1000;
        if ns % 1000 != 0 || !(1_000_000..=MAX_US).contains(&us) {
            seconds_json(out, v, ns);
            out.extend_from_slice(ns_key);
            i64_json(out, ns);
            return;
        }
        let whole = (us / 1_000_000) as u64;
        if whole != self.whole {
            // At most ten digits (below 2^32), written to find them, then taken off.
            let at = out.len();
            u64_json(out, whole);
            let text = &out[at..];
            self.text[..text.len()].copy_from_slice(text);
            self.len = text.len() as u8;
            self.whole = whole;
            out.truncate(at);
        }
        let frac = (us % 1_000_000) as usize;
        let pair = |i: usize| [PAIRS[2 * i], PAIRS[2 * i + 1]];
        let [a, b] = pair(frac / 10_000);
        let [c, d] = pair(frac / 100 % 100);
        let [e, f] = pair(frac % 100);
        if us as f64 / 1e6 != v {
            // Not the six-decimal text: `seconds_json` writes the shortest one.
            f64_json(out, v);
        } else {
            push_prefix(out, &self.text, self.len as usize);
            if frac == 0 {
                out.extend_from_slice(b".0");
            } else {
                let text = [b'.', a, b, c, d, e, f, b'0'];
                // The point and the digits up to the last that is not 0.
                let mut len = 7;
                while text[len - 1] == b'0' {
                    len -= 1;
                }
                push_prefix(out, &text, len);
            }
        }
        out.extend_from_slice(ns_key);
        push_prefix(out, &self.text, self.len as usize);
        out.extend_from_slice(&[a, b, c, d, e, f, b'0', b'0', b'0']);
    }
}

/// The text of the last frame number written, counted on in decimal when the next is
/// the one after it (a capture's records come in frame order).
#[derive(Default)]
pub(crate) struct FrameText {
    /// The frame `text` holds (0: none yet; frames count from 1).
    frame: u64,
    /// The digits: `text[..len]`.
    len: u8,
    text: [u8; 20],
}

impl FrameText {
    /// `frame` as [`u64_json`] writes it.
    pub(crate) fn write(&mut self, out: &mut Vec<u8>, frame: u64) {
        if self.frame == 0 || self.frame.checked_add(1) != Some(frame) {
            let at = out.len();
            u64_json(out, frame);
            let text = &out[at..];
            self.len = text.len() as u8;
            self.text[..text.len()].copy_from_slice(text);
            self.frame = frame;
            return;
        }
        // Add one to the digits: trailing nines become zeros, the digit before them
        // goes up by one; when all were nines, the number is a 1 and one zero more
        // (at most 20 digits, as `u64::MAX` has).
        let len = self.len as usize;
        let mut i = len;
        loop {
            if i == 0 {
                self.text[0] = b'1';
                self.text[len] = b'0';
                self.len += 1;
                break;
            }
            i -= 1;
            if self.text[i] != b'9' {
                self.text[i] += 1;
                break;
            }
            self.text[i] = b'0';
        }
        self.frame = frame;
        push_prefix(out, &self.text, self.len as usize);
    }
}

/// An `f32` value as [`FloatCache::write`] writes it, without the cache: for values
/// that seldom repeat (a position, a position delta), where looking them up and
/// keeping them costs more than it saves.
pub(crate) fn f32_json(out: &mut Vec<u8>, f: f32) {
    if !f.is_finite() {
        crate::report::json_float::write_field_float(out, f as f64);
        return;
    }
    let mut text = [0u8; 24];
    match crate::report::json_float::f32_text(f, &mut text) {
        Some(len) => push_prefix(out, &text, len),
        None => crate::report::json_float::write_f32(out, f),
    }
}

/// Whether `bytes` holds a byte JSON escapes (`"`, `\\`, a control character), eight
/// bytes at a time: most strings written here have none.
pub(crate) fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte below n sets its high bit in (x - n·ONES) & !x & HIGH (exact for the word).
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * n as u64) & !x & HIGH;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(c);
        let x = u64::from_le_bytes(word);
        let quote = x ^ (ONES * b'"' as u64);
        let backslash = x ^ (ONES * b'\\' as u64);
        if below(x, 0x20) | below(quote, 1) | below(backslash, 1) != 0 {
            return true;
        }
    }
    chunks
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// A string known to need no escape (a name from the code, not from the input).
#[inline(always)]
pub(crate) fn plain_str_json(out: &mut Vec<u8>, s: &'static str) {
    debug_assert!(!needs_escape(s.as_bytes()), "{s}");
    out.push(b'"');
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
}

/// A string with JSON's escapes: `\"`, `\\`, `\b \t \n \f \r`, and `\u00xx` for the
/// other control characters; everything else as is.
pub(crate) fn str_json(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    if !needs_escape(bytes) {
        out.reserve(bytes.len() + 2);
        out.push(b'"');
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    out.push(b'"');
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0C => b"\\f",
            b'\r' => b"\\r",
            0..=0x1F => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[run..i]);
        run = i + 1;
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 15) as usize]);
        } else {
            out.extend_from_slice(esc);
        }
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

pub(crate) fn hex_bytes_json(out: &mut Vec<u8>, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2 + 2);
    out.push(b'"');
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize]);
        out.push(DIGITS[(b & 15) as usize]);
    }
    out.push(b'"');
}

/// Digits of `field::hex_padded`: the value's natural width, 2, 4, 8 or 16.
pub(crate) fn natural_width(v: u64) -> usize {
    match v {
        0..=0xFF => 2,
        0x100..=0xFFFF => 4,
        0x1_0000..=0xFFFF_FFFF => 8,
        _ => 16,
    }
}

/// `"0x` + upper-case hex, at least `width` digits + `"`, as `format!("0x{v:0width$X}")`.
pub(crate) fn hex_twin_json(out: &mut Vec<u8>, v: u64, width: usize) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    // The common widths, an object id's 8 digits and a byte's 2, in one copy each.
    if width == 8 && v <= 0xFFFF_FFFF {
        let mut text = *b"\"0x00000000\"";
        for k in 0..8 {
            text[10 - k] = DIGITS[(v >> (4 * k) & 15) as usize];
        }
        out.extend_from_slice(&text);
        return;
    }
    if width == 2 && v <= 0xFF {
        out.extend_from_slice(&[
            b'"',
            b'0',
            b'x',
            DIGITS[(v >> 4) as usize],
            DIGITS[(v & 15) as usize],
            b'"',
        ]);
        return;
    }
    let mut buf = [0u8; 16];
    let mut n = 0;
    let mut x = v;
    while x > 0 || n < width {
        buf[n] = DIGITS[(x & 15) as usize];
        x >>= 4;
        n += 1;
    }
    out.extend_from_slice(b"\"0x");
    for k in (0..n).rev() {
        out.push(buf[k]);
    }
    out.push(b'"');
}

/// The JSON text of one f32 value, as [`PacketWriter`] keeps it (`len` 0: empty).
#[derive(Clone, Copy)]
pub(crate) struct FloatText {
    bits: u32,
    len: u8,
    text: [u8; 24],
}

/// Slots of the f32 text cache, indexed by a hash of the bit pattern.
const FLOAT_SLOTS: usize = 1024;

/// The text of recent `f32` values, by a hash of their bits (most are percentages of a
/// byte, so a few hundred distinct values).
pub(crate) struct FloatCache {
    slots: Box<[FloatText]>,
}

impl Default for FloatCache {
    fn default() -> FloatCache {
        let empty = FloatText {
            bits: 0,
            len: 0,
            text: [0; 24],
        };
        FloatCache {
            slots: vec![empty; FLOAT_SLOTS].into_boxed_slice(),
        }
    }
}

impl FloatCache {
    /// [`crate::report::json_float::write_field_float`], with the text of recent `f32` values
    /// kept.
    pub(crate) fn write(&mut self, out: &mut Vec<u8>, v: f64) {
        let short = v as f32;
        if !v.is_finite() || short as f64 != v {
            crate::report::json_float::write_field_float(out, v);
            return;
        }
        let bits = short.to_bits();
        let slot = bits.wrapping_mul(0x9E37_79B1) as usize >> (32 - FLOAT_SLOTS.trailing_zeros());
        let Some(cached) = self.slots.get_mut(slot) else {
            crate::report::json_float::write_f32(out, short);
            return;
        };
        if cached.len > 0 && cached.bits == bits {
            push_prefix(out, &cached.text, cached.len as usize);
            return;
        }
        let mut text = [0u8; 24];
        if let Some(len) = crate::report::json_float::f32_text(short, &mut text) {
            push_prefix(out, &text, len);
            cached.bits = bits;
            cached.len = len as u8;
            cached.text = text;
            return;
        }
        let start = out.len();
        crate::report::json_float::write_f32(out, short);
        let text = &out[start..];
        if text.len() <= cached.text.len() {
            cached.bits = bits;
            cached.len = text.len() as u8;
            cached.text[..text.len()].copy_from_slice(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed pseudo-random sequence (xorshift64), the same in every run.
    fn xorshift() -> impl FnMut() -> u64 {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    fn seconds(ns: i64) -> (String, String) {
        let v = ns as f64 / 1e9;
        let mut ours = Vec::new();
        seconds_json(&mut ours, v, ns);
        let reference = serde_json::to_string(&v).unwrap();
        (String::from_utf8(ours).unwrap(), reference)
    }

    /// Every whole number of microseconds up to three seconds (the short delays and the
    /// 10^-5 s bound of positional text), then capture times: around today's, around
    /// the 2^32 s bound, with and without whole microseconds, written as serde_json
    /// writes the same `f64`.
    #[test]
    fn seconds_match_serde_json() {
        for us in 0..3_000_000i64 {
            let (ours, reference) = seconds(us * 1000);
            assert_eq!(ours, reference, "{us} us");
        }
        let mut next = xorshift();
        let bound = (1i64 << 32) * 1_000_000_000;
        for _ in 0..1_000_000 {
            let r = next();
            for base in [
                1_014_854_400_000_000_000i64,
                1_764_000_000_000_000_000,
                bound,
            ] {
                let us = base / 1000 + (r % 2_000_000_000) as i64 - 1_000_000_000;
                for ns in [us * 1000, us * 1000 + (r >> 40) as i64 % 1000] {
                    let (ours, reference) = seconds(ns);
                    assert_eq!(ours, reference, "{ns} ns");
                }
            }
            let (ours, reference) = seconds((r >> 1) as i64);
            assert_eq!(ours, reference, "{r} ns");
        }
        for ns in [
            0,
            -1000,
            -1_000_000_000,
            i64::MIN,
            i64::MAX,
            bound,
            bound + 1000,
        ] {
            let (ours, reference) = seconds(ns);
            assert_eq!(ours, reference, "{ns} ns");
        }
    }

    /// Capture times written with their kept whole seconds, as serde_json writes the
    /// seconds (`f64`) and itoa the nanoseconds: times in order (within a second,
    /// across seconds, with gaps), in and out of whole microseconds, and the bounds of
    /// the positional text.
    #[test]
    fn times_match_serde_json_and_itoa() {
        let mut kept = TimeText::default();
        let mut next = xorshift();
        let bound = (1i64 << 32) * 1_000_000_000;
        let check = |kept: &mut TimeText, ns: i64| {
            let v = ns as f64 / 1e9;
            let mut ours = Vec::new();
            kept.write(&mut ours, v, ns, b",\"ns\":");
            let reference = format!(
                "{},\"ns\":{}",
                serde_json::to_string(&v).unwrap(),
                itoa::Buffer::new().format(ns)
            );
            assert_eq!(String::from_utf8(ours).unwrap(), reference, "{ns} ns");
        };
        for base in [
            1_014_854_400_000_000_000i64,
            1_764_000_000_000_000_000,
            bound - 3_000_000_000,
            999_000_000,
            0,
        ] {
            let mut ns = base;
            for _ in 0..300_000 {
                let r = next();
                // Steps of whole microseconds mostly, sometimes nanoseconds, sometimes
                // a jump of seconds.
                ns += match r % 16 {
                    0 => (r >> 8) as i64 % 1000,
                    1 => (r >> 8) as i64 % 5_000_000_000,
                    _ => ((r >> 8) % 40_000) as i64 * 1000,
                };
                check(&mut kept, ns);
            }
        }
        for ns in [
            0,
            1000,
            10_000,
            999_999_000,
            1_000_000_000,
            1_000_001_000,
            -1000,
            -1_000_000_000,
            i64::MIN,
            i64::MAX,
            bound - 1000,
            bound,
            bound + 1000,
            1_000_000_000,
        ] {
            check(&mut kept, ns);
        }
    }

    /// Frame numbers counted on in decimal read as itoa writes them: runs of frames in
    /// order across every power of ten, and jumps.
    #[test]
    fn frames_match_itoa() {
        let mut kept = FrameText::default();
        let check = |kept: &mut FrameText, frame: u64| {
            let mut ours = Vec::new();
            kept.write(&mut ours, frame);
            assert_eq!(
                ours,
                itoa::Buffer::new().format(frame).as_bytes(),
                "{frame}"
            );
        };
        for frame in 1..200_000u64 {
            check(&mut kept, frame);
        }
        let mut p = 10u64;
        while let Some(next) = p.checked_mul(10) {
            for frame in p - 3..p + 3 {
                check(&mut kept, frame);
            }
            for frame in next - 3..next + 3 {
                check(&mut kept, frame);
            }
            p = next;
        }
        for frame in [
            5,
            4,
            0,
            1,
            0,
            99,
            100,
            u64::MAX - 2,
            u64::MAX - 1,
            u64::MAX,
            0,
            1,
        ] {
            check(&mut kept, frame);
        }
    }

    /// The uncached writer writes what the cached one does, finite or not.
    #[test]
    fn f32_json_matches_the_cache() {
        let mut cache = FloatCache::default();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let specials = [
            0.0f32,
            -0.0,
            1e-7,
            // 2^21 + 1/4: an exact tie between two shortest forms.
            f32::from_bits(0x4A00_0001),
            f32::NAN,
            f32::INFINITY,
            5.13,
        ];
        for i in 0..2_000_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let f = specials.get(i).copied().unwrap_or(f32::from_bits(x as u32));
            let (mut a, mut b) = (Vec::new(), Vec::new());
            f32_json(&mut a, f);
            cache.write(&mut b, f as f64);
            assert_eq!(a, b, "{:#010x}", f.to_bits());
        }
    }
}
