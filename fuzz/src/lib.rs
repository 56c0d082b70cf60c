//! Bodies of the fuzz targets, shared by the cargo-fuzz binaries in `fuzz_targets/` and
//! by the stable mutation harness in `tests/fuzz_harness.rs` (which includes this file
//! with `#[path]`), so both exercise exactly the same code.
//!
//! Each function takes arbitrary bytes and must return without panicking, hanging or
//! allocating without bound. Where a cheap invariant holds for every input (spans inside
//! the message, state within its limits) it is asserted, so a violation is a finding.

use arbitrary::{Result as ArbResult, Unstructured};
use bcwire::capture::{link_type, CaptureReader, CaptureWriter, Endian, Frame, TsResolution};
use bcwire::diag::Direction;
use bcwire::game::objects::ObjectRegistry;
use bcwire::game::opcodes::{self, DecodeContext};
use bcwire::game::ships::{LayoutOrigin, ShipCatalog};
use bcwire::game::{stateupdate, GameMessage};
use bcwire::net::build::{frame_udp, BuildOptions};
use bcwire::net::{NetDecoder, NetOutcome};
use bcwire::pipeline::record::{PacketBody, PacketRecord};
use bcwire::pipeline::{Config, Control, Pipeline, Sink};
use bcwire::report::decode::{packet_csv, packet_lines, LineContext};
use bcwire::report::json_stream::write_packet;
use bcwire::report::names::Names;
use bcwire::report::show::render_packet;
use bcwire::report::stats::Stats;
use bcwire::report::term::Palette;
use bcwire::transport::cipher;
use bcwire::transport::packet::{self, Ack, Counter, DataMessage, FragmentHeader, MessageBody};
use bcwire::transport::reassembly::{Fragment, PushOutcome, Reassembler};
use bcwire::transport::reliability::{SeqKey, Tracker};
use std::io::Cursor;
use std::net::SocketAddr;
use std::sync::OnceLock;

fn stock() -> &'static ShipCatalog {
    static STOCK: OnceLock<ShipCatalog> = OnceLock::new();
    STOCK.get_or_init(ShipCatalog::stock)
}

/// Every field of a decoded message lies inside it; every warning offset too.
fn check_message(m: &GameMessage, len: usize) {
    assert_eq!(m.length, len, "length differs from the message");
    for f in &m.fields {
        let end = f.span.start as usize + f.span.len as usize;
        assert!(end <= len, "field {} span ends at {end} > {len}", f.name);
    }
    for w in &m.warnings {
        if let Some(o) = w.offset {
            assert!(o <= len, "warning {} at {o} > {len}", w.code);
        }
    }
}

/// pcap/pcapng bytes → every frame the reader gives, until it stops.
pub fn capture_read(data: &[u8]) {
    let Ok(mut reader) = CaptureReader::new(Cursor::new(data.to_vec())) else {
        return;
    };
    let mut frame = Frame::default();
    let mut last = 0;
    loop {
        match reader.read_into(&mut frame) {
            Ok(true) => {
                assert!(frame.number > last, "frame numbers go back");
                last = frame.number;
                assert!(frame.data.len() <= bcwire::capture::MAX_FRAME_LEN);
            }
            Ok(false) => break,
            Err(e) if e.is_fatal() => break,
            Err(_) => {}
        }
        assert!(reader.bytes_read() <= data.len() as u64);
    }
    if let Some(t) = reader.truncation() {
        let _ = t.to_warning().to_string();
    }
}

