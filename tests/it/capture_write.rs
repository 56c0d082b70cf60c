//! Capture files through the binary: compressed copies of the shipped samples, and
//! `-w` / `--annotate` cutting frames out of a capture.

use crate::common;

use bcwire::capture::{CaptureReader, Frame};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SAMPLES: [&str; 3] = [
    "captures/sample.pcapng",
    "captures/duel-sll2.pcap",
    "captures/mtu400-null.pcapng",
];

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

fn bcwire_ok(args: &[&str]) -> Vec<u8> {
    let out = common::bcwire(args);
    assert!(
        out.status.success(),
        "bcwire {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The packet records of a JSON Lines decode (the closing summary left out).
fn records(jsonl: &[u8]) -> Vec<serde_json::Value> {
    let mut v: Vec<serde_json::Value> = String::from_utf8_lossy(jsonl)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(v.pop().expect("summary")["type"], "summary");
    v
}

fn frames(bytes: Vec<u8>) -> Vec<Frame> {
    let r = CaptureReader::new(std::io::Cursor::new(bytes)).expect("capture");
    r.map(|f| f.expect("frame")).collect()
}

fn compress(kind: &str, plain: &[u8]) -> Vec<u8> {
    match kind {
        "gz" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(plain).unwrap();
            e.finish().unwrap()
        }
        "zst" => zstd::encode_all(plain, 3).unwrap(),
        "lz4" => {
            let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
            e.write_all(plain).unwrap();
            e.finish().unwrap()
        }
        _ => unreachable!(),
    }
}

/// gzip, zstd and lz4 copies of every shipped sample decode to the same records as the
/// original, and `info` names the compression with its ratio.
#[test]
fn compressed_samples_decode_like_the_originals() {
    let dir = tempfile::tempdir().unwrap();
    for s in SAMPLES {
        let path = sample(s);
        let plain = std::fs::read(&path).unwrap();
        let want = records(&bcwire_ok(&[
            "decode",
            path.to_str().unwrap(),
            "--format",
            "jsonl",
        ]));
        assert!(!want.is_empty());
        for kind in ["gz", "zst", "lz4"] {
            // A misleading name: detection goes by the magic bytes.
            let copy = dir.path().join(format!("copy-{kind}.cap"));
            let bytes = compress(kind, &plain);
            std::fs::write(&copy, &bytes).unwrap();
            let got = records(&bcwire_ok(&[
                "decode",
                copy.to_str().unwrap(),
                "--format",
                "jsonl",
            ]));
            assert!(got == want, "{s} as {kind}: records differ");
            let info: serde_json::Value = serde_json::from_slice(&bcwire_ok(&[
                "info",
                copy.to_str().unwrap(),
                "--format",
                "json",
            ]))
            .unwrap();
            let z = &info["files"][0]["compression"];
            let method = match kind {
                "gz" => "gzip",
                "zst" => "zstd",
                _ => "lz4",
            };
            assert_eq!(z["method"], method, "{s}");
            assert_eq!(z["bytes"], plain.len() as u64, "{s} {kind}");
            assert_eq!(z["compressed_bytes"], bytes.len() as u64, "{s} {kind}");
        }
    }
    // Standard input is detected the same way.
    let plain = std::fs::read(sample(SAMPLES[1])).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(["info", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let gz = compress("gz", &plain);
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&gz));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("compression") && text.contains("gzip"),
        "{text}"
    );
}

/// A time window from the start cut out with -w decodes to exactly the records the
/// filtered decode listed (same frame numbers, since the window starts at frame 1).
#[test]
fn written_window_decodes_to_the_filtered_records() {
    let dir = tempfile::tempdir().unwrap();
    let src = sample("captures/sample.pcapng");
    let out = dir.path().join("window.pcapng");
    let filtered = records(&bcwire_ok(&[
        "decode",
        src.to_str().unwrap(),
        "--time",
        "0-20",
        "--format",
        "jsonl",
        "-w",
        out.to_str().unwrap(),
    ]));
    let again = records(&bcwire_ok(&[
        "decode",
        out.to_str().unwrap(),
        "--format",
        "jsonl",
    ]));
    assert!(filtered.len() > 100);
    assert!(again == filtered, "records differ after the round trip");
    let all = frames(std::fs::read(&src).unwrap());
    let cut = frames(std::fs::read(&out).unwrap());
    assert!(cut.len() < all.len());
    // The cut's interfaces count nanoseconds (every timestamp exact), so only the
    // precision its times print with differs from the source's microseconds.
    let unit_aside = |f: &Frame| Frame {
        ts_digits: 0,
        ..f.clone()
    };
    assert_eq!(
        cut.iter().map(unit_aside).collect::<Vec<_>>(),
        all[..cut.len()].iter().map(unit_aside).collect::<Vec<_>>(),
        "whole frames, same timestamps"
    );
}

