//! Captures written by `synth` go through the decoding stages (capture → net → flow →
//! cipher → transport → reliability → reassembly → game decoders) and come out clean,
//! with the counts the generator reported.

use bcwire::capture::CaptureReader;
use bcwire::diag::Direction;
use bcwire::flow::{PayloadKind, SessionTable};
use bcwire::game::objects::ObjectRegistry;
use bcwire::game::opcodes::{decode, DecodeContext};
use bcwire::game::ships::ShipCatalog;
use bcwire::net::{NetDecoder, NetOutcome};
use bcwire::synth::{self, Format, Link, SynthArgs, SynthReport};
use bcwire::transport::cipher::decrypt;
use bcwire::transport::packet::{parse, MessageBody};
use bcwire::transport::reassembly::{Fragment, PushOutcome};
use bcwire::transport::reliability::{Delivery, SeqKey, Tracker};
use bcwire::transport::{Limits, Reassembler};
use std::collections::BTreeMap;
use std::io::Cursor;

/// Counts of one direction, computed here from the decoded capture.
#[derive(Debug, Default, Clone, PartialEq)]
struct Dir {
    datagrams: u64,
    bytes: u64,
    unacked: u64,
    gamespy: u64,
    messages: u64,
    retransmissions: u64,
    acks: u64,
    fragments: u64,
    sets: u64,
    opcodes: BTreeMap<String, u64>,
    dirty: BTreeMap<String, u64>,
    starts: BTreeMap<String, u64>,
}

struct Decoded {
    dirs: [Dir; 2],
    sessions: usize,
    game_clients: usize,
    clients: usize,
    warnings: Vec<String>,
    messages: Vec<(Direction, Vec<u8>)>,
    ip_fragmented: u64,
}