/// Frames (first byte picks the link type, then u16 length-prefixed frames) through
/// link/IP/UDP decoding and IP defragmentation.
pub fn net_decode(data: &[u8]) {
    const LINKS: [u32; 9] = [
        link_type::ETHERNET,
        link_type::LINUX_SLL,
        link_type::LINUX_SLL2,
        link_type::NULL,
        link_type::LOOP,
        link_type::RAW,
        link_type::IPV4,
        link_type::IPV6,
        0xFFFF,
    ];
    let Some((&sel, mut rest)) = data.split_first() else {
        return;
    };
    let mut net = NetDecoder::default();
    let mut frame = Frame {
        link_type: LINKS[usize::from(sel) % LINKS.len()],
        ..Frame::default()
    };
    while rest.len() >= 2 {
        let n = usize::from(u16::from_le_bytes([rest[0], rest[1]]));
        rest = &rest[2..];
        let n = n.min(rest.len());
        frame.number += 1;
        frame.ts_ns += 1_000_000;
        frame.data.clear();
        frame.data.extend_from_slice(&rest[..n]);
        frame.orig_len = n as u32;
        rest = &rest[n..];
        if let NetOutcome::Datagram(d) = net.decode(&frame) {
            assert!(d.payload.len() <= 65_535, "UDP payload too long");
        }
        assert!(net.bytes_held() <= bcwire::net::DEFAULT_MAX_BYTES_HELD);
    }
    let _ = net.finish();
}

/// Datagrams (u16 length-prefixed, first bit of the prefix picks the direction) are
/// deciphered, walked, and fed to the reliability tracker and the reassembler.
pub fn transport(data: &[u8]) {
    let mut tracker: Tracker<u8> = Tracker::new();
    let mut reasm: Reassembler<u8> = Reassembler::default();
    let mut rest = data;
    let mut frame = 0u64;
    let mut pkt = packet::Packet::default();
    while rest.len() >= 2 {
        let prefix = u16::from_le_bytes([rest[0], rest[1]]);
        let dir = (prefix >> 15) as u8;
        let n = usize::from(prefix & 0x7FFF).min(rest.len() - 2);
        let mut plain = rest[2..2 + n].to_vec();
        rest = &rest[2 + n..];
        frame += 1;
        let t = frame as i64 * 50_000_000;
        cipher::decrypt(&mut plain);
        packet::parse_into(&plain, &mut pkt);
        // The walk is exact: re-emitting gives the datagram back.
        assert_eq!(pkt.emit(&plain), plain, "packet re-emit differs");
        for m in &pkt.messages {
            assert!(m.offset + m.len <= plain.len(), "message past the datagram");
            let bytes = &plain[m.offset..m.offset + m.len];
            if let Some(key) = SeqKey::of_message(m) {
                let _ = tracker.on_message(&dir, key, bytes, t, frame);
            }
            match &m.body {
                MessageBody::Ack(a) => {
                    let _ = tracker.on_ack(&(dir ^ 1), SeqKey::of_ack(a), t, frame);
                }
                MessageBody::Data(d) => {
                    let payload = plain.get(d.payload.clone()).unwrap_or_default();
                    if let Some(f) = d.fragment {
                        let r = reasm.push(
                            &dir,
                            Fragment {
                                seq: d.seq.unwrap_or(0),
                                index: f.index,
                                total: f.total,
                                chunk: payload,
                                offset: m.offset,
                                frame,
                                time_ns: t,
                            },
                        );
                        if let PushOutcome::Complete(done) = r.outcome {
                            let g = opcodes::decode(
                                &done.payload,
                                &DecodeContext::new(&ObjectRegistry::new(), stock()),
                            );
                            check_message(&g, done.payload.len());
                        }
                        let l = reasm.limits();
                        assert!(reasm.open_bytes() <= l.max_total_bytes);
                        assert!(reasm.open_sets() <= l.max_open_sets);
                    }
                }
                _ => {}
            }
        }
        // Encrypting the plain text gives the captured bytes back.
        let mut again = plain.clone();
        cipher::encrypt(&mut again);
        cipher::decrypt(&mut again);
        assert_eq!(again, plain);
    }
    let _ = reasm.take_dropped();
    let _ = reasm.finish();
    let _ = tracker.finish();
}

/// One game message with a fuzzed opcode byte, decoded against an empty registry and
/// against one that has seen the message itself (object creations fill it).
pub fn opcode(data: &[u8]) {
    let catalog = stock();
    let mut registry = ObjectRegistry::new();
    let g = opcodes::decode(data, &DecodeContext::new(&registry, catalog));
    check_message(&g, data.len());
    registry.observe(&g, 1, catalog);
    let g = opcodes::decode(data, &DecodeContext::new(&registry, catalog));
    check_message(&g, data.len());
    let _ = opcodes::opcode_name(g.opcode);
}

