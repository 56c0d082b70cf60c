//! The fast 64-bit hasher that diff fingerprints are made with.

use std::hash::Hasher;

/// A fast 64-bit hasher for fingerprints: each word is folded into the state with a
/// 64×64→128-bit multiply (high and low halves xored), which mixes every input bit
/// into every output bit, unlike FxHash, whose low bits never see the high ones. Not
/// meant to resist crafted collisions. Unlike SipHash, `write(a); write(b)` is not the
/// same as `write(a ++ b)`.
#[derive(Debug, Clone, Copy)]
pub struct FoldHasher(u64);

const FOLD_MUL: u64 = 0x9E37_79B9_7F4A_7C15;
const FOLD_SEED: u64 = 0xD6E8_FEB8_6659_FD93;

fn fold(a: u64, b: u64) -> u64 {
    let p = a as u128 * b as u128;
    p as u64 ^ (p >> 64) as u64
}

impl Default for FoldHasher {
    fn default() -> FoldHasher {
        FoldHasher(FOLD_SEED)
    }
}

impl Hasher for FoldHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.write_u64(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            let mut w = [0u8; 8];
            w[..tail.len()].copy_from_slice(tail);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(n as u64);
    }
    fn write_u16(&mut self, n: u16) {
        self.write_u64(n as u64);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = fold(self.0 ^ n, FOLD_MUL);
    }
    fn finish(&self) -> u64 {
        fold(self.0, FOLD_SEED)
    }
}
