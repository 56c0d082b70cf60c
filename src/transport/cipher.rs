//! The AlbyRules! stream cipher (`cipher.md`).
//!
//! Byte 0 (the sender's peer id) is sent in clear; bytes 1.. are enciphered with a state
//! that starts afresh for every datagram. Works in place and never allocates.
//!
//! Speed: the key `K[0..9]` only ever changes by XOR-ing the same plaintext byte into
//! all ten bytes, so `K[j] = AlbyRules![j] ^ x` where `x` is the XOR of all plaintext
//! bytes so far. Each 16-bit key pair is therefore a constant XOR `x * 0x0101`, and the
//! whole key state is one byte: everything that depends on the key alone is a table
//! indexed by that byte, and only the running sum is computed per byte.

/// The initial key, `AlbyRules!`.
pub const KEY: [u8; 10] = *b"AlbyRules!";

/// Key pairs `K[2r]·256 + K[2r+1]` of the initial key, one per round.
const PAIRS: [u32; 5] = pair_table();

const MUL_SUM: u32 = 0x4E35;
const MUL_WORD: u32 = 0x015A;

const fn pair_table() -> [u32; 5] {
    let mut t = [0u32; 5];
    let mut r = 0;
    while r < 5 {
        t[r] = ((KEY[2 * r] as u32) << 8) | KEY[2 * r + 1] as u32;
        r += 1;
    }
    t
}

/// First byte of GameSpy QR text datagrams, which are never enciphered.
pub const GAMESPY_MARK: u8 = b'\\';

/// `MUL_SUM` to the powers 0..=5 (wrapping).
const POW: [u32; 6] = {
    let mut p = [1u32; 6];
    let mut k = 1;
    while k < 6 {
        p[k] = p[k - 1].wrapping_mul(MUL_SUM);
        k += 1;
    }
    p
};

/// What the key contributes to a keystream byte, per value of the folded key byte.
///
/// Round r computes `sum_r = cross + (sum_{r-1} + r)·MUL_SUM + t2_r` with
/// `t2_r = word_r·MUL_WORD` and `cross = t2_{r-1}` (the previous byte's `t2_4` in
/// round 0). The word chain starts from 0 in every byte, so the words depend on the
/// folded key alone; unrolled, `sum_r = s·MUL_SUM^(r+1) + c·MUL_SUM^r + D_r` where `s`
/// and `c` are the previous byte's last sum and `t2_4`. Writing `u = s·MUL_SUM + c`
/// gives `sum_r = u·MUL_SUM^r + D_r`, and the next byte's `u` is
/// `u·MUL_SUM^5 + (D_4·MUL_SUM + t2_4)`: the whole carried state is `u` and the key
/// byte. Entries 0..5 are `D_r`, entry 5 is `D_4·MUL_SUM + t2_4` and entry 6 the XOR of
/// the five updated words. The five sums are independent of each other, so a byte
/// costs four multiplies in parallel instead of a chain of five rounds.
const ROUNDS: [[u32; 8]; 256] = round_table();

const fn round_table() -> [[u32; 8]; 256] {
    // Eight entries (the last unused) make a row 32 bytes: one shift to index it.
    let mut t = [[0u32; 8]; 256];
    let mut f = 0;
    while f < 256 {
        let fold = (f as u32) * 0x0101;
        let mut word_prev = 0u32;
        let mut updated_xor = 0u32;
        let mut t2_prev = 0u32;
        let mut d_prev = 0u32;
        let mut r = 0;
        while r < 5 {
            // The chaining uses the previous round's UPDATED word (cipher.md §3).
            let word = (PAIRS[r] ^ fold) ^ word_prev;
            let updated = word.wrapping_mul(MUL_SUM).wrapping_add(1);
            let t2 = word.wrapping_mul(MUL_WORD);
            let d = if r == 0 {
                t2
            } else {
                t2_prev
                    .wrapping_add(d_prev.wrapping_add(r as u32).wrapping_mul(MUL_SUM))
                    .wrapping_add(t2)
            };
            t[f][r] = d;
            d_prev = d;
            t2_prev = t2;
            updated_xor ^= updated;
            word_prev = updated;
            r += 1;
        }
        t[f][5] = d_prev.wrapping_mul(MUL_SUM).wrapping_add(t2_prev);
        t[f][6] = updated_xor;
        f += 1;
    }
    t
}

