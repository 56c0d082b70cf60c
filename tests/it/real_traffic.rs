//! Hard cases of real traffic, in captures generated here: boots and disconnects with
//! their reasons, sequence gaps and late arrivals, damaged frames of a known game flow,
//! and frame counts that add up.

use bcwire::capture::{link_type, CaptureReader, CaptureWriter, Endian, TsResolution};
use bcwire::diag::Code;
use bcwire::game::field::Value;
use bcwire::pipeline::record::{PacketBody, PacketRecord, TransportInfo};
use bcwire::pipeline::summary::CaptureSummary;
use bcwire::transport::low::{boot_payload, LowKind};
use bcwire::transport::packet::{emit_packet, LowMessage, MessageBody};
use std::io::Cursor;

use crate::common;
use crate::common::built::{chat, client, game_datagram, game_of, run, server, Cap};

/// One datagram carrying a reliable low-type message.
fn low_datagram(peer: u8, kind: LowKind, seq: u16, payload: &[u8]) -> Vec<u8> {
    let m = LowMessage::new(kind, Some(seq), true, payload.len()).expect("fits");
    emit_packet(peer, &[(&MessageBody::Low(m), payload)]).expect("datagram")
}

/// (code, frame) of every message-level warning.
fn message_warnings(recs: &[PacketRecord]) -> Vec<(&'static str, u64)> {
    recs.iter()
        .flat_map(|r| {
            game_of(r)
                .messages
                .iter()
                .flat_map(move |m| m.warnings.iter().map(move |w| (w.code.as_str(), r.frame)))
        })
        .collect()
}

#[test]
fn boots_are_decoded_with_reason_and_slot_and_say_how_clients_left() {
    let mut cap = Cap::new();
    let (kicked, accepted, leaver) = (client(1), client(2), client(3));
    for (i, c) in [kicked, accepted, leaver].into_iter().enumerate() {
        cap.bc(c, server(), &game_datagram(2 + i as u8, 0, &chat("hi")));
    }
    // The host kicks the player in slot 1 (reason 4) and tells another its connection
    // was accepted (reason 5: it stays); the third leaves with a clean disconnect.
    cap.bc(
        server(),
        kicked,
        &low_datagram(1, LowKind::Boot, 0, &boot_payload(4, 1)),
    );
    cap.bc(
        server(),
        accepted,
        &low_datagram(1, LowKind::Boot, 0, &boot_payload(5, 2)),
    );
    cap.bc(
        accepted,
        server(),
        &game_datagram(3, 1, &chat("still here")),
    );
    let disc = bcwire::transport::low::disconnect_payload(4, [10, 1, 0, 3]);
    cap.bc(
        leaver,
        server(),
        &low_datagram(4, LowKind::Disconnect, 0, &disc),
    );
    let (s, recs) = run(&cap.bytes());

    let boot = game_of(&recs[3]).messages[0].clone();
    let TransportInfo::Low { name, fields, .. } = &boot.transport else {
        panic!("{:?}", boot.transport)
    };
    assert_eq!(*name, "boot");
    let get = |n: &str| fields.iter().find(|f| f.name == n).map(|f| f.value.clone());
    assert_eq!(get("boot_reason"), Some(Value::Uint(4)));
    assert_eq!(get("boot_reason_name"), Some(Value::Text("kicked".into())));
    assert_eq!(get("slot"), Some(Value::Uint(1)));
    // Spans: reason at payload byte 0, slot at 1 (relative to the payload).
    let span = fields.iter().find(|f| f.name == "slot").unwrap().span;
    assert_eq!((span.start, span.end()), (1, 2));
    assert!(boot.warnings.is_empty(), "{:?}", boot.warnings);

    let clients = &s.sessions[0].clients;
    let how: Vec<Option<String>> = clients.iter().map(|c| c.departure()).collect();
    assert_eq!(
        how,
        [
            Some("boot: kicked".to_string()),
            None,
            Some("disconnect".to_string())
        ]
    );
    assert_eq!(clients[0].boot_reason, Some(4));
    assert_eq!(
        s.departures
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect::<Vec<_>>(),
        [("boot: kicked", 1), ("disconnect", 1)]
    );
}

