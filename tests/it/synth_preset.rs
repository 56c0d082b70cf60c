//! `bcwire synth --preset stock-battle` against the measured figures of the 34-minute,
//! 3-player stock battle (shared protocol notes: flows.md §3.1, README §3): datagrams,
//! game opcodes per direction and messages per datagram, read back from the capture
//! with `bcwire stats` and `bcwire decode`.

use crate::common::*;
use std::collections::HashMap;

/// Measured figures: (name, c2s, s2c).
const DATAGRAMS: (u64, u64) = (70_431, 68_266);
const OPCODES: [(&str, u64, u64); 5] = [
    ("0x1C", 58_049, 141_490),
    ("0x07", 978, 1_940),
    ("0x19", 363, 726),
    ("0x06", 0, 3_825),
    ("0x15", 317, 0),
];
/// Share of datagrams (percent) with 1, 2, 3, 4 and 5 transport messages.
const SHARES: [f64; 5] = [42.0, 23.0, 26.0, 4.0, 2.0];

fn within(what: &str, got: u64, want: u64, problems: &mut Vec<String>) {
    if want == 0 {
        if got != 0 {
            problems.push(format!("{what}: {got}, measured 0"));
        }
        return;
    }
    let off = got as f64 / want as f64 - 1.0;
    if off.abs() > 0.10 {
        problems.push(format!(
            "{what}: {got}, measured {want} ({:+.1} %)",
            off * 100.0
        ));
    }
}

/// Writes `synth --preset stock-battle` with `extra` arguments to a capture in a fresh
/// temporary folder: (the folder, removed when dropped; the capture's path).
fn stock_battle(tag: &str, extra: &[&str]) -> (tempfile::TempDir, String) {
    let dir = tempfile::Builder::new()
        .prefix(&format!("bcwire-preset-{tag}-"))
        .tempdir()
        .unwrap();
    let file = dir
        .path()
        .join("stock-battle.pcap")
        .to_str()
        .unwrap()
        .to_string();
    let mut args = vec!["-q", "synth", "--preset", "stock-battle", "--out", &file];
    args.extend_from_slice(extra);
    let out = bcwire(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, file)
}

#[test]
fn stock_battle_preset_matches_the_measured_session() {
    let (dir, file) = stock_battle("whole", &[]);
    let f = file.as_str();
    let stats = bcwire_json(&["stats", "--format", "json", f]);
    let mut problems = Vec::new();
    for (dir_name, want) in [("c2s", DATAGRAMS.0), ("s2c", DATAGRAMS.1)] {
        let d = &stats["directions"][dir_name];
        assert_eq!(d["warnings"], 0, "{dir_name}: the preset decodes cleanly");
        within(
            &format!("{dir_name} datagrams"),
            d["datagrams"].as_u64().unwrap(),
            want,
            &mut problems,
        );
        for (op, c2s, s2c) in OPCODES {
            let want = if dir_name == "c2s" { c2s } else { s2c };
            let got = d["opcodes"][op].as_u64().unwrap_or(0);
            within(&format!("{dir_name} {op}"), got, want, &mut problems);
        }
    }

    // Messages per datagram: one CSV row per transport message, keyed by frame.
    let csv = bcwire(&["decode", "--format", "csv", "--fields", "frame", f]);
    assert!(csv.status.success());
    let mut per_frame: HashMap<u64, u64> = HashMap::new();
    for line in String::from_utf8(csv.stdout).unwrap().lines().skip(1) {
        *per_frame.entry(line.parse().unwrap()).or_default() += 1;
    }
    let datagrams = per_frame.len() as f64;
    assert!(datagrams > 100_000.0, "{datagrams} game datagrams");
    for (k, want) in (1..=5u64).zip(SHARES) {
        let share = per_frame.values().filter(|&&n| n == k).count() as f64 / datagrams * 100.0;
        // 1–3 messages: within 10 % of the share; 4 and 5: within 2 percentage points.
        let ok = if k <= 3 {
            (share / want - 1.0).abs() <= 0.10
        } else {
            (share - want).abs() <= 2.0
        };
        if !ok {
            problems.push(format!(
                "{k} message(s) per datagram: {share:.1} %, measured {want} %"
            ));
        }
    }
    let most = per_frame.values().max().copied().unwrap_or(0);
    assert!(most > 5, "a tail of datagrams with many messages ({most})");
    drop(dir);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn stock_battle_preset_scales_to_a_datagram_count() {
    let (dir, file) = stock_battle("n", &["--packets", "20000"]);
    let f = file.as_str();
    let stats = bcwire_json(&["stats", "--format", "json", f]);
    let d = &stats["directions"];
    let (c2s, s2c) = (&d["c2s"], &d["s2c"]);
    let total = c2s["datagrams"].as_u64().unwrap() + s2c["datagrams"].as_u64().unwrap();
    assert_eq!(total, 20_000);
    assert_eq!(c2s["warnings"], 0);
    assert_eq!(s2c["warnings"], 0);
    // Same shape: about as many datagrams each way, ~2.4 host StateUpdates per client one.
    let ratio = s2c["opcodes"]["0x1C"].as_f64().unwrap() / c2s["opcodes"]["0x1C"].as_f64().unwrap();
    assert!((2.2..2.7).contains(&ratio), "s2c/c2s StateUpdates {ratio}");
    drop(dir);
}
