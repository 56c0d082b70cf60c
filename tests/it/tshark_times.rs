//! `-t` against tshark's own time column, frame by frame: every format tshark has, at
//! the capture's precision (9 digits for a nanosecond file, 6 for a microsecond one).

use crate::common;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// tshark's `-t` formats, all of which bcwire accepts.
const FORMATS: [&str; 10] = ["a", "ad", "adoy", "d", "dd", "e", "r", "u", "ud", "udoy"];

/// A zone away from UTC (with a half hour), so that a local format written in UTC,
/// or the other way round, shows.
const ZONE: &str = "Asia/Kolkata";

/// Frame number → tshark's time column with `-t fmt` (and `-Y` `filter`).
fn tshark_times(file: &Path, fmt: &str, filter: Option<&str>) -> HashMap<u64, String> {
    let mut cmd = Command::new("tshark");
    cmd.env("TZ", ZONE).arg("-r").arg(file).args(["-t", fmt]);
    if let Some(f) = filter {
        cmd.args(["-Y", f]);
    }
    cmd.args(["-T", "fields", "-e", "frame.number", "-e", "_ws.col.Time"]);
    common::tshark_by_frame(&mut cmd).into_iter().collect()
}

/// (frame, time) of each line of bcwire's table with `-t fmt` and `extra` options.
fn bcwire_times(file: &Path, fmt: &str, extra: &[&str]) -> Vec<(u64, String)> {
    let out = Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .env("TZ", ZONE)
        .env("NO_COLOR", "1")
        .arg("decode")
        .arg(file)
        .args(["-t", fmt])
        .args(extra)
        .output()
        .expect("run bcwire");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The dated formats take two words: a date and a time.
    let words = if matches!(fmt, "ad" | "adoy" | "ud" | "udoy") {
        2
    } else {
        1
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let frame = w.next()?.parse().ok()?;
            let time: Vec<&str> = w.take(words).collect();
            Some((frame, time.join(" ")))
        })
        .collect()
}

/// tshark's `-Y` for the frames of bcwire's lines.
fn shown_filter(lines: &[(u64, String)]) -> String {
    let mut frames: Vec<String> = lines.iter().map(|(f, _)| f.to_string()).collect();
    frames.dedup();
    format!("frame.number in {{{}}}", frames.join(","))
}

/// The captures compared: shipped ones (microseconds, one with IP fragments, whose
/// frames carry no record of their own) and the shared ones in both units.
fn captures() -> Vec<PathBuf> {
    let mut v = vec![
        common::shipped_capture("mtu400-null.pcapng"),
        common::shipped_capture("duel-sll2.pcap"),
    ];
    for rel in [
        "captures/openbc/a_single_client/a_single_client.pcapng",
        "captures/openbc/a_single_client/a_single_client.pcap",
        "captures/openbc/b2_valentines_replay/b2_valentines_replay.pcapng",
    ] {
        v.extend(common::shared_file(rel));
    }
    v
}

/// Every format, every line, equal to tshark's column for its frame. Catches the
/// formats bcwire refused (`a`, `adoy`, `u`, `udoy`), times cut to microseconds in a
/// nanosecond capture (`.389477` where tshark prints `.389477829`), and `d` counted
/// from the previous record rather than from the previous frame captured (in
/// mtu400-null.pcapng an IP fragment's frame comes between two records).
#[test]
fn every_format_matches_tshark_frame_by_frame() {
    if !common::tshark_usable() {
        return;
    }
    for file in captures() {
        for fmt in FORMATS {
            let got = bcwire_times(&file, fmt, &[]);
            assert!(!got.is_empty(), "{}: no records", file.display());
            // `dd` counts from the previous record shown, and a frame with no record
            // of its own (an IP fragment held for reassembly, other traffic) is never
            // shown: tshark shows every frame unless `-Y` says which.
            let filter = (fmt == "dd").then(|| shown_filter(&got));
            let want = tshark_times(&file, fmt, filter.as_deref());
            for (frame, time) in &got {
                assert_eq!(
                    Some(time),
                    want.get(frame),
                    "{} -t {fmt}: frame {frame}",
                    file.display()
                );
            }
        }
    }
}

/// With a selection, `dd` counts from the previous record shown and `d` still from
/// the previous frame captured: tshark's `-Y` with the frames bcwire showed gives the
/// same columns. Catches `dd` and `d` confused, or `d` reset by the selection.
#[test]
fn selected_records_match_tshark_display_filter() {
    if !common::tshark_usable() {
        return;
    }
    for file in captures() {
        for fmt in ["d", "dd", "r"] {
            let got = bcwire_times(&file, fmt, &["--direction", "c2s"]);
            assert!(!got.is_empty(), "{}: no c2s records", file.display());
            let want = tshark_times(&file, fmt, Some(&shown_filter(&got)));
            for (frame, time) in &got {
                assert_eq!(
                    Some(time),
                    want.get(frame),
                    "{} -t {fmt} --direction c2s: frame {frame}",
                    file.display()
                );
            }
        }
    }
}

