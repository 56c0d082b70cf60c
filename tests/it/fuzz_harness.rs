//! Stable-toolchain mutation harness over the fuzz targets of `fuzz/src/lib.rs`.
//!
//! The same target bodies run under cargo-fuzz (nightly, coverage-guided) and here
//! (any toolchain, deterministic): seeds from the shared captures and from encoders,
//! mutated by a seeded PRNG. A short run is part of `cargo test`; the long run is
//!
//! ```text
//! BCWIRE_FUZZ_ITERS=1000000 cargo test --profile test-release --test it fuzz_harness -- --ignored
//! ```
//!
//! A panicking input is written to `target/fuzz-findings/<target>-<hash>.bin` before
//! the test fails. `write_fuzz_seeds` (ignored) writes the seed corpora for cargo-fuzz
//! into `fuzz/corpus/<target>/`.

#[path = "../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod targets;

use bcwire::capture::{CaptureReader, Frame};
use bcwire::net::{NetDecoder, NetOutcome};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

type Target = fn(&[u8]);

const TARGETS: [(&str, Target); 9] = [
    ("capture_read", targets::capture_read),
    ("net_decode", targets::net_decode),
    ("transport", targets::transport),
    ("opcode", targets::opcode),
    ("state_update", targets::state_update),
    ("ship_layouts", targets::ship_layouts),
    ("pipeline", targets::pipeline),
    ("structured", targets::structured),
    ("sm_decode", targets::sm_decode),
];

use crate::common::rng::Rng;
use crate::common::shared_dir;

/// Capture files of the shared folder (empty when it is absent).
fn shared_captures() -> Vec<Vec<u8>> {
    let Some(shared) = shared_dir() else {
        eprintln!("note: shared captures not found (set BCWIRE_SHARED); built-in seeds only");
        return vec![];
    };
    let mut files = vec![];
    let Ok(dirs) = std::fs::read_dir(shared.join("captures/openbc")) else {
        return files;
    };
    let mut paths: Vec<PathBuf> = dirs
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    paths.sort();
    for p in paths {
        if let Ok(b) = std::fs::read(&p) {
            files.push(b);
        }
    }
    files
}

const INTERESTING: [u8; 10] = [0x00, 0x01, 0x02, 0x7F, 0x80, 0xFE, 0xFF, 0x20, 0x32, 0x1C];

/// Apply 1..=4 random mutations: bit flips, interesting bytes, inserts, deletes,
/// duplicated runs, splices from another seed, truncation, lying 16/32-bit lengths.
fn mutate(rng: &mut Rng, input: &mut Vec<u8>, other: &[u8], max_len: usize) {
    for _ in 0..1 + rng.below(4) {
        let len = input.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                input[i] = INTERESTING[rng.below(INTERESTING.len())];
            }
            2 => {
                let i = rng.below(len + 1);
                let n = 1 + rng.below(16);
                for _ in 0..n {
                    input.insert(i, rng.next() as u8);
                }
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = (1 + rng.below(32)).min(len - i);
                input.drain(i..i + n);
            }
            4 if len > 0 => {
                let i = rng.below(len);
                let n = (1 + rng.below(64)).min(len - i);
                let run: Vec<u8> = input[i..i + n].to_vec();
                let at = rng.below(input.len() + 1);
                input.splice(at..at, run);
            }
            5 if !other.is_empty() => {
                let i = rng.below(other.len());
                let n = (1 + rng.below(128)).min(other.len() - i);
                let at = rng.below(len + 1);
                input.splice(at..at, other[i..i + n].iter().copied());
            }
            6 => input.truncate(rng.below(len + 1)),
            7 if len >= 2 => {
                let i = rng.below(len - 1);
                let v = [0u16, 1, 0x7FFF, 0xFFFF, 0x1FFF, 0x3FFF][rng.below(6)];
                input[i..i + 2].copy_from_slice(&v.to_le_bytes());
            }
            8 if len >= 4 => {
                let i = rng.below(len - 3);
                let v = [0u32, 0xFFFF_FFFF, 0x7FFF_FFFF, 0x0010_0000, 65_536][rng.below(5)];
                let b = if rng.below(2) == 0 {
                    v.to_le_bytes()
                } else {
                    v.to_be_bytes()
                };
                input[i..i + 4].copy_from_slice(&b);
            }
            _ => {}
        }
    }
    input.truncate(max_len);
}