/// A StateUpdate body under every stock ship layout and with no layout.
pub fn state_update(data: &[u8]) {
    let catalog = stock();
    let mut msg = Vec::with_capacity(data.len() + 1);
    msg.push(0x1C);
    msg.extend_from_slice(data);
    let g = stateupdate::decode(&msg, None, catalog);
    check_message(&g, msg.len());
    for class in catalog.classes() {
        let g = stateupdate::decode(&msg, Some(class.species_id), catalog);
        check_message(&g, msg.len());
        if let Some(su) = g.state_update() {
            // What decoded re-encodes without panicking.
            let _ = stateupdate::encode(su);
        }
    }
    // A species no layout describes.
    let g = stateupdate::decode(&msg, Some(0xFFFF), catalog);
    check_message(&g, msg.len());
}

/// A ship layout file: merged into the stock catalogue, then used for a decode.
pub fn ship_layouts(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut catalog = ShipCatalog::stock();
    if catalog
        .merge_json(&text, LayoutOrigin::File("fuzz.json".into()))
        .is_ok()
    {
        let msg = [
            0x1C, 1, 0, 0, 0x40, 0, 0, 0, 0, 0x20, 0xFF, 0xFF, 0xFF, 0xFF,
        ];
        for class in catalog.classes() {
            let g = stateupdate::decode(&msg, Some(class.species_id), &catalog);
            check_message(&g, msg.len());
        }
    } else if let Err(e) = catalog.merge_json(&text, LayoutOrigin::Stock) {
        let _ = e.to_string();
    }
}

/// Renders every record in every report format and keeps statistics, so report code
/// sees what the decoders make of hostile bytes.
struct RenderAll {
    stats: Stats,
    first: Option<i64>,
    records: u64,
}

impl Sink for RenderAll {
    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> anyhow::Result<Control> {
        let first = *self.first.get_or_insert(p.ts_ns);
        let keep = |_: &bcwire::pipeline::record::MessageRecord| true;
        let time = bcwire::report::timefmt::seconds(p.ts_ns - first);
        let cx = LineContext {
            time: &time,
            names,
            palette: Palette::new(false),
        };
        let _ = packet_lines(p, &keep, &cx);
        let _ = bcwire::report::decode::packet_hex(p);
        let describe = |id: u32| names.describe_object(p.session, id).map(std::rc::Rc::from);
        let _ = packet_csv(p, &keep, true, &describe, "0.000000", None);
        // The one JSON writer: whatever the input, it writes JSON that parses.
        let mut json = Vec::new();
        write_packet(&mut json, p, true, None, &describe, &keep);
        assert!(serde_json::from_slice::<serde_json::Value>(&json).is_ok());
        let _ = render_packet(p, first, None, names, Palette::new(true));
        self.stats.add(p, names);
        if let PacketBody::Game(g) = &p.body {
            for m in &g.messages {
                assert!(m.offset + m.length <= g.plain.len());
                if let Some(game) = &m.game {
                    check_message(game, game.length);
                }
                if let Some(a) = &m.assembled {
                    check_message(&a.game, a.bytes.len());
                }
            }
        }
        self.records += 1;
        Ok(Control::Continue)
    }
}

/// Run `capture` through the whole pipeline and every report.
pub fn run_pipeline(capture: Vec<u8>) -> Option<bcwire::pipeline::summary::CaptureSummary> {
    let reader = CaptureReader::new(Cursor::new(capture)).ok()?;
    let mut sink = RenderAll {
        stats: Stats::new(None, Some(1_000_000_000)),
        first: None,
        records: 0,
    };
    let summary = Pipeline::new(Config::default())
        .run(reader, &mut sink)
        .expect("the render sink never fails");
    // Every game-port datagram the session table takes keeps its record, however
    // damaged: none may vanish between the count and the records.
    assert_eq!(
        sink.records,
        summary.game_frames + summary.gamespy_frames,
        "records vs game and GameSpy frames"
    );
    let _ = sink.stats.render(Palette::new(false));
    use bcwire::report::json_stream::doc_to_pretty_string;
    doc_to_pretty_string(&sink.stats.to_doc()).expect("stats serialize");
    doc_to_pretty_string(&bcwire::report::info::capture_doc(None, &summary))
        .expect("info serializes");
    doc_to_pretty_string(&bcwire::report::info::flows_doc(&summary)).expect("flows serialize");
    let _ = bcwire::report::info::render_info("fuzz", &summary, Palette::new(false));
    let _ = bcwire::report::info::render_flows(
        &summary,
        Palette::new(false),
        bcwire::report::timefmt::TimeFormat::Ud,
    );
    Some(summary)
}

