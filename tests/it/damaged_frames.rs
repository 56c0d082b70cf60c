//! Every frame keeps its record, whatever its damage.
//!
//! Copies of the shipped sample and of every shared capture with bits flipped in every
//! UDP payload (written with pcap-file, payloads found with etherparse: neither is
//! bcwire's own reader), twenty seeds each. The frames pcap-file reads are counted
//! independently; `decode --format jsonl` must give exactly one packet record per frame,
//! the table one line per message and one per record without messages, and every
//! record without messages a located warning saying what went wrong.
//!
//! The defects this catches: a datagram whose byte 0 could not start a game packet was
//! dropped to `not_bc` unless its flow had already carried game packets (a damaged
//! connect, a damaged host packet to a client still joining, a GameSpy query whose `\`
//! changed), and a datagram whose transport walk found no message (the first message
//! overran the datagram, or the count byte was damaged) had its record dropped by
//! `decode` and no line in the table. Both were silent: `info` still counted the frame.

use crate::common::rng::Rng;
use crate::common::*;
use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};
use pcap_file::pcapng::{Block, PcapNgReader, PcapNgWriter};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const SEEDS: u64 = 20;

/// Where the UDP payload of an Ethernet frame lies, if it has one.
fn udp_payload(frame: &[u8]) -> Option<std::ops::Range<usize>> {
    let sliced = etherparse::SlicedPacket::from_ethernet(frame).ok()?;
    let Some(etherparse::TransportSlice::Udp(udp)) = sliced.transport else {
        return None;
    };
    let payload = udp.payload();
    let start = payload.as_ptr() as usize - frame.as_ptr() as usize;
    Some(start..start + payload.len())
}

/// One to three bit flips at random places of every UDP payload of `frame`.
fn damage(frame: &mut [u8], rng: &mut Rng) {
    let Some(range) = udp_payload(frame) else {
        return;
    };
    if range.is_empty() {
        return;
    }
    for _ in 0..1 + rng.below(3) {
        let at = range.start + rng.below(range.len());
        frame[at] ^= 1 << rng.below(8);
    }
}

/// A damaged copy of `path` (pcap or pcapng, Ethernet) and the number of frames read.
fn damaged_copy(path: &Path, out: &Path, seed: u64) -> u64 {
    let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xDA3E_39CB_94B9_5BDB);
    let file = std::fs::File::open(path).expect("capture");
    let dest = std::fs::File::create(out).expect("damaged copy");
    let mut frames = 0;
    if path.extension().is_some_and(|e| e == "pcapng") {
        let mut r = PcapNgReader::new(file).expect("pcapng header");
        let mut w = PcapNgWriter::with_section_header(dest, r.section().clone())
            .expect("pcapng header written");
        while let Some(block) = r.next_block() {
            let mut block = block.expect("pcapng block").0.into_owned();
            match &mut block {
                Block::EnhancedPacket(p) => {
                    frames += 1;
                    damage(p.data.to_mut(), &mut rng);
                }
                Block::SimplePacket(p) => {
                    frames += 1;
                    damage(p.data.to_mut(), &mut rng);
                }
                Block::Packet(p) => {
                    frames += 1;
                    damage(p.data.to_mut(), &mut rng);
                }
                _ => {}
            }
            w.write_block(&block).expect("block written");
        }
    } else {
        let mut r = PcapReader::new(file).expect("pcap header");
        let mut w = PcapWriter::with_header(dest, r.header()).expect("pcap header written");
        while let Some(p) = r.next_packet() {
            let p = p.expect("pcap record");
            frames += 1;
            let mut data = p.data().to_vec();
            damage(&mut data, &mut rng);
            let copy = PcapPacket::new(p.timestamp(), p.orig_len(), data).expect("record");
            w.write_packet(&copy).expect("record written");
        }
    }
    frames
}