fn decode_capture(bytes: Vec<u8>) -> Decoded {
    let mut reader = CaptureReader::new(Cursor::new(bytes)).unwrap();
    let mut net = NetDecoder::default();
    let mut flows = SessionTable::new(22101);
    let mut tracker: Tracker<(usize, usize, Direction)> = Tracker::new();
    let mut reasm: Reassembler<(usize, usize, Direction)> = Reassembler::new(Limits::default());
    let catalog = ShipCatalog::stock();
    let mut registry = ObjectRegistry::new();
    let mut out = Decoded {
        dirs: Default::default(),
        sessions: 0,
        game_clients: 0,
        clients: 0,
        warnings: Vec::new(),
        messages: Vec::new(),
        ip_fragmented: 0,
    };
    while let Some(frame) = reader.next_frame() {
        let frame = frame.unwrap();
        let d = match net.decode(&frame) {
            NetOutcome::Datagram(d) => d,
            NetOutcome::FragmentHeld => continue,
            NetOutcome::Skipped(r) => panic!("frame {}: {r}", frame.number),
        };
        if !d.fragment_frames.is_empty() {
            out.ip_fragmented += 1;
        }
        let c = flows.classify(&d).unwrap();
        let dir = &mut out.dirs[c.direction.index()];
        dir.datagrams += 1;
        dir.bytes += d.payload.len() as u64;
        if c.kind == PayloadKind::GameSpy {
            dir.gamespy += 1;
            continue;
        }
        let mut plain = d.payload.clone();
        decrypt(&mut plain);
        let p = parse(&plain);
        for w in p.all_warnings() {
            out.warnings.push(format!("frame {}: {w}", d.frame));
        }
        let stream = (c.session, c.client, c.direction);
        let other = (
            c.session,
            c.client,
            match c.direction {
                Direction::C2S => Direction::S2C,
                Direction::S2C => Direction::C2S,
            },
        );
        for m in &p.messages {
            let dir = &mut out.dirs[c.direction.index()];
            dir.messages += 1;
            let mut game: Option<Vec<u8>> = None;
            match &m.body {
                MessageBody::Ack(a) => {
                    dir.acks += 1;
                    tracker.on_ack(&other, SeqKey::of_ack(a), d.ts_ns, d.frame);
                }
                MessageBody::Data(dm) => {
                    if let Some(key) = SeqKey::of_message(m) {
                        let del =
                            tracker.on_message(&stream, key, m.bytes(&plain), d.ts_ns, d.frame);
                        if dm.fragment.is_some() {
                            dir.fragments += 1;
                        }
                        if let Delivery::Retransmission { .. } = del {
                            dir.retransmissions += 1;
                            continue;
                        }
                    }
                    let chunk = &plain[dm.payload.clone()];
                    match dm.fragment {
                        None => game = Some(chunk.to_vec()),
                        Some(f) => {
                            let r = reasm.push(
                                &stream,
                                Fragment {
                                    seq: dm.seq.unwrap(),
                                    index: f.index,
                                    total: f.total,
                                    chunk,
                                    offset: m.offset,
                                    frame: d.frame,
                                    time_ns: d.ts_ns,
                                },
                            );
                            for w in &r.warnings {
                                out.warnings.push(format!("frame {}: {w}", d.frame));
                            }
                            if let PushOutcome::Complete(done) = r.outcome {
                                dir.sets += 1;
                                game = Some(done.payload);
                            }
                        }
                    }
                }
                MessageBody::Low(low) => {
                    let key = SeqKey::of_message(m).unwrap();
                    let repeat = !tracker
                        .on_message(&stream, key, m.bytes(&plain), d.ts_ns, d.frame)
                        .is_new();
                    // The host's peer-info repeats are keepalive echoes, as in the pipeline.
                    let keepalive = c.direction == Direction::S2C
                        && low.kind == bcwire::transport::low::LowKind::PeerInfo;
                    if repeat && !keepalive {
                        dir.retransmissions += 1;
                    }
                }
                MessageBody::Unknown { .. } => panic!("unknown transport type"),
            }
            let Some(g) = game else { continue };
            let gm = decode(&g, &DecodeContext::new(&registry, &catalog));
            registry.observe(&gm, d.frame, &catalog);
            if gm.warnings.is_empty() {
                let body = gm.body.as_ref().expect("a clean decode has a typed body");
                assert_eq!(body.emit(), g, "frame {}: typed body round trip", d.frame);
            }
            for w in &gm.warnings {
                out.warnings
                    .push(format!("frame {} opcode {:#04x}: {w}", d.frame, gm.opcode));
            }
            let dir = &mut out.dirs[c.direction.index()];
            *dir.opcodes
                .entry(format!("0x{:02X}", gm.opcode))
                .or_default() += 1;
            if let Some(su) = gm.state_update() {
                *dir.dirty.entry(format!("0x{:02X}", su.flags)).or_default() += 1;
                if let Some(s) = su.subsystem_start {
                    *dir.starts.entry(s.to_string()).or_default() += 1;
                }
            }
            out.messages.push((c.direction, g));
        }
    }
    assert!(reader.truncation().is_none());
    let rel = tracker.finish();
    for u in &rel.unacked {
        out.dirs[u.stream.2.index()].unacked += 1;
    }
    out.dirs[0].unacked += rel.unacked_not_listed;
    out.sessions = flows.sessions().len();
    out.clients = flows.sessions().iter().map(|s| s.clients.len()).sum();
    out.game_clients = flows
        .sessions()
        .iter()
        .map(|s| s.game_clients().count())
        .sum();
    out
}

fn generate(args: &SynthArgs) -> (SynthReport, Vec<u8>) {
    synth::generate(args, Vec::new()).unwrap()
}

fn args(players: usize, minutes: f64, seed: u64) -> SynthArgs {
    let mut a = SynthArgs::new("unused");
    a.players = players;
    a.minutes = Some(minutes);
    a.seed = seed;
    a
}