/// The whole pipeline on arbitrary capture bytes.
pub fn pipeline(data: &[u8]) {
    let _ = run_pipeline(data.to_vec());
}

/// Arbitrary bytes to the Scrap Mechanic decoder at every layer, statefully, and every
/// rendering of the result. Every field and warning of an update lies inside the
/// rebuilt update it describes.
pub fn sm_decode(data: &[u8]) {
    use bcwire::sm::render::{located_warnings, packet_json, write_text, Origin};
    use bcwire::sm::{Decoder, Layer, Options};
    for layer in [Layer::Wire, Layer::Packet, Layer::Payload] {
        let mut decoder = Decoder::new(Options {
            layer,
            max_output: 1 << 16,
            stateful: true,
        });
        // Decode twice so the controller table learned from the first pass is used.
        for _ in 0..2 {
            let report = decoder.decode(data);
            for d in report.streams.iter().flat_map(|s| &s.subs) {
                let len = d.sub.data.len();
                for f in &d.update.fields {
                    let end = f.span.start as usize + f.span.len as usize;
                    assert!(end <= len, "field {} span ends at {end} > {len}", f.name);
                }
                for w in &d.update.warnings {
                    if let Some(o) = w.offset {
                        assert!(o <= len, "warning {} at {o} > {len}", w.code);
                    }
                }
            }
            let origin = Origin {
                index: 0,
                line: None,
            };
            let mut sink = Vec::new();
            let _ = write_text(&mut sink, &report, origin);
            let json = packet_json(&report, origin);
            serde_json::from_str::<serde_json::Value>(&json.to_string())
                .expect("the packet's JSON parses");
            let _ = located_warnings(&report, origin);
        }
    }
}

/// Seeds for [`sm_decode`]: the seed document's worked example (a raw update, then a
/// delta on it) at the packet and wire layers, in a compound packet, and a stream of
/// one update of every documented kind, each laid out as the specification gives it.
pub fn sm_seeds() -> Vec<Vec<u8>> {
    use bcwire::sm::delta::{emit_delta, emit_raw};
    use bcwire::sm::packet::{emit_compound, emit_update_packet, emit_wire};
    let first = [0x64, 0, 0, 0, 1, 0, 0, 0];
    let second = [0x64, 0, 0, 0, 2, 0, 0, 0];
    let mut stream = Vec::new();
    let _ = emit_raw(&first, &mut stream);
    let _ = emit_delta(&first, &second, &mut stream);
    let packet = emit_update_packet(0x16, 5, &stream);
    let mut out = vec![
        emit_wire(&packet),
        packet.clone(),
        emit_compound(&[(0x16, &packet[1..]), (0x15, &packet[1..]), (0x02, &[1, 2])]),
    ];
    let updates: [&[u8]; 8] = [
        // CreateRigidBody static: controller 1, id, world, quaternion, position.
        &[
            0x20, 1, 0, 0, 0, 9, 0, 1, 0x3f, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ],
        // UpdateRigidBody static, RemoveRigidBody.
        &[0x60, 0, 0, 0, 9, 1, 0, 0, 0, 2],
        &[0xa0, 0, 0, 0, 9],
        // CreateContainer with no slots; UpdateContainer with no change.
        &[0x24, 0, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0],
        &[0x64, 0, 0, 0, 3, 0, 0, 0],
        // UpdateCharacter, UpdateLift, UpdateTool.
        &[0x66, 0, 0, 0, 4, 0],
        &[0x67, 0, 0, 0, 5, 0, 0, 0, 3],
        &[0x68, 0, 0, 0, 6, 0, 0, 0, 7],
    ];
    let mut many = Vec::new();
    for u in updates {
        let _ = emit_raw(u, &mut many);
    }
    let packet = emit_update_packet(0x16, 9, &many);
    out.push(emit_wire(&packet));
    out.push(packet);
    out
}