/// Per-datagram cipher state (`cipher.md` §2) with the key folded into one byte and
/// the running sum and cross term folded into `u` (see [`ROUNDS`]).
#[derive(Clone, Copy)]
struct State {
    u: u32,
    /// XOR of every plaintext byte fed back so far.
    fold: u8,
}

impl State {
    const fn new() -> State {
        State { u: 0, fold: 0 }
    }

    /// One keystream byte (`cipher.md` §3): five chained rounds, unrolled.
    #[inline(always)]
    fn keystream(&mut self) -> u8 {
        let t = &ROUNDS[self.fold as usize];
        let u = self.u;
        let acc = t[6]
            ^ u.wrapping_add(t[0])
            ^ u.wrapping_mul(POW[1]).wrapping_add(t[1])
            ^ u.wrapping_mul(POW[2]).wrapping_add(t[2])
            ^ u.wrapping_mul(POW[3]).wrapping_add(t[3])
            ^ u.wrapping_mul(POW[4]).wrapping_add(t[4]);
        self.u = u.wrapping_mul(POW[5]).wrapping_add(t[5]);
        (acc ^ (acc >> 8)) as u8
    }

    /// Decrypts one byte and feeds its plaintext back into the key.
    #[inline(always)]
    fn decrypt_byte(&mut self, b: &mut u8) {
        let plain = *b ^ self.keystream();
        *b = plain;
        self.fold ^= plain;
    }
}

/// How many datagrams a caller should gather for [`decrypt_many`]: enough that, once
/// ordered by length, each group of [`LANE_WIDTH`] neighbours is close in length.
pub const LANES: usize = 8 * LANE_WIDTH;

/// Datagrams deciphered side by side by [`decrypt_many`]: two SSE2 registers of 16-bit
/// lanes, two independent chains of vector instructions. On the shared capture's
/// datagrams (criterion, `cipher/decrypt_capture_many`) 8 lanes ran at 0.74× the speed
/// of 16 and 32 lanes at 0.96×: wider groups pad more of their shorter datagrams.
pub const LANE_WIDTH: usize = 16;

/// Fewer datagrams than this go through the one-at-a-time path: the lane
/// path computes every key-dependent term instead of looking it up, which only pays
/// when it is spread over enough datagrams.
const MIN_LANES: usize = 3;

/// Decrypt bytes 1.. of several game datagrams in place, like [`decrypt`] on each.
///
/// Every keystream byte depends on the plaintext byte before it, so one datagram is a
/// chain of dependent table loads and multiplies that leaves most of the core idle.
/// Independent datagrams have independent chains, so they are stepped side by side in
/// [`LANE_WIDTH`] lanes (see [`decrypt_lanes`]); the list is first ordered by length so
/// that the datagrams stepped together end together. A list too short to fill the
/// lanes goes through the scalar path.
pub fn decrypt_many(bufs: &mut [&mut [u8]]) {
    bufs.sort_unstable_by_key(|b| b.len());
    decrypt_many_with::<LANE_WIDTH>(bufs);
}

/// [`decrypt_many`] with a chosen lane width (the tests run every width).
fn decrypt_many_with<const W: usize>(bufs: &mut [&mut [u8]]) {
    if bufs.len() >= MIN_LANES.min(W) {
        decrypt_lanes::<W>(bufs);
    } else {
        for buf in bufs {
            decrypt(buf);
        }
    }
}

