//! Several inputs at once: rows name their file, and a `--client` found in some of
//! them only selects from those.

use crate::common;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

fn sample() -> String {
    common::shipped_capture("sample.pcapng")
        .to_string_lossy()
        .into_owned()
}

fn duel() -> String {
    common::shipped_capture("duel-sll2.pcap")
        .to_string_lossy()
        .into_owned()
}

/// Frame number → `frame.time_epoch` as tshark prints it (nine digits).
fn tshark_epochs(file: &str) -> HashMap<u64, String> {
    common::tshark_by_frame(
        Command::new("tshark")
            .args(["-r", file, "-T", "fields", "-e", "frame.number"])
            .args(["-e", "frame.time_epoch"]),
    )
    .into_iter()
    .collect()
}

/// CSV and JSON Lines rows of two inputs each say which file they come from, and that
/// file's frame of that number, read by tshark, has the row's time. Catches rows of
/// several inputs that cannot be told apart (frame 1 of each file alike), and a
/// `file` naming the wrong input.
#[test]
fn rows_of_several_inputs_name_their_file() {
    if !common::tool_available(
        "tshark",
        common::runs("tshark", &["--version"]),
        "Debian: apt-get install -y tshark",
    ) {
        return;
    }
    let files = [sample(), duel()];
    let epochs: HashMap<&str, HashMap<u64, String>> = files
        .iter()
        .map(|f| (f.as_str(), tshark_epochs(f)))
        .collect();
    let args = ["decode", &files[0], &files[1], "--format"];

    let csv = common::bcwire(&[&args[..], &["csv"]].concat());
    assert!(csv.status.success());
    let csv = String::from_utf8_lossy(&csv.stdout);
    let mut lines = csv.lines();
    let header = lines.next().unwrap_or_default();
    assert!(header.starts_with("file,frame,time,"), "{header}");
    let mut seen = HashMap::new();
    for row in lines {
        let cols: Vec<&str> = row.splitn(4, ',').collect();
        let (file, frame) = (cols[0], cols[1].parse::<u64>().unwrap());
        let want = &epochs[file][&frame];
        // Both captures are in microseconds: the row has six digits, tshark nine.
        assert_eq!(format!("{}000", cols[2]), *want, "{row}");
        *seen.entry(file.to_string()).or_insert(0) += 1;
    }
    assert_eq!(seen.len(), 2, "{seen:?}");

    let jsonl = common::bcwire(&[&args[..], &["jsonl"]].concat());
    assert!(jsonl.status.success());
    let mut packets = 0;
    for line in String::from_utf8_lossy(&jsonl.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let file = v["file"].as_str().expect("every record names its file");
        if v["type"] != "packet" {
            continue;
        }
        packets += 1;
        let frame = v["frame"].as_u64().unwrap();
        let want = &epochs[file][&frame];
        let ns = v["time_ns"].as_i64().unwrap();
        assert_eq!(
            format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000),
            *want
        );
    }
    assert!(packets > 0);

    // `--fields` rows too.
    let sel = common::bcwire(&[&args[..], &["jsonl", "--fields", "frame"]].concat());
    let first: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&sel.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(first["file"].as_str(), Some(files[0].as_str()), "{first}");

    // One input: no `file`, as before.
    let one = common::bcwire(&["decode", &files[0], "--format", "csv"]);
    let head = String::from_utf8_lossy(&one.stdout);
    assert!(head.starts_with("frame,time,"), "{}", &head[..40]);
}

/// `--client Worf` over a capture with Worf and one without: a note for the other,
/// exit 0, and the same rows as the capture with Worf alone; a client in neither is
/// exit 2. Catches the whole run failing (exit 2) because one input lacks the client.
#[test]
fn client_absent_from_some_inputs_is_a_note() {
    let (with, without) = (sample(), duel());
    assert!(Path::new(&without).is_file());
    let both = common::bcwire(&[
        "decode", &with, &without, "--client", "Worf", "--format", "csv",
    ]);
    let err = String::from_utf8_lossy(&both.stderr);
    assert_eq!(both.status.code(), Some(0), "{err}");
    assert!(err.contains("note:") && err.contains(&without), "{err}");
    assert!(!err.contains(&format!("{with}:")), "{err}");
    let alone = common::bcwire(&["decode", &with, "--client", "Worf", "--format", "csv"]);
    assert!(alone.status.success());
    let prefixed: Vec<String> = String::from_utf8_lossy(&alone.stdout)
        .lines()
        .skip(1)
        .map(|l| format!("{with},{l}"))
        .collect();
    let rows: Vec<String> = String::from_utf8_lossy(&both.stdout)
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect();
    assert!(!rows.is_empty());
    assert_eq!(rows, prefixed);

    let nowhere = common::bcwire(&["decode", &with, &without, "--client", "Nobody"]);
    assert_eq!(nowhere.status.code(), Some(2));
    // One input without the client stays an error.
    let single = common::bcwire(&["decode", &without, "--client", "Worf"]);
    assert_eq!(single.status.code(), Some(2));

    // `stats` alike: a note, exit 0, the counts of the capture with Worf alone.
    let both = common::bcwire(&[
        "stats", "--format", "json", "--client", "Worf", &with, &without,
    ]);
    let err = String::from_utf8_lossy(&both.stderr);
    assert_eq!(both.status.code(), Some(0), "{err}");
    assert!(err.contains("note:") && err.contains(&without), "{err}");
    let alone = common::bcwire_json(&["stats", "--format", "json", "--client", "Worf", &with]);
    let both: serde_json::Value = serde_json::from_slice(&both.stdout).unwrap();
    assert_eq!(both["directions"], alone["directions"]);
    assert!(alone["directions"]["c2s"]["datagrams"].as_u64().unwrap() > 0);
    let nowhere = common::bcwire(&["stats", "--client", "Nobody", &with, &without]);
    assert_eq!(nowhere.status.code(), Some(2));
}

// A directory yields its captures whatever their names, compressed ones included
// (recognised by content, as named files are); a compressed file that holds no capture
// is skipped. The frames counted are those pcap-file reads from the decompressed bytes.
// Catches: a directory walk that looks at names or at the outer bytes only.
#[test]
fn a_directory_yields_its_compressed_captures() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(sample()).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&plain).unwrap();
    std::fs::write(dir.path().join("night.cap.gz"), gz.finish().unwrap()).unwrap();
    let mut other = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    other.write_all(b"not a capture at all").unwrap();
    std::fs::write(dir.path().join("notes.gz"), other.finish().unwrap()).unwrap();
    let frames = pcap_file::pcapng::PcapNgReader::new(std::io::Cursor::new(&plain))
        .map(|mut r| {
            let mut n = 0u64;
            while let Some(b) = r.next_block() {
                if matches!(
                    b.unwrap().0,
                    pcap_file::pcapng::Block::EnhancedPacket(_)
                        | pcap_file::pcapng::Block::SimplePacket(_)
                ) {
                    n += 1;
                }
            }
            n
        })
        .unwrap();
    let info = common::bcwire(&["info", "--format", "json", dir.path().to_str().unwrap()]);
    assert_eq!(info.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    let files = j["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{j}");
    assert!(files[0]["file"].as_str().unwrap().ends_with("night.cap.gz"));
    assert_eq!(files[0]["frames"].as_u64(), Some(frames));
    assert!(
        String::from_utf8_lossy(&info.stderr).contains("1 file(s) that are not captures skipped")
    );
}