/// Seeds per target: built from the shared captures where present, and from encoders.
fn seeds(target: &str, captures: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut frames: Vec<Frame> = Vec::new();
    for c in captures {
        if let Ok(mut r) = CaptureReader::new(std::io::Cursor::new(c.clone())) {
            while let Some(Ok(f)) = r.next_frame() {
                frames.push(f);
            }
        }
    }
    let mut payloads: Vec<Vec<u8>> = Vec::new();
    let mut net = NetDecoder::default();
    for f in &frames {
        if let NetOutcome::Datagram(d) = net.decode(f) {
            payloads.push(d.payload);
        }
    }
    match target {
        "capture_read" | "pipeline" => {
            out.extend(captures.iter().cloned());
            // Small captures cut from the real ones keep mutation cheap.
            for c in captures {
                out.push(c[..c.len().min(2048)].to_vec());
            }
            let mut rng = Rng(7);
            for _ in 0..8 {
                let raw: Vec<u8> = (0..512).map(|_| rng.next() as u8).collect();
                if let Some(c) = targets::structured_capture(&raw) {
                    out.push(c);
                }
            }
        }
        "net_decode" => {
            for chunk in frames.chunks(16) {
                let mut s = vec![0u8];
                for f in chunk {
                    s.extend_from_slice(&(f.data.len() as u16).to_le_bytes());
                    s.extend_from_slice(&f.data);
                }
                out.push(s);
            }
        }
        "transport" => {
            out.push(targets::transport_seed());
            for chunk in payloads.chunks(8) {
                let mut s = Vec::new();
                for p in chunk {
                    s.extend_from_slice(&(p.len() as u16 & 0x7FFF).to_le_bytes());
                    s.extend_from_slice(p);
                }
                out.push(s);
            }
        }
        "opcode" | "state_update" => {
            for p in &payloads {
                let mut plain = p.clone();
                bcwire::transport::cipher::decrypt(&mut plain);
                let pkt = bcwire::transport::packet::parse(&plain);
                for m in &pkt.messages {
                    if let bcwire::transport::packet::MessageBody::Data(d) = &m.body {
                        if let Some(g) = plain.get(d.payload.clone()) {
                            match (target, g.first()) {
                                ("opcode", Some(_)) => out.push(g.to_vec()),
                                ("state_update", Some(0x1C)) => out.push(g[1..].to_vec()),
                                _ => {}
                            }
                        }
                    }
                }
            }
            out.sort();
            out.dedup();
            // Keep the corpus small: one of every opcode, plus a spread of the rest.
            let mut seen = std::collections::HashSet::new();
            let mut spread = 0;
            out.retain(|s| {
                spread += 1;
                seen.insert(s.first().copied()) || spread % 25 == 0
            });
        }
        "ship_layouts" => {
            out.push(include_bytes!("../../src/game/ships.json").to_vec());
            out.push(include_bytes!("../../docs/example-ships.json").to_vec());
        }
        "structured" => {
            let mut rng = Rng(11);
            for _ in 0..16 {
                out.push((0..256).map(|_| rng.next() as u8).collect());
            }
        }
        "sm_decode" => out.extend(targets::sm_seeds()),
        _ => {}
    }
    out.push(Vec::new());
    out
}

fn finding_path(target: &str, input: &[u8]) -> PathBuf {
    let h = input.iter().fold(0xCBF2_9CE4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
    });
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/fuzz-findings")
        .join(format!("{target}-{h:016x}.bin"))
}

struct RunStats {
    execs: u64,
    elapsed: Duration,
}