/// Decrypt bytes 1.. of datagrams in place, `W` at a time, one lane each.
///
/// Only the low 16 bits of every cipher word reach a keystream byte: the words meet
/// only through wrapping adds, multiplies and XOR, whose low bits never depend on
/// higher ones, and the byte is taken from bits 0..15 of the accumulator. So the lanes
/// hold 16-bit state, `W` of them in arrays, and every step is an operation on whole
/// arrays that the compiler turns into vector instructions (SSE2 multiplies eight
/// 16-bit lanes at once). Looking the key terms up in [`ROUNDS`] would need a gather
/// per lane, so each lane computes them from its folded key byte instead: more
/// multiplies, but all vectorised, and none waiting on a load.
///
/// The caller ordered the list by length, so each group of `W` neighbours has nearly
/// the same length: a group runs together from byte 1 while at least [`MIN_LIVE`] of
/// its datagrams have bytes left, [`BLOCK`] bytes at a time moved into lane-major order
/// and back, and the longer ones then finish one at a time from their lane's state. A
/// lane whose datagram ended runs on whatever its column holds, and its results are
/// dropped. (Refilling a lane as soon as its datagram ends wastes no steps, but it cuts
/// the runs between refills to a few bytes, and the bookkeeping of every lane at
/// every cut cost more than the steps it saved.)
fn decrypt_lanes<const W: usize>(bufs: &mut [&mut [u8]]) {
    let mut block = [[0u16; W]; BLOCK];
    for group in bufs.chunks_mut(W) {
        if group.len() < MIN_LANES.min(W) {
            for buf in group.iter_mut() {
                decrypt(buf);
            }
            continue;
        }
        // The lanes run while at least MIN_LIVE of them have bytes left: to the end of
        // the MIN_LIVE-th longest datagram. The longer ones then go on one at a time.
        let mut lens = [0usize; W];
        for (len, buf) in lens.iter_mut().zip(group.iter()) {
            *len = buf.len();
        }
        let lens = &mut lens[..group.len()];
        lens.sort_unstable_by(|a, b| b.cmp(a));
        let lanes_end = lens[MIN_LIVE.min(lens.len()) - 1];
        let mut lanes = Lanes::<W>::new();
        // Byte 0 is the clear peer id.
        let mut start = 1;
        while start < lanes_end {
            let run = BLOCK.min(lanes_end - start);
            for (l, buf) in group.iter().enumerate() {
                let bytes = buf.get(start..).unwrap_or_default();
                for (row, &byte) in block[..run].iter_mut().zip(bytes) {
                    row[l] = u16::from(byte);
                }
            }
            for row in &mut block[..run] {
                *row = lanes.step(row);
            }
            for (l, buf) in group.iter_mut().enumerate() {
                let bytes = buf.get_mut(start..).unwrap_or_default();
                for (row, out) in block[..run].iter().zip(bytes) {
                    *out = row[l] as u8;
                }
            }
            start += run;
        }
        for (l, buf) in group.iter_mut().enumerate() {
            if let Some(rest) = buf.get_mut(start..) {
                let mut state = lanes.state(l);
                for b in rest {
                    state.decrypt_byte(b);
                }
            }
        }
    }
}

/// Live lanes below which the rest of a group is deciphered one datagram at a time: a
/// step of 16 lanes costs about as much as four bytes of the scalar path (criterion,
/// `cipher/decrypt_256x_many` against `cipher/decrypt_256x_one_by_one`).
const MIN_LIVE: usize = 4;

/// Bytes per lane moved into lane-major order at a time by [`decrypt_lanes`].
const BLOCK: usize = 64;

/// `W` cipher states in 16-bit lanes (see [`decrypt_lanes`]).
struct Lanes<const W: usize> {
    /// The carried sum `u` of [`State`], low 16 bits.
    u: [u16; W],
    /// The folded key byte in both halves (`fold · 0x0101`).
    key: [u16; W],
}

/// `out[l] = f(a[l], b[l])` for every lane: the shape the compiler vectorises.
#[inline(always)]
fn lanewise<const W: usize>(a: &[u16; W], b: &[u16; W], f: impl Fn(u16, u16) -> u16) -> [u16; W] {
    let mut out = [0u16; W];
    for l in 0..W {
        out[l] = f(a[l], b[l]);
    }
    out
}

impl<const W: usize> Lanes<W> {
    fn new() -> Self {
        Lanes {
            u: [0; W],
            key: [0; W],
        }
    }

    /// Lane `l`'s state as the scalar path holds it. Its 16 bits are enough: no bit
    /// above them ever reaches a keystream byte (see [`decrypt_lanes`]).
    fn state(&self, l: usize) -> State {
        State {
            u: u32::from(self.u[l]),
            fold: self.key[l] as u8,
        }
    }