const SERVER: &str = "10.0.0.1:22101";

/// One message the structure-aware target may put in a datagram.
fn arbitrary_message(u: &mut Unstructured, game: &mut Vec<u8>) -> ArbResult<MessageBody> {
    game.clear();
    Ok(match u.int_in_range(0u8..=9)? {
        // Game message: an opcode and a body (often a real-looking StateUpdate head).
        0..=5 => {
            game.push(*u.choose(&[
                0x00, 0x01, 0x02, 0x03, 0x04, 0x07, 0x0A, 0x14, 0x19, 0x1C, 0x1C, 0x1C, 0x20, 0x21,
                0x22, 0x25, 0x26, 0x29, 0x2A, 0x2C, 0x35, 0x37,
            ])?);
            let n = u.int_in_range(0usize..=64)?.min(u.len());
            game.extend_from_slice(u.bytes(n)?);
            let seq = if u.arbitrary()? {
                Some(u.arbitrary()?)
            } else {
                None
            };
            let frag = if u.ratio(1u8, 6)? {
                let total: u8 = u.int_in_range(1..=4)?;
                let index = u.int_in_range(0..=total)?;
                Some(FragmentHeader {
                    index,
                    total: (index == 0).then_some(total),
                })
            } else {
                None
            };
            match DataMessage::new(seq, u.arbitrary()?, frag, game.len()) {
                Some(d) => MessageBody::Data(d),
                None => MessageBody::Ack(Ack::new(0, Counter::Data, None)),
            }
        }
        6 | 7 => {
            let frag = if u.arbitrary()? {
                Some(u.arbitrary()?)
            } else {
                None
            };
            let counter = if u.arbitrary()? {
                Counter::Data
            } else {
                Counter::Low
            };
            MessageBody::Ack(Ack::new(u.arbitrary()?, counter, frag))
        }
        _ => {
            // A raw transport message: any type byte followed by fuzzer bytes.
            let n = u.int_in_range(0usize..=16)?.min(u.len());
            game.extend_from_slice(u.bytes(n)?);
            MessageBody::Unknown {
                type_byte: u.arbitrary()?,
                rest: 0..n,
            }
        }
    })
}

/// Build a valid pcap of BC datagrams from fuzzer-chosen messages, then let the rest of
/// the input mutate it (bit flips, truncation), and run the whole pipeline.
pub fn structured(data: &[u8]) {
    let _ = structured_capture(data).map(run_pipeline);
}

/// The capture [`structured`] builds from `data` (exposed for seeding and tests).
pub fn structured_capture(data: &[u8]) -> Option<Vec<u8>> {
    let mut u = Unstructured::new(data);
    build(&mut u).ok()
}