fn check_against_report(report: &SynthReport, got: &Decoded) {
    assert!(
        got.warnings.is_empty(),
        "{:#?}",
        &got.warnings[..got.warnings.len().min(20)]
    );
    assert_eq!(got.sessions, report.sessions);
    assert!(got.game_clients <= report.clients && got.game_clients > 0);
    assert_eq!(got.clients, report.clients);
    for d in [Direction::C2S, Direction::S2C] {
        let want = report.directions.get(d);
        let have = &got.dirs[d.index()];
        assert_eq!(have.datagrams, want.datagrams, "{d} datagrams");
        assert_eq!(have.gamespy, want.gamespy_datagrams, "{d} gamespy");
        assert_eq!(have.messages, want.messages, "{d} messages");
        assert_eq!(have.bytes, want.bytes, "{d} bytes");
        assert_eq!(have.unacked, want.unacked, "{d} unacked");
        assert_eq!(have.acks, want.acks, "{d} acks");
        assert_eq!(
            have.retransmissions, want.retransmissions,
            "{d} retransmissions"
        );
        assert_eq!(have.fragments, want.fragments, "{d} fragments");
        assert_eq!(have.sets, want.fragment_sets_completed, "{d} sets");
        assert_eq!(have.opcodes, want.opcodes, "{d} opcodes");
        assert_eq!(have.dirty, want.dirty_flags, "{d} dirty flags");
        assert_eq!(have.starts, want.subsystem_start, "{d} subsystem starts");
    }
}

#[test]
fn three_player_minute_decodes_clean_and_matches_the_report() {
    let mut a = args(3, 1.0, 7);
    a.record_messages = true;
    let (report, bytes) = generate(&a);
    let got = decode_capture(bytes);
    check_against_report(&report, &got);
    // The delivered game messages are the emitted ones, in order.
    let emitted: Vec<(Direction, Vec<u8>)> = report
        .messages
        .as_ref()
        .unwrap()
        .iter()
        .map(|m| (m.direction, m.bytes.clone()))
        .collect();
    assert_eq!(got.messages, emitted);
    let c2s = &report.directions.c2s;
    let s2c = &report.directions.s2c;
    // The session has its stock ingredients.
    for op in ["0x03", "0x07", "0x08", "0x19", "0x1C", "0x21", "0x2A"] {
        assert!(c2s.opcodes.contains_key(op), "c2s {op}: {:?}", c2s.opcodes);
    }
    for op in [
        "0x00", "0x01", "0x03", "0x06", "0x17", "0x1C", "0x20", "0x28", "0x35",
    ] {
        assert!(s2c.opcodes.contains_key(op), "s2c {op}: {:?}", s2c.opcodes);
    }
    assert_eq!(c2s.opcodes["0x21"], 15, "five checksum replies per client");
    assert_eq!(
        c2s.fragment_sets_completed, 3,
        "one fragmented round-2 reply per client"
    );
    assert!(c2s.retransmissions >= 6, "fragment resends after the ACK");
    assert!(report.clients_left == 1);
    // Every client StateUpdate carries 0x80, every host one 0x20.
    assert!(c2s
        .dirty_flags
        .keys()
        .all(|k| u8::from_str_radix(&k[2..], 16).unwrap() & 0x80 != 0));
    assert!(s2c
        .dirty_flags
        .keys()
        .all(|k| u8::from_str_radix(&k[2..], 16).unwrap() & 0x20 != 0));
    assert!(s2c.dirty_flags.contains_key("0x20"));
}

#[test]
fn loss_causes_retransmissions_that_still_count_once() {
    let mut a = args(2, 0.5, 3);
    a.loss = 0.1;
    a.link = Link::Sll2;
    a.format = Some(Format::Pcap);
    let (report, bytes) = generate(&a);
    let got = decode_capture(bytes);
    check_against_report(&report, &got);
    let r = report.directions.c2s.retransmissions + report.directions.s2c.retransmissions;
    assert!(r > 20, "{r}");
}

