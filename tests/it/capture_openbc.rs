//! The real OpenBC captures (pcap and pcapng) read completely and classified exactly as
//! their ground truth says: every frame, direction, kind, client and session.

use bcwire::capture::{CaptureFormat, CaptureReader, Frame};
use bcwire::diag::Direction;
use bcwire::flow::{PayloadKind, SessionTable, DEFAULT_GAME_PORT};
use bcwire::net::{NetDecoder, NetOutcome};
use serde_json::Value;
use std::io::Read;
use std::path::PathBuf;

use crate::common::shared_dir;

fn captures() -> Vec<PathBuf> {
    let Some(shared) = shared_dir() else {
        eprintln!("note: shared captures not found (set BCWIRE_SHARED); test skipped");
        return vec![];
    };
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(shared.join("captures/openbc"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

fn ground_truth(dir: &std::path::Path, name: &str) -> (Vec<Value>, Value) {
    let gz = std::fs::File::open(dir.join(format!("{name}.frames.jsonl.gz"))).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_string(&mut text)
        .unwrap();
    let frames = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{name}.summary.json"))).unwrap(),
    )
    .unwrap();
    (frames, summary)
}

fn add(total: &mut [u64; 2], more: [u64; 2]) {
    total[0] += more[0];
    total[1] += more[1];
}

fn dir_name(d: Direction) -> &'static str {
    match d {
        Direction::C2S => "C2S",
        Direction::S2C => "S2C",
    }
}

/// Disconnects (type 0x05 stock, 0x06 OpenBC) as the transport layer would report them.
fn is_disconnect(truth: &Value) -> bool {
    truth["dir"] == "C2S"
        && truth["msgs"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["type"] == 5 || m["type"] == 6))
}

#[test]
fn openbc_captures_match_their_ground_truth() {
    for dir in captures() {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        eprintln!("checking {name}");
        let (truth, summary) = ground_truth(&dir, &name);
        let mut per_format_frames: Vec<Vec<Frame>> = vec![];
        for ext in ["pcap", "pcapng"] {
            let path = dir.join(format!("{name}.{ext}"));
            let mut reader = CaptureReader::new(std::fs::File::open(&path).unwrap()).unwrap();
            match (ext, reader.format()) {
                ("pcap", CaptureFormat::Pcap { .. }) | ("pcapng", CaptureFormat::PcapNg) => {}
                (e, f) => panic!("{e} read as {f}"),
            }
            let mut net = NetDecoder::default();
            let mut table = SessionTable::new(DEFAULT_GAME_PORT);
            let mut frames = vec![];
            let mut frame = Frame::default();
            while reader.read_into(&mut frame).unwrap() {
                frames.push(frame.clone());
                let t = &truth[frame.number as usize - 1];
                assert_eq!(t["frame"], frame.number);
                let ts = t["time"].as_f64().unwrap();
                assert!(
                    (frame.ts_ns as f64 / 1e9 - ts).abs() < 2e-6,
                    "{name}.{ext} frame {} time",
                    frame.number
                );
                let NetOutcome::Datagram(d) = net.decode(&frame) else {
                    panic!("{name}.{ext} frame {} is not a datagram", frame.number);
                };
                let c = table.classify(&d).unwrap();
                assert_eq!(
                    dir_name(c.direction),
                    t["dir"],
                    "{name}.{ext} frame {}",
                    frame.number
                );
                let kind = match c.kind {
                    PayloadKind::GameSpy => "gamespy",
                    PayloadKind::Bc { .. } => "bc",
                    PayloadKind::NotBc(r) => panic!("frame {}: {r}", frame.number),
                };
                assert_eq!(kind, t["kind"], "{name}.{ext} frame {}", frame.number);
                let client = &table.sessions()[c.session].clients[c.client];
                assert_eq!(
                    client.addr.port(),
                    t["client_port"],
                    "frame {}",
                    frame.number
                );
                if let (PayloadKind::Bc { peer_id }, Some(p)) = (c.kind, t["peer"].as_u64()) {
                    assert_eq!(u64::from(peer_id), p);
                }
                if is_disconnect(t) {
                    table.client_left(c.session, c.client, d.frame);
                }
            }
            assert!(reader.truncation().is_none());
            assert_eq!(reader.frames_read(), summary["pcap_total_frames"]);
            assert_eq!(truth.len() as u64, reader.frames_read());
            assert!(net.finish().leftovers.is_empty());

            // Totals by direction and kind.
            let mut packets = [0u64; 2];
            let mut gamespy = [0u64; 2];
            let mut bc = [0u64; 2];
            let mut bc_bytes = [0u64; 2];
            for s in table.sessions() {
                add(&mut packets, s.counters.packets);
                add(&mut gamespy, s.counters.gamespy);
                add(&mut bc, s.counters.bc);
                for c in s.game_clients() {
                    add(&mut bc_bytes, c.counters.bytes);
                }
            }
            for (counts, key) in [
                (packets, "frames_by_direction"),
                (gamespy, "gamespy_frames_by_direction"),
                (bc, "bc_frames_by_direction"),
                (bc_bytes, "bc_udp_payload_bytes_by_direction"),
            ] {
                assert_eq!(counts[0], summary[key]["C2S"], "{name}.{ext} {key}");
                assert_eq!(counts[1], summary[key]["S2C"], "{name}.{ext} {key}");
            }

            // Game clients, in order of first appearance.
            let clients: Vec<_> = table
                .sessions()
                .iter()
                .flat_map(|s| s.game_clients())
                .collect();
            let want = summary["clients"].as_array().unwrap();
            assert_eq!(clients.len(), want.len(), "{name}.{ext} clients");
            for (got, want) in clients.iter().zip(want) {
                assert_eq!(got.addr.port(), want["client_port"]);
                assert_eq!(got.activity.first_frame, want["first_frame"]);
                assert_eq!(got.counters.packets[0], want["frames"]["C2S"]);
                assert_eq!(got.counters.packets[1], want["frames"]["S2C"]);
                assert_eq!(got.peer_id.map(u64::from), want["wire_slot"].as_u64());
            }

            // One session per server run: its game packets equal that run's server log.
            let logs = summary["server_logs"].as_array().unwrap();
            assert_eq!(table.sessions().len(), logs.len(), "{name}.{ext} sessions");
            for (s, log) in table.sessions().iter().zip(logs) {
                assert_eq!(s.counters.total_bc(), log[1], "{name}.{ext} {}", log[0]);
            }
            per_format_frames.push(frames);
        }
        // The pcap (µs) and pcapng (ns) copies hold the same frames.
        let (a, b) = (&per_format_frames[0], &per_format_frames[1]);
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x.data, y.data);
            assert_eq!(x.ts_ns / 1000, y.ts_ns / 1000, "frame {}", x.number);
        }
    }
}