/// One client cut out to standard output (`-w -`, pcapng) and to a classic pcap: the
/// frames written are exactly the frames of the filtered records, byte for byte, with
/// their timestamps; decoding the cut with the same filter lists the same messages.
#[test]
fn one_client_cut_out_keeps_whole_frames() {
    let dir = tempfile::tempdir().unwrap();
    let src = sample("captures/duel-sll2.pcap");
    let src = src.to_str().unwrap();
    let filtered = records(&bcwire_ok(&[
        "decode", src, "--client", "Picard", "--format", "jsonl",
    ]));
    let picked: Vec<u64> = filtered
        .iter()
        .map(|r| r["frame"].as_u64().unwrap())
        .collect();
    assert!(!picked.is_empty());
    let all = frames(std::fs::read(src).unwrap());
    let want: Vec<&Frame> = picked.iter().map(|&n| &all[n as usize - 1]).collect();

    let stdout = bcwire_ok(&["decode", src, "--client", "Picard", "-w", "-"]);
    let pcap_out = dir.path().join("client.pcap");
    bcwire_ok(&[
        "decode",
        src,
        "--client",
        "Picard",
        "-w",
        pcap_out.to_str().unwrap(),
    ]);
    let pcap = std::fs::read(&pcap_out).unwrap();
    assert_eq!(
        &pcap[..4],
        &[0x4D, 0x3C, 0xB2, 0xA1],
        "ns pcap, little-endian"
    );
    for bytes in [stdout, pcap] {
        let got = frames(bytes);
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(
                (g.ts_ns, g.link_type, g.orig_len, &g.data),
                (w.ts_ns, w.link_type, w.orig_len, &w.data)
            );
        }
    }
    let again = records(&bcwire_ok(&[
        "decode",
        pcap_out.to_str().unwrap(),
        "--client",
        "Picard",
        "--format",
        "jsonl",
    ]));
    let messages = |rs: &[serde_json::Value]| -> Vec<(String, String)> {
        rs.iter()
            .flat_map(|r| r["messages"].as_array().cloned().unwrap_or_default())
            .map(|m| (m["transport"].to_string(), m["game"]["name"].to_string()))
            .collect()
    };
    assert_eq!(messages(&again), messages(&filtered));
}

/// `show --frame N -w` writes that one frame; standard input is spooled for -w.
#[test]
fn show_frame_and_stdin_cuts() {
    let dir = tempfile::tempdir().unwrap();
    let src = sample("captures/mtu400-null.pcapng");
    let one = dir.path().join("one.pcapng");
    bcwire_ok(&[
        "show",
        src.to_str().unwrap(),
        "--frame",
        "40",
        "-w",
        one.to_str().unwrap(),
    ]);
    let all = frames(std::fs::read(&src).unwrap());
    let got = frames(std::fs::read(&one).unwrap());
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].data, all[39].data);
    assert_eq!(got[0].ts_ns, all[39].ts_ns);

    let piped = dir.path().join("piped.pcapng");
    let mut child = Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(["decode", "-", "--frames", "1-50", "-w"])
        .arg(&piped)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let bytes = std::fs::read(&src).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&bytes));
    assert!(child.wait().unwrap().success());
    writer.join().unwrap().unwrap();
    let got = frames(std::fs::read(&piped).unwrap());
    assert!(!got.is_empty() && got.len() <= 50);
    for f in &got {
        assert!(
            all[..50]
                .iter()
                .any(|a| a.data == f.data && a.ts_ns == f.ts_ns),
            "frame {} is not one of the first 50",
            f.number
        );
    }

    // --annotate refuses a classic pcap, which has nowhere to put comments.
    let out = common::bcwire(&[
        "decode",
        src.to_str().unwrap(),
        "-w",
        dir.path().join("x.pcap").to_str().unwrap(),
        "--annotate",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("pcapng"));
}

/// `--annotate` puts the one-line decode on every written frame as a packet comment:
/// bcwire reads it back (show, JSON), and so does tshark where it is installed.
#[test]
fn annotated_cut_carries_comments() {
    let dir = tempfile::tempdir().unwrap();
    let src = sample("captures/sample.pcapng");
    let out = dir.path().join("annotated.pcapng");
    let out_s = out.to_str().unwrap();
    bcwire_ok(&[
        "decode",
        src.to_str().unwrap(),
        "--frames",
        "1-40",
        "-w",
        out_s,
        "--annotate",
    ]);
    let cut = frames(std::fs::read(&out).unwrap());
    assert!(cut.len() >= 30);
    let comments: Vec<String> = cut
        .iter()
        .map(|f| {
            assert_eq!(f.comments.len(), 1, "one annotation per frame");
            f.comments[0].clone()
        })
        .collect();
    assert!(comments.iter().all(|c| c.starts_with("bcwire: ")));
    assert!(
        comments.iter().any(|c| c.contains("ChecksumRequest")),
        "{comments:?}"
    );
    // The comment comes back in the records of the written file.
    let recs = records(&bcwire_ok(&["decode", out_s, "--format", "jsonl"]));
    for (r, c) in recs.iter().zip(&comments) {
        assert_eq!(r["comment"].as_str(), Some(c.as_str()));
    }
    let shown = String::from_utf8_lossy(&bcwire_ok(&["show", out_s, "--frame", "3"])).into_owned();
    assert!(shown.contains("Comment: bcwire: c2s"), "{shown}");

    if common::tool_available(
        "tshark",
        common::runs("tshark", &["--version"]),
        "Debian: apt-get install -y tshark",
    ) {
        let t = Command::new("tshark")
            .args(["-r", out_s, "-T", "fields", "-e", "frame.comment"])
            .output()
            .expect("run tshark");
        assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
        let text = String::from_utf8_lossy(&t.stdout);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), comments.len());
        for (l, c) in lines.iter().zip(&comments) {
            assert_eq!(l, c);
        }
    }
}