fn build(u: &mut Unstructured) -> ArbResult<Vec<u8>> {
    let link = *u.choose(&[
        link_type::ETHERNET,
        link_type::RAW,
        link_type::LINUX_SLL,
        link_type::NULL,
    ])?;
    let server: SocketAddr = SERVER
        .parse()
        .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    let clients: Vec<SocketAddr> = (0..u.int_in_range(1u16..=3)?)
        .map(|i| SocketAddr::from(([10, 0, 0, 2 + i as u8], 40_000 + i)))
        .collect();
    let mut w = CaptureWriter::pcap(
        Vec::new(),
        link,
        TsResolution::MICRO,
        Endian::Little,
        65_535,
    )
    .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    let mut t: i64 = 1_700_000_000_000_000_000;
    let mut game = Vec::new();
    let mut ip_id = 1;
    let datagrams = u.int_in_range(1usize..=24)?;
    for _ in 0..datagrams {
        let client = *u.choose(&clients)?;
        let dir = if u.arbitrary()? {
            Direction::C2S
        } else {
            Direction::S2C
        };
        let peer_id = if dir == Direction::S2C {
            1
        } else {
            *u.choose(&[2u8, 3, 4, 0xFF])?
        };
        let mut parts: Vec<(MessageBody, Vec<u8>)> = Vec::new();
        for _ in 0..u.int_in_range(0usize..=6)? {
            let body = arbitrary_message(u, &mut game)?;
            parts.push((body, game.clone()));
        }
        let refs: Vec<(&MessageBody, &[u8])> =
            parts.iter().map(|(b, p)| (b, p.as_slice())).collect();
        let Some(mut dgram) = packet::emit_packet(peer_id, &refs) else {
            continue;
        };
        // Mutations after the encoder: flip bits, cut, repeat.
        match u.int_in_range(0u8..=7)? {
            0 if !dgram.is_empty() => {
                let i = u.choose_index(dgram.len())?;
                dgram[i] ^= 1 << u.int_in_range(0u8..=7)?;
            }
            1 => dgram.truncate(u.choose_index(dgram.len() + 1)?),
            2 => {
                let n = u.int_in_range(0usize..=8)?.min(u.len());
                let more = u.bytes(n)?;
                dgram.extend_from_slice(more);
            }
            _ => {}
        }
        if dgram.first() != Some(&b'\\') {
            cipher::encrypt(&mut dgram);
        }
        let (src, dst) = match dir {
            Direction::C2S => (client, server),
            Direction::S2C => (server, client),
        };
        let opts = BuildOptions {
            mtu: *u.choose(&[1500usize, 1500, 1500, 68, 200])?,
            ip_id,
            ..BuildOptions::default()
        };
        ip_id += 1;
        let Ok(mut frames) = frame_udp(link, src, dst, &dgram, &opts) else {
            continue;
        };
        if frames.len() > 1 && u.arbitrary()? {
            frames.reverse();
        }
        let repeat = if u.ratio(1u8, 8)? { 2 } else { 1 };
        for _ in 0..repeat {
            for f in &frames {
                t += i64::from(u.int_in_range(0u32..=3_000_000_000)?);
                w.write_frame(0, t, f.len() as u32, f)
                    .map_err(|_| arbitrary::Error::IncorrectFormat)?;
            }
        }
    }
    let mut capture = w.into_inner();
    // A last mutation of the file itself.
    if u.ratio(1u8, 4)? && !capture.is_empty() {
        let i = u.choose_index(capture.len())?;
        capture[i] = u.arbitrary()?;
    }
    if u.ratio(1u8, 8)? {
        let keep = u.choose_index(capture.len() + 1)?;
        capture.truncate(keep);
    }
    Ok(capture)
}

/// Builds a plain datagram with a fragmented and an unfragmented reliable message, for
/// seeds (the transport target reads u16-prefixed encrypted datagrams).
pub fn transport_seed() -> Vec<u8> {
    let game = [0x1C, 1, 0, 0, 0x40, 0, 0, 0, 0, 0x01, 1, 2, 3, 4, 5, 6];
    let whole = DataMessage::new(Some(7), true, None, game.len()).map(MessageBody::Data);
    let f0 = DataMessage::new(
        Some(8),
        true,
        Some(FragmentHeader {
            index: 0,
            total: Some(2),
        }),
        4,
    )
    .map(MessageBody::Data);
    let f1 = DataMessage::new(
        Some(8),
        true,
        Some(FragmentHeader {
            index: 1,
            total: None,
        }),
        4,
    )
    .map(MessageBody::Data);
    let ack = MessageBody::Ack(Ack::new(7, Counter::Data, None));
    let mut out = Vec::new();
    let (Some(whole), Some(f0), Some(f1)) = (whole, f0, f1) else {
        return out;
    };
    for (peer, parts) in [
        (2u8, vec![(&whole, &game[..]), (&f0, &[0x20, 1, 2, 3][..])]),
        (2u8, vec![(&f1, &[4u8, 5, 6, 7][..])]),
        (1u8, vec![(&ack, &[][..])]),
    ] {
        if let Some(mut d) = packet::emit_packet(peer, &parts) {
            cipher::encrypt(&mut d);
            let prefix = d.len() as u16 | if peer == 1 { 0x8000 } else { 0 };
            out.extend_from_slice(&prefix.to_le_bytes());
            out.extend_from_slice(&d);
        }
    }
    out
}
