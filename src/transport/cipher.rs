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
//!
//! Why this file is long: the code ends at about 750 lines; the rest is tests against
//! the protocol reference's vectors and a literal transcription of cipher.md.

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

/// How many datagrams a caller should gather for [`decrypt_many`]: enough that, laid
/// end to end in [`LANE_WIDTH`] lanes (or [`WIDE_LANE_WIDTH`]), every lane gets several
/// and they end together.
pub const LANES: usize = 16 * LANE_WIDTH;

/// Datagrams deciphered side by side by [`decrypt_many`], in 16-bit lanes: two 256-bit
/// registers of AVX2 a step.
pub const LANE_WIDTH: usize = 32;

/// Lanes where the processor has AVX-512: one 512-bit register holds 32, and two a
/// step keep more of its multipliers busy.
pub const WIDE_LANE_WIDTH: usize = 64;

/// Fewer datagrams than this go through the one-at-a-time path: the lane
/// path computes every key-dependent term instead of looking it up, which only pays
/// when it is spread over enough datagrams.
const MIN_LANES: usize = 3;

/// Decrypt bytes 1.. of several game datagrams in place, like [`decrypt`] on each.
///
/// Every keystream byte depends on the plaintext byte before it, so one datagram is a
/// chain of dependent table loads and multiplies that leaves most of the core idle.
/// Independent datagrams have independent chains, so they are stepped side by side in
/// lanes (see [`decrypt_lanes`]), with the widest vector instructions the processor
/// has ([`Path`]). A list too short to fill the lanes goes through the scalar path.
/// The list itself is left in its order.
pub fn decrypt_many(bufs: &mut [&mut [u8]]) {
    if bufs.len() < MIN_LANES {
        for buf in bufs {
            decrypt(buf);
        }
        return;
    }
    SCRATCH.with_borrow_mut(|scratch| {
        #[cfg(target_arch = "x86_64")]
        if in_lanes::<WIDE_LANE_WIDTH>(bufs, scratch, Path::Avx512)
            || in_lanes::<LANE_WIDTH>(bufs, scratch, Path::Avx2)
        {
            return;
        }
        in_lanes::<LANE_WIDTH>(bufs, scratch, Path::Any);
    });
}

/// The instructions the lanes are stepped with, chosen at run time so that the
/// program still runs on any x86-64.
#[derive(Clone, Copy, Debug)]
enum Path {
    /// 512-bit registers (AVX-512 with its 16-bit lane operations).
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// 256-bit registers.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// Whatever [`pulp::Arch`] finds (SSE2 on an x86-64 without AVX2).
    Any,
    /// The baseline instructions, whatever the processor has.
    #[cfg(test)]
    Baseline,
}

/// Runs [`decrypt_lanes`] with `W` lanes on `path`; false, having done nothing, when
/// the processor lacks its instructions.
#[inline(always)]
fn in_lanes<const W: usize>(bufs: &mut [&mut [u8]], scratch: &mut Scratch, path: Path) -> bool {
    match path {
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => match (pulp::x86::V4::try_new(), pulp::x86::V3::try_new()) {
            (Some(wide), Some(simd)) => {
                let turn = Unpack(simd);
                pulp::Simd::vectorize(
                    wide,
                    InLanes::<W, _> {
                        bufs,
                        scratch,
                        turn,
                    },
                );
            }
            _ => return false,
        },
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => match pulp::x86::V3::try_new() {
            Some(simd) => {
                let turn = Unpack(simd);
                pulp::Simd::vectorize(
                    simd,
                    InLanes::<W, _> {
                        bufs,
                        scratch,
                        turn,
                    },
                );
            }
            None => return false,
        },
        Path::Any => {
            let turn = ByteWise;
            pulp::Arch::new().dispatch(InLanes::<W, _> {
                bufs,
                scratch,
                turn,
            });
        }
        #[cfg(test)]
        Path::Baseline => {
            let turn = ByteWise;
            pulp::WithSimd::with_simd(
                InLanes::<W, _> {
                    bufs,
                    scratch,
                    turn,
                },
                pulp::Scalar::new(),
            );
        }
    }
    true
}

