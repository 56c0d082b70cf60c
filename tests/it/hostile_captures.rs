//! Malformed captures, generated here: truncated at every layer, lengths that lie, bit
//! flips in encrypted payloads, fragment bombs, wrapping sequence numbers, oversized
//! and empty datagrams. For each: the pipeline finishes, says what was wrong and where,
//! decodes everything intact, and stays inside its documented bounds (checked through
//! the counters and warnings the limits produce, not through RSS).

use bcwire::capture::{link_type, CaptureReader, CaptureWriter, Endian, TsResolution};
use bcwire::diag::Code;
use bcwire::net::{NetDecoder, DEFAULT_MAX_BYTES_HELD, DEFAULT_MAX_PENDING};
use bcwire::pipeline::record::PacketRecord;
use bcwire::pipeline::summary::{CaptureSummary, MAX_PROBLEMS_LISTED};
use bcwire::transport::cipher;
use bcwire::transport::packet::{emit_packet, Ack, Counter, FragmentHeader, MessageBody};
use std::io::Cursor;

use crate::common::built::{chat, client, data, game_datagram, game_of, run, server, Cap};

/// Every warning code of a packet (packet and message level).
fn codes(p: &PacketRecord) -> Vec<&'static str> {
    let g = game_of(p);
    let mut c: Vec<&str> = g.warnings.iter().map(|w| w.code.as_str()).collect();
    for m in &g.messages {
        c.extend(m.warnings.iter().map(|w| w.code.as_str()));
        if let Some(game) = &m.game {
            c.extend(game.warnings.iter().map(|w| w.code.as_str()));
        }
    }
    c
}

/// A small healthy exchange: connect, three chat messages, an ACK.
fn healthy() -> (Vec<u8>, usize) {
    let mut cap = Cap::new();
    let c = client(1);
    cap.bc(c, server(), &game_datagram(0xFF, 0, &chat("hello")));
    for i in 1..4u16 {
        cap.bc(
            c,
            server(),
            &game_datagram(2, i, &chat(&format!("message {i}"))),
        );
    }
    let ack = MessageBody::Ack(Ack::new(3, Counter::Data, None));
    cap.bc(
        server(),
        c,
        &emit_packet(1, &[(&ack, &[][..])]).expect("ack"),
    );
    (cap.bytes(), 5)
}

#[test]
fn empty_file_is_refused_with_a_reason() {
    let e = CaptureReader::new(Cursor::new(Vec::new()))
        .err()
        .expect("error");
    assert_eq!(e.to_string(), "not a capture file: the input is empty");
}

#[test]
fn header_only_capture_is_empty_and_clean() {
    let bytes = Cap::new().bytes();
    let (s, recs) = run(&bytes);
    assert_eq!((s.frames, recs.len()), (0, 0));
    assert!(s.problems.is_empty(), "{:?}", s.problems);
}

#[test]
fn truncation_at_every_byte_keeps_every_complete_frame() {
    let (bytes, datagrams) = healthy();
    let (full, full_recs) = run(&bytes);
    assert_eq!(full_recs.len(), datagrams);
    assert!(full.problems.is_empty(), "{:?}", full.problems);
    // Record boundaries: 24-byte header, then 16-byte record headers + frames.
    let mut ends = vec![];
    let mut at = 24;
    while at < bytes.len() {
        let caplen = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().expect("4")) as usize;
        at += 16 + caplen;
        ends.push(at);
    }
    for cut in 24..bytes.len() {
        let (s, recs) = run(&bytes[..cut]);
        let complete = ends.iter().filter(|&&e| e <= cut).count();
        assert_eq!(recs.len(), complete, "cut at {cut}");
        for (a, b) in recs.iter().zip(&full_recs) {
            assert_eq!(game_of(a).plain, game_of(b).plain, "cut at {cut}");
        }
        if cut != 24 && !ends.contains(&cut) {
            assert!(
                s.problems
                    .iter()
                    .any(|p| p.text.contains("capture cut at byte") && p.text.contains("frame")),
                "cut at {cut}: {:?}",
                s.problems
            );
        }
    }
    // A header cut short is refused before any frame.
    for cut in 1..24 {
        let e = CaptureReader::new(Cursor::new(bytes[..cut].to_vec())).err();
        assert!(e.is_some(), "header cut at {cut}");
    }
}

