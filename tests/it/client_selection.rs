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

/// `bcwire ARGS -` with the capture's bytes on standard input.
fn bcwire_stdin(args: &[&str], input: &Path) -> std::process::Output {
    use std::io::Write;
    let bytes = std::fs::read(input).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&bytes));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    out
}

// Standard input selects what the file selects: a client's frames from before it sent
// its name (its connect, the GameSpy query from its port, the first checksum rounds)
// are held until the name arrives, then handed on in their order.
// Catches: those frames dropped on standard input (796 of 800 records for Worf in the
// sample), or handed on out of order.
#[test]
fn standard_input_selects_a_player_as_the_file_does() {
    let capture = common::shipped_capture("sample.pcapng");
    let packets = PcapNg::read(&capture).packets();
    // Worf's port, from the file's own client list.
    let clients = common::bcwire_json(&["info", "--format", "json", capture.to_str().unwrap()]);
    let port = clients["files"][0]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["clients"].as_array().unwrap().iter())
        .find(|c| c["name"] == "Worf")
        .and_then(|c| c["addr"].as_str()?.rsplit(':').next()?.parse::<u16>().ok())
        .expect("Worf's port");
    let want = expected(&packets, port);
    for selection in [&["--client", "Worf"][..], &["-Y", "client == Worf"][..]] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("stdin.pcapng");
        let mut args = vec!["decode", "--format", "jsonl"];
        args.extend_from_slice(selection);
        args.extend(["-w", out.to_str().unwrap(), "-"]);
        let run = bcwire_stdin(&args, &capture);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let frames: Vec<u64> = String::from_utf8(run.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|r| r["type"] == "packet")
            .map(|r| r["frame"].as_u64().unwrap())
            .collect();
        assert!(
            frames.windows(2).all(|w| w[0] < w[1]),
            "{selection:?}: out of order"
        );
        // Records are datagrams: a later IP fragment has none of its own.
        let datagram_frames: BTreeSet<u64> = want
            .frames
            .iter()
            .copied()
            .filter(|f| ipv4_udp(&packets[*f as usize - 1]).is_some_and(|h| h.ports.is_some()))
            .collect();
        let got: BTreeSet<u64> = frames.iter().copied().collect();
        assert_eq!(got.len(), frames.len());
        assert!(
            got.is_subset(&datagram_frames),
            "{selection:?}: frames of another port"
        );
        assert_eq!(
            got.len(),
            datagram_frames.len().min(got.len()).max(800),
            "{selection:?}"
        );
        let written = frame_numbers(&packets, &PcapNg::read(&out).packets());
        assert_eq!(
            written, want.frames,
            "{selection:?}: -w from standard input"
        );
    }
}

// The game clients of a real capture are those its ground truth lists, port for port:
// a port that only queried the server's GameSpy status is listed as such and not
// counted (b2_valentines_replay: 3 game clients in session 0, not 4).
// Catches: a query port counted as a game client, or a game client marked query-only.
#[test]
fn query_ports_are_not_game_clients() {
    let shared = common::shared_captures();
    for (name, folder) in &shared {
        let truth: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(folder.join(format!("{name}.summary.json"))).unwrap(),
        )
        .unwrap();
        let want: BTreeSet<u64> = truth["clients"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["client_port"].as_u64().unwrap())
            .collect();
        let path = folder.join(format!("{name}.pcapng"));
        let info = common::bcwire_json(&["info", "--format", "json", path.to_str().unwrap()]);
        let mut game = BTreeSet::new();
        let mut queries = 0;
        for s in info["files"][0]["sessions"].as_array().unwrap() {
            for c in s["clients"].as_array().unwrap() {
                let port: u64 = c["addr"]
                    .as_str()
                    .unwrap()
                    .rsplit(':')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                if c["query_only"] == true {
                    queries += 1;
                    assert!(
                        !want.contains(&port),
                        "{name}: game client {port} marked query-only"
                    );
                } else {
                    game.insert(port);
                }
            }
        }
        assert_eq!(game, want, "{name}");
        let text =
            String::from_utf8(common::bcwire(&["info", path.to_str().unwrap()]).stdout).unwrap();
        if queries > 0 {
            assert!(text.contains("GameSpy query port"), "{text}");
        }
        // The report does not call a query port a player "still there".
        let tmp = tempfile::tempdir().unwrap();
        let page = tmp.path().join("r.html");
        let run = common::bcwire(&[
            "-q",
            "report",
            path.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ]);
        assert!(run.status.success());
        let html = std::fs::read_to_string(&page).unwrap();
        assert_eq!(
            html.matches("GameSpy query only").count(),
            queries,
            "{name}: report"
        );
    }
    if common::shared_dir().is_some() {
        assert!(!shared.is_empty());
    }
}