/// A datagram that crossed the wire as IP fragments is cut out with all its fragments,
/// so it still reassembles and decodes in the written file.
#[test]
fn fragmented_datagrams_are_cut_out_whole() {
    let dir = tempfile::tempdir().unwrap();
    let src = sample("captures/mtu400-null.pcapng");
    let src = src.to_str().unwrap();
    let out = dir.path().join("picard.pcapng");
    let args = ["--client", "Picard", "--format", "jsonl"];
    let mut with_w: Vec<&str> = vec!["decode", src];
    with_w.extend(args);
    with_w.extend(["-w", out.to_str().unwrap()]);
    let filtered = records(&bcwire_ok(&with_w));
    let big = filtered
        .iter()
        .filter(|r| r["udp_length"].as_u64().unwrap() > 372)
        .count();
    assert!(big >= 2, "the client has IP-fragmented datagrams");
    let again = records(&bcwire_ok(&[
        "decode",
        out.to_str().unwrap(),
        "--client",
        "Picard",
        "--format",
        "jsonl",
    ]));
    let key = |rs: &[serde_json::Value]| -> Vec<(f64, u64, usize)> {
        rs.iter()
            .map(|r| {
                (
                    r["time"].as_f64().unwrap(),
                    r["udp_length"].as_u64().unwrap(),
                    r["messages"].as_array().map_or(0, |m| m.len()),
                )
            })
            .collect()
    };
    assert_eq!(key(&again), key(&filtered));
}

/// A message reassembled from transport fragments is cut out with the datagrams that
/// carried its earlier fragments, so it reassembles in the written file too.
#[test]
fn reassembled_messages_are_cut_out_with_their_fragments() {
    let dir = tempfile::tempdir().unwrap();
    let src = sample("captures/sample.pcapng");
    let out = dir.path().join("checksums.pcapng");
    let table = |bytes: Vec<u8>| -> Vec<String> {
        String::from_utf8_lossy(&bytes)
            .lines()
            .map(|l| {
                // Past frame, time and client columns: transport, opcode, fields.
                let at = l.find(" c2s ").or_else(|| l.find(" s2c ")).unwrap();
                l[at..].to_string()
            })
            .collect()
    };
    let before = table(bcwire_ok(&[
        "decode",
        src.to_str().unwrap(),
        "--opcode",
        "ChecksumResponse",
        "-w",
        out.to_str().unwrap(),
    ]));
    let after = table(bcwire_ok(&[
        "decode",
        out.to_str().unwrap(),
        "--opcode",
        "ChecksumResponse",
    ]));
    assert!(
        before
            .iter()
            .filter(|l| l.contains("(reassembled)"))
            .count()
            >= 3
    );
    assert_eq!(after, before);
}

/// `stats -w`: the frames counted for one client are written out, and their
/// statistics read back count the same datagrams, bytes and messages.
#[test]
fn stats_writes_the_frames_it_counted() {
    let dir = tempfile::tempdir().unwrap();
    let src = sample("captures/sample.pcapng");
    let out = dir.path().join("picard.pcapng");
    let json =
        |args: &[&str]| -> serde_json::Value { serde_json::from_slice(&bcwire_ok(args)).unwrap() };
    let counted = json(&[
        "stats",
        src.to_str().unwrap(),
        "--client",
        "Picard",
        "--format",
        "json",
        "-w",
        out.to_str().unwrap(),
    ]);
    let again = json(&["stats", out.to_str().unwrap(), "--format", "json"]);
    for dir in ["c2s", "s2c"] {
        for key in ["datagrams", "bytes", "messages", "game_messages", "acks"] {
            let (a, b) = (
                &counted["directions"][dir][key],
                &again["directions"][dir][key],
            );
            assert!(a.as_u64().unwrap() > 0, "{dir} {key}");
            assert_eq!(a, b, "{dir} {key}");
        }
    }
    // Several captures cannot go into one -w file.
    let two = common::bcwire(&[
        "stats",
        src.to_str().unwrap(),
        src.to_str().unwrap(),
        "-w",
        out.to_str().unwrap(),
    ]);
    assert_eq!(two.status.code(), Some(2));
}