#[test]
fn lying_pcap_record_length_stops_with_its_offset() {
    let (mut bytes, _) = healthy();
    // Second record's caplen: 4 GB.
    let first_len = u32::from_le_bytes(bytes[32..36].try_into().expect("4")) as usize;
    let second = 24 + 16 + first_len;
    bytes[second + 8..second + 12].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    let (s, recs) = run(&bytes);
    assert_eq!(recs.len(), 1, "the first frame still decodes");
    assert!(
        s.problems
            .iter()
            .any(|p| p.text.contains(&format!("byte {second}"))
                && p.text.contains("frame 2")
                && p.text
                    .contains(&format!("(limit {})", bcwire::capture::MAX_FRAME_LEN))),
        "{:?}",
        s.problems
    );
}

#[test]
fn interface_flood_hits_the_interface_limit() {
    use bcwire::capture::MAX_INTERFACES;
    let mut w = CaptureWriter::pcapng(Vec::new(), Endian::Little).expect("section");
    for _ in 0..=MAX_INTERFACES {
        w.add_interface(link_type::ETHERNET as u16, 0, TsResolution::MICRO, 0)
            .expect("interface");
    }
    let (s, recs) = run(&w.into_inner());
    assert!(recs.is_empty());
    assert!(
        s.problems.iter().any(|p| p
            .text
            .contains(&format!("more than {MAX_INTERFACES} interfaces"))),
        "{:?}",
        s.problems
    );
}

/// Ethernet + IPv4 + UDP frame of one BC datagram, to patch header fields in.
fn one_frame(plain: &[u8]) -> Vec<u8> {
    let mut d = plain.to_vec();
    cipher::encrypt(&mut d);
    let mut cap = Cap::new();
    cap.frames(client(1), server(), &d).remove(0)
}

fn run_frames(frames: &[Vec<u8>]) -> (CaptureSummary, Vec<PacketRecord>) {
    let mut cap = Cap::new();
    for f in frames {
        cap.frame(f);
    }
    run(&cap.bytes())
}

#[test]
fn lying_ip_and_udp_lengths_are_reported_not_trusted() {
    let good = one_frame(&game_datagram(0xFF, 0, &chat("intact")));
    let (_, base) = run_frames(std::slice::from_ref(&good));
    assert_eq!(base.len(), 1);
    // IPv4 total length larger than the frame; smaller than the headers; UDP length
    // larger than the IP payload; UDP length below 8.
    let mut ip_long = good.clone();
    ip_long[16..18].copy_from_slice(&60_000u16.to_be_bytes());
    let mut ip_short = good.clone();
    ip_short[16..18].copy_from_slice(&10u16.to_be_bytes());
    let mut udp_long = good.clone();
    udp_long[38..40].copy_from_slice(&60_000u16.to_be_bytes());
    let mut udp_short = good.clone();
    udp_short[38..40].copy_from_slice(&3u16.to_be_bytes());
    let (s, recs) = run_frames(&[ip_long, ip_short, udp_long, udp_short, good]);
    assert_eq!(s.frames, 5);
    // The intact frame still decodes exactly as before.
    let last = recs.last().expect("intact frame decoded");
    assert_eq!(game_of(last).plain, game_of(&base[0]).plain);
    // Every other frame is either skipped with a reason or decoded with what it holds.
    let skipped: u64 = s.not_bc.values().sum();
    assert_eq!(skipped + recs.len() as u64, 5, "{:?}", s.not_bc);
    assert!(
        skipped >= 2,
        "lying lengths must not pass silently: {:?}",
        s.not_bc
    );
}

