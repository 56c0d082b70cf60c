//! JSON text of field values that came from an `f32`, without going through text twice.
//!
//! The established output (`game::field::float_json`) prints the `f32` with `Display`,
//! reads that text back as an `f64` and lets `serde_json` write the `f64`. That costs a
//! `Display`, a parse and a second shortest-digits search per value, and a StateUpdate
//! has dozens of values. Here the `f32`'s shortest digits come from Ryū (Ulf Adams,
//! "Ryū: fast float-to-string conversion", PLDI 2018; the 32-bit variant), changed in one
//! place to settle an exact tie between two shortest candidates the way `Display` does:
//! upwards (Ryū rounds to even). The digits are then laid out the way `serde_json`
//! writes an `f64` of those digits: the `f64` nearest to a decimal of at most nine digits
//! has exactly those digits as its shortest form, so only the layout remains.
//!
//! Most values never meet such a tie, and for them `zmij` (the formatter `serde_json`
//! writes `f64`s with) writes the same text faster: a tie needs the exact binary value
//! to be a decimal of at most ten significant digits ending in 5, so a value whose
//! exact expansion is an integer or has more than ten significant digits (after its
//! mantissa's trailing zero bits are taken off) has none ([`no_exact_tie`]). `zmij`
//! lays an f32's digits out as `serde_json` does an `f64`'s between 2^-16 and 2^29,
//! where the values of a capture mostly are ([`zmij_agrees`]).
//!
//! The tests compare [`write_f32`] with the established path on tens of millions of bit
//! patterns; an ignored test covers all 2^32 of them.

/// Precision of the tables: `POW5_INV_SPLIT[q]` ≈ 2^(pow5bits(q) − 1 + 59) / 5^q and
/// `POW5_SPLIT[i]` ≈ 5^i / 2^(pow5bits(i) − 61), as in the reference `f2s.c`.
const POW5_INV_BITCOUNT: i32 = 59;
const POW5_BITCOUNT: i32 = 61;

/// ⌈log2(5^e)⌉ for 0 < e ≤ 3528 (1 for e = 0).
const fn pow5bits(e: i32) -> i32 {
    ((e as u32 * 1_217_359) >> 19) as i32 + 1
}

/// ⌊log10(2^e)⌋ for 0 ≤ e ≤ 1650.
const fn log10_pow2(e: i32) -> i32 {
    ((e as u32 * 78_913) >> 18) as i32
}

/// ⌊log10(5^e)⌋ for 0 ≤ e ≤ 2620.
const fn log10_pow5(e: i32) -> i32 {
    ((e as u32 * 732_923) >> 20) as i32
}

const fn pow5(i: usize) -> u128 {
    let mut p = 1u128;
    let mut k = 0;
    while k < i {
        p *= 5;
        k += 1;
    }
    p
}

/// ⌊2^(pow5bits(q) − 1 + 59) / 5^q⌋ + 1 for q ≤ 30 (the largest q an f32 needs).
const POW5_INV_SPLIT: [u64; 31] = {
    let mut t = [0u64; 31];
    let mut q = 0;
    while q < t.len() {
        let n = pow5bits(q as i32) - 1 + POW5_INV_BITCOUNT;
        let p = pow5(q);
        // 2^128 does not fit a u128; 5^q never divides it, so ⌊(2^128 − 1)/p⌋ is the same.
        let f = if n >= 128 {
            u128::MAX / p
        } else {
            (1u128 << n) / p
        };
        t[q] = (f + 1) as u64;
        q += 1;
    }
    t
};

/// 5^i scaled to 61 bits, ⌊5^i / 2^(pow5bits(i) − 61)⌋, for i ≤ 47.
const POW5_SPLIT: [u64; 48] = {
    let mut t = [0u64; 48];
    let mut i = 0;
    while i < t.len() {
        let p = pow5(i);
        let b = pow5bits(i as i32);
        t[i] = if b > POW5_BITCOUNT {
            (p >> (b - POW5_BITCOUNT)) as u64
        } else {
            (p << (POW5_BITCOUNT - b)) as u64
        };
        i += 1;
    }
    t
};