#[test]
fn a_client_that_stops_acking_gets_resends_counted_as_resends() {
    // The host resends every message the first client never ACKs for the rest of the
    // session, while its counter for that client moves on by well over 128 numbers:
    // every copy is a resend, none a new message.
    let mut a = args(6, 3.0, 1);
    a.stop_acking = Some(10.0);
    let (report, bytes) = generate(&a);
    let got = decode_capture(bytes);
    check_against_report(&report, &got);
    let s2c = &report.directions.s2c;
    assert!(s2c.retransmissions > 5000, "{}", s2c.retransmissions);
    assert!(s2c.unacked > 250, "{}", s2c.unacked);
}

#[test]
fn a_small_mtu_fragments_the_big_datagrams_and_they_reassemble() {
    // Stock datagrams are at most 512 bytes, so a 576-byte MTU never splits them.
    let mut a = args(2, 0.3, 5);
    a.mtu = 576;
    let (report, bytes) = generate(&a);
    let got = decode_capture(bytes);
    check_against_report(&report, &got);
    assert_eq!(got.ip_fragmented, 0);
    assert_eq!(
        report.frames,
        report.directions.c2s.datagrams + report.directions.s2c.datagrams
    );
    // 400 splits the datagrams that carry the checksum reply fragments and more.
    let mut a = args(2, 0.3, 5);
    a.mtu = 400;
    a.link = Link::Null;
    let (report, bytes) = generate(&a);
    let got = decode_capture(bytes);
    check_against_report(&report, &got);
    assert!(got.ip_fragmented > 0);
    assert!(report.frames > report.directions.c2s.datagrams + report.directions.s2c.datagrams);
}

#[test]
fn every_link_and_format_reads_back() {
    for link in [Link::Ethernet, Link::Sll2, Link::Null, Link::Raw] {
        for format in [Format::Pcap, Format::Pcapng] {
            let mut a = args(2, 0.2, 11);
            a.link = link;
            a.format = Some(format);
            let (report, bytes) = generate(&a);
            let got = decode_capture(bytes);
            check_against_report(&report, &got);
        }
    }
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let a = args(3, 0.3, 42);
    let (r1, b1) = generate(&a);
    let (r2, b2) = generate(&a);
    assert_eq!(b1, b2);
    assert_eq!(r1, r2);
    let (_, b3) = generate(&args(3, 0.3, 43));
    assert_ne!(b1, b3);
}

#[test]
fn packet_limit_stops_exactly() {
    let mut a = SynthArgs::new("unused");
    a.players = 4;
    a.packets = Some(3000);
    let (report, bytes) = generate(&a);
    assert_eq!(
        report.directions.c2s.datagrams + report.directions.s2c.datagrams,
        3000
    );
    let got = decode_capture(bytes);
    check_against_report(&report, &got);
    // Cut before every client joined: the report names only those in the file.
    a.players = 15;
    a.packets = Some(200);
    let (report, bytes) = generate(&a);
    assert!(report.clients < 15, "{}", report.clients);
    let got = decode_capture(bytes);
    check_against_report(&report, &got);
}

#[test]
fn fifteen_players_stay_clean() {
    let (report, bytes) = generate(&args(15, 0.8, 2));
    let got = decode_capture(bytes);
    check_against_report(&report, &got);
}

#[test]
fn report_serializes_with_the_stats_names() {
    let (report, _) = generate(&args(2, 0.2, 1));
    let j = serde_json::to_value(&report).unwrap();
    for d in ["c2s", "s2c"] {
        let o = &j["directions"][d];
        for key in [
            "datagrams",
            "messages",
            "opcodes",
            "retransmissions",
            "dirty_flags",
            "dirty_bits",
            "fragments",
            "unacked",
        ] {
            assert!(!o[key].is_null(), "{d}.{key}");
        }
        assert!(o["opcodes"]["0x1C"].as_u64().unwrap() > 0);
    }
    assert!(j["directions"]["c2s"]["dirty_flags"]
        .as_object()
        .unwrap()
        .keys()
        .all(|k| k.starts_with("0x") && k.len() == 4));
    assert!(
        j.get("messages").is_none(),
        "the message list only when asked"
    );
}