/// `show -t` heads each datagram with the same time as tshark's column. Catches the
/// heading left at microseconds in a nanosecond capture.
#[test]
fn show_heading_matches_tshark() {
    if !common::tshark_usable() {
        return;
    }
    let Some(file) = common::shared_file("captures/openbc/a_single_client/a_single_client.pcapng")
    else {
        return;
    };
    for fmt in ["e", "udoy", "r"] {
        let want = tshark_times(&file, fmt, None);
        let out = common::bcwire(&["show", &file.to_string_lossy(), "--frame", "5", "-t", fmt]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let head = text.lines().next().unwrap_or_default();
        let expected = format!("Frame 5  {}  ", want[&5]);
        assert!(
            head.starts_with(&expected),
            "-t {fmt}: {head:?} vs {expected:?}"
        );
    }
}

/// The CSV time column and the JSON `time_ns` key name the frame's own time, at the
/// capture's precision: equal to tshark's `frame.time_epoch` (which prints nine
/// digits; a microsecond file's last three are zeros). Catches the CSV's rounding to
/// microseconds (frames a nanosecond apart named alike) and a missing `time_ns`.
#[test]
fn csv_time_and_json_time_ns_match_tshark_epoch() {
    if !common::tshark_usable() {
        return;
    }
    for file in captures() {
        let out = Command::new("tshark")
            .arg("-r")
            .arg(&file)
            .args([
                "-T",
                "fields",
                "-e",
                "frame.number",
                "-e",
                "frame.time_epoch",
            ])
            .output()
            .expect("run tshark");
        let epoch: HashMap<u64, String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let (n, t) = l.split_once('\t')?;
                Some((n.parse().ok()?, t.to_string()))
            })
            .collect();
        let nanos = |t: &str| -> i64 {
            let (s, f) = t.split_once('.').unwrap_or((t, ""));
            let f = format!("{f:0<9}");
            s.parse::<i64>().unwrap() * 1_000_000_000 + f[..9].parse::<i64>().unwrap()
        };
        let ns_file = file.extension().is_some_and(|e| e == "pcapng")
            && file.to_string_lossy().contains("openbc");
        let path = file.to_string_lossy();
        let csv = common::bcwire(&["decode", &path, "--format", "csv"]);
        assert!(csv.status.success());
        let csv = String::from_utf8_lossy(&csv.stdout);
        for row in csv.lines().skip(1) {
            let mut cols = row.split(',');
            let frame: u64 = cols.next().unwrap().parse().unwrap();
            let time = cols.next().unwrap();
            let digits = time.split_once('.').map_or(0, |(_, f)| f.len());
            assert_eq!(digits, if ns_file { 9 } else { 6 }, "{path}: {row}");
            assert_eq!(nanos(time), nanos(&epoch[&frame]), "{path}: {row}");
        }
        let jsonl = common::bcwire(&["decode", &path, "--format", "jsonl"]);
        for line in String::from_utf8_lossy(&jsonl.stdout).lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            if v["type"] != "packet" {
                continue;
            }
            let frame = v["frame"].as_u64().unwrap();
            assert_eq!(
                v["time_ns"].as_i64(),
                Some(nanos(&epoch[&frame])),
                "{path}: frame {frame}"
            );
        }
    }
}

// `flows` and `info` give a client's join time at the capture's precision: the
// relative time tshark prints for the client's first frame (9 digits in a nanosecond
// capture, 6 in a microsecond one).
// Catches: join times cut to milliseconds ("0.208" where tshark prints
// "0.208458032").
#[test]
fn flows_join_times_have_the_capture_precision() {
    if !common::tshark_usable() {
        return;
    }
    for file in captures() {
        let tshark = tshark_times(&file, "r", None);
        let info = common::bcwire_json(&["info", "--format", "json", file.to_str().unwrap()]);
        let flows = common::bcwire(&["flows", file.to_str().unwrap()]);
        assert!(flows.status.success());
        let text = String::from_utf8(flows.stdout).unwrap();
        for s in info["files"][0]["sessions"].as_array().unwrap() {
            for c in s["clients"].as_array().unwrap() {
                let first = c["first_frame"].as_u64().unwrap();
                let want = tshark[&first].trim();
                let addr = c["addr"].as_str().unwrap();
                let line = text
                    .lines()
                    .find(|l| l.contains(addr))
                    .unwrap_or_else(|| panic!("{}: {addr} in flows", file.display()));
                assert!(
                    line.split(|ch: char| ch.is_whitespace() || ch == '┆' || ch == '│')
                        .any(|cell| cell == want),
                    "{}: {addr} joined at {want} (tshark):\n{line}",
                    file.display()
                );
            }
        }
    }
}