fn inputs() -> Vec<PathBuf> {
    let mut paths = vec![shipped_capture("sample.pcapng")];
    for (name, folder) in shared_captures() {
        paths.push(folder.join(format!("{name}.pcap")));
        paths.push(folder.join(format!("{name}.pcapng")));
    }
    paths
}

/// The packet records of `decode --format jsonl`.
fn records(path: &str) -> Vec<Value> {
    bcwire_stdout(&["decode", "--format", "jsonl", path])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON line"))
        .filter(|v| v["type"] == "packet")
        .collect()
}

/// Frame numbers 1..=frames, each once.
fn assert_each_frame_once(what: &str, mut seen: Vec<u64>, frames: u64) {
    seen.sort_unstable();
    let missing: Vec<u64> = (1..=frames)
        .filter(|f| seen.binary_search(f).is_err())
        .collect();
    assert!(
        missing.is_empty(),
        "{what}: no record for frames {missing:?}"
    );
    assert_eq!(seen.len() as u64, frames, "{what}: a frame has two records");
}

#[test]
fn every_damaged_frame_keeps_one_record_in_json_lines_and_the_table() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("damaged_frames");
    std::fs::create_dir_all(&dir).expect("temporary folder");
    let mut without_messages = 0;
    for input in inputs() {
        let name = input
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        for seed in 0..SEEDS {
            let copy = dir.join(format!("{seed}-{name}"));
            let frames = damaged_copy(&input, &copy, seed);
            let path = copy.to_str().expect("UTF-8 path");
            let what = format!("{name} seed {seed}");

            let recs = records(path);
            assert_eq!(
                recs.len() as u64,
                frames,
                "{what}: packet records vs frames"
            );
            assert_each_frame_once(
                &what,
                recs.iter()
                    .map(|r| r["frame"].as_u64().expect("frame"))
                    .collect(),
                frames,
            );
            // A record without messages says what went wrong, and where.
            for r in &recs {
                if r["kind"] == "game" && r["messages"].as_array().is_some_and(|m| m.is_empty()) {
                    without_messages += 1;
                    let warnings = r["warnings"].as_array().expect("warnings");
                    if r["msg_count"] != 0 {
                        assert!(!warnings.is_empty(), "{what}: {r}");
                    }
                    for w in warnings {
                        assert!(w["offset"].is_u64(), "{what}: unlocated {w} in {r}");
                    }
                }
            }

            // The table: one line per message, one per record without messages (a
            // GameSpy datagram, a game datagram whose walk found none).
            let table = bcwire_stdout(&["decode", path]);
            let lines: Vec<&str> = table.lines().collect();
            let expected: usize = recs
                .iter()
                .map(|r| r["messages"].as_array().map_or(1, |m| m.len().max(1)))
                .sum();
            assert_eq!(lines.len(), expected, "{what}: table lines");
            let mut table_frames: Vec<u64> = lines
                .iter()
                .map(|l| {
                    l.split_whitespace()
                        .next()
                        .and_then(|f| f.parse().ok())
                        .unwrap_or_else(|| panic!("{what}: line without a frame: {l}"))
                })
                .collect();
            table_frames.dedup();
            assert_each_frame_once(&format!("{what} (table)"), table_frames, frames);

            #[cfg(feature = "parquet")]
            if seed < 3 {
                parquet_rows_match(&what, &copy, &recs);
            }
        }
    }
    // The damage does reach the case the fix is about.
    if !shared_captures().is_empty() {
        assert!(
            without_messages > 0,
            "no record without messages was produced"
        );
    }
}

