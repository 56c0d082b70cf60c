//! `--client` against the raw headers: the frames `decode --client X -w` writes and the
//! datagrams `stats --client X` counts must be those whose UDP port is the client's,
//! as pcap-file reads the capture and the test parses its Ethernet/loopback, IPv4 and
//! UDP headers, IP fragments included (a later fragment has no UDP header: it belongs
//! to the datagram whose first fragment has the same addresses and IP id).

use crate::capture_edit::{ipv4_udp, Packet, PcapNg};
use crate::common;
use std::collections::BTreeSet;
use std::path::Path;

const SERVER_PORT: u16 = 22101;

/// What the raw headers say about one client port: its frames (1-based, fragments
/// included) and its datagrams per direction (client to server, server to client).
#[derive(Debug, PartialEq, Eq)]
struct Expected {
    frames: BTreeSet<u64>,
    c2s: u64,
    s2c: u64,
}

fn expected(packets: &[Packet], port: u16) -> Expected {
    let mut e = Expected {
        frames: BTreeSet::new(),
        c2s: 0,
        s2c: 0,
    };
    // (src, dst, ident) of this port's fragmented datagrams.
    let mut datagrams = BTreeSet::new();
    for (i, p) in packets.iter().enumerate() {
        let Some(h) = ipv4_udp(p) else { continue };
        let frame = i as u64 + 1;
        match h.ports {
            Some((src, dst)) if src == port || dst == port => {
                e.frames.insert(frame);
                if src == port && dst == SERVER_PORT {
                    e.c2s += 1;
                } else if dst == port && src == SERVER_PORT {
                    e.s2c += 1;
                }
                if h.more_fragments {
                    datagrams.insert((h.src, h.dst, h.ident));
                }
            }
            None if datagrams.contains(&(h.src, h.dst, h.ident)) => {
                e.frames.insert(frame);
            }
            _ => {}
        }
    }
    e
}

/// The original frame numbers of the packets of `written`, found in `original` by their
/// bytes and time, in order.
fn frame_numbers(original: &[Packet], written: &[Packet]) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    let mut i = 0;
    for w in written {
        while i < original.len() && (original[i].data != w.data || original[i].time != w.time) {
            i += 1;
        }
        assert!(i < original.len(), "a written frame not in the input");
        out.insert(i as u64 + 1);
        i += 1;
    }
    out
}

/// `decode --client X -w` and `stats --client X`, in the terms of [`Expected`].
fn selected(capture: &Path, client: &str, original: &[Packet]) -> Expected {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("client.pcapng");
    let run = common::bcwire(&[
        "decode",
        capture.to_str().unwrap(),
        "--client",
        client,
        "-w",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let frames = frame_numbers(original, &PcapNg::read(&out).packets());
    let stats = common::bcwire_json(&[
        "stats",
        capture.to_str().unwrap(),
        "--client",
        client,
        "--format",
        "json",
    ]);
    let d = &stats["directions"];
    Expected {
        frames,
        c2s: d["c2s"]["datagrams"].as_u64().unwrap(),
        s2c: d["s2c"]["datagrams"].as_u64().unwrap(),
    }
}

// A real capture, clients named as its ground truth names them: each one's frames and
// datagrams are those of its UDP port, and agree with the summary's per-client counts.
// Catches: other clients' frames let in (every client of the session selected), in -w
// and in the stats counts.
#[test]
fn named_clients_of_a_real_capture_are_their_ports() {
    let Some(folder) = common::shared_dir() else {
        return;
    };
    let name = "b2_valentines_replay";
    let folder = folder.join("captures/openbc").join(name);
    let capture = folder.join(format!("{name}.pcapng"));
    let summary = common::summary(&folder, name);
    let packets = PcapNg::read(&capture).packets();
    let clients = summary["clients"].as_array().unwrap();
    let mut checked = 0;
    for c in clients {
        let player = c["name"].as_str().unwrap();
        // A name two clients used selects both: take names used once.
        if clients.iter().filter(|o| o["name"] == player).count() != 1 {
            continue;
        }
        let port = c["client_port"].as_u64().unwrap() as u16;
        let want = expected(&packets, port);
        assert_eq!(
            (want.c2s, want.s2c),
            (
                c["frames"]["C2S"].as_u64().unwrap(),
                c["frames"]["S2C"].as_u64().unwrap()
            ),
            "{player}: raw headers against the summary"
        );
        assert_eq!(selected(&capture, player, &packets), want, "{player}");
        checked += 1;
    }
    assert!(checked >= 3, "{checked}");
}

// A capture whose large datagrams left as IPv4 fragments: for every client port in the
// UDP headers, `--client port:N` keeps exactly that port's frames and every fragment of
// its datagrams, and counts each datagram once; each client's name selects exactly what
// one of those ports does.
// Catches: the earlier IP fragments of a selected datagram left out of -w.
#[test]
fn client_ports_keep_their_ip_fragments() {
    let capture = common::shipped_capture("mtu400-null.pcapng");
    let packets = PcapNg::read(&capture).packets();
    let ports: BTreeSet<u16> = packets
        .iter()
        .filter_map(|p| ipv4_udp(p)?.ports)
        .flat_map(|(s, d)| [s, d])
        .filter(|&p| p != SERVER_PORT)
        .collect();
    assert!(ports.len() >= 2, "{ports:?}");
    let mut by_port = Vec::new();
    let mut fragments = 0;
    for &port in &ports {
        let want = expected(&packets, port);
        fragments += want.frames.len() as u64 - want.c2s - want.s2c;
        assert_eq!(
            selected(&capture, &format!("port:{port}"), &packets),
            want,
            "port {port}"
        );
        by_port.push(want);
    }
    // The capture is meant to hold fragments; without them this test shows nothing.
    assert!(fragments > 0);
    for player in ["Cady2", "Picard"] {
        let got = selected(&capture, player, &packets);
        assert_eq!(
            by_port.iter().filter(|w| **w == got).count(),
            1,
            "{player}: {got:?}"
        );
    }
}

/// "Clients left" follows the selection: `stats --client NAME` counts only how that
/// player left, as `flows` says each client left.
// Catches: departures taken from the whole capture whatever the filter (every client's
// disconnect counted under `--client Kirk`).
#[test]
fn departures_follow_the_client_selection() {
    let Some(cap) =
        common::shared_file("captures/openbc/b2_valentines_replay/b2_valentines_replay.pcapng")
    else {
        return;
    };
    let cap = cap.to_str().unwrap();
    let flows = common::bcwire_json(&["-q", "flows", cap, "--format", "json"]);
    let mut checked = 0;
    for s in flows["sessions"].as_array().unwrap() {
        for c in s["clients"].as_array().unwrap() {
            let Some(name) = c["name"].as_str() else {
                continue;
            };
            let stats =
                common::bcwire_json(&["-q", "stats", cap, "--client", name, "--format", "json"]);
            let want = match c["left"].as_str() {
                Some(how) => serde_json::json!({ how: 1 }),
                None => serde_json::json!({}),
            };
            assert_eq!(stats["departures"], want, "{name}");
            checked += 1;
        }
    }
    assert!(checked >= 5, "the capture names its players");
}