#[test]
fn sequence_gaps_and_late_messages_are_located_and_counted() {
    let mut cap = Cap::new();
    let c = client(1);
    // Numbers 0, 1, 4 (2 and 3 never seen), 2 (late), 5.
    for seq in [0u16, 1, 4, 2, 5] {
        cap.bc(
            c,
            server(),
            &game_datagram(2, seq, &chat(&format!("m{seq}"))),
        );
    }
    let (s, recs) = run(&cap.bytes());
    assert_eq!(
        message_warnings(&recs),
        [("seq_gap", 3), ("seq_out_of_order", 4)]
    );
    let w = &game_of(&recs[2]).messages[0].warnings[0];
    // At the message: after the peer id and the message count.
    assert_eq!(w.offset, Some(2));
    assert!(
        w.message.contains("4 follows 1: 2 number(s)"),
        "{}",
        w.message
    );
    let d = &s.sessions[0].clients[0].dirs[0];
    assert_eq!((d.seq_gaps, d.seq_missing, d.seq_late), (1, 2, 1));
    // Every message is still delivered once.
    let delivered = recs
        .iter()
        .flat_map(|r| game_of(r).messages.iter())
        .filter(|m| !m.retransmission && m.game.is_some())
        .count();
    assert_eq!(delivered, 5);
}

/// Every frame of `bytes` (an Ethernet capture), with byte 0 of the UDP payload of every
/// `every`-th game-port frame after the first 10 set to a value that cannot start a
/// game packet in its direction (0x05 from the host, 0x00 from a client) — only in
/// flows already under way: a client's first datagram is what identifies its flow.
fn damage_first_bytes(bytes: &[u8], every: u64) -> (Vec<u8>, u64) {
    let mut reader = CaptureReader::new(Cursor::new(bytes.to_vec())).expect("capture");
    let mut w = CaptureWriter::pcap(
        Vec::new(),
        link_type::ETHERNET,
        TsResolution::NANO,
        Endian::Little,
        65_535,
    )
    .expect("pcap header");
    let mut damaged = 0;
    let mut flows = std::collections::HashSet::new();
    while let Some(f) = reader.next_frame() {
        let mut f = f.expect("frame");
        assert_eq!(f.link_type, link_type::ETHERNET);
        let d = &mut f.data;
        // Ethernet, IPv4 without fragments, UDP on the game port, not GameSpy text.
        let ip = 14;
        let is_udp = d.len() > ip + 20 && d[12..14] == [8, 0] && d[ip + 9] == 17;
        if is_udp {
            let udp = ip + usize::from(d[ip] & 0x0F) * 4;
            let sport = u16::from_be_bytes([d[udp], d[udp + 1]]);
            let dport = u16::from_be_bytes([d[udp + 2], d[udp + 3]]);
            let at = udp + 8;
            let client_port = if sport == 22101 { dport } else { sport };
            let known = !flows.insert(client_port);
            let game = (sport == 22101 || dport == 22101) && d.len() > at + 2 && d[at] != b'\\';
            if known && game && f.number > 10 && f.number % every == 0 {
                d[at] = if sport == 22101 { 0x05 } else { 0x00 };
                damaged += 1;
            }
        }
        w.write_frame(0, f.ts_ns, f.orig_len, &f.data)
            .expect("frame");
    }
    (w.into_inner(), damaged)
}

fn frame_sum(s: &CaptureSummary) -> u64 {
    s.game_frames + s.gamespy_frames + s.ip_fragment_frames + s.not_bc.values().sum::<u64>()
}

#[test]
fn damaged_frames_of_a_game_flow_keep_their_records() {
    let mut inputs = vec![(
        "sample".to_string(),
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/captures/sample.pcapng"
        ))
        .unwrap(),
    )];
    for (name, folder) in common::shared_captures() {
        inputs.push((
            name.clone(),
            std::fs::read(folder.join(format!("{name}.pcap"))).unwrap(),
        ));
    }
    for (name, bytes) in inputs {
        let (_, clean) = run(&bytes);
        let (copy, n) = damage_first_bytes(&bytes, 7);
        assert!(n > 5, "{name}: {n}");
        let (s, recs) = run(&copy);
        // Every frame that had a record still has one, at the same frame number.
        let frames = |r: &[PacketRecord]| r.iter().map(|p| p.frame).collect::<Vec<_>>();
        assert_eq!(frames(&recs), frames(&clean), "{name}");
        assert_eq!(s.damaged_frames, n, "{name}");
        assert_eq!(frame_sum(&s), s.frames, "{name}");
        assert!(s.not_bc.is_empty(), "{name}: {:?}", s.not_bc);
        let damaged_dirs: u64 = s.totals.iter().map(|d| d.damaged).sum();
        assert_eq!(damaged_dirs, n, "{name}");
        // Each damaged record says so at byte 0 and keeps the bytes after it.
        let mut seen = 0;
        for (r, c) in recs.iter().zip(&clean) {
            let (g, gc) = match (&r.body, &c.body) {
                (PacketBody::Game(g), PacketBody::Game(gc)) => (g, gc),
                _ => continue,
            };
            if let Some(w) = g.warnings.iter().find(|w| w.code == Code::DamagedFrame) {
                assert_eq!(w.offset, Some(0));
                assert!(w.message.contains("cannot start"), "{}", w.message);
                assert_eq!(g.plain[1..], gc.plain[1..], "{name} frame {}", r.frame);
                seen += 1;
            }
        }
        assert_eq!(seen, n, "{name}");
    }
}

