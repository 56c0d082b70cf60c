//! A cheap content fingerprint for telling a resend from a new message with the same
//! sequence number, without keeping the payload.

/// Fingerprint of a byte string: 64-bit multiply-rotate hash over 8-byte words plus
/// the length. Not cryptographic; a collision only makes a different message with a
/// reused sequence number look like a resend, which also needs the same length and
/// sequence number inside the retransmission horizon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    pub hash: u64,
    pub len: u32,
}

const SEED: u64 = 0x9E37_79B9_7F4A_7C15;
const MUL: u64 = 0xD6E8_FEB8_6659_FD93;

#[inline]
fn mix(h: u64, w: u64) -> u64 {
    (h ^ w).wrapping_mul(MUL).rotate_left(29)
}

impl Fingerprint {
    pub fn of(bytes: &[u8]) -> Fingerprint {
        let mut h = SEED ^ bytes.len() as u64;
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut a = [0u8; 8];
            a.copy_from_slice(w);
            h = mix(h, u64::from_le_bytes(a));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut a = [0u8; 8];
            a[..rest.len()].copy_from_slice(rest);
            h = mix(h, u64::from_le_bytes(a) ^ 0xFF);
        }
        // Final avalanche so that short inputs differing in one byte spread out.
        h ^= h >> 32;
        h = h.wrapping_mul(MUL);
        h ^= h >> 29;
        Fingerprint {
            hash: h,
            len: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_bytes_equal_fingerprints_and_small_changes_differ() {
        let a = Fingerprint::of(b"\x32\x0a\x80\x05\x00\x2c\x01\x02\x03\x04");
        assert_eq!(
            a,
            Fingerprint::of(b"\x32\x0a\x80\x05\x00\x2c\x01\x02\x03\x04")
        );
        assert_ne!(
            a,
            Fingerprint::of(b"\x32\x0a\x80\x05\x00\x2c\x01\x02\x03\x05")
        );
        assert_ne!(Fingerprint::of(b""), Fingerprint::of(b"\x00"));
        assert_ne!(Fingerprint::of(b"\x00"), Fingerprint::of(b"\x00\x00"));
        assert_eq!(a.len, 10);
        let mut seen = std::collections::HashSet::new();
        for i in 0..=255u8 {
            for j in 0..=255u8 {
                assert!(seen.insert(Fingerprint::of(&[i, j, 7]).hash));
            }
        }
    }
}