#[test]
fn lying_transport_and_string_lengths_are_located() {
    let mut cap = Cap::new();
    let c = client(1);
    // flags_len claims 0x1FFF bytes; the datagram has 12.
    let mut over = game_datagram(0xFF, 0, &chat("x"));
    over[3..5].copy_from_slice(&(0x8000u16 | 0x1FFF).to_le_bytes());
    cap.bc(c, server(), &over);
    // flags_len shorter than its own header.
    let mut under = game_datagram(2, 1, &chat("y"));
    under[3..5].copy_from_slice(&(0x8000u16 | 2).to_le_bytes());
    cap.bc(c, server(), &under);
    // A string length of 65535 with 3 bytes behind it.
    let mut lie = chat("abc");
    lie[5..7].copy_from_slice(&0xFFFFu16.to_le_bytes());
    cap.bc(c, server(), &game_datagram(2, 2, &lie));
    // A message count above what the datagram holds.
    let mut count = game_datagram(2, 3, &chat("z"));
    count[1] = 9;
    cap.bc(c, server(), &count);
    let (_, recs) = run(&cap.bytes());
    assert_eq!(recs.len(), 4);
    let find = |p: &PacketRecord, code: &str| {
        let g = game_of(p);
        g.warnings
            .iter()
            .chain(g.messages.iter().flat_map(|m| m.warnings.iter()))
            .chain(
                g.messages
                    .iter()
                    .flat_map(|m| m.game.iter().flat_map(|g| g.warnings.iter())),
            )
            .find(|w| w.code.as_str() == code)
            .cloned()
            .unwrap_or_else(|| panic!("frame {}: no {code} in {:?}", p.frame, codes(p)))
    };
    assert_eq!(find(&recs[0], "message_overrun").offset, Some(2));
    assert_eq!(find(&recs[1], "message_too_short").offset, Some(2));
    // The chat decodes its sender, then reports the string at its offset in the message.
    let w = find(&recs[2], "decode_error");
    assert_eq!(w.offset, Some(5), "{w:?}");
    let g = game_of(&recs[2]).messages[0]
        .game
        .as_ref()
        .expect("decoded");
    assert!(g.fields.iter().any(|f| f.name == "sender_peer_id"));
    assert_eq!(
        find(&recs[3], "count_mismatch").offset,
        Some(recs[3].udp_len)
    );
}

#[test]
fn bit_flips_in_encrypted_payloads_never_break_the_walk() {
    let plain = game_datagram(2, 7, &chat("a message long enough to flip"));
    let mut enc = plain.clone();
    cipher::encrypt(&mut enc);
    let mut cap = Cap::new();
    cap.bc(client(1), server(), &game_datagram(0xFF, 0, &chat("hi")));
    for bit in 8..enc.len() * 8 {
        let mut d = enc.clone();
        d[bit / 8] ^= 1 << (bit % 8);
        cap.udp(client(1), server(), &d);
    }
    let (s, recs) = run(&cap.bytes());
    assert_eq!(
        recs.len(),
        1 + (enc.len() - 1) * 8,
        "{:?} {:?}",
        s.not_bc,
        s.problems
    );
    for (i, r) in recs.iter().enumerate().skip(1) {
        let g = game_of(r);
        for m in &g.messages {
            assert!(m.offset + m.length <= g.plain.len(), "frame {}", r.frame);
        }
        // A flip changes the plain text from its byte on (the cipher chains), never
        // before it: the bytes before the flipped one are intact.
        let byte = 1 + (i - 1) / 8;
        assert_eq!(g.plain.len(), plain.len());
        assert_eq!(g.plain[..byte], plain[..byte], "flip in byte {byte}");
        assert_ne!(g.plain, plain, "flip in byte {byte}");
    }
}

#[test]
fn ip_fragment_bomb_stays_within_the_pool_and_is_reported() {
    // 5,000 first fragments of datagrams that never complete, then a healthy datagram.
    let big = vec![0u8; 3000];
    let mut cap = Cap::new();
    let mut net_frames = vec![];
    for _ in 0..5_000 {
        let f = cap.frames(client(1), server(), &big);
        net_frames.push(f[0].clone());
        cap.frame(&f[0]);
    }
    cap.bc(
        client(1),
        server(),
        &game_datagram(0xFF, 0, &chat("after the bomb")),
    );
    let bytes = cap.bytes();
    // The defragmenter directly: never more than its byte and set bounds.
    let mut net = NetDecoder::default();
    let mut r = CaptureReader::new(Cursor::new(bytes.clone())).expect("capture");
    while let Some(Ok(f)) = r.next_frame() {
        let _ = net.decode(&f);
        assert!(net.bytes_held() <= DEFAULT_MAX_BYTES_HELD);
    }
    let report = net.finish();
    assert!(report.leftovers.len() <= DEFAULT_MAX_PENDING.max(1024));
    // Through the pipeline: the healthy datagram decodes, the bomb is reported.
    let (s, recs) = run(&bytes);
    assert_eq!(recs.len(), 1);
    assert!(
        s.problems
            .iter()
            .any(|p| p.text.starts_with("IP fragments never completed")),
        "{:?}",
        &s.problems[..s.problems.len().min(3)]
    );
    assert!(
        s.problems.len() <= MAX_PROBLEMS_LISTED + 8,
        "problems are bounded too"
    );
    let _ = net_frames;
}

