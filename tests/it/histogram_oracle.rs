//! The StateUpdate histograms of `bcwire stats` (`dirty_flags`, `dirty_bits`,
//! `subsystem_start`, per direction) checked key by key against a second, minimal reader
//! written here from the protocol reference alone: pcapng frames → Ethernet/loopback/raw
//! IPv4 → UDP to or from port 22101 → the AlbyRules! cipher (cipher.md) → the packet
//! header and transport messages (README §3–5: ACK, low types, 0x32 with its reliable
//! and fragment headers) → the StateUpdate header, movement fields and packed bits
//! (stateupdate.md §1–4, primitives.md §2). No bcwire decoder is called; bcwire is only
//! run as a program. What counts follows docs/json.md and docs/synth.md: a delivered
//! game message counts once, a retransmitted copy of a reliable message not at all, a
//! reassembled fragment set once, and an unreliable StateUpdate every time it is
//! received (a datagram the network duplicated counts twice).

use crate::capture_edit::{Packet, PcapNg};
use crate::common::{bcwire, bcwire_json, ground_truth, shared_captures, shipped_capture};
use pcap_file::pcapng::Block;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

const GAME_PORT: u16 = 22101;
const DIRS: [&str; 2] = ["c2s", "s2c"];
const HISTS: [&str; 3] = ["dirty_flags", "dirty_bits", "subsystem_start"];

/// A histogram as the JSON writes it: key → count, zero counts left out.
type Hist = BTreeMap<String, u64>;
/// The three histograms of one direction, in the order of `HISTS`.
type DirHists = [Hist; 3];
/// Both directions, in the order of `DIRS`.
type Hists = [DirHists; 2];
/// An IPv4 address and UDP port.
type Endpoint = ([u8; 4], u16);
/// A reliable message's identity: client endpoint, direction, sequence number.
type SeqKey = (Endpoint, usize, u16);

// ---------------------------------------------------------------------------------------
// The cipher (cipher.md §2–4)

/// Encrypts or decrypts `data` in place (the bytes after the peer id) with a fresh state.
fn alby(data: &mut [u8], decrypt: bool) {
    let mut key: [u8; 10] = *b"AlbyRules!";
    let (mut s, mut a) = (0u32, 0u32);
    for byte in data.iter_mut() {
        let mut acc = 0u32;
        let mut w_prev = 0u32;
        for r in 0..5u32 {
            let i = 2 * r as usize;
            let pair = u32::from(key[i]) * 256 + u32::from(key[i + 1]);
            let w = if r == 0 { pair } else { pair ^ w_prev };
            let t1 = s.wrapping_add(r).wrapping_mul(0x4E35);
            let t2 = w.wrapping_mul(0x015A);
            s = a.wrapping_add(t1).wrapping_add(t2);
            a = t2;
            let w_next = w.wrapping_mul(0x4E35).wrapping_add(1);
            acc ^= s ^ w_next;
            w_prev = w_next;
        }
        let ks = (acc as u8) ^ ((acc >> 8) as u8);
        let plain = if decrypt { *byte ^ ks } else { *byte };
        *byte ^= ks;
        for k in key.iter_mut() {
            *k ^= plain;
        }
    }
}

fn decrypt(datagram: &[u8]) -> Vec<u8> {
    let mut d = datagram.to_vec();
    if d.len() > 1 {
        alby(&mut d[1..], true);
    }
    d
}

fn encrypt(plain: &[u8]) -> Vec<u8> {
    let mut d = plain.to_vec();
    if d.len() > 1 {
        alby(&mut d[1..], false);
    }
    d
}

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

// ---------------------------------------------------------------------------------------
// Link, IPv4, UDP

/// Where a frame's IPv4 header starts and what its UDP header says.
struct Udp {
    ip: usize,
    ihl: usize,
    src: Endpoint,
    dst: Endpoint,
    len: usize,
}