fn mul_shift(m: u32, factor: u64, shift: i32) -> u64 {
    ((m as u128 * factor as u128) >> shift) as u64
}

fn multiple_of_pow5(mut v: u32, p: i32) -> bool {
    let mut count = 0;
    while v != 0 && v.is_multiple_of(5) {
        v /= 5;
        count += 1;
    }
    count >= p
}

/// Shortest decimal `digits × 10^exp` that reads back as the finite, non-zero `f32` of
/// `bits` (sign ignored), the one nearest to it, an exact tie going to the larger: the
/// digits `Display` prints. `digits` may end in zeros.
fn shortest(bits: u32) -> (u64, i32) {
    let ieee_m = bits & ((1 << 23) - 1);
    let ieee_e = (bits >> 23) & 0xFF;
    let (e2, m2) = if ieee_e == 0 {
        (1 - 127 - 23 - 2, ieee_m)
    } else {
        (ieee_e as i32 - 127 - 23 - 2, (1 << 23) | ieee_m)
    };
    // The interval of values that read back as this f32: (mm, mp) around mv, scaled by
    // 4; its bounds belong to it when the mantissa is even (round-half-even reading).
    let accept_bounds = m2 & 1 == 0;
    let mv = 4 * m2;
    let mp = 4 * m2 + 2;
    let mm_shift = u32::from(ieee_m != 0 || ieee_e <= 1);
    let mm = 4 * m2 - 1 - mm_shift;

    let (mut vr, mut vp, mut vm, e10);
    // Whether the lower bound mm is exactly representable with the digits kept.
    let mut vm_tz = false;
    let mut last = 0u64;
    if e2 >= 0 {
        let q = log10_pow2(e2);
        e10 = q;
        let k = POW5_INV_BITCOUNT + pow5bits(q) - 1;
        let i = -e2 + q + k;
        let f = POW5_INV_SPLIT[q as usize];
        vr = mul_shift(mv, f, i);
        vp = mul_shift(mp, f, i);
        vm = mul_shift(mm, f, i);
        if q != 0 && (vp - 1) / 10 <= vm / 10 {
            // One removed digit is needed even when the loop below removes none.
            let l = POW5_INV_BITCOUNT + pow5bits(q - 1) - 1;
            last = mul_shift(mv, POW5_INV_SPLIT[(q - 1) as usize], -e2 + q - 1 + l) % 10;
        }
        // (Ryū also notes here whether vr is exact when mv is a multiple of 5; that only
        // serves its round-to-even tie rule, see below.)
        if q <= 9 && mv % 5 != 0 {
            if accept_bounds {
                vm_tz = multiple_of_pow5(mm, q);
            } else {
                vp -= u64::from(multiple_of_pow5(mp, q));
            }
        }
    } else {
        let q = log10_pow5(-e2);
        e10 = q + e2;
        let i = -e2 - q;
        let k = pow5bits(i) - POW5_BITCOUNT;
        let j = q - k;
        let f = POW5_SPLIT[i as usize];
        vr = mul_shift(mv, f, j);
        vp = mul_shift(mp, f, j);
        vm = mul_shift(mm, f, j);
        if q != 0 && (vp - 1) / 10 <= vm / 10 {
            let j = q - 1 - (pow5bits(i + 1) - POW5_BITCOUNT);
            last = mul_shift(mv, POW5_SPLIT[(i + 1) as usize], j) % 10;
        }
        if q <= 1 {
            if accept_bounds {
                vm_tz = mm_shift == 1;
            } else {
                vp -= 1;
            }
        }
    }

    // Remove digits while the interval still holds a shorter candidate. Ryū also tracks
    // whether the digits removed from vr were all zeros, only to round an exact tie to
    // even; `Display` rounds a tie up like any other last digit of 5, so that is not
    // needed here.
    let mut removed = 0;
    while vp / 10 > vm / 10 {
        vm_tz &= vm % 10 == 0;
        last = vr % 10;
        vr /= 10;
        vp /= 10;
        vm /= 10;
        removed += 1;
    }
    if vm_tz {
        // The lower bound itself is a candidate: it may allow dropping more zeros.
        while vm != 0 && vm % 10 == 0 {
            last = vr % 10;
            vr /= 10;
            vm /= 10;
            removed += 1;
        }
    }
    let output = vr + u64::from((vr == vm && (!accept_bounds || !vm_tz)) || last >= 5);
    (output, e10 + removed)
}