#[test]
fn transport_fragment_bomb_is_bounded_and_reported() {
    // 3,000 fragment-0 messages of 3-fragment sets, each with its own seq, never
    // completed; then one complete set that must still reassemble.
    let mut cap = Cap::new();
    let c = client(1);
    cap.bc(c, server(), &game_datagram(0xFF, 0, &chat("hi")));
    for seq in 1..=3_000u16 {
        let f0 = data(
            Some(seq),
            Some(FragmentHeader {
                index: 0,
                total: Some(3),
            }),
            100,
        );
        cap.bc(
            c,
            server(),
            &emit_packet(2, &[(&f0, &[0x2C; 100][..])]).expect("f0"),
        );
    }
    let msg = chat(&"z".repeat(150));
    let (a, b) = msg.split_at(80);
    let f0 = data(
        Some(4000),
        Some(FragmentHeader {
            index: 0,
            total: Some(2),
        }),
        a.len(),
    );
    let f1 = data(
        Some(4000),
        Some(FragmentHeader {
            index: 1,
            total: None,
        }),
        b.len(),
    );
    cap.bc(c, server(), &emit_packet(2, &[(&f0, a)]).expect("f0"));
    cap.bc(c, server(), &emit_packet(2, &[(&f1, b)]).expect("f1"));
    let (s, recs) = run(&cap.bytes());
    let last = recs.last().expect("records");
    let assembled = game_of(last).messages[0]
        .assembled
        .as_ref()
        .expect("the complete set reassembles despite the bomb");
    assert_eq!(assembled.bytes, msg);
    let dropped = s
        .problems
        .iter()
        .filter(|p| p.text.contains("too many open fragment sets"))
        .count();
    assert!(dropped > 0, "{:?}", &s.problems[..s.problems.len().min(3)]);
    // Listed up to the reassembler's report limit, the rest counted in one line
    // that the problem list's own bound never hides.
    assert!(s.problems.len() <= MAX_PROBLEMS_LISTED + 8);
    assert!(
        s.problems.iter().any(|p| p
            .text
            .contains("more incomplete fragment sets dropped and not listed")),
        "{:?}",
        s.problems.last()
    );
    let open: u64 = s.sessions[0].clients[0].dirs[0].fragment_sets_incomplete;
    assert!(open > 0);
}

#[test]
fn sequence_numbers_that_wrap_and_repeat() {
    let mut cap = Cap::new();
    let c = client(1);
    cap.bc(c, server(), &game_datagram(0xFF, 0, &chat("hi")));
    // 70,000 reliable messages: the 16-bit seq wraps once; each message differs.
    let n = 70_000u32;
    for i in 1..=n {
        cap.bc(
            c,
            server(),
            &game_datagram(2, i as u16, &chat(&i.to_string())),
        );
    }
    // Exact repeats of the last message: retransmissions, not new messages.
    let last = game_datagram(2, n as u16, &chat(&n.to_string()));
    for _ in 0..3 {
        cap.bc(c, server(), &last);
    }
    let (s, recs) = run(&cap.bytes());
    assert_eq!(recs.len() as u32, n + 4);
    let delivered = recs
        .iter()
        .flat_map(|r| game_of(r).messages.iter())
        .filter(|m| !m.retransmission && m.game.is_some())
        .count();
    assert_eq!(
        delivered as u32,
        n + 1,
        "every distinct message is delivered"
    );
    let retrans = recs
        .iter()
        .flat_map(|r| game_of(r).messages.iter())
        .filter(|m| m.retransmission)
        .count();
    assert_eq!(retrans, 3);
    let d = &s.sessions[0].clients[0].dirs[0];
    assert_eq!(d.retransmissions, 3);
    // Nothing is acknowledged: the tracker's window forgets old messages, and the
    // summary says how many it could not list.
    assert!(
        s.problems
            .iter()
            .any(|p| p.text.starts_with("reliability tracker")),
        "{:?}",
        s.problems
    );
}