#[test]
fn info_frame_counts_add_up_on_every_capture() {
    let mut paths: Vec<std::path::PathBuf> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/captures"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().contains(".pcap"))
            .collect();
    for (name, folder) in common::shared_captures() {
        paths.push(folder.join(format!("{name}.pcap")));
        paths.push(folder.join(format!("{name}.pcapng")));
    }
    paths.sort();
    assert!(paths.len() >= 3, "{paths:?}");
    let mut fragments = 0;
    for p in &paths {
        let path = p.to_str().unwrap();
        let doc = common::bcwire_json(&["info", "--format", "json", path]);
        let j = &doc["files"][0];
        let n = |k: &str| j[k].as_u64().unwrap_or_else(|| panic!("{path}: {k}"));
        let not_bc: u64 = j["not_bc"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(
            n("game_frames") + n("gamespy_frames") + n("ip_fragment_frames") + not_bc,
            n("frames"),
            "{path}: {j}"
        );
        fragments += n("ip_fragment_frames");
    }
    // captures/mtu400-null.pcapng: 360 game + 4 GameSpy + 14 held fragments = 378.
    assert!(fragments >= 14, "{fragments}");
}

#[test]
fn object_id_conflicts_are_flagged_and_labels_use_player_names() {
    let Some((_, folder)) = common::shared_captures()
        .into_iter()
        .find(|(n, _)| n == "b2_valentines_replay")
    else {
        return;
    };
    let path = folder.join("b2_valentines_replay.pcap");
    let path = path.to_str().unwrap();
    // Kirk creates 0x3FFFFFFF (owner slot 1) in frame 100 while Cady2's Akira (frame
    // 99) holds it.
    let doc = common::bcwire_json(&["info", "--format", "json", path]);
    let info = &doc["files"][0];
    assert_eq!(info["object_id_conflicts"], 1, "{}", info["problems"]);
    let problems = info["problems"].to_string();
    assert!(
        problems.contains("frame 100: object id 0x3FFFFFFF created as Akira (Kirk, slot 1) while Akira (Cady2, slot 0) (created in frame 99)"),
        "{problems}"
    );
    let s0 = &info["sessions"][0]["clients"];
    let ships = |name: &str| {
        s0.as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .map(|c| c["ships"].clone())
            .unwrap()
    };
    assert_eq!(
        ships("Cady2"),
        serde_json::json!(["Akira 0x3FFFFFFF, team 2"])
    );
    assert_eq!(
        ships("Kirk"),
        serde_json::json!(["Akira 0x3FFFFFFF, team 2"])
    );
    let out = common::bcwire(&["decode", path, "--frames", "99-101"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("[Akira (Cady2, slot 0)]"), "{text}");
    assert!(
        lines[1].contains("[Akira (Kirk, slot 1)]") && lines[1].contains('⚠'),
        "{text}"
    );
    // Sep's Galaxy: the player's name, not the ship record's name field.
    assert!(lines[2].contains("[Galaxy (Sep, slot 2)]"), "{text}");
    let stats = common::bcwire_json(&["stats", "--format", "json", path]);
    assert_eq!(stats["directions"]["c2s"]["object_id_conflicts"], 1);
}

#[test]
fn verbose_decode_prints_sequence_gaps_with_their_frames() {
    let mut cap = Cap::new();
    let c = client(1);
    for seq in [0u16, 1, 4, 2] {
        cap.bc(
            c,
            server(),
            &game_datagram(2, seq, &chat(&format!("m{seq}"))),
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("seq-gap.pcap");
    std::fs::write(&path, cap.bytes()).unwrap();
    let p = path.to_str().unwrap();
    let out = common::bcwire(&["decode", "-v", p]);
    let doc = common::bcwire_json(&["info", "--format", "json", p]);
    let info = &doc["files"][0];
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("seq_")).collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].contains("frame 3") && lines[0].contains("seq_gap"),
        "{err}"
    );
    assert!(
        lines[1].contains("frame 4") && lines[1].contains("seq_out_of_order"),
        "{err}"
    );
    let c2s = &info["sessions"][0]["clients"][0]["c2s"];
    assert_eq!(
        (
            c2s["seq_gaps"].as_u64(),
            c2s["seq_missing"].as_u64(),
            c2s["seq_late"].as_u64()
        ),
        (Some(1), Some(2), Some(1))
    );
}
