//! Compressed number encodings used by game messages (`primitives.md` §3–§6).
//!
//! The arithmetic is done in `f32` on purpose: the stock encoder works in single
//! precision and the range boundaries (1.0000001, 10.000001, …) are f32 artefacts.

/// Decoded CompressedFloat16 range for a scale value: `(lo, hi)`.
fn cf16_range(scale: u16) -> (f32, f32) {
    let mut lo = 0.0f32;
    let mut hi = 0.001f32;
    for _ in 0..scale {
        lo = hi;
        hi *= 10.0f32;
    }
    (lo, hi)
}

/// Decode a CompressedFloat16 (`cf16`): sign bit, 3-bit scale, 12-bit mantissa / 4095.
pub fn cf16_decode(raw: u16) -> f32 {
    let mantissa = (raw & 0x0FFF) as f32;
    let scale = (raw >> 12) & 7;
    let (lo, hi) = cf16_range(scale);
    let value = lo + (hi - lo) * mantissa / 4095.0f32;
    if raw & 0x8000 != 0 {
        -value
    } else {
        value
    }
}

/// Encode a value as CompressedFloat16 the way the stock encoder does (truncating).
pub fn cf16_encode(x: f32) -> u16 {
    let negative = x < 0.0;
    let v = x.abs();
    let sign = if negative { 0x8000 } else { 0 };
    for scale in 0u16..=7 {
        let (lo, hi) = cf16_range(scale);
        if v < hi {
            let m = (((v - lo) / (hi - lo)) * 4095.0f32) as u32;
            return sign | (scale << 12) | (m.min(4095) as u16);
        }
    }
    if negative {
        0xFFFF
    } else {
        0x7FFF
    }
}

/// Decode one `cv3` / direction component (`s8 / 127`).
pub fn dir_component(b: u8) -> f32 {
    (b as i8) as f32 / 127.0
}

/// Encode a unit-direction component the stock way: ×127, truncated toward zero.
pub fn dir_component_encode(x: f32) -> u8 {
    ((x * 127.0).clamp(-127.0, 127.0) as i8) as u8
}

/// Normalise and encode a direction vector as three bytes (`cv3`); zero stays zero.
pub fn cv3_encode(v: [f32; 3]) -> [u8; 3] {
    let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if len == 0.0 || !len.is_finite() {
        return [0, 0, 0];
    }
    [
        dir_component_encode(v[0] / len),
        dir_component_encode(v[1] / len),
        dir_component_encode(v[2] / len),
    ]
}

/// Decode three direction bytes into a vector.
pub fn cv3_decode(b: [u8; 3]) -> [f32; 3] {
    [
        dir_component(b[0]),
        dir_component(b[1]),
        dir_component(b[2]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    // primitives.md §3.2: values reported from captures.
    #[test]
    fn cf16_worked_examples() {
        let cases: [(u16, f32); 6] = [
            (0x571B, 49.978),
            (0x78E2, 5997.80),
            (0x4757, 5.1297),
            (0x4BC3, 7.6176),
            (0x4BBA, 7.5978),
            (0x0000, 0.0),
        ];
        for (raw, want) in cases {
            let got = cf16_decode(raw);
            assert!((got - want).abs() < 0.01, "{raw:#06x}: {got} != {want}");
        }
        assert!(cf16_decode(0x8000).is_sign_negative());
    }

    // primitives.md §3.3: round numbers encode a little low.
    #[test]
    fn cf16_encoder_matches_reference() {
        assert_eq!(cf16_encode(1.0), 0x3FFE);
        assert_eq!(cf16_encode(100.0), 0x5FFE);
        assert_eq!(cf16_encode(50.0), 0x571B);
        assert_eq!(cf16_encode(-50.0), 0xD71B);
        assert_eq!(cf16_encode(1.0e9), 0x7FFF);
        assert_eq!(cf16_encode(-1.0e9), 0xFFFF);
    }

    #[test]
    fn cf16_round_trip_is_within_one_step() {
        for raw in (0u16..0x8000).step_by(7) {
            let v = cf16_decode(raw);
            let back = cf16_encode(v);
            let diff = (back as i32 - raw as i32).abs();
            // Truncation may land one mantissa step below, or on the next scale's 0.
            assert!(
                diff <= 1 || cf16_decode(back) == v,
                "{raw:#06x} -> {v} -> {back:#06x}"
            );
        }
    }

    // Seed 001 example 1: forward 0B 68 46.
    #[test]
    fn cv3_seed_forward_vector() {
        let v = cv3_decode([0x0B, 0x68, 0x46]);
        assert!((v[0] - 0.087).abs() < 0.001);
        assert!((v[1] - 0.819).abs() < 0.001);
        assert!((v[2] - 0.551).abs() < 0.001);
        assert_eq!(cv3_encode([0.0, 0.0, 0.0]), [0, 0, 0]);
        assert_eq!(cv3_encode([0.0, 2.0, 0.0]), [0, 127, 0]);
    }
}