/// Per direction: datagrams, GameSpy datagrams, bytes, transport messages,
/// retransmissions, ACKs, warnings and non-stock warnings, and the transport types,
/// counted from packet records.
fn record_counts(recs: &[Value]) -> BTreeMap<String, ([u64; 8], BTreeMap<u64, u64>)> {
    let mut out: BTreeMap<String, ([u64; 8], BTreeMap<u64, u64>)> = BTreeMap::new();
    for r in recs {
        let (n, types) = out
            .entry(r["direction"].as_str().expect("direction").to_string())
            .or_default();
        n[0] += 1;
        n[1] += u64::from(r["kind"] == "gamespy");
        n[2] += r["udp_length"].as_u64().expect("udp_length");
        let warn = |ws: &Value, n: &mut [u64; 8]| {
            for w in ws.as_array().into_iter().flatten() {
                n[6] += 1;
                n[7] += u64::from(w["code"] == "non_stock");
            }
        };
        warn(&r["warnings"], n);
        for m in r["messages"].as_array().into_iter().flatten() {
            n[3] += 1;
            n[4] += u64::from(m["retransmission"] == true);
            n[5] += u64::from(m["transport_name"] == "ack");
            *types
                .entry(m["transport_type"].as_u64().expect("transport_type"))
                .or_default() += 1;
            warn(&m["warnings"], n);
            warn(&m["assembled"]["warnings"], n);
        }
    }
    out
}

// Catches: `stats`, which counts what the pipeline tallies and builds no record, missing
// a damaged first byte's warning, a datagram whose walk found no message, or a message
// the records show.
#[test]
fn stats_of_damaged_copies_count_what_the_records_hold() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("damaged_stats");
    std::fs::create_dir_all(&dir).expect("temporary folder");
    let mut damaged = 0;
    for input in inputs() {
        let name = input
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        for seed in 0..SEEDS / 4 {
            let copy = dir.join(format!("{seed}-{name}"));
            damaged_copy(&input, &copy, seed);
            let path = copy.to_str().expect("UTF-8 path");
            let recs = records(path);
            damaged += recs
                .iter()
                .filter(|r| r["warnings"][0]["code"] == "damaged_frame")
                .count();
            let want = record_counts(&recs);
            let stats: Value =
                serde_json::from_str(&bcwire_stdout(&["stats", "--format", "json", path]))
                    .expect("stats JSON");
            for (dir, (n, types)) in &want {
                let d = &stats["directions"][dir];
                let keys = [
                    "datagrams",
                    "gamespy_datagrams",
                    "bytes",
                    "messages",
                    "retransmissions",
                    "acks",
                    "warnings",
                    "non_stock",
                ];
                for (key, n) in keys.iter().zip(n) {
                    assert_eq!(d[key].as_u64(), Some(*n), "{name} seed {seed} {dir}: {key}");
                }
                let got: BTreeMap<u64, u64> = d["transport_types"]
                    .as_object()
                    .expect("transport types")
                    .iter()
                    .map(|(k, v)| {
                        let k = k.trim_start_matches("0x");
                        (
                            u64::from_str_radix(k, 16).expect("hex type"),
                            v.as_u64().expect("count"),
                        )
                    })
                    .collect();
                assert_eq!(&got, types, "{name} seed {seed} {dir}: transport types");
            }
        }
    }
    assert!(damaged > 0, "the copies carry damaged frames");
}

/// `decode --format parquet` writes a row for every game message of those records.
#[cfg(feature = "parquet")]
fn parquet_rows_match(what: &str, copy: &Path, recs: &[Value]) {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let out = copy.with_extension("parquet");
    let _ = std::fs::remove_file(&out);
    bcwire_stdout(&[
        "decode",
        "--format",
        "parquet",
        "-o",
        out.to_str().expect("UTF-8 path"),
        copy.to_str().expect("UTF-8 path"),
    ]);
    let reader = SerializedFileReader::new(std::fs::File::open(&out).expect("parquet"))
        .expect("parquet file");
    let rows = reader.metadata().file_metadata().num_rows() as usize;
    let game_messages = recs
        .iter()
        .filter_map(|r| r["messages"].as_array())
        .flatten()
        .filter(|m| m.get("opcode").is_some() || m.get("assembled").is_some())
        .count();
    assert_eq!(rows, game_messages, "{what}: parquet rows vs game messages");
}