/// [`decrypt_lanes`] as a job for [`pulp::Simd::vectorize`], which runs it compiled for
/// the vector instructions of a [`Path`] (AVX2: 16 lanes of 16 bits in one instruction
/// where SSE2 has 8). Everything it calls is inlined into it, so that the lane arrays of
/// [`Lanes::step`] are vectorised with those instructions. `turn` turns blocks of the
/// lanes' text between lane order and step order ([`Turn`]).
struct InLanes<'a, 'b, const W: usize, T> {
    bufs: &'a mut [&'b mut [u8]],
    scratch: &'a mut Scratch,
    turn: T,
}

impl<const W: usize, T: Turn> pulp::WithSimd for InLanes<'_, '_, W, T> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        decrypt_lanes::<W, T>(self.bufs, self.scratch, self.turn);
    }
}

/// Live lanes below which the rest of the lanes' work is deciphered one lane at a
/// time, from each lane's state: a step costs the same however few lanes still have
/// work.
const MIN_LIVE: usize = 4;

/// Steps of a block: the lanes' text is turned into step order, stepped and turned
/// back this many steps at a time (one 16-byte load per lane).
const BLOCK: usize = 16;

/// Buffers of [`decrypt_lanes`], kept from one call to the next on each thread so that
/// a batch allocates and clears nothing.
#[derive(Default)]
struct Scratch {
    /// Lane-major text of the lanes: lane `l`'s run of bodies at `[l * cap..]`, `cap`
    /// the longest lane rounded up to a whole [`BLOCK`].
    text: Vec<u8>,
    /// Step-major, `W` bytes a step, lane `l` at `[t * W + l]`: 0xFF where a datagram
    /// starts in its lane, 0 elsewhere (all 0 between calls).
    fresh: Vec<u8>,
    /// `length << 32 | index` of the datagrams, ordered to place the longest first.
    order: Vec<u64>,
    /// The other half of [`sort_by_length`]'s passes.
    spare: Vec<u64>,
    /// Lane and step where each datagram's body starts.
    place: Vec<(usize, usize)>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Decrypt bytes 1.. of datagrams in place, `W` lanes side by side.
///
/// Each lane deciphers a run of datagrams laid end to end, so that no lane idles while
/// a longer datagram finishes in another: the bodies (bytes 1..) are dealt to the
/// lanes longest first, the deal running back and forth over them (lanes 0..W, then
/// W..0, and so on), so that a lane dealt a longer body in one pass is dealt a shorter
/// one in the next and the lanes end close together. Dealing costs a few instructions
/// a body; giving each body to the least loaded lane (longest processing time first,
/// a heap of the lanes' loads) ended the lanes a little closer but cost far more than
/// the steps it saved (stock capture, 100,000 datagrams: 1.5 % more steps, and the
/// lanes' instructions 0.91×). The bodies are copied whole into their lane's run
/// (lane-major, one copy per body), a step-major array marks the step where each body
/// starts and its lane starts afresh, and [`BLOCK`] steps at a time the block is turned
/// into step order (`W` bytes a step, one per lane), run through [`Lanes::step`] and
/// turned back. Once fewer than [`MIN_LIVE`] lanes have work left, the rest of each
/// goes on one byte at a time from its lane's state. The plaintext is then copied
/// back, one copy per body.
#[inline(always)]
fn decrypt_lanes<const W: usize, T: Turn>(bufs: &mut [&mut [u8]], scratch: &mut Scratch, turn: T) {
    let Scratch {
        text,
        fresh,
        order,
        spare,
        place,
    } = scratch;
    order.clear();
    order.extend(
        bufs.iter()
            .enumerate()
            .filter(|(_, b)| b.len() > 1)
            .map(|(i, b)| (b.len() as u64) << 32 | i as u64),
    );
    sort_by_length(order, spare);
    place.clear();
    place.resize(bufs.len(), (0, 0));
    let mut loads = [0usize; W];
    for (k, &key) in order.iter().rev().enumerate() {
        let (len, i) = ((key >> 32) as usize, (key & 0xFFFF_FFFF) as usize);
        // Even passes deal lanes 0..W, odd ones W..0.
        let (pass, at) = (k / W, k % W);
        let lane = if pass % 2 == 0 { at } else { W - 1 - at };
        place[i] = (lane, loads[lane]);
        loads[lane] += len - 1;
    }
    let longest = loads.iter().copied().max().unwrap_or(0);
    if longest == 0 {
        return;
    }
    // The lanes run while MIN_LIVE of them have work: to the MIN_LIVE-th longest load.
    let mut by_load = loads;
    by_load.sort_unstable_by(|a, b| b.cmp(a));
    let lanes_end = by_load[MIN_LIVE.min(W) - 1];
    let cap = longest.next_multiple_of(BLOCK);
    if text.len() < cap * W {
        text.resize(cap * W, 0);
    }
    if fresh.len() < longest * W {
        fresh.resize(longest * W, 0);
    }
    let text = &mut text[..cap * W];
    let (fresh, _) = fresh[..longest * W].as_chunks_mut::<W>();
    for (buf, &(lane, at)) in bufs.iter().zip(place.iter()) {
        if let Some(body) = buf.get(1..).filter(|b| !b.is_empty()) {
            text[lane * cap + at..][..body.len()].copy_from_slice(body);
            fresh[at][lane] = 0xFF;
        }
    }
    let mut lanes = Lanes::<W>::new();
    let mut rows = [[0u8; W]; BLOCK];
    for start in (0..lanes_end).step_by(BLOCK) {
        // Lane l's bytes of this block are at [l * cap..][..BLOCK] of `block`.
        let block = &mut text[start..];
        turn.to_steps(block, cap, &mut rows);
        let steps = (lanes_end - start).min(BLOCK);
        // The steps give 16-bit lanes, narrowed to bytes a whole block at a time: narrowed
        // inside each step, the program's build extracted them one byte at a time
        // (`vpextrb`, a third of the lanes' time on AVX-512; stats on one core 0.93x).
        let mut plain = [[0u16; W]; BLOCK];
        for ((p, row), mark) in plain[..steps].iter_mut().zip(&rows).zip(&fresh[start..]) {
            *p = lanes.step(row, mark);
        }
        for (row, p) in rows[..steps].iter_mut().zip(&plain) {
            for (b, &x) in row.iter_mut().zip(p) {
                *b = x as u8;
            }
        }
        turn.to_lanes(&rows, block, cap);
    }
    for (l, &load) in loads.iter().enumerate() {
        if load > lanes_end {
            let mut state = lanes.state(l);
            let run = &mut text[l * cap..][lanes_end..load];
            for (b, mark) in run.iter_mut().zip(&fresh[lanes_end..load]) {
                if mark[l] != 0 {
                    state = State::new();
                }
                state.decrypt_byte(b);
            }
        }
    }
    for (buf, &(lane, at)) in bufs.iter_mut().zip(place.iter()) {
        if let Some(body) = buf.get_mut(1..).filter(|b| !b.is_empty()) {
            body.copy_from_slice(&text[lane * cap + at..][..body.len()]);
            fresh[at][lane] = 0;
        }
    }
}

/// Turns a block of [`BLOCK`] steps of `W` lanes between lane order (lane `l`'s bytes
/// at `[l * cap..][..BLOCK]` of a slice) and step order (`rows[t][l]`).
trait Turn: Copy {
    /// `rows[t][l] = lanes[l * cap + t]`.
    fn to_steps<const W: usize>(self, lanes: &[u8], cap: usize, rows: &mut [[u8; W]; BLOCK]);
    /// `lanes[l * cap + t] = rows[t][l]`.
    fn to_lanes<const W: usize>(self, rows: &[[u8; W]; BLOCK], lanes: &mut [u8], cap: usize);
}

/// [`Turn`] one byte at a time: any width, any processor.
#[derive(Clone, Copy)]
struct ByteWise;

impl Turn for ByteWise {
    #[inline(always)]
    fn to_steps<const W: usize>(self, lanes: &[u8], cap: usize, rows: &mut [[u8; W]; BLOCK]) {
        for l in 0..W {
            for (row, &b) in rows.iter_mut().zip(&lanes[l * cap..][..BLOCK]) {
                row[l] = b;
            }
        }
    }

