//! Conformance of the transport layer against real third-party captures with decrypted
//! ground truth (`shared/captures/openbc/*/*.frames.jsonl.gz`): cipher, message split,
//! byte-exact re-emit, reliability tracking.

use bcwire::diag::{Code, Direction};
use bcwire::transport::cipher::{decrypt, decrypt_datagram, encrypt, DatagramKind};
use bcwire::transport::facts::SessionFacts;
use bcwire::transport::packet::{parse, MessageBody, Packet};
use bcwire::transport::reliability::{AckOutcome, Delivery, SeqKey, Tracker};
use serde_json::Value;
use std::collections::HashMap;
use std::io::BufRead;

use crate::common::shared_dir;

struct Frame {
    frame: u64,
    time_ns: i64,
    dir: Direction,
    client_port: u64,
    json: Value,
}

/// All frames of every capture, one Vec per capture.
fn load() -> Option<Vec<(String, Vec<Frame>)>> {
    let Some(dir) = shared_dir() else {
        eprintln!("note: shared captures not found; set BCWIRE_SHARED to run this test");
        return None;
    };
    let mut out = Vec::new();
    let mut folders: Vec<_> = std::fs::read_dir(dir.join("captures/openbc"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    folders.sort();
    for folder in folders {
        let mut files: Vec<_> = std::fs::read_dir(&folder)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(".frames.jsonl.gz"))
            .collect();
        files.sort();
        for path in files {
            let gz = flate2::read::GzDecoder::new(std::fs::File::open(&path).ok()?);
            let mut frames = Vec::new();
            for line in std::io::BufReader::new(gz).lines() {
                let json: Value = serde_json::from_str(&line.ok()?).ok()?;
                frames.push(Frame {
                    frame: json["frame"].as_u64()?,
                    time_ns: (json["time"].as_f64()? * 1e9).round() as i64,
                    dir: match json["dir"].as_str()? {
                        "C2S" => Direction::C2S,
                        _ => Direction::S2C,
                    },
                    client_port: json["client_port"].as_u64()?,
                    json,
                });
            }
            out.push((path.display().to_string(), frames));
        }
    }
    Some(out)
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn plain_of(f: &Frame) -> Vec<u8> {
    unhex(f.json["plain_hex"].as_str().unwrap())
}

#[test]
fn cipher_and_message_split_match_ground_truth() {
    let Some(captures) = load() else { return };
    let mut checked_frames = 0;
    let mut checked_msgs = 0;
    for (name, frames) in &captures {
        for f in frames {
            let j = &f.json;
            let ctx = format!("{name} frame {}", f.frame);
            if j["kind"] == "gamespy" {
                let text = j["text"].as_str().unwrap().as_bytes().to_vec();
                let mut buf = text.clone();
                assert_eq!(decrypt_datagram(&mut buf), DatagramKind::GameSpy, "{ctx}");
                assert_eq!(buf, text, "{ctx}: GameSpy text touched");
                continue;
            }
            let wire = unhex(j["wire_hex"].as_str().unwrap());
            let plain = plain_of(f);
            let mut buf = wire.clone();
            assert_eq!(decrypt_datagram(&mut buf), DatagramKind::Game, "{ctx}");
            assert_eq!(hex(&buf), hex(&plain), "{ctx}: decrypt");
            encrypt(&mut buf);
            assert_eq!(buf, wire, "{ctx}: encrypt");

            let p: Packet = parse(&plain);
            assert_eq!(u64::from(p.peer_id), j["peer"].as_u64().unwrap(), "{ctx}");
            assert_eq!(
                u64::from(p.msg_count),
                j["msg_count"].as_u64().unwrap(),
                "{ctx}"
            );
            assert!(p.warnings.is_empty(), "{ctx}: {:?}", p.warnings);
            assert_eq!(p.undecoded, None, "{ctx}");
            assert_eq!(p.emit(&plain), plain, "{ctx}: re-emit");
            for w in p.all_warnings() {
                assert_eq!(w.code, Code::NonStock, "{ctx}: {w}");
            }
            let truth = j["msgs"].as_array().unwrap();
            assert_eq!(p.messages.len(), truth.len(), "{ctx}");
            let mut end = 2;
            for (m, t) in p.messages.iter().zip(truth) {
                let ctx = format!("{ctx} msg at {}", m.offset);
                assert_eq!(m.offset, end, "{ctx}: contiguous");
                end = m.offset + m.len;
                assert_eq!(
                    u64::from(m.type_byte()),
                    t["type"].as_u64().unwrap(),
                    "{ctx}"
                );
                assert_eq!(m.len as u64, t["len"].as_u64().unwrap(), "{ctx}");
                match &m.body {
                    MessageBody::Data(d) => {
                        assert_eq!(Some(d.reliable), t["reliable"].as_bool(), "{ctx}");
                        assert_eq!(Some(d.fragment.is_some()), t["fragment"].as_bool(), "{ctx}");
                        assert_eq!(
                            Some(u64::from(d.flags_len)),
                            t["flags_len"].as_u64(),
                            "{ctx}"
                        );
                        assert_eq!(d.seq.map(u64::from), t["seq"].as_u64(), "{ctx}");
                        assert_eq!(
                            d.opcode(&plain).map(u64::from),
                            t["opcode"].as_u64(),
                            "{ctx}"
                        );
                        assert_eq!(
                            Some(hex(&plain[d.payload.clone()]).as_str()),
                            t["payload_hex"].as_str(),
                            "{ctx}"
                        );
                        assert!(m.warnings.is_empty(), "{ctx}: {:?}", m.warnings);
                    }
                    MessageBody::Ack(a) => {
                        assert_eq!(Some(u64::from(a.seq)), t["seq"].as_u64(), "{ctx}");
                        assert_eq!(Some(u64::from(a.flags)), t["flags"].as_u64(), "{ctx}");
                        // Test clients set 0x80 in every ACK (variants.md).
                        assert_eq!(!m.warnings.is_empty(), a.flags & 0x80 != 0, "{ctx}");
                    }
                    MessageBody::Low(l) => {
                        // Ground truth reads low types as [type][len][flags][body…].
                        let flags_byte = plain.get(m.offset + 2).filter(|_| m.len > 2);
                        assert_eq!(
                            flags_byte.map(|&b| u64::from(b)),
                            t["flags_byte"].as_u64(),
                            "{ctx}"
                        );
                        assert_eq!(
                            l.header.flags_byte().map(u64::from),
                            t["flags_byte"].as_u64(),
                            "{ctx}"
                        );
                        assert_eq!(l.seq.map(u64::from), t["seq"].as_u64(), "{ctx}");
                        if let Some(body) = t["body_hex"].as_str() {
                            assert_eq!(hex(&plain[m.offset + 2..end]), body, "{ctx}");
                        }
                        // Every captured low message deviates from stock somewhere
                        // (flags 0x80, one-byte length, type 0x06); 0x03 replies don't.
                        let stock_reply = t["flags_byte"].as_u64() == Some(0xC0);
                        assert_eq!(
                            m.warnings.is_empty(),
                            stock_reply,
                            "{ctx}: {:?}",
                            m.warnings
                        );
                    }
                    MessageBody::Unknown { .. } => panic!("{ctx}: unknown type"),
                }
                checked_msgs += 1;
            }
            assert_eq!(end, plain.len(), "{ctx}: every byte in a message");
            checked_frames += 1;
        }
    }
    eprintln!("checked {checked_frames} BC frames, {checked_msgs} messages");
    assert!(checked_frames > 400);
}

#[test]
fn reliability_over_captures_is_sensible() {
    let Some(captures) = load() else { return };
    for (name, frames) in &captures {
        let mut tracker: Tracker<(u64, Direction)> = Tracker::new();
        // What the test itself last saw per (stream, seq key): the real bytes.
        let mut last_bytes: HashMap<((u64, Direction), SeqKey), Vec<u8>> = HashMap::new();
        let (mut new, mut resends, mut reused) = (0, 0, 0);
        let (mut matched, mut dup, mut stale, mut unknown) = (0, 0, 0, 0);
        for f in frames.iter().filter(|f| f.json["kind"] == "bc") {
            let plain = plain_of(f);
            let p = parse(&plain);
            let stream = (f.client_port, f.dir);
            let reverse = (
                f.client_port,
                match f.dir {
                    Direction::C2S => Direction::S2C,
                    Direction::S2C => Direction::C2S,
                },
            );
            for m in &p.messages {
                if let MessageBody::Ack(a) = &m.body {
                    match tracker.on_ack(&reverse, SeqKey::of_ack(a), f.time_ns, f.frame) {
                        AckOutcome::Matched {
                            delay_ns,
                            since_first_ns,
                            ..
                        } => {
                            assert!(delay_ns >= 0 && since_first_ns >= delay_ns);
                            assert!(
                                delay_ns < 5_000_000_000,
                                "{name} frame {}: slow ACK",
                                f.frame
                            );
                            matched += 1;
                        }
                        AckOutcome::Duplicate { .. } => dup += 1,
                        AckOutcome::Stale { .. } => stale += 1,
                        AckOutcome::Unknown => unknown += 1,
                    }
                    continue;
                }
                let Some(key) = SeqKey::of_message(m) else {
                    continue;
                };
                let bytes = m.bytes(&plain).to_vec();
                let d = tracker.on_message(&stream, key, &bytes, f.time_ns, f.frame);
                let prev = last_bytes.insert((stream, key), bytes.clone());
                match d {
                    Delivery::Retransmission { .. } => {
                        assert_eq!(
                            prev.as_ref(),
                            Some(&bytes),
                            "{name} frame {}: false retransmission",
                            f.frame
                        );
                        resends += 1;
                    }
                    Delivery::New { reuse, .. } => {
                        assert_eq!(reuse.is_some(), prev.is_some(), "{name} frame {}", f.frame);
                        if reuse.is_some() {
                            reused += 1;
                        }
                        new += 1;
                    }
                }
            }
        }
        let report = tracker.finish();
        eprintln!(
            "{name}: {new} new ({reused} reused seq), {resends} resends; ACKs {matched} matched, {dup} duplicate, {stale} stale, {unknown} unknown; {} unacked",
            report.unacked.len()
        );
        for u in &report.unacked {
            eprintln!(
                "  unacked {:?} {:?} first frame {}",
                u.stream, u.key, u.first.frame
            );
        }
        assert!(new > 0 && matched > 0);
        // Full captures from the first packet: every ACK refers to a message seen.
        assert_eq!(unknown, 0, "{name}");
        // Most reliable messages are acknowledged in these short, loss-free captures.
        assert!(matched * 2 > new, "{name}: {matched} matched of {new}");
    }
}

#[test]
fn cipher_round_trips_every_captured_plaintext() {
    let Some(captures) = load() else { return };
    for (_, frames) in &captures {
        for f in frames.iter().filter(|f| f.json["kind"] == "bc") {
            let plain = plain_of(f);
            let mut buf = plain.clone();
            encrypt(&mut buf);
            decrypt(&mut buf);
            assert_eq!(buf, plain);
        }
    }
}

#[test]
fn session_facts_from_captures() {
    let Some(captures) = load() else { return };
    for (name, frames) in &captures {
        let mut facts: SessionFacts<u64> = SessionFacts::new();
        let mut end = 0;
        for f in frames.iter().filter(|f| f.json["kind"] == "bc") {
            let plain = plain_of(f);
            let p = parse(&plain);
            facts.on_datagram(&f.client_port, f.dir, p.peer_id, f.time_ns, f.frame);
            for m in &p.messages {
                if let MessageBody::Low(low) = &m.body {
                    let name = low.body.name(&plain);
                    facts.on_low(
                        &f.client_port,
                        f.dir,
                        low,
                        name.as_deref(),
                        f.time_ns,
                        f.frame,
                    );
                }
            }
            end = f.time_ns;
        }
        let clients = facts.finish(end);
        assert!(!clients.is_empty());
        for (port, c) in &clients {
            eprintln!(
                "{name}: client {port}: id {:?} name {:?} connect {:?} disconnect {:?} warnings {:?}",
                c.assigned_peer_id,
                c.name,
                c.connect_request.map(|s| s.frame),
                c.disconnect.map(|s| s.frame),
                c.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>()
            );
            // Every captured client connects, is assigned an id, names itself and
            // leaves with a disconnect (`06 02`).
            assert!(
                c.connect_request.is_some() && c.connect_reply.is_some(),
                "{name} {port}"
            );
            assert!(matches!(c.assigned_peer_id, Some(2..=4)), "{name} {port}");
            assert!(
                c.name.as_deref().is_some_and(|n| !n.is_empty()),
                "{name} {port}"
            );
            assert!(c.disconnect.is_some(), "{name} {port}");
            assert!(!c.timed_out);
        }
    }
}