    /// Decrypts one byte in every lane (byte values in the low 8 bits) and feeds the
    /// plaintext back: the rounds of [`round_table`] and [`State::keystream`], lane-wise.
    #[inline(always)]
    fn step(&mut self, cipher: &[u16; W]) -> [u16; W] {
        const MS: u16 = MUL_SUM as u16;
        const MW: u16 = MUL_WORD as u16;
        let key = self.key;
        let u = self.u;
        // Round 0: no previous word and no cross term.
        let w = lanewise(&key, &key, |k, _| (PAIRS[0] as u16) ^ k);
        let mut upd = lanewise(&w, &w, |w, _| w.wrapping_mul(MS).wrapping_add(1));
        let mut t2 = lanewise(&w, &w, |w, _| w.wrapping_mul(MW));
        let mut d = t2;
        let mut acc = lanewise(&upd, &lanewise(&u, &d, u16::wrapping_add), |a, b| a ^ b);
        for r in 1..5 {
            // The chaining uses the previous round's UPDATED word (cipher.md §3).
            let pair = PAIRS[r] as u16;
            let w = lanewise(&key, &upd, |k, p| pair ^ k ^ p);
            upd = lanewise(&w, &w, |w, _| w.wrapping_mul(MS).wrapping_add(1));
            let t2_r = lanewise(&w, &w, |w, _| w.wrapping_mul(MW));
            let carried = lanewise(&d, &t2, |d, t2| {
                t2.wrapping_add(d.wrapping_add(r as u16).wrapping_mul(MS))
            });
            d = lanewise(&carried, &t2_r, u16::wrapping_add);
            t2 = t2_r;
            let pow = POW[r] as u16;
            let sum = lanewise(&u, &d, |u, d| u.wrapping_mul(pow).wrapping_add(d));
            acc = lanewise(&acc, &lanewise(&upd, &sum, |a, b| a ^ b), |a, b| a ^ b);
        }
        let carry = lanewise(&d, &t2, |d, t2| d.wrapping_mul(MS).wrapping_add(t2));
        self.u = lanewise(&u, &carry, |u, c| {
            u.wrapping_mul(POW[5] as u16).wrapping_add(c)
        });
        let ks = lanewise(&acc, &acc, |a, _| (a ^ (a >> 8)) & 0xFF);
        let plain = lanewise(cipher, &ks, |c, k| (c ^ k) & 0xFF);
        self.key = lanewise(&key, &plain, |k, p| k ^ (p * 0x0101));
        plain
    }
}

/// Decrypt bytes 1.. of a game datagram in place. Byte 0 is left alone. Does not look
/// at the first byte: use [`decrypt_datagram`] to leave GameSpy text untouched.
pub fn decrypt(buf: &mut [u8]) {
    let mut st = State::new();
    if let Some((_, body)) = buf.split_first_mut() {
        for b in body {
            st.decrypt_byte(b);
        }
    }
}

/// Encrypt bytes 1.. of a game datagram in place. Byte 0 is left alone.
pub fn encrypt(buf: &mut [u8]) {
    let mut st = State::new();
    if let Some((_, body)) = buf.split_first_mut() {
        for b in body {
            let plain = *b;
            *b = plain ^ st.keystream();
            st.fold ^= plain;
        }
    }
}

/// What a UDP payload on the game port is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatagramKind {
    /// GameSpy QR text (first byte `\`), never enciphered.
    GameSpy,
    /// A game packet (`[peer id][msg count][messages]` once decrypted).
    Game,
    /// Zero bytes.
    Empty,
}

/// Classify a UDP payload without touching it.
pub fn classify(buf: &[u8]) -> DatagramKind {
    match buf.first() {
        None => DatagramKind::Empty,
        Some(&GAMESPY_MARK) => DatagramKind::GameSpy,
        Some(_) => DatagramKind::Game,
    }
}