/// Run `target` over its seeds, then `iters` mutated inputs (or until `budget`).
fn run_target(
    name: &str,
    target: Target,
    captures: &[Vec<u8>],
    iters: u64,
    budget: Duration,
    seed: u64,
) -> RunStats {
    let corpus = seeds(name, captures);
    let max_len = if matches!(name, "pipeline" | "capture_read") {
        64 * 1024
    } else {
        8 * 1024
    };
    let start = Instant::now();
    let mut rng = Rng(seed ^ name.len() as u64);
    let mut execs = 0;
    let check = |input: &[u8]| {
        if catch_unwind(AssertUnwindSafe(|| target(input))).is_err() {
            let path = finding_path(name, input);
            let _ = std::fs::create_dir_all(path.parent().unwrap_or(&path));
            let _ = std::fs::write(&path, input);
            panic!("{name}: input saved to {}", path.display());
        }
    };
    for s in &corpus {
        check(s);
        execs += 1;
    }
    let mut input = Vec::new();
    while execs < iters && start.elapsed() < budget {
        let base = &corpus[rng.below(corpus.len())];
        let other = &corpus[rng.below(corpus.len())];
        input.clear();
        input.extend_from_slice(base);
        mutate(&mut rng, &mut input, other, max_len);
        check(&input);
        execs += 1;
    }
    RunStats {
        execs,
        elapsed: start.elapsed(),
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A short run of every target, part of the normal test suite.
#[test]
fn every_target_survives_a_short_run() {
    let captures = shared_captures();
    for (name, target) in TARGETS {
        let iters = if name == "pipeline" { 100 } else { 400 };
        let s = run_target(name, target, &captures, iters, Duration::from_secs(20), 1);
        assert!(s.execs > 0);
    }
}

/// The long run: `BCWIRE_FUZZ_ITERS` inputs per target (default 1,000,000), at most
/// `BCWIRE_FUZZ_SECS` seconds each (default 300), PRNG seed `BCWIRE_FUZZ_SEED`;
/// `BCWIRE_FUZZ_TARGET` picks one target.
#[test]
#[ignore]
fn fuzz_long() {
    let captures = shared_captures();
    let iters = env_u64("BCWIRE_FUZZ_ITERS", 1_000_000);
    let secs = env_u64("BCWIRE_FUZZ_SECS", 300);
    let seed = env_u64("BCWIRE_FUZZ_SEED", 0x5EED);
    let only = std::env::var("BCWIRE_FUZZ_TARGET").ok();
    for (name, target) in TARGETS {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let s = run_target(
            name,
            target,
            &captures,
            iters,
            Duration::from_secs(secs),
            seed,
        );
        eprintln!(
            "{name}: {} execs in {:.1}s ({:.0}/s), no finding",
            s.execs,
            s.elapsed.as_secs_f64(),
            s.execs as f64 / s.elapsed.as_secs_f64().max(1e-9)
        );
    }
}

/// Write the seed corpora for cargo-fuzz to `fuzz/corpus/<target>/` (not committed:
/// the seeds derive from the shared captures, regenerated by this test).
#[test]
#[ignore]
fn write_fuzz_seeds() {
    let captures = shared_captures();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    for (name, _) in TARGETS {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).expect("create corpus folder");
        for (i, s) in seeds(name, &captures).iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{i:04}")), s).expect("write seed");
        }
    }
}

/// The committed regression corpus: `fuzz/regressions/<target>/`, one file per input.
fn regressions_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions")
}

/// The corpus stays small enough to commit and to replay on every test run.
const MAX_CORPUS_BYTES: u64 = 4 << 20;

/// Every committed regression input of every target runs without a finding: the
/// minimised seeds, the inputs of past findings, and the inputs regression tests
/// encode (docs/robustness.md says how a finding is added).
#[test]
fn regression_corpus_replays() {
    let root = regressions_root();
    let names: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
    for dir in std::fs::read_dir(&root)
        .expect("fuzz/regressions")
        .flatten()
    {
        let name = dir.file_name().to_string_lossy().into_owned();
        assert!(
            names.contains(&name.as_str()),
            "fuzz/regressions/{name} names no target of {names:?}"
        );
    }
    let mut total = 0;
    for (name, target) in TARGETS {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(name))
            .unwrap_or_else(|e| panic!("fuzz/regressions/{name}: {e}"))
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "fuzz/regressions/{name} is empty");
        for path in files {
            let input = std::fs::read(&path).expect("regression input");
            total += input.len() as u64;
            if catch_unwind(AssertUnwindSafe(|| target(&input))).is_err() {
                panic!("{name}: regression input {} fails", path.display());
            }
        }
    }
    assert!(
        total <= MAX_CORPUS_BYTES,
        "the regression corpus holds {total} bytes, more than {MAX_CORPUS_BYTES}"
    );
}

/// FNV-1a of an input: content-addressed file names, so writing the corpus again adds
/// only what is new.
fn input_hash(input: &[u8]) -> u64 {
    input.iter().fold(0xCBF2_9CE4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
    })
}

/// Seeds of one target, minimised for the committed corpus: duplicates dropped,
/// captures cut after their first frames (the handshake and the first game messages,
/// where most of the decoders' paths are met), smallest first, within a byte budget
/// per target.
fn minimised_seeds(name: &str, captures: &[Vec<u8>]) -> Vec<Vec<u8>> {
    const BUDGET: usize = 256 * 1024;
    let mut seeds = seeds(name, captures);
    if matches!(name, "capture_read" | "pipeline") {
        seeds = seeds
            .iter()
            .flat_map(|s| [first_frames(s, 24), Some(s.clone())])
            .flatten()
            .filter(|s| s.len() <= 64 * 1024)
            .collect();
    }
    seeds.sort_by_key(|s| (s.len(), input_hash(s)));
    seeds.dedup();
    let mut used = 0;
    seeds.retain(|s| {
        used += s.len();
        used <= BUDGET
    });
    seeds
}