#[test]
fn ten_thousand_messages_in_one_datagram() {
    // msg_count is one byte: the walk reads the announced messages and reports the
    // rest as trailing bytes at their offset, for any count.
    let ack = MessageBody::Ack(Ack::new(1, Counter::Data, None));
    let parts: Vec<(&MessageBody, &[u8])> = (0..255).map(|_| (&ack, &[][..])).collect();
    let head = emit_packet(1, &parts).expect("255 messages");
    let mut cap = Cap::new();
    let c = client(1);
    cap.bc(c, server(), &game_datagram(0xFF, 0, &chat("hi")));
    for count in [255u8, 0, 16] {
        let mut d = head.clone();
        d[1] = count;
        for _ in 255..10_000 {
            d.extend_from_slice(&[0x01, 1, 0, 0]);
        }
        cap.bc(server(), c, &d);
    }
    let (s, recs) = run(&cap.bytes());
    assert_eq!(recs.len(), 4, "{:?}", s.problems);
    for (r, count) in recs[1..].iter().zip([255usize, 0, 16]) {
        let g = game_of(r);
        assert_eq!(g.messages.len(), count);
        assert_eq!(r.udp_len, 2 + 4 * 10_000);
        let w = g
            .warnings
            .iter()
            .find(|w| w.code == Code::TrailingBytes)
            .expect("trailing bytes reported");
        assert_eq!(w.offset, Some(2 + 4 * count));
    }
}

#[test]
fn zero_length_everything() {
    let mut cap = Cap::new();
    let c = client(1);
    cap.bc(c, server(), &game_datagram(0xFF, 0, &chat("hi")));
    cap.udp(c, server(), &[]); // empty UDP payload
    cap.udp(c, server(), &[2]); // 1-byte datagram
    cap.bc(c, server(), &[2, 0]); // 0 messages
    cap.bc(
        c,
        server(),
        &emit_packet(2, &[(&data(Some(9), None, 0), &[][..])]).expect("d"),
    );
    cap.frame(&[]); // empty frame
    let (s, recs) = run(&cap.bytes());
    assert_eq!(s.frames, 6);
    // Empty and 1-byte payloads cannot be game packets: counted with their reason.
    assert_eq!(
        s.not_bc.get("empty UDP payload"),
        Some(&1),
        "{:?}",
        s.not_bc
    );
    assert_eq!(
        s.not_bc
            .get("1-byte payload is shorter than a game packet header"),
        Some(&1)
    );
    assert!(recs.iter().all(|r| r.udp_len >= 2));
    let zero = recs.iter().find(|r| r.udp_len == 2).expect("0 messages");
    assert!(game_of(zero).messages.is_empty());
    assert!(codes(zero).is_empty(), "{:?}", codes(zero));
    let empty_game = recs.iter().find(|r| r.udp_len == 7).expect("empty 0x32");
    assert!(game_of(empty_game).messages[0].game.is_none());
}

#[test]
fn many_clients_fill_the_session_table_with_a_warning() {
    use bcwire::flow::DEFAULT_MAX_CLIENTS_PER_SESSION;
    let mut cap = Cap::new();
    for i in 0..DEFAULT_MAX_CLIENTS_PER_SESSION as u32 + 10 {
        cap.bc(client(i), server(), &[0xFF, 0]);
    }
    let (s, recs) = run(&cap.bytes());
    assert_eq!(recs.len(), DEFAULT_MAX_CLIENTS_PER_SESSION);
    assert!(
        s.problems
            .iter()
            .any(|p| p.text.starts_with("session table full: 10 datagram(s)")),
        "{:?}",
        s.problems
    );
}

#[test]
fn problems_list_is_bounded() {
    // Thousands of incomplete IP fragment sets each want a line; the list stops at
    // its limit and counts the rest.
    let big = vec![0u8; 3000];
    let mut cap = Cap::new();
    for i in 0..1_500u32 {
        let f = cap.frames(client(i % 7), server(), &big);
        cap.frame(&f[0]);
    }
    // Reassembly sets too.
    cap.bc(client(1), server(), &game_datagram(0xFF, 0, &chat("hi")));
    for seq in 1..=1_200u16 {
        let f0 = data(
            Some(seq),
            Some(FragmentHeader {
                index: 0,
                total: Some(2),
            }),
            4,
        );
        cap.bc(
            client(1),
            server(),
            &emit_packet(2, &[(&f0, &[0; 4][..])]).expect("f0"),
        );
    }
    let (s, _) = run(&cap.bytes());
    assert!(s.problems_not_listed > 0);
    assert!(s.problems.len() <= MAX_PROBLEMS_LISTED + 8);
    assert_eq!(
        s.problems.last().map(|p| p.text.as_str()),
        Some(format!("{} more problems not listed", s.problems_not_listed).as_str())
    );
}