impl Udp {
    fn payload<'a>(&self, p: &'a Packet) -> &'a [u8] {
        let start = self.ip + self.ihl + 8;
        &p.data[start..start + self.len]
    }
}

/// The UDP header of an IPv4 frame (link types 1 Ethernet with one optional 802.1Q tag,
/// 0 BSD loopback, 101 raw IP); None for anything else that is not UDP over IPv4.
fn udp(p: &Packet) -> Option<Udp> {
    let d = &p.data;
    let ip = match p.linktype {
        1 => {
            let mut off = 12;
            if d.get(off..off + 2)? == [0x81, 0x00] {
                off += 4;
            }
            if d.get(off..off + 2)? != [0x08, 0x00] {
                return None;
            }
            off + 2
        }
        0 => 4,
        101 => 0,
        other => panic!("link type {other} is outside this reader"),
    };
    let h = d.get(ip..ip + 20)?;
    if h[0] >> 4 != 4 || h[9] != 17 {
        return None;
    }
    let ihl = usize::from(h[0] & 0x0F) * 4;
    let frag = u16::from_be_bytes([h[6], h[7]]);
    assert_eq!(frag & 0x3FFF, 0, "IPv4 fragments are outside this reader");
    let u = d.get(ip + ihl..ip + ihl + 8)?;
    let len = usize::from(u16::from_be_bytes([u[4], u[5]])).checked_sub(8)?;
    (d.len() >= ip + ihl + 8 + len).then(|| Udp {
        ip,
        ihl,
        src: (
            h[12..16].try_into().unwrap(),
            u16::from_be_bytes([u[0], u[1]]),
        ),
        dst: (
            h[16..20].try_into().unwrap(),
            u16::from_be_bytes([u[2], u[3]]),
        ),
        len,
    })
}