    #[inline(always)]
    fn to_lanes<const W: usize>(self, rows: &[[u8; W]; BLOCK], lanes: &mut [u8], cap: usize) {
        for l in 0..W {
            for (b, row) in lanes[l * cap..][..BLOCK].iter_mut().zip(rows) {
                *b = row[l];
            }
        }
    }
}

/// [`Turn`] for a multiple of 32 lanes with AVX2 byte unpacks (other widths go
/// [`ByteWise`]), 32 lanes at a time: lane `i` and lane `i + 16` share a 256-bit
/// register, one in each 128-bit half, and the unpacks (which work within the halves)
/// transpose both 16 × 16 squares at once, so that each register comes out as one step
/// of those 32 lanes in order. Transposing is
/// its own inverse, so the way back is the same.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Unpack(pulp::x86::V3);

#[cfg(target_arch = "x86_64")]
impl Unpack {
    /// The 16 × 16 byte transpose of each half: row `i` in, column `i` out.
    #[inline(always)]
    fn transpose(self, r: [M256; 16]) -> [M256; 16] {
        let a = self.0.avx2;
        // Bytes: a[p] holds columns 0..8 of rows 2p and 2p + 1 interleaved, a[p + 8]
        // columns 8..16.
        let mut x = r;
        for p in 0..8 {
            x[p] = a._mm256_unpacklo_epi8(r[2 * p], r[2 * p + 1]);
            x[p + 8] = a._mm256_unpackhi_epi8(r[2 * p], r[2 * p + 1]);
        }
        // 16-bit pairs: y[h + q + 4g] holds columns h + 4g..+4 of rows 4q..4q + 4.
        let mut y = x;
        for h in [0, 8] {
            for q in 0..4 {
                y[h + q] = a._mm256_unpacklo_epi16(x[h + 2 * q], x[h + 2 * q + 1]);
                y[h + q + 4] = a._mm256_unpackhi_epi16(x[h + 2 * q], x[h + 2 * q + 1]);
            }
        }
        // 32-bit quads: z[c + m] (c = h + 4g + 2k) holds columns c..c + 2 of rows
        // 8m..8m + 8.
        let mut z = y;
        for c in [0, 4, 8, 12] {
            for m in 0..2 {
                z[c + m] = a._mm256_unpacklo_epi32(y[c + 2 * m], y[c + 2 * m + 1]);
                z[c + 2 + m] = a._mm256_unpackhi_epi32(y[c + 2 * m], y[c + 2 * m + 1]);
            }
        }
        // 64-bit halves: column c of all 16 rows.
        let mut out = z;
        for c in (0..16).step_by(2) {
            out[c] = a._mm256_unpacklo_epi64(z[c], z[c + 1]);
            out[c + 1] = a._mm256_unpackhi_epi64(z[c], z[c + 1]);
        }
        out
    }
}

#[cfg(target_arch = "x86_64")]
type M256 = core::arch::x86_64::__m256i;

#[cfg(target_arch = "x86_64")]
impl Turn for Unpack {
    #[inline(always)]
    fn to_steps<const W: usize>(self, lanes: &[u8], cap: usize, rows: &mut [[u8; W]; BLOCK]) {
        if !W.is_multiple_of(32) {
            return ByteWise.to_steps(lanes, cap, rows);
        }
        for g in (0..W).step_by(32) {
            let r: [M256; 16] = std::array::from_fn(|i| {
                let mut two = [0u8; 32];
                two[..16].copy_from_slice(&lanes[(g + i) * cap..][..16]);
                two[16..].copy_from_slice(&lanes[(g + i + 16) * cap..][..16]);
                pulp::bytemuck::cast(two)
            });
            for (row, v) in rows.iter_mut().zip(self.transpose(r)) {
                row[g..][..32].copy_from_slice(&pulp::bytemuck::cast::<M256, [u8; 32]>(v));
            }
        }
    }