/// The first `n` frames of a capture, rewritten as a microsecond pcap of its link type.
fn first_frames(capture: &[u8], n: usize) -> Option<Vec<u8>> {
    use bcwire::capture::{CaptureWriter, Endian, TsResolution};
    let mut r = CaptureReader::new(std::io::Cursor::new(capture.to_vec())).ok()?;
    let mut w: Option<CaptureWriter<Vec<u8>>> = None;
    for _ in 0..n {
        let Some(Ok(f)) = r.next_frame() else { break };
        let out = match &mut w {
            Some(w) => w,
            None => w.insert(
                CaptureWriter::pcap(
                    Vec::new(),
                    f.link_type,
                    TsResolution::MICRO,
                    Endian::Little,
                    65_535,
                )
                .ok()?,
            ),
        };
        out.write_frame(0, f.ts_ns, f.orig_len, &f.data).ok()?;
    }
    Some(w?.into_inner())
}

/// Captures that regression tests of the decoder encode, as whole inputs: each is a
/// pipeline input (and a capture_read one).
fn regression_captures() -> Vec<(&'static str, Vec<u8>)> {
    use bcwire::capture::{link_type, CaptureWriter, Endian, TsResolution};
    use bcwire::net::build::{frame_udp, BuildOptions};
    use std::net::SocketAddr;
    let sample = std::fs::read(crate::common::shipped_capture("sample.pcapng")).expect("sample");
    let mut out = Vec::new();

    // `report::stats::tests::rates_list_empty_buckets_only_over_a_bounded_span`: a
    // frame whose timestamp jumps 98,183 s (27 hours) ahead made `stats --interval 1s`
    // lay out a row for every empty second in between.
    let mut r = CaptureReader::new(std::io::Cursor::new(sample)).expect("sample");
    let mut w = CaptureWriter::pcap(
        Vec::new(),
        link_type::ETHERNET,
        TsResolution::MICRO,
        Endian::Little,
        65_535,
    )
    .expect("pcap header");
    for i in 0..40 {
        let f = r.next_frame().expect("frame").expect("frame");
        let jump = if i == 39 { 98_183_500_000_000 } else { 0 };
        w.write_frame(0, f.ts_ns + jump, f.orig_len, &f.data)
            .expect("frame");
    }
    out.push(("stats-interval-timestamp-jump.pcap", w.into_inner()));

    // `damaged_frames`: datagrams that lost their records. Byte 0 that cannot start a
    // packet in its direction on a flow that has carried no game packet yet (a host
    // packet with 0x05, a client packet with 0x00), and a datagram whose only message
    // overran it (a fragment ACK with 4 of its 5 bytes).
    let server: SocketAddr = "10.0.0.1:22101".parse().expect("address");
    let client: SocketAddr = "10.0.0.2:40000".parse().expect("address");
    let mut w = CaptureWriter::pcap(
        Vec::new(),
        link_type::ETHERNET,
        TsResolution::MICRO,
        Endian::Little,
        65_535,
    )
    .expect("pcap header");
    let datagrams: [(SocketAddr, SocketAddr, &[u8]); 3] = [
        (server, client, &[0x05, 0x01, 0x01, 0x00, 0x00, 0x00]),
        (client, server, &[0x00, 0x01, 0x01, 0x00, 0x00, 0x00]),
        (client, server, &[0x02, 0x01, 0x01, 0x07, 0x00, 0x01]),
    ];
    for (i, (src, dst, plain)) in datagrams.into_iter().enumerate() {
        let mut payload = plain.to_vec();
        bcwire::transport::cipher::encrypt(&mut payload);
        for f in frame_udp(
            link_type::ETHERNET,
            src,
            dst,
            &payload,
            &BuildOptions::default(),
        )
        .expect("frame")
        {
            let ts = 1_700_000_000_000_000_000 + i as i64 * 1_000_000;
            w.write_frame(0, ts, f.len() as u32, &f).expect("frame");
        }
    }
    out.push((
        "damaged-first-byte-and-overrun-only-message.pcap",
        w.into_inner(),
    ));
    out
}

/// Write the committed regression corpus `fuzz/regressions/<target>/`: the minimised
/// seeds of every target (`seed-<hash>`) and the captures regression tests encode.
/// Files already there are kept: findings added by hand stay.
#[test]
#[ignore]
fn write_regression_corpus() {
    let captures = shared_captures();
    let root = regressions_root();
    for (name, _) in TARGETS {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).expect("create regression folder");
        for s in minimised_seeds(name, &captures) {
            let path = dir.join(format!("seed-{:016x}", input_hash(&s)));
            std::fs::write(path, &s).expect("write seed");
        }
        if matches!(name, "capture_read" | "pipeline") {
            for (file, bytes) in regression_captures() {
                std::fs::write(dir.join(file), bytes).expect("write regression input");
            }
        }
    }
}