/// Decrypt a captured UDP payload in place unless it is GameSpy text (cipher.md §6).
pub fn decrypt_datagram(buf: &mut [u8]) -> DatagramKind {
    let kind = classify(buf);
    if kind == DatagramKind::Game {
        decrypt(buf);
    }
    kind
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|h| u8::from_str_radix(h, 16).unwrap())
            .collect()
    }

    /// The 11 vectors of cipher.md §7, byte for byte.
    const VECTORS: [(&str, &str, &str); 11] = [
        (
            "V1",
            "01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
            "01 D6 FE 17 F1 86 49 BC 51 A5 0F 17 6C 96 16 5B 52",
        ),
        ("V2", "02 00", "02 D6"),
        ("V3", "02 01 01 07 00 00", "02 D7 31 7D E7 1B"),
        ("V4", "01 01 01 02 01 01 02", "01 D7 31 78 DA 9C 9E"),
        (
            "V5",
            "02 01 32 2A 00 1C FF FF FF 3F 00 80 E1 41 9D 00 00 B0 42 00 00 84 C2 00
                00 92 C2 21 37 FB 0B 68 46 30 BB 5E 00 00 01 CC 02 CC 04 CC",
            "02 D7 02 F9 73 98 00 21 FB 93 E9 C3 1D 2B CE 3F 95 AE 3C C3 71 A7 72 09
                62 35 94 4C 5B C8 17 1D 66 E2 ED 2A 6B 5F FA 97 A0 29 9D 35",
        ),
        (
            "V6",
            "01 01 32 1A 80 23 01 2C 02 00 00 00 0E 00 68 65 6C 6C 6F 2C 20 63 61 70
                74 61 69 6E",
            "01 D7 02 C9 D8 ED EE 2A 69 38 89 D3 54 6A 37 4F 4C C4 D3 B5 46 19 DB FE
                07 F3 4C FB",
        ),
        (
            "V7",
            "FF 01 03 0F C0 00 00 C0 A8 01 14 D4 31 00 00 00 00",
            "FF D7 33 61 38 B3 5B 8C 1F 20 3C 1B 76 BD 22 B7 68",
        ),
        (
            "V8",
            "02 01 00 18 C0 01 00 02 C0 A8 01 14 50 00 69 00 63 00 61 00 72 00 64 00
                00 00",
            "02 D7 30 1D 7F B2 8E F0 89 0C AC 4B 01 4B FD BF C3 45 37 61 14 5E 7F 37
                66 D4",
        ),
        ("V9", V9_PLAIN, V9_CIPHER),
        (
            "V10",
            "02 01 32 2F A0 11 00 00 04 21 02 03 0A 11 18 1F 26 2D 34 3B 42 49 50 57
                 5E 65 6C 73 7A 81 88 8F 96 9D A4 AB B2 B9 C0 C7 CE D5 DC E3 EA F1 F8 FF
                 06",
            "02 D7 02 FC D6 62 B0 D2 92 C7 C8 9D 9B BC E0 53 DC A5 36 34 CD 59 DF C1
                 40 9C 2D A8 88 6D 4F 67 B6 E6 DB 88 96 84 2E 4A E5 8C F3 81 A2 EB 97 54
                 03",
        ),
        (
            "V11",
            "01 FF FF FF FF FF FF FF FF FF FF FF FF",
            "01 29 97 5E 7E BC 14 14 8B 83 1A 29 F2",
        ),
    ];

    const V9_PLAIN: &str = "
02 01 32 2E 81 03 00 21 03 78 56 34 12 24 00 B9 79 37 9E ED 88 72 A9 72
F3 6E 3C 58 53 5E 2F 2B 6D A6 DA C3 1D 4A B5 E4 E6 DD 78 2E E8 35 3B 9D
60 15 17 99 B2 21 C1 56 DA 4C B5 04 7D 0D 47 0F 54 84 53 6F 47 F9 CC C8
CD BB F1 DA 11 E5 52 81 47 F3 8F 45 DC D0 D8 3A C1 2A 2E B0 A6 BC 5E F3
3A 62 CC 1B 71 A8 E4 AC B4 99 6A 86 3B 94 6A 65 2E D1 08 F1 05 80 F0 1E
A8 08 A7 5C D0 6B 76 D7 21 40 45 C7 9A 57 FC 90 9B 77 E3 32 65 43 82 49
15 AF 81 9D 2F 2F 08 02 8F E6 1F 08 FA 1A 8E BB 08 1E BE 73 C4 06 14 74
82 55 5C DE 8E F2 99 2D FC 8C FA 49 59 DE 1F E6 75 C4 98 B4 23 CA A5 9F
EF FB 36 1F EE B5 2B 58 69 33 D5 8A B8 A1 B1 11 E3 6A 73 F5 82 8D 37 CA
5C A2 11 60 4D 79 BD 83 D6 D9 AF CB 17 65 43 3C 50 11 4E 36 E2 50 C9 F5
C9 48 EC A1 AC 3C 4F AE 43 80 8A 0C 77 28 D5 67 BD B7 28 77 41 14 5B 20
37 EF C6 E2 0B 00 E1 D9 B0 26 65 4D D6 EB 66 92 2A 5E 03 B8 A0 D7 EC 4B
A4 95 A1 23 6B C3 72 04 1E CD 3F 8E 35 AF F8 00";

    const V9_CIPHER: &str = "
