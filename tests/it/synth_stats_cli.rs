//! Whole-session round trip: what `bcwire synth` writes, `bcwire stats` must count back.

use crate::common::*;
use serde_json::Value;

fn synth(args: &[&str], out: &std::path::Path) -> Value {
    // Not --quiet: with it synth prints nothing on stdout, the report included.
    let mut all = vec!["synth"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    bcwire_json(&all)
}

const COUNTED: &[&str] = &[
    "datagrams",
    "game_datagrams",
    "gamespy_datagrams",
    "bytes",
    "messages",
    "transport_types",
    "game_messages",
    "opcodes",
    "opcode_bytes",
    "retransmissions",
    "fragments",
    "fragment_sets_completed",
    "dirty_flags",
    "dirty_bits",
];

fn assert_counts_match(report: &Value, stats: &Value, what: &str) {
    for dir in ["c2s", "s2c"] {
        for key in COUNTED {
            let want = &report["directions"][dir][key];
            if want.is_null() {
                continue;
            }
            assert_eq!(&stats["directions"][dir][key], want, "{what}: {dir}.{key}");
        }
    }
}

#[test]
fn stats_reproduce_what_synth_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cases: &[&[&str]] = &[
        &["--players", "2", "--minutes", "0.3", "--seed", "11"],
        &[
            "--players",
            "4",
            "--minutes",
            "0.3",
            "--seed",
            "12",
            "--loss",
            "0.08",
        ],
        &[
            "--players",
            "3",
            "--minutes",
            "0.2",
            "--seed",
            "13",
            "--format",
            "pcap",
            "--link",
            "sll2",
        ],
        &[
            "--players",
            "2",
            "--minutes",
            "0.2",
            "--seed",
            "14",
            "--link",
            "null",
            "--mtu",
            "400",
        ],
        &[
            "--players",
            "2",
            "--minutes",
            "0.2",
            "--seed",
            "15",
            "--link",
            "raw",
            "--loss",
            "0.2",
        ],
    ];
    for (i, args) in cases.iter().enumerate() {
        let path = dir.join(format!("case{i}.pcapng"));
        let report = synth(args, &path);
        let stats = bcwire_json(&["stats", "--format", "json", path.to_str().unwrap()]);
        assert_counts_match(&report, &stats, &format!("{args:?}"));
        // Nothing the simulator writes is malformed.
        let info = &bcwire_json(&["info", "--format", "json", path.to_str().unwrap()])["files"][0];
        assert_eq!(info["problems"], serde_json::json!([]), "{args:?}");
        assert_eq!(info["not_bc"], serde_json::json!({}), "{args:?}");
        assert_eq!(info["sessions"].as_array().unwrap().len(), 1, "{args:?}");
    }
}

#[test]
fn shipped_samples_decode_cleanly() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    for name in ["sample.pcapng", "duel-sll2.pcap", "mtu400-null.pcapng"] {
        let p = root.join(name);
        let j = bcwire_json(&["stats", "--format", "json", p.to_str().unwrap()]);
        for dir in ["c2s", "s2c"] {
            let d = &j["directions"][dir];
            assert_eq!(
                d["warnings"], 0,
                "{name} {dir}: a stock-shaped session has no warnings"
            );
            assert!(d["opcodes"]["0x1C"].as_u64().unwrap() > 100, "{name} {dir}");
        }
    }
}