    #[inline(always)]
    fn to_lanes<const W: usize>(self, rows: &[[u8; W]; BLOCK], lanes: &mut [u8], cap: usize) {
        if !W.is_multiple_of(32) {
            return ByteWise.to_lanes(rows, lanes, cap);
        }
        for g in (0..W).step_by(32) {
            let r: [M256; 16] = std::array::from_fn(|t| {
                let mut one = [0u8; 32];
                one.copy_from_slice(&rows[t][g..][..32]);
                pulp::bytemuck::cast(one)
            });
            for (i, v) in self.transpose(r).into_iter().enumerate() {
                let two: [u8; 32] = pulp::bytemuck::cast(v);
                lanes[(g + i) * cap..][..16].copy_from_slice(&two[..16]);
                lanes[(g + i + 16) * cap..][..16].copy_from_slice(&two[16..]);
            }
        }
    }
}

/// Sorts `length << 32 | index` keys as `sort_unstable` would (they are all
/// different), by counting: datagram lengths fit in 16 bits, so one pass of byte counts
/// per length byte (one when every length is under 256) sorts them without a
/// comparison (the lanes' instructions on the shared capture: 0.95×). Each pass is stable
/// and the keys come in index order, so equal lengths stay in index order. Lengths of
/// 64 KiB and more (not a UDP datagram) are compared instead.
fn sort_by_length(order: &mut Vec<u64>, spare: &mut Vec<u64>) {
    let longest = order.iter().map(|k| k >> 32).max().unwrap_or(0);
    if longest > 0xFFFF || !order.is_sorted_by_key(|k| k & 0xFFFF_FFFF) {
        order.sort_unstable();
        return;
    }
    let passes = if longest > 0xFF { 2 } else { 1 };
    for pass in 0..passes {
        let shift = 32 + 8 * pass;
        let mut start = [0usize; 256];
        for &k in order.iter() {
            start[(k >> shift) as usize & 0xFF] += 1;
        }
        let mut at = 0;
        for s in start.iter_mut() {
            (*s, at) = (at, at + *s);
        }
        spare.clear();
        spare.resize(order.len(), 0);
        for &k in order.iter() {
            let byte = (k >> shift) as usize & 0xFF;
            spare[start[byte]] = k;
            start[byte] += 1;
        }
        std::mem::swap(order, spare);
    }
}

/// `W` cipher states in 16-bit lanes.
///
/// Only the low 16 bits of every cipher word reach a keystream byte: the words meet
/// only through wrapping adds, multiplies and XOR, whose low bits never depend on
/// higher ones, and the byte is taken from bits 0..15 of the accumulator. So the lanes
/// hold 16-bit state, `W` of them in arrays, and every step is an operation on whole
/// arrays that the compiler turns into vector instructions (SSE2 multiplies eight
/// 16-bit lanes at once). Looking the key terms up in [`ROUNDS`] would need a gather
/// per lane, so each lane computes them from its folded key byte instead: more
/// multiplies, but all vectorised, and none waiting on a load.
struct Lanes<const W: usize> {
    /// The carried sum `u` of [`State`], low 16 bits.
    u: [u16; W],
    /// The folded key byte in both halves (`fold · 0x0101`).
    key: [u16; W],
}

impl<const W: usize> Lanes<W> {
    fn new() -> Self {
        Lanes {
            u: [0; W],
            key: [0; W],
        }
    }