02 D7 02 FD 94 59 C1 B8 6C 4E EF 61 08 3A 03 9F 9F DD 70 1A E3 27 8C C5
AA 4A CD 50 3E 58 A2 82 A7 40 76 6D B5 FF A6 EB 54 66 DE A5 EF 07 D4 D2
33 3B 1E 21 0D E9 21 C6 35 EC 98 13 21 F7 64 77 38 03 47 C9 26 6C 5E 1D
ED 1E C2 AF 40 23 95 82 8D 00 6F 45 77 59 2B 0E CE B3 18 7D 6C 58 66 5C
9D DE 07 9C 88 6E E2 94 5C 97 8B 7F 26 39 42 B2 12 D1 E3 7C 7C 61 D6 BB
A8 AE DC CF 77 02 03 E5 38 03 A6 AF C7 1B FA 1E 05 13 D7 83 E0 53 47 C9
B9 6C 84 D7 EC 7D 28 06 1A B9 BA 39 25 6A 36 D2 3A CA BD F8 3B BB 1E DE
2D 45 69 E2 3A 58 0E E4 34 60 87 D3 32 28 A9 D6 C7 EF D4 97 F2 79 28 BD
63 4B BD 92 46 3C C5 6B 9A B8 6D 6D 2B CB 95 83 A8 90 85 F9 87 CF FC FA
CC A3 C2 C2 D7 54 F7 38 6E E3 F3 02 71 09 B3 89 16 0E EB B5 96 14 9C BA
00 6E 5E 30 FA A1 78 8E DA 86 B7 4D BB D3 19 6D 14 07 2A 60 DD 38 6C D4
21 9C 0B 55 07 6F 8A 8C FA D0 68 07 76 05 90 93 DB C8 51 BA AF 19 A4 A1
24 AA 9E 8F 94 65 78 39 95 B4 54 8A 12 0A 67 33";

    #[test]
    fn vectors_encrypt_and_decrypt() {
        for (id, plain, cipher) in VECTORS {
            let plain = hex(plain);
            let cipher = hex(cipher);
            assert_eq!(plain.len(), cipher.len(), "{id} lengths");
            let mut buf = plain.clone();
            encrypt(&mut buf);
            assert_eq!(buf, cipher, "{id} encrypt");
            decrypt(&mut buf);
            assert_eq!(buf, plain, "{id} decrypt");
        }
    }

    #[test]
    fn v9_is_304_bytes() {
        assert_eq!(hex(V9_PLAIN).len(), 304);
    }

    /// A direct transcription of cipher.md §3–4 with the ten-byte key array, to check
    /// the folded-key fast path against the spec on many inputs.
    fn reference_encrypt(buf: &mut [u8]) {
        let mut k = KEY;
        let (mut s, mut a) = (0u32, 0u32);
        for b in buf.iter_mut().skip(1) {
            let mut w_prev = 0u32;
            let mut acc = 0u32;
            for r in 0..5u32 {
                let p = u32::from(k[2 * r as usize]) * 256 + u32::from(k[2 * r as usize + 1]);
                let w = if r == 0 { p } else { p ^ w_prev };
                let t1 = s.wrapping_add(r).wrapping_mul(0x4E35);
                let t2 = w.wrapping_mul(0x015A);
                s = a.wrapping_add(t1).wrapping_add(t2);
                a = t2;
                let w2 = w.wrapping_mul(0x4E35).wrapping_add(1);
                acc ^= s ^ w2;
                w_prev = w2;
            }
            let ks = ((acc & 0xFF) ^ ((acc >> 8) & 0xFF)) as u8;
            let p = *b;
            *b = p ^ ks;
            for kj in k.iter_mut() {
                *kj ^= p;
            }
        }
    }

    #[test]
    fn fast_path_matches_reference_on_pseudo_random_datagrams() {
        let mut x = 0x1234_5678u32;
        for len in 1..300usize {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect();
            let mut fast = data.clone();
            let mut slow = data.clone();
            encrypt(&mut fast);
            reference_encrypt(&mut slow);
            assert_eq!(fast, slow, "len {len}");
            decrypt(&mut fast);
            assert_eq!(fast, data, "len {len}");
        }
    }

    #[test]
    fn many_at_once_equals_one_by_one() {
        let mut x = 0x9E37_79B9u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        // Odd and even counts, lengths 0..=70, so that common parts, tails, the
        // reordering and one-byte datagrams all occur.
        for count in 0..=(3 * LANES + 3) {
            let originals: Vec<Vec<u8>> = (0..count)
                .map(|_| {
                    let len = (next() % 71) as usize;
                    (0..len).map(|_| next() as u8).collect()
                })
                .collect();
            let mut batch = originals.clone();
            let mut views: Vec<&mut [u8]> = batch.iter_mut().map(|v| v.as_mut_slice()).collect();
            decrypt_many(&mut views);
            for (i, (got, orig)) in batch.iter().zip(&originals).enumerate() {
                let mut one = orig.clone();
                decrypt(&mut one);
                assert_eq!(got, &one, "count {count} datagram {i}");
            }
        }
    }

    /// The lane path against the scalar path on random batches: random counts (a
    /// few datagrams to several batches' worth), random lengths from empty to a full
    /// Ethernet payload with many short ones, random bytes.
    #[test]
    fn lanes_match_the_scalar_path_on_random_batches() {
        let mut x = 0x2545_F491u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for round in 0..300 {
            let count = (next() % (3 * LANES as u32 + 1)) as usize;
            let batch: Vec<Vec<u8>> = (0..count)
                .map(|_| {
                    let len = match next() % 8 {
                        0 => next() % 1473,
                        1 | 2 => next() % 200,
                        _ => next() % 24,
                    } as usize;
                    (0..len).map(|_| next() as u8).collect()
                })
                .collect();
            let mut lanes = batch.clone();
            let mut views: Vec<&mut [u8]> = lanes.iter_mut().map(|v| v.as_mut_slice()).collect();
            decrypt_many(&mut views);
            // decrypt_many orders its list by length: compare as multisets of pairs.
            let mut got: Vec<Vec<u8>> = views.iter().map(|v| v.to_vec()).collect();
            let mut want: Vec<Vec<u8>> = batch
                .iter()
                .map(|d| {
                    let mut one = d.clone();
                    decrypt(&mut one);
                    one
                })
                .collect();
            got.sort();
            want.sort();
            assert!(got == want, "round {round}: {count} datagrams");
            // In place: every buffer holds its own datagram's plaintext.
            for (d, plain) in batch.iter().zip(&lanes) {
                let mut one = d.clone();
                decrypt(&mut one);
                assert!(
                    &one == plain,
                    "round {round}: a buffer holds another's text"
                );
            }
        }
    }

    /// Runs `decrypt_many_with::<W>` over `datagrams` and checks each against `want`.
    fn check_width<const W: usize>(datagrams: &[Vec<u8>], want: &[Vec<u8>], what: &str) {
        let mut batch = datagrams.to_vec();
        let mut views: Vec<&mut [u8]> = batch.iter_mut().map(|v| v.as_mut_slice()).collect();
        decrypt_many_with::<W>(&mut views);
        for (i, (got, want)) in batch.iter().zip(want).enumerate() {
            assert_eq!(got, want, "width {W}, {what}, datagram {i}");
        }
    }

    /// The 11 vectors of cipher.md §7 in every lane of every lane width: each vector's
    /// ciphertext sits at each position of a full group, the other lanes holding the
    /// other vectors, so that lanes longer and shorter than it run beside it.
    fn vectors_in_every_lane<const W: usize>() {
        let plain: Vec<Vec<u8>> = VECTORS.iter().map(|v| hex(v.1)).collect();
        let cipher: Vec<Vec<u8>> = VECTORS.iter().map(|v| hex(v.2)).collect();
        for shift in 0..W.max(VECTORS.len()) {
            let pick = |k: usize| (k + shift) % VECTORS.len();
            let ins: Vec<Vec<u8>> = (0..W).map(|k| cipher[pick(k)].clone()).collect();
            let want: Vec<Vec<u8>> = (0..W).map(|k| plain[pick(k)].clone()).collect();
            check_width::<W>(&ins, &want, &format!("vectors shifted by {shift}"));
            // A group with fewer datagrams than lanes leaves lanes empty.
            let part = (shift % W) + 1;
            check_width::<W>(&ins[..part], &want[..part], "part of a group");
        }
    }

    /// The lane path against the literal transcription of cipher.md §3–4.
    fn reference_in_every_lane<const W: usize>() {
        let mut x = 0x0BAD_5EEDu32 ^ W as u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for round in 0..40 {
            let count = 1 + round % (2 * W + 1);
            let plain: Vec<Vec<u8>> = (0..count)
                .map(|_| {
                    let len = (next() % 400) as usize;
                    (0..len).map(|_| next() as u8).collect()
                })
                .collect();
            let cipher: Vec<Vec<u8>> = plain
                .iter()
                .map(|p| {
                    let mut c = p.clone();
                    reference_encrypt(&mut c);
                    c
                })
                .collect();
            check_width::<W>(&cipher, &plain, &format!("reference round {round}"));
        }
    }

    #[test]
    fn every_lane_width_deciphers_the_vectors() {
        vectors_in_every_lane::<1>();
        vectors_in_every_lane::<2>();
        vectors_in_every_lane::<4>();
        vectors_in_every_lane::<8>();
        vectors_in_every_lane::<LANE_WIDTH>();
        vectors_in_every_lane::<32>();
    }

    #[test]
    fn every_lane_width_matches_the_reference() {
        reference_in_every_lane::<1>();
        reference_in_every_lane::<2>();
        reference_in_every_lane::<4>();
        reference_in_every_lane::<8>();
        reference_in_every_lane::<LANE_WIDTH>();
        reference_in_every_lane::<32>();
    }

    #[test]
    fn the_lane_path_runs_for_full_groups() {
        // A group at least MIN_LANES wide goes through decrypt_lanes, not the scalar
        // path: check that path directly on a known vector, every lane of it.
        let plain = hex(VECTORS[4].1);
        let cipher = hex(VECTORS[4].2);
        let mut batch = vec![cipher; LANE_WIDTH];
        let mut views: Vec<&mut [u8]> = batch.iter_mut().map(|v| v.as_mut_slice()).collect();
        decrypt_lanes::<LANE_WIDTH>(&mut views);
        assert!(batch.iter().all(|b| *b == plain));
    }

    #[test]
    fn first_keystream_intermediates() {
        // cipher.md §5: first keystream byte is 0xD6, so byte 0 is skipped, not lucky.
        // The state carried to byte 2 is u = sum·MUL_SUM + cross of those values.
        let mut st = State::new();
        assert_eq!(st.keystream(), 0xD6);
        let (sum, cross) = (0xF132_7582u32, 0x2A60_4A08u32);
        assert_eq!(st.u, sum.wrapping_mul(MUL_SUM).wrapping_add(cross));
    }

    #[test]
    fn gamespy_text_is_left_alone() {
        let mut buf = b"\\status\\".to_vec();
        assert_eq!(decrypt_datagram(&mut buf), DatagramKind::GameSpy);
        assert_eq!(buf, b"\\status\\");
        let mut game = hex("02 00");
        assert_eq!(decrypt_datagram(&mut game), DatagramKind::Game);
        // Decrypting a zero byte yields the first keystream byte.
        assert_eq!(game, [0x02, 0xD6]);
        let mut empty: Vec<u8> = Vec::new();
        assert_eq!(decrypt_datagram(&mut empty), DatagramKind::Empty);
        let mut one = vec![0x01];
        decrypt(&mut one);
        assert_eq!(one, [0x01]);
    }
}