/// The two digits of 0 to 99, one after another.
pub(super) const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// Write `digits` (non-zero, at most 20 decimal digits) and return how many.
fn decimal(digits: u64, buf: &mut [u8; 20]) -> usize {
    // Two digits per division: the digits are a quarter of a value's cost.
    let mut n = digits;
    let mut len = 0;
    while n >= 100 {
        let r = 2 * (n % 100) as usize;
        n /= 100;
        buf[18 - len] = PAIRS[r];
        buf[19 - len] = PAIRS[r + 1];
        len += 2;
    }
    if n >= 10 {
        let r = 2 * n as usize;
        buf[18 - len] = PAIRS[r];
        buf[19 - len] = PAIRS[r + 1];
        len += 2;
    } else if n > 0 {
        buf[19 - len] = b'0' + n as u8;
        len += 1;
    }
    len
}

/// An `f64` as a JSON number: its shortest round-trip digits (`1.0`, `0.1`, `1e+20`),
/// `null` when not finite. The one formatter of every `f64` bcwire writes.
pub fn write_f64(out: &mut Vec<u8>, v: f64) {
    // Writing into a Vec cannot fail.
    let _ = write_f64_to(out, v);
}

/// [`write_f64`] into any writer (serde_json's serializer, which only hands over
/// finite floats).
pub fn write_f64_to<W: ?Sized + std::io::Write>(w: &mut W, v: f64) -> std::io::Result<()> {
    if v.is_finite() {
        w.write_all(zmij::Buffer::new().format_finite(v).as_bytes())
    } else {
        w.write_all(b"null")
    }
}

/// A decoded field's float: a value that came from an `f32` as the `f64` nearest to
/// the `f32`'s `Display` form (5.13, not 5.130000114…), any other as [`write_f64`];
/// non-finite values (possible in hostile input) as strings (`"NaN"`, `"inf"`).
pub fn write_field_float(out: &mut Vec<u8>, v: f64) {
    if !v.is_finite() {
        out.push(b'"');
        out.extend_from_slice(format!("{v}").as_bytes());
        out.push(b'"');
    } else if (v as f32) as f64 == v {
        write_f32(out, v as f32);
    } else {
        write_f64(out, v);
    }
}

/// The JSON number `serde_json` writes for the `f64` nearest to the text of `f`'s
/// `Display` form. `f` must be finite.
pub fn write_f32(out: &mut Vec<u8>, f: f32) {
    let bits = f.to_bits();
    if zmij_agrees(bits) {
        out.extend_from_slice(zmij::Buffer::new().format_finite(f).as_bytes());
        return;
    }
    if bits & 0x8000_0000 != 0 {
        out.push(b'-');
    }
    if bits & 0x7FFF_FFFF == 0 {
        out.extend_from_slice(b"0.0");
        return;
    }
    let (mut digits, mut exp) = shortest(bits & 0x7FFF_FFFF);
    while digits % 10 == 0 {
        digits /= 10;
        exp += 1;
    }
    let mut buf = [0u8; 20];
    let len = decimal(digits, &mut buf);
    let text = &buf[20 - len..];
    // Exponent of the first digit; serde_json writes positional text for -5..=15 and
    // scientific notation beyond.
    let sci = exp + len as i32 - 1;
    if !(-5..=15).contains(&sci) {
        let v = f64_of(digits, exp);
        write_f64(out, v.abs());
        return;
    }
    if exp >= 0 {
        // 1234e2 → 123400.0
        out.extend_from_slice(text);
        out.resize(out.len() + exp as usize, b'0');
        out.extend_from_slice(b".0");
    } else if sci >= 0 {
        // 1234e-2 → 12.34
        let int = sci as usize + 1;
        out.extend_from_slice(&text[..int]);
        out.push(b'.');
        out.extend_from_slice(&text[int..]);
    } else {
        // 1234e-6 → 0.001234
        out.extend_from_slice(b"0.");
        out.resize(out.len() + (-sci - 1) as usize, b'0');
        out.extend_from_slice(text);
    }
}