    /// Lane `l`'s state as the scalar path holds it. Its 16 bits are enough: no bit
    /// above them ever reaches a keystream byte.
    fn state(&self, l: usize) -> State {
        State {
            u: u32::from(self.u[l]),
            fold: self.key[l] as u8,
        }
    }

    /// Decrypts one byte in every lane and feeds the plaintext back; a lane whose
    /// `fresh` byte is non-zero starts afresh first (a new datagram in that lane).
    ///
    /// The rounds of [`round_table`] and [`State::keystream`], lane-wise, with the sum
    /// chained round to round (`sum_r = (sum_{r-1} + r)·MUL_SUM + t2_{r-1} + t2_r`,
    /// `sum_0 = u + t2_0`, and the next `u = sum_4·MUL_SUM + t2_4`): the word chain is
    /// the longest path of a step whatever the sums do, and chaining them costs one
    /// multiply a round instead of two. The keystream byte is formed in both halves of
    /// a lane (`acc` XOR `acc` with its bytes swapped), so that the next key is two XORs
    /// away from it. Returns the plaintext in the low byte of each lane.
    #[inline(always)]
    fn step(&mut self, cipher: &[u8; W], fresh: &[u8; W]) -> [u16; W] {
        const MS: u16 = MUL_SUM as u16;
        const MW: u16 = MUL_WORD as u16;
        // Every line below is one operation on all lanes, so that the compiler's vector
        // instructions for the lane groups alternate and their chains overlap.
        // 0xFFFF where the lane starts afresh, else 0.
        let reset = each(fresh, |f| f as i8 as i16 as u16);
        let key = each2(&self.key, &reset, |k, r| k & !r);
        let u = each2(&self.u, &reset, |u, r| u & !r);
        // Round 0: no previous word and no cross term.
        let w = each(&key, |k| (PAIRS[0] as u16) ^ k);
        let mut upd = each(&w, |w| w.wrapping_mul(MS).wrapping_add(1));
        let mut t2 = each(&w, |w| w.wrapping_mul(MW));
        let mut sum = each2(&u, &t2, u16::wrapping_add);
        let mut acc = each2(&upd, &sum, |a, b| a ^ b);
        for (r, &pair) in PAIRS.iter().enumerate().skip(1) {
            // The chaining uses the previous round's UPDATED word (cipher.md §3).
            let pair = pair as u16;
            let w = each2(&key, &upd, |k, p| (pair ^ k) ^ p);
            upd = each(&w, |w| w.wrapping_mul(MS).wrapping_add(1));
            let t2_r = each(&w, |w| w.wrapping_mul(MW));
            let cross = each2(&t2, &t2_r, |a, b| a.wrapping_add(b));
            sum = each2(&sum, &cross, |s, c| {
                s.wrapping_mul(MS)
                    .wrapping_add((r as u16).wrapping_mul(MS))
                    .wrapping_add(c)
            });
            t2 = t2_r;
            acc = each2(&acc, &each2(&upd, &sum, |a, b| a ^ b), |a, b| a ^ b);
        }
        self.u = each2(&sum, &t2, |s, t| s.wrapping_mul(MS).wrapping_add(t));
        // Both bytes: low ^ high of acc, the keystream byte.
        let ks = each(&acc, |a| a ^ a.rotate_left(8));
        let plain = each2(cipher, &ks, |c, k| (u16::from(c) * 0x0101) ^ k);
        self.key = each2(&key, &plain, |k, p| k ^ p);
        plain
    }
}

/// `f` of every lane: the shape the compiler vectorises.
#[inline(always)]
fn each<A: Copy, B: Copy + Default, const W: usize>(a: &[A; W], f: impl Fn(A) -> B) -> [B; W] {
    let mut out = [B::default(); W];
    for (o, &a) in out.iter_mut().zip(a) {
        *o = f(a);
    }
    out
}

/// `f` of every pair of lanes.
#[inline(always)]
fn each2<A: Copy, B: Copy, C: Copy + Default, const W: usize>(
    a: &[A; W],
    b: &[B; W],
    f: impl Fn(A, B) -> C,
) -> [C; W] {
    let mut out = [C::default(); W];
    for ((o, &a), &b) in out.iter_mut().zip(a).zip(b) {
        *o = f(a, b);
    }
    out
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
        let mut next = xorshift(0x1234_5678);
        for len in 1..300usize {
            let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
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
        let mut next = xorshift(0x9E37_79B9u32);
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
        let mut next = xorshift(0x2545_F491u32);
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

    /// Pseudo-random numbers for the tests' datagrams (xorshift32: reproducible, and
    /// nothing to do with the cipher under test).
    fn xorshift(seed: u32) -> impl FnMut() -> u32 {
        let mut x = seed;
        move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        }
    }

    /// Each datagram enciphered by the literal transcription of cipher.md.
    fn reference_ciphered(plain: &[Vec<u8>]) -> Vec<Vec<u8>> {
        plain
            .iter()
            .map(|p| {
                let mut c = p.clone();
                reference_encrypt(&mut c);
                c
            })
            .collect()
    }

    /// Every [`Path`] this processor has, and the baseline always.
    fn paths() -> Vec<Path> {
        let mut paths = vec![Path::Any, Path::Baseline];
        #[cfg(target_arch = "x86_64")]
        paths.extend([Path::Avx512, Path::Avx2]);
        paths
    }

    /// Runs the lanes `W` wide over `datagrams` on every path the processor has (the
    /// baseline always) and checks each datagram against `want`.
    fn check_width<const W: usize>(datagrams: &[Vec<u8>], want: &[Vec<u8>], what: &str) {
        for path in paths() {
            let mut batch = datagrams.to_vec();
            let mut views: Vec<&mut [u8]> = batch.iter_mut().map(|v| v.as_mut_slice()).collect();
            if SCRATCH.with_borrow_mut(|scratch| in_lanes::<W>(&mut views, scratch, path)) {
                for (i, (got, want)) in batch.iter().zip(want).enumerate() {
                    assert_eq!(got, want, "width {W}, {path:?}, {what}, datagram {i}");
                }
            }
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
        let mut next = xorshift(0x0BAD_5EEDu32 ^ W as u32);
        for round in 0..40 {
            let count = 1 + round % (2 * W + 1);
            let plain: Vec<Vec<u8>> = (0..count)
                .map(|_| {
                    let len = (next() % 400) as usize;
                    (0..len).map(|_| next() as u8).collect()
                })
                .collect();
            let cipher = reference_ciphered(&plain);
            check_width::<W>(&cipher, &plain, &format!("reference round {round}"));
        }
    }

    #[test]
    fn every_lane_width_deciphers_the_vectors() {
        vectors_in_every_lane::<1>();
        vectors_in_every_lane::<4>();
        vectors_in_every_lane::<8>();
        vectors_in_every_lane::<LANE_WIDTH>();
        vectors_in_every_lane::<WIDE_LANE_WIDTH>();
        vectors_in_every_lane::<24>();
        vectors_in_every_lane::<32>();
    }

    #[test]
    fn every_lane_width_matches_the_reference() {
        reference_in_every_lane::<1>();
        reference_in_every_lane::<4>();
        reference_in_every_lane::<8>();
        reference_in_every_lane::<LANE_WIDTH>();
        reference_in_every_lane::<WIDE_LANE_WIDTH>();
        reference_in_every_lane::<24>();
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
        SCRATCH.with_borrow_mut(|s| decrypt_lanes::<LANE_WIDTH, _>(&mut views, s, ByteWise));
        assert!(batch.iter().all(|b| *b == plain));
    }

    /// Lanes refilled with datagrams of very different lengths: one long datagram among
    /// many short ones (its lane runs on alone, then one byte at a time), and batches of
    /// widely spread lengths, so that each lane holds several datagrams that start at
    /// every offset. Each is checked against the literal transcription of cipher.md, and
    /// batches follow each other on one thread, so that marks left from one batch would
    /// show in the next.
    #[test]
    fn refilled_lanes_match_the_reference_whatever_the_lengths() {
        let mut next = xorshift(0x5EED_1E55u32);
        let mut batches: Vec<Vec<usize>> = vec![
            std::iter::once(1400)
                .chain(std::iter::repeat_n(8, LANES - 1))
                .collect(),
            std::iter::repeat_n(2, LANES).collect(),
            (0..LANES)
                .map(|i| if i % 2 == 0 { 3 } else { 300 })
                .collect(),
        ];
        for _ in 0..20 {
            let count = 1 + (next() as usize) % (2 * LANES);
            batches.push((0..count).map(|_| (next() as usize) % 1500).collect());
        }
        for (round, lengths) in batches.iter().enumerate() {
            let plain: Vec<Vec<u8>> = lengths
                .iter()
                .map(|&len| (0..len).map(|_| next() as u8).collect())
                .collect();
            let cipher = reference_ciphered(&plain);
            check_width::<LANE_WIDTH>(&cipher, &plain, &format!("batch {round}"));
            check_width::<WIDE_LANE_WIDTH>(&cipher, &plain, &format!("batch {round}"));
        }
    }

    /// Lane-major blocks of random bytes at a random `cap`, turned to steps and back.
    fn check_turn<T: Turn, const W: usize>(turn: T) {
        let mut next = xorshift(0x7EA5_0001u32 ^ W as u32);
        for round in 0..50 {
            let cap = BLOCK * (1 + round % 4) + (round % 3) * 5;
            let lanes: Vec<u8> = (0..cap * W).map(|_| next() as u8).collect();
            let mut rows = [[0u8; W]; BLOCK];
            turn.to_steps(&lanes, cap, &mut rows);
            for (t, row) in rows.iter().enumerate() {
                for (l, &b) in row.iter().enumerate() {
                    assert_eq!(b, lanes[l * cap + t], "width {W} round {round} step {t}");
                }
            }
            let mut back: Vec<u8> = (0..cap * W).map(|_| next() as u8).collect();
            let mut want = back.clone();
            for l in 0..W {
                want[l * cap..][..BLOCK].copy_from_slice(&lanes[l * cap..][..BLOCK]);
            }
            turn.to_lanes(&rows, &mut back, cap);
            assert!(back == want, "width {W} round {round}: back to lanes");
        }
    }

    #[test]
    fn turning_blocks_is_a_transpose() {
        check_turn::<_, 1>(ByteWise);
        check_turn::<_, 8>(ByteWise);
        check_turn::<_, 24>(ByteWise);
        check_turn::<_, LANE_WIDTH>(ByteWise);
        check_turn::<_, WIDE_LANE_WIDTH>(ByteWise);
    }

    /// The unpacks of AVX2 against the definition, where the processor has AVX2 (on
    /// one without, no code path reaches them).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn unpacked_blocks_are_a_transpose() {
        if let Some(simd) = pulp::x86::V3::try_new() {
            check_turn::<_, LANE_WIDTH>(Unpack(simd));
            check_turn::<_, WIDE_LANE_WIDTH>(Unpack(simd));
            check_turn::<_, 8>(Unpack(simd));
        }
    }

    /// Counting sorts against `sort_unstable`: lengths under 256 (one pass), under
    /// 64 KiB (two), beyond (compared), and keys not in index order (compared).
    #[test]
    fn sorting_by_length_equals_sort_unstable() {
        let mut next = xorshift(0x50_27ED);
        let mut spare = Vec::new();
        for (round, top) in [1u32, 2, 255, 256, 1500, 65_535, 65_536, 1 << 20]
            .into_iter()
            .enumerate()
        {
            for count in [0usize, 1, 2, 7, 300, 600] {
                let mut keys: Vec<u64> = (0..count)
                    .map(|i| u64::from(next() % (top + 1)) << 32 | i as u64)
                    .collect();
                if round % 2 == 1 {
                    keys.reverse();
                }
                let mut want = keys.clone();
                want.sort_unstable();
                sort_by_length(&mut keys, &mut spare);
                assert_eq!(keys, want, "lengths up to {top}, {count} keys");
            }
        }
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