/// Direction (0 c2s, 1 s2c) and client endpoint of a datagram to or from the game port.
fn direction(u: &Udp) -> Option<(usize, Endpoint)> {
    if u.dst.1 == GAME_PORT {
        Some((0, u.src))
    } else if u.src.1 == GAME_PORT {
        Some((1, u.dst))
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------
// Packet header and transport messages (README §3–4)

/// One transport message of a decrypted datagram.
#[derive(Debug)]
struct Msg {
    ty: u8,
    /// Offset and length of the whole message in the datagram.
    off: usize,
    len: usize,
    reliable: bool,
    fragment: bool,
    seq: Option<u16>,
    /// Fragment index and (fragment 0 only) total count.
    frag: Option<(u8, Option<u8>)>,
    /// Offset of the game bytes (0x32 only).
    body: usize,
}

/// The messages of a decrypted game datagram, as far as they can be walked: a message
/// that runs past the end or a type of unknown length stops the walk.
///
/// Low types (0x00, 0x02–0x05) take the stock `flags_len` u16 (length in bits 13–0).
/// The shared captures come from a reimplementation that also writes a one-byte length
/// followed by a flags byte, and a length-only type 0x06 (the ground truth reads both
/// as `len` + `flags_byte`); where the u16 length does not fit, the low byte is the
/// length.
fn walk(d: &[u8]) -> Vec<Msg> {
    let mut out = Vec::new();
    let count = d.get(1).copied().unwrap_or(0);
    let mut pos = 2;
    for _ in 0..count {
        let Some(&ty) = d.get(pos) else { break };
        let rest = d.len() - pos;
        let u16_at = |o: usize| {
            d.get(pos + o..pos + o + 2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
        };
        let msg = match ty {
            0x01 => {
                let Some(&flags) = d.get(pos + 3) else { break };
                Msg {
                    ty,
                    off: pos,
                    len: 4 + usize::from(flags & 1),
                    reliable: false,
                    fragment: false,
                    seq: u16_at(1),
                    frag: None,
                    body: pos,
                }
            }
            0x32 => {
                let Some(fl) = u16_at(1) else { break };
                let reliable = fl & 0x8000 != 0;
                let fragment = fl & 0x2000 != 0;
                let mut h = 3;
                let seq = if reliable {
                    h += 2;
                    u16_at(3)
                } else {
                    None
                };
                let frag = if fragment {
                    let Some(&idx) = d.get(pos + h) else { break };
                    h += 1;
                    let total = if idx == 0 {
                        h += 1;
                        d.get(pos + h - 1).copied()
                    } else {
                        None
                    };
                    Some((idx, total))
                } else {
                    None
                };
                Msg {
                    ty,
                    off: pos,
                    len: usize::from(fl & 0x1FFF),
                    reliable,
                    fragment,
                    seq,
                    frag,
                    body: pos + h,
                }
            }
            0x00 | 0x02..=0x06 => {
                let stock = u16_at(1).map(|fl| (fl, usize::from(fl & 0x3FFF)));
                let (len, reliable) = match stock {
                    Some((fl, len)) if ty != 0x06 && (3..=rest).contains(&len) => {
                        (len, fl & 0x8000 != 0)
                    }
                    _ => {
                        let Some(&len) = d.get(pos + 1) else { break };
                        let flags = d.get(pos + 2).copied().unwrap_or(0);
                        (usize::from(len), ty != 0x06 && flags & 0x80 != 0)
                    }
                };
                Msg {
                    ty,
                    off: pos,
                    len,
                    reliable,
                    fragment: false,
                    seq: None,
                    frag: None,
                    body: pos,
                }
            }
            _ => break,
        };
        if msg.len < 2 || msg.len > rest || msg.body > pos + msg.len {
            break;
        }
        pos += msg.len;
        out.push(msg);
    }
    out
}

/// One fragment set being reassembled (README §4.4).
#[derive(Default)]
struct FragSet {
    total: Option<u8>,
    chunks: BTreeMap<u8, Vec<u8>>,
    delivered: bool,
}

/// Reliability and reassembly across datagrams: which game messages are delivered.
#[derive(Default)]
struct Transport {
    /// The bytes of the last reliable whole message seen under each key.
    seen: HashMap<SeqKey, Vec<u8>>,
    frags: HashMap<SeqKey, FragSet>,
}

impl Transport {
    /// The game messages a decrypted datagram delivers, in order.
    fn deliver(&mut self, d: &[u8], dir: usize, client: Endpoint) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for m in walk(d).into_iter().filter(|m| m.ty == 0x32) {
            let whole = &d[m.off..m.off + m.len];
            let game = d[m.body..m.off + m.len].to_vec();
            let key = (client, dir, m.seq.unwrap_or(0));
            if let Some((idx, total)) = m.frag {
                let set = self.frags.entry(key).or_default();
                if set.delivered || set.chunks.contains_key(&idx) {
                    continue;
                }
                if total.is_some() {
                    set.total = total;
                }
                set.chunks.insert(idx, game);
                if let Some(n) = set.total {
                    if set.chunks.len() == usize::from(n) && set.chunks.keys().all(|&k| k < n) {
                        set.delivered = true;
                        out.push(set.chunks.values().flatten().copied().collect());
                    }
                }
            } else if m.reliable {
                // A copy with the same sequence number and the same bytes is a
                // retransmission; different bytes under a reused number are a new message.
                if self.seen.get(&key).is_some_and(|b| b == whole) {
                    continue;
                }
                self.seen.insert(key, whole.to_vec());
                out.push(game);
            } else {
                out.push(game);
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------------
// StateUpdate (stateupdate.md §1–4, primitives.md §2)

/// Dirty flags and, with 0x20, the subsystem start index of a StateUpdate game message
/// (opcode byte at 0); None when it is too short to hold the flags.
fn state_update(g: &[u8]) -> Option<(u8, Option<u8>)> {
    let flags = *g.get(9)?;
    let mut pos = 10;
    // Packed booleans: a byte holds its count in bits 7–5 and stays open until used up.
    let (mut group, mut left, mut next) = (0u8, 0u8, 0u8);
    let mut read_bit = |pos: &mut usize| -> Option<bool> {
        if left == 0 {
            group = *g.get(*pos)?;
            *pos += 1;
            left = group >> 5;
            next = 0;
        }
        let v = (group >> next) & 1 == 1;
        next += 1;
        left = left.saturating_sub(1);
        Some(v)
    };
    let start = (|| {
        if flags & 0x01 != 0 {
            pos += 12;
            if read_bit(&mut pos)? {
                pos += 2;
            }
        }
        for (mask, size) in [(0x02, 5), (0x04, 3), (0x08, 3), (0x10, 2)] {
            if flags & mask != 0 {
                pos += size;
            }
        }
        if flags & 0x40 != 0 {
            read_bit(&mut pos)?;
        }
        if flags & 0x20 != 0 {
            g.get(pos).copied()
        } else {
            None
        }
    })();
    Some((flags, start))
}

// ---------------------------------------------------------------------------------------
// The oracle

/// The histograms of a capture, read with the functions above.
fn oracle_packets(packets: &[Packet]) -> Hists {
    let mut h: Hists = Default::default();
    let mut transport = Transport::default();
    for p in packets {
        let Some(u) = udp(p) else { continue };
        let Some((dir, client)) = direction(&u) else {
            continue;
        };
        let payload = u.payload(p);
        if payload.is_empty() || payload[0] == b'\\' {
            continue;
        }
        let plain = decrypt(payload);
        for g in transport.deliver(&plain, dir, client) {
            if g.first() != Some(&0x1C) {
                continue;
            }
            let Some((flags, start)) = state_update(&g) else {
                continue;
            };
            let [flag_hist, bit_hist, start_hist] = &mut h[dir];
            *flag_hist.entry(format!("0x{flags:02X}")).or_default() += 1;
            for bit in 0..8 {
                if flags & (1 << bit) != 0 {
                    *bit_hist.entry(format!("0x{:02X}", 1u8 << bit)).or_default() += 1;
                }
            }
            if let Some(s) = start {
                *start_hist.entry(s.to_string()).or_default() += 1;
            }
        }
    }
    h
}

fn oracle(path: &Path) -> Hists {
    oracle_packets(&PcapNg::read(path).packets())
}

fn total_updates(h: &Hists) -> u64 {
    h.iter().map(|d| d[0].values().sum::<u64>()).sum()
}

/// `stats --format json`'s histograms.
fn json_hists(path: &Path) -> Hists {
    let v = bcwire_json(&["stats", "--format", "json", path.to_str().unwrap()]);
    let mut h: Hists = Default::default();
    for (di, dir) in DIRS.iter().enumerate() {
        for (hi, name) in HISTS.iter().enumerate() {
            let map = v["directions"][dir][name]
                .as_object()
                .unwrap_or_else(|| panic!("{}: no directions.{dir}.{name}", path.display()));
            for (k, n) in map {
                h[di][hi].insert(k.clone(), n.as_u64().expect("a count"));
            }
        }
    }
    h
}

/// The StateUpdate tables of `stats` (the text report) read back into numbers: the
/// flags table, the bits table (zero rows dropped, as the JSON drops them) and the
/// start-index table, each under its heading. Also checks each flags heading's total.
fn text_hists(path: &Path) -> Hists {
    // Wide enough that no table is wrapped to fit.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(["stats", "--color", "never", path.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .env("COLUMNS", "400")
        .output()
        .expect("run bcwire");
    assert!(out.status.success(), "bcwire stats {}", path.display());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut h: Hists = Default::default();
    let mut totals: [Option<u64>; 2] = [None, None];
    // (direction, histogram, column of the count)
    let mut table: Option<(usize, usize, usize)> = None;
    for line in text.lines() {
        if !line.starts_with(['│', '┌', '╞', '└', '├']) && !line.trim().is_empty() {
            table = None;
            for (di, dir) in DIRS.iter().enumerate() {
                if let Some(rest) = line.strip_prefix(&format!("StateUpdate dirty flags {dir} (")) {
                    let n = rest.strip_suffix(" updates)").expect("flags heading");
                    totals[di] = Some(n.trim().parse().unwrap());
                    table = Some((di, 0, 2));
                } else if line == format!("Dirty bits {dir}") {
                    table = Some((di, 1, 2));
                } else if line == format!("Subsystem block start index {dir}") {
                    table = Some((di, 2, 1));
                }
            }
            continue;
        }
        let Some((di, hi, col)) = table else { continue };
        let Some(row) = line.strip_prefix('│') else {
            continue;
        };
        let cells: Vec<&str> = row
            .trim_end_matches('│')
            .split('┆')
            .map(str::trim)
            .collect();
        if matches!(cells[0], "flags" | "bit" | "start index") {
            continue;
        }
        let n: u64 = cells[col]
            .parse()
            .unwrap_or_else(|_| panic!("{}: a count in row {line:?}", path.display()));
        if n > 0 {
            h[di][hi].insert(cells[0].to_string(), n);
        }
    }
    for (di, dir) in DIRS.iter().enumerate() {
        let sum: u64 = h[di][0].values().sum();
        assert_eq!(
            totals[di].unwrap_or(0),
            sum,
            "{}: text {dir} flags heading total vs its rows",
            path.display()
        );
    }
    h
}

/// Every key of every histogram where `ours` and `theirs` differ, one line each.
fn differences(label: &str, what: &str, ours: &Hists, theirs: &Hists) -> Vec<String> {
    let mut out = Vec::new();
    for (di, dir) in DIRS.iter().enumerate() {
        for (hi, name) in HISTS.iter().enumerate() {
            let (a, b) = (&ours[di][hi], &theirs[di][hi]);
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let (x, y) = (a.get(k).copied(), b.get(k).copied());
                if x != y {
                    out.push(format!(
                        "{label}: {dir} {name}[\"{k}\"]: reader {}, {what} {}",
                        x.map_or("absent".into(), |n| n.to_string()),
                        y.map_or("absent".into(), |n| n.to_string()),
                    ));
                }
            }
        }
    }
    out
}

fn assert_same(label: &str, what: &str, ours: &Hists, theirs: &Hists) {
    let diffs = differences(label, what, ours, theirs);
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// The shared captures' pcapng files.
fn shared_pcapngs() -> Vec<(String, PathBuf)> {
    shared_captures()
        .into_iter()
        .map(|(name, folder)| {
            let path = folder.join(format!("{name}.pcapng"));
            (name, path)
        })
        .collect()
}

/// A synthetic capture with loss, duplication and reordering, in `dir`.
fn synthetic(dir: &Path) -> PathBuf {
    let path = dir.join("synth.pcapng");
    let out = bcwire(&[
        "synth",
        "--players",
        "3",
        "--minutes",
        "1",
        "--seed",
        "7",
        "--loss",
        "0.05",
        "--duplicate",
        "0.02",
        "--reorder",
        "0.01",
        "-q",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "bcwire synth failed");
    path
}

// ---------------------------------------------------------------------------------------
// The reader checked on its own

/// Guards the reader, not bcwire (no change of bcwire's code fails it): the cipher
/// transcription must reproduce cipher.md's test vectors both ways.
#[test]
fn cipher_transcription_reproduces_reference_vectors() {
    let vectors = [
        (
            "01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
            "01 D6 FE 17 F1 86 49 BC 51 A5 0F 17 6C 96 16 5B 52",
        ),
        ("02 00", "02 D6"),
        ("02 01 01 07 00 00", "02 D7 31 7D E7 1B"),
        (
            "02 01 32 2A 00 1C FF FF FF 3F 00 80 E1 41 9D 00 00 B0 42 00 00 84 C2 00
             00 92 C2 21 37 FB 0B 68 46 30 BB 5E 00 00 01 CC 02 CC 04 CC",
            "02 D7 02 F9 73 98 00 21 FB 93 E9 C3 1D 2B CE 3F 95 AE 3C C3 71 A7 72 09
             62 35 94 4C 5B C8 17 1D 66 E2 ED 2A 6B 5F FA 97 A0 29 9D 35",
        ),
        (
            "01 FF FF FF FF FF FF FF FF FF FF FF FF",
            "01 29 97 5E 7E BC 14 14 8B 83 1A 29 F2",
        ),
    ];
    for (plain, cipher) in vectors {
        let (plain, cipher) = (unhex(plain), unhex(cipher));
        assert_eq!(encrypt(&plain), cipher, "encrypting {plain:02X?}");
        assert_eq!(decrypt(&cipher), plain, "decrypting {cipher:02X?}");
    }
}

/// Guards the reader, not bcwire (no change of bcwire's code fails it): on every game
/// frame of the shared captures, the UDP payload, its decryption and the transport
/// messages walked from it must equal the ground truth's `wire_hex`, `plain_hex` and
/// `msgs` (type, length, reliable/fragment, seq, game bytes), so the histograms below
/// rest on a reader that is right on real traffic.
#[test]
fn reader_matches_ground_truth_frames() {
    for (name, folder) in shared_captures() {
        let packets = PcapNg::read(&folder.join(format!("{name}.pcapng"))).packets();
        let truth = ground_truth(&folder, &name);
        let mut checked = 0;
        for t in truth.iter().filter(|t| t["kind"] == "bc") {
            let n = t["frame"].as_u64().unwrap() as usize;
            let at = format!("{name} frame {n}");
            let p = &packets[n - 1];
            let u = udp(p).unwrap_or_else(|| panic!("{at}: no UDP"));
            let (dir, _) = direction(&u).unwrap_or_else(|| panic!("{at}: not port {GAME_PORT}"));
            assert_eq!(t["dir"], ["C2S", "S2C"][dir], "{at}: direction");
            let payload = u.payload(p);
            assert_eq!(
                payload,
                unhex(t["wire_hex"].as_str().unwrap()),
                "{at}: wire"
            );
            let plain = decrypt(payload);
            assert_eq!(
                plain,
                unhex(t["plain_hex"].as_str().unwrap()),
                "{at}: plain"
            );
            let msgs = walk(&plain);
            let want = t["msgs"].as_array().unwrap();
            assert_eq!(msgs.len(), want.len(), "{at}: message count");
            for (i, (m, w)) in msgs.iter().zip(want).enumerate() {
                let at = format!("{at} message {i}");
                assert_eq!(Some(u64::from(m.ty)), w["type"].as_u64(), "{at}: type");
                assert_eq!(Some(m.len as u64), w["len"].as_u64(), "{at}: length");
                if m.ty == 0x32 {
                    assert_eq!(Some(m.reliable), w["reliable"].as_bool(), "{at}: reliable");
                    assert_eq!(Some(m.fragment), w["fragment"].as_bool(), "{at}: fragment");
                    assert_eq!(m.seq.map(u64::from), w["seq"].as_u64(), "{at}: seq");
                    let game = &plain[m.body..m.off + m.len];
                    assert_eq!(
                        game,
                        unhex(w["payload_hex"].as_str().unwrap()),
                        "{at}: game bytes"
                    );
                }
            }
            checked += 1;
        }
        assert!(checked > 0, "{name}: no game frames in the ground truth");
    }
}

// ---------------------------------------------------------------------------------------
// bcwire's histograms against the reader's

/// Catches a StateUpdate counted under the wrong dirty-flags key or the wrong direction,
/// a dirty bit counted from the wrong flag, and a subsystem start index read from the
/// wrong byte or counted without the 0x20 flag, on real (non-stock) peers' traffic.
#[test]
fn json_histograms_match_reader_on_shared_captures() {
    for (name, path) in shared_pcapngs() {
        let ours = oracle(&path);
        assert!(
            total_updates(&ours) > 0,
            "{name}: the reader found no StateUpdate"
        );
        assert_same(&name, "bcwire json", &ours, &json_hists(&path));
    }
}

/// Catches the same defects as the shared-capture test on the shipped sample, which has
/// every movement field, the cloak bit and 0x80 blocks from clients.
#[test]
fn json_histograms_match_reader_on_shipped_sample() {
    let path = shipped_capture("sample.pcapng");
    let ours = oracle(&path);
    for (di, dir) in DIRS.iter().enumerate() {
        assert!(
            ours[di][0].len() > 1,
            "sample {dir}: the reader found too few flag combinations"
        );
    }
    assert_same("sample.pcapng", "bcwire json", &ours, &json_hists(&path));
}

/// Catches the same defects on a synthetic capture with 5 % loss, 2 % duplication and
/// 1 % reordering, where StateUpdates sit between retransmitted reliable messages and a
/// duplicated datagram's StateUpdates count twice (they are unreliable).
#[test]
fn json_histograms_match_reader_on_synthetic_capture() {
    let dir = tempfile::tempdir().unwrap();
    let path = synthetic(dir.path());
    let ours = oracle(&path);
    assert!(
        total_updates(&ours) > 1000,
        "synthetic: too few StateUpdates"
    );
    assert_same("synthetic", "bcwire json", &ours, &json_hists(&path));
}

/// Catches the text report disagreeing with the counts: a table row printed under the
/// wrong flags value, bit or start index, a count from the wrong direction or
/// histogram, a missing row, or a heading total that is not the sum of its rows.
#[test]
fn text_tables_match_reader_on_every_capture() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = shared_pcapngs();
    paths.push(("sample.pcapng".into(), shipped_capture("sample.pcapng")));
    paths.push(("synthetic".into(), synthetic(dir.path())));
    for (name, path) in paths {
        let ours = oracle(&path);
        assert_same(&name, "bcwire text", &ours, &text_hists(&path));
    }
}

/// Appends to `cap` a game datagram from `client` to the host carrying `plain`
/// (decrypted), built on frame `template`'s link and IP headers, `delay` after the last
/// frame.
fn append_datagram(cap: &mut PcapNg, template: usize, plain: &[u8], delay: Duration) {
    let frames = cap.frames();
    let Block::EnhancedPacket(last) = &cap.blocks[*frames.last().unwrap()] else {
        panic!("the last frame is not an enhanced packet block");
    };
    let time = last.timestamp + delay;
    let Block::EnhancedPacket(t) = cap.blocks[frames[template]].clone() else {
        panic!("frame {} is not an enhanced packet block", template + 1);
    };
    let packets = cap.packets();
    let u = udp(&packets[template]).unwrap();
    let payload = encrypt(plain);
    let mut data = t.data[..u.ip + u.ihl + 8].to_vec();
    data.extend_from_slice(&payload);
    let ip = u.ip;
    let total = (u.ihl + 8 + payload.len()) as u16;
    data[ip + 2..ip + 4].copy_from_slice(&total.to_be_bytes());
    data[ip + 10..ip + 12].copy_from_slice(&[0, 0]);
    let sum: u32 = data[ip..ip + u.ihl]
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    let folded = (sum & 0xFFFF) + (sum >> 16);
    let check = !(((folded & 0xFFFF) + (folded >> 16)) as u16);
    data[ip + 10..ip + 12].copy_from_slice(&check.to_be_bytes());
    let udp_at = ip + u.ihl;
    data[udp_at + 4..udp_at + 6].copy_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    data[udp_at + 6..udp_at + 8].copy_from_slice(&[0, 0]);
    let mut block = t;
    block.timestamp = time;
    block.original_len = data.len() as u32;
    block.data = data.into();
    block.options.clear();
    cap.blocks.push(Block::EnhancedPacket(block));
}

/// Catches a retransmitted StateUpdate counted twice (or a retransmission taken for a
/// new message): no peer sends a StateUpdate reliably, so the shipped sample is given
/// two copies of one at its end, a client's last StateUpdate sent again as a reliable
/// message under its next sequence number, and the copy 10 ms later with the same
/// number and bytes. The reader counts it once; bcwire must agree.
#[test]
fn retransmitted_state_update_counts_once() {
    let sample = shipped_capture("sample.pcapng");
    let mut cap = PcapNg::read(&sample);
    let packets = cap.packets();
    // The last client StateUpdate, its frame and client, and that client's last seq.
    let mut found: Option<(usize, Endpoint, Vec<u8>)> = None;
    let mut last_seq: HashMap<Endpoint, u16> = HashMap::new();
    for (i, p) in packets.iter().enumerate() {
        let Some(u) = udp(p) else { continue };
        let Some((0, client)) = direction(&u) else {
            continue;
        };
        let payload = u.payload(p);
        if payload.is_empty() || payload[0] == b'\\' {
            continue;
        }
        let plain = decrypt(payload);
        for m in walk(&plain).iter().filter(|m| m.ty == 0x32) {
            if let Some(s) = m.seq {
                last_seq.insert(client, s);
            }
            let game = &plain[m.body..m.off + m.len];
            if m.frag.is_none() && game.first() == Some(&0x1C) {
                let mut g = plain[..1].to_vec();
                g.extend_from_slice(game);
                found = Some((i, client, g));
            }
        }
    }
    let (template, client, peer_and_game) = found.expect("a client StateUpdate in the sample");
    let (peer, game) = (peer_and_game[0], &peer_and_game[1..]);
    let seq = last_seq.get(&client).map_or(0, |s| s.wrapping_add(1));
    let flags_len = 0x8000 | (5 + game.len()) as u16;
    let mut plain = vec![peer, 1, 0x32];
    plain.extend_from_slice(&flags_len.to_le_bytes());
    plain.extend_from_slice(&seq.to_le_bytes());
    plain.extend_from_slice(game);
    append_datagram(&mut cap, template, &plain, Duration::from_millis(10));
    append_datagram(&mut cap, template, &plain, Duration::from_millis(20));

    let dir = tempfile::tempdir().unwrap();
    let edited = dir.path().join("retransmitted.pcapng");
    cap.write(&edited);

    // The reader itself: exactly one more update with these flags than the sample.
    let before = oracle(&sample);
    let after = oracle(&edited);
    let (flags, _) = state_update(game).unwrap();
    let key = format!("0x{flags:02X}");
    assert_eq!(
        after[0][0].get(&key).copied().unwrap_or(0),
        before[0][0].get(&key).copied().unwrap_or(0) + 1,
        "the reader must count the reliable StateUpdate once"
    );
    assert_same(
        "sample + retransmitted StateUpdate",
        "bcwire json",
        &after,
        &json_hists(&edited),
    );
}

/// Catches a change of the text report's headings or table layout that would leave the
/// text parser reading nothing (and the text comparison passing on empty histograms):
/// on the sample it must find every StateUpdate table of both directions.
#[test]
fn text_parser_reads_every_state_update_table() {
    let h = text_hists(&shipped_capture("sample.pcapng"));
    for (di, dir) in DIRS.iter().enumerate() {
        for (hi, name) in HISTS.iter().enumerate() {
            if (di, hi) == (0, 2) {
                continue;
            }
            assert!(!h[di][hi].is_empty(), "sample text: no {dir} {name} rows");
        }
    }
}