/// Whether the f32 of `bits` cannot lie exactly halfway between two shortest decimal
/// candidates. Its exact value m × 2^e (m odd) is an integer when e ≥ 0 (one that ends
/// in 5 is odd, so below 2^24 and its own shortest text); when e < 0 it is
/// m × 5^−e / 10^−e, whose significant digits are those of m × 5^−e (odd, so without
/// trailing zeros): from 10^10 up (always when −e ≥ 15, as 5^15 > 10^10) that is more
/// than the ten a tie between candidates of at most nine digits can have.
fn no_exact_tie(bits: u32) -> bool {
    let ieee_e = (bits >> 23) & 0xFF;
    let ieee_m = bits & 0x7F_FFFF;
    let (m, e) = if ieee_e == 0 {
        (ieee_m, -149)
    } else {
        (ieee_m | 0x80_0000, ieee_e as i32 - 150)
    };
    if m == 0 {
        return true;
    }
    let e = e + m.trailing_zeros() as i32;
    // m × 5^14 < 2^24 × 5^14 < 2^64.
    e >= 0 || e <= -15 || (m >> m.trailing_zeros()) as u64 * POW5_U64[-e as usize] >= 10_000_000_000
}

/// 5^i for i ≤ 14: [`no_exact_tie`] runs for most values written, and looks its
/// power up rather than computing it.
const POW5_U64: [u64; 15] = {
    let mut t = [1u64; 15];
    let mut i = 1;
    while i < t.len() {
        t[i] = t[i - 1] * 5;
        i += 1;
    }
    t
};

/// [`write_f32`]'s text of `f` into `buf` when `zmij` writes it (most values), its
/// length returned; `None` for the others. The copies are of lengths the compiler knows
/// (an f32's text is 3 to 15 bytes here), not calls to `memcpy`.
pub(crate) fn f32_text(f: f32, buf: &mut [u8; 24]) -> Option<usize> {
    if !zmij_agrees(f.to_bits()) {
        return None;
    }
    let mut z = zmij::Buffer::new();
    let text = z.format_finite(f).as_bytes();
    let n = text.len();
    match n {
        // Two overlapping copies of eight bytes.
        8..=16 => {
            buf[..8].copy_from_slice(&text[..8]);
            buf[n - 8..n].copy_from_slice(&text[n - 8..]);
        }
        4..=7 => {
            buf[..4].copy_from_slice(&text[..4]);
            buf[n - 4..n].copy_from_slice(&text[n - 4..]);
        }
        _ => buf.get_mut(..n)?.copy_from_slice(text),
    }
    Some(n)
}

/// Whether `zmij` writes the f32 of `bits` as [`write_f32`] does: no exact tie, and a
/// magnitude from 2^-16 (1.5e-5) to below 2^29 (5.4e8), where both write positional
/// text (`zmij` turns to exponent form for an f32 at other bounds than for an f64).
fn zmij_agrees(bits: u32) -> bool {
    let ieee_e = (bits >> 23) & 0xFF;
    (127 - 16..127 + 29).contains(&ieee_e) && no_exact_tie(bits)
}

/// The `f64` nearest to `digits × 10^exp` (digits below 2^53).
fn f64_of(digits: u64, exp: i32) -> f64 {
    // Both operands exact, one correctly rounded operation (Clinger's fast path).
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    match exp {
        0..=22 => digits as f64 * POW10[exp as usize],
        -22..=-1 => digits as f64 / POW10[(-exp) as usize],
        _ => format!("{digits}e{exp}").parse().unwrap_or(f64::NAN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The established path: `Display`, parsed as an f64, written by serde_json.
    fn reference(f: f32) -> String {
        let parsed: f64 = format!("{f}").parse().unwrap();
        serde_json::to_string(&parsed).unwrap()
    }

    fn ours(f: f32) -> String {
        let mut out = Vec::new();
        write_f32(&mut out, f);
        String::from_utf8(out).unwrap()
    }

    fn check(bits: u32) {
        let f = f32::from_bits(bits);
        if f.is_finite() {
            assert_eq!(ours(f), reference(f), "bits {bits:#010x} ({f:e})");
        }
    }

    #[test]
    fn tables_hold_their_defining_values() {
        assert_eq!(POW5_INV_SPLIT[0], (1 << 59) + 1);
        assert_eq!(POW5_INV_SPLIT[1], 461_168_601_842_738_791);
        assert_eq!(POW5_SPLIT[0], 1 << 60);
        assert_eq!(POW5_SPLIT[1], 5 << 58);
        for (i, &v) in POW5_SPLIT.iter().enumerate() {
            assert!((1u64 << 60..1u64 << 61).contains(&v), "{i}");
        }
    }

    #[test]
    fn special_values_match_display() {
        for f in [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            0.1,
            5.13,
            1e-7,
            1e-45,
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
            f32::EPSILON,
            16_777_216.0,
            123_456_789.0,
            1e15,
            1e16,
            9.999_999e15,
            1e-5,
            9.999_999e-6,
            0.000_123_4,
        ] {
            check(f.to_bits());
        }
    }

    /// 2^21 + 1/4 lies exactly between 2097152.2 and 2097152.3, both shortest: `Display`
    /// takes the larger, Ryū (and serde_json's own f32 writer) the even one.
    #[test]
    fn an_exact_tie_goes_up_as_display_does() {
        let f = f32::from_bits(0x4A00_0001);
        assert_eq!(f as f64, 2_097_152.25);
        assert_eq!(format!("{f}"), "2097152.3");
        assert_eq!(ours(f), "2097152.3");
    }

    /// Every exponent with mantissas at both ends, around powers of two and ten, small
    /// integers and quarter steps (where exact ties between shortest forms live), and a
    /// pseudo-random sweep: several million patterns, both signs.
    #[test]
    fn millions_of_bit_patterns_match_display() {
        for e in 0u32..255 {
            for m in (0u32..4096).chain((1 << 23) - 4096..1 << 23) {
                check((e << 23) | m);
                check(0x8000_0000 | (e << 23) | m);
            }
        }
        for p in -45i32..=38 {
            let t = 10f32.powi(p);
            for d in -64i32..=64 {
                check(t.to_bits().wrapping_add_signed(d));
            }
        }
        for n in 0u32..1_000_000 {
            check((n as f32).to_bits());
            check((n as f32 + 0.25).to_bits());
            check((n as f32 * 0.5 + 0.75).to_bits());
        }
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..3_000_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            check(x as u32);
        }
    }

    /// All 2^32 patterns (about 25 CPU minutes in release, split over the cores):
    /// `cargo test --release --lib json_float -- --ignored`.
    #[test]
    #[ignore]
    fn every_bit_pattern_matches_display() {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
        let chunk = (1u64 << 32) / threads;
        std::thread::scope(|s| {
            for t in 0..threads {
                s.spawn(move || {
                    let end = if t + 1 == threads {
                        1 << 32
                    } else {
                        (t + 1) * chunk
                    };
                    let (mut a, mut b) = (Vec::new(), String::new());
                    for bits in t * chunk..end {
                        let f = f32::from_bits(bits as u32);
                        if !f.is_finite() {
                            continue;
                        }
                        a.clear();
                        write_f32(&mut a, f);
                        b.clear();
                        use std::fmt::Write as _;
                        let _ = write!(b, "{f}");
                        let parsed: f64 = b.parse().unwrap();
                        let expected = serde_json::to_string(&parsed).unwrap();
                        assert_eq!(a, expected.as_bytes(), "bits {bits:#010x}");
                    }
                });
            }
        });
    }
}
