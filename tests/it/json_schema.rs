//! The JSON contract (docs/json.md): the schema files of docs/schema/ are what the
//! contract's Rust types generate; every command's JSON on the shipped samples and the
//! shared captures is valid against them (a real draft 2020-12 validator); a wrong
//! document is rejected; and the required names and types are checked by hand on
//! every record of captures that exercise fragments, retransmissions and GameSpy.

use crate::common::*;
use serde_json::Value;
use std::path::PathBuf;

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/schema")
}

/// The schema `file` of docs/schema/, compiled.
fn validator(file: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(schema_dir().join(file)).expect("schema file");
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft202012::new(&schema).expect("a valid draft 2020-12 schema")
}

fn assert_valid(v: &jsonschema::Validator, doc: &Value, ctx: &str) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{ctx}: {errors:#?}");
}

#[test]
fn schema_files_are_what_the_contract_types_generate() {
    let update = std::env::var_os("BCWIRE_UPDATE_SCHEMA").is_some();
    for (file, schema) in bcwire::report::schema::all() {
        let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        let path = schema_dir().join(file);
        if update {
            std::fs::create_dir_all(schema_dir()).unwrap();
            std::fs::write(&path, &text).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == text,
            "docs/schema/{file} is stale: run BCWIRE_UPDATE_SCHEMA=1 cargo test --profile test-release --test it json_schema"
        );
        // Each is a schema the validator accepts.
        validator(file);
    }
}

/// Every capture the JSON is checked on: the shipped samples and the shared ones.
fn all_captures() -> Vec<String> {
    let mut v: Vec<String> = SAMPLES.iter().map(|n| sample(n)).collect();
    for (name, folder) in shared_captures() {
        v.push(
            folder
                .join(format!("{name}.pcapng"))
                .to_str()
                .unwrap()
                .to_string(),
        );
    }
    v
}

#[test]
fn every_json_output_is_valid_against_its_schema() {
    let packet = validator("packet.json");
    let summary = validator("summary.json");
    let captures = all_captures();
    for path in &captures {
        for fmt in ["jsonl", "json"] {
            let out = bcwire(&["decode", "--format", fmt, "--hex", path]);
            assert!(out.status.success(), "{path}");
            let records: Vec<Value> = if fmt == "json" {
                serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
            } else {
                String::from_utf8(out.stdout)
                    .unwrap()
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect()
            };
            let (last, packets) = records.split_last().unwrap();
            for p in packets {
                assert_valid(&packet, p, &format!("{path} {fmt} frame {}", p["frame"]));
            }
            assert_valid(&summary, last, &format!("{path} summary"));
        }
        let checks: [(&str, Vec<&str>); 4] = [
            ("info.json", vec!["info", "--format", "json", path]),
            ("flows.json", vec!["flows", "--format", "json", path]),
            ("stats.json", vec!["stats", "--format", "json", path]),
            (
                "stats.json",
                vec![
                    "stats",
                    "--format",
                    "json",
                    "--by",
                    "class",
                    "--interval",
                    "1",
                    path,
                ],
            ),
        ];
        for (file, args) in checks {
            assert_valid(&validator(file), &bcwire_json(&args), &format!("{args:?}"));
        }
    }
    // info of several files: the same shape.
    let many: Vec<&str> = ["info", "--format", "json"]
        .into_iter()
        .chain(captures.iter().map(String::as_str))
        .collect();
    let j = bcwire_json(&many);
    assert_eq!(j["files"].as_array().unwrap().len(), captures.len());
    assert_valid(&validator("info.json"), &j, "info of every capture");
    // flows of several files: an array of documents, each with its file.
    let many: Vec<&str> = ["flows", "--format", "json"]
        .into_iter()
        .chain(captures.iter().map(String::as_str))
        .collect();
    let j = bcwire_json(&many);
    assert_eq!(j.as_array().unwrap().len(), captures.len());
    assert_valid(&validator("flows.json"), &j, "flows of every capture");
    // A file that cannot be read is listed with its error, the others as usual.
    let missing = "/nonexistent/bcwire-missing.pcap";
    let out = bcwire(&["info", "--format", "json", &captures[0], missing]);
    assert_eq!(out.status.code(), Some(2), "a bad input makes exit 2");
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["files"][1]["file"], missing);
    assert!(j["files"][1]["error"]
        .as_str()
        .is_some_and(|e| !e.is_empty()));
    assert_valid(&validator("info.json"), &j, "info with a missing file");
    // diff of every pair, a capture with itself included.
    let diff = validator("diff.json");
    for a in &captures {
        for b in &captures {
            let out = bcwire(&["diff", "--format", "json", a, b]);
            assert!(matches!(out.status.code(), Some(0 | 1)), "{a} {b}");
            let j: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_valid(&diff, &j, &format!("diff {a} {b}"));
        }
    }
}

#[test]
fn wrong_documents_are_rejected() {
    let packet = validator("packet.json");
    let out = bcwire(&["decode", "--format", "jsonl", &sample("sample.pcapng")]);
    let text = String::from_utf8(out.stdout).unwrap();
    let good: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert!(packet.is_valid(&good));
    let mut wrong = Vec::new();
    let mut j = good.clone();
    j["direction"] = "sideways".into();
    wrong.push(j);
    let mut j = good.clone();
    j["frame"] = "1".into();
    wrong.push(j);
    let mut j = good.clone();
    j.as_object_mut().unwrap().remove("time");
    wrong.push(j);
    let mut j = good.clone();
    j["stray_key"] = 1.into();
    wrong.push(j);
    let mut j = good.clone();
    j["src"] = "not an endpoint".into();
    wrong.push(j);
    for j in &wrong {
        assert!(!packet.is_valid(j), "{j}");
    }
    let info = validator("info.json");
    // The v1 shape of info (one object, no files array) is not v2.
    let v1 = serde_json::json!({"schema_version": 1, "format": "pcapng", "frames": 1});
    assert!(!info.is_valid(&v1));
}

const SAMPLES: &[&str] = &["sample.pcapng", "duel-sll2.pcap", "mtu400-null.pcapng"];

fn sample(name: &str) -> String {
    format!("{}/captures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn is_hex_key(k: &str) -> bool {
    k.len() == 4
        && k.starts_with("0x")
        && k[2..]
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_lowercase())
}

fn check_endpoint(v: &Value) {
    let s = v.as_str().expect("ip:port string");
    assert!(s.parse::<std::net::SocketAddr>().is_ok(), "{s}");
}

fn check_game_part(m: &Value, ctx: &str) {
    assert!(m["opcode"].as_u64().is_some_and(|o| o < 256), "{ctx}");
    assert!(m["name"].is_string(), "{ctx}");
    assert!(m["fields"].is_object(), "{ctx}");
    assert!(m["warnings"].is_array(), "{ctx}");
}

fn check_message(m: &Value, ctx: &str) -> (bool, bool) {
    assert!(m["transport_type"].is_u64(), "{ctx}");
    assert!(m["reliable"].is_boolean(), "{ctx}");
    assert!(m["seq"].is_u64() || m["seq"].is_null(), "{ctx}");
    match &m["fragment"] {
        Value::Null => {}
        f => {
            assert!(f["index"].is_u64(), "{ctx}");
            assert!(f["total"].is_u64() || f["total"].is_null(), "{ctx}");
        }
    }
    assert!(m["retransmission"].is_boolean(), "{ctx}");
    assert!(m["warnings"].is_array(), "{ctx}");
    let complete = m["transport_type"] == 0x32 && m["fragment"].is_null();
    if complete {
        check_game_part(m, ctx);
    }
    let assembled = !m["assembled"].is_null();
    if assembled {
        let a = &m["assembled"];
        check_game_part(a, ctx);
        assert!(a["length"].as_u64().is_some_and(|l| l >= 1), "{ctx}");
        assert!(a["frames"].is_array(), "{ctx}");
    }
    (assembled, m["retransmission"] == true)
}

#[test]
fn decode_jsonl_records_follow_the_contract() {
    let (mut assembled, mut retransmitted, mut gamespy) = (0, 0, 0);
    for name in SAMPLES {
        let path = sample(name);
        let out = bcwire(&["decode", "--format", "jsonl", "--hex", &path]);
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let (summary, packets) = lines.split_last().unwrap();
        assert_eq!(summary["type"], "summary");
        assert!(summary["frames"].is_u64() && summary["packets"].is_u64());
        let mut last_frame = 0;
        for p in packets {
            let ctx = format!("{name} frame {}", p["frame"]);
            assert_eq!(p["type"], "packet", "{ctx}");
            let frame = p["frame"].as_u64().expect("frame");
            assert!(frame > last_frame, "{ctx}: frames ascend");
            last_frame = frame;
            assert!(p["time"].is_f64(), "{ctx}");
            check_endpoint(&p["src"]);
            check_endpoint(&p["dst"]);
            assert!(p["direction"] == "c2s" || p["direction"] == "s2c", "{ctx}");
            match p["kind"].as_str() {
                Some("gamespy") => {
                    gamespy += 1;
                    assert!(p["text"].is_string(), "{ctx}");
                }
                Some("game") => {
                    assert!(p["peer_id"].as_u64().is_some_and(|v| v < 256), "{ctx}");
                    let hex = p["plain_hex"].as_str().expect("plain_hex with --hex");
                    assert!(
                        hex.chars()
                            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
                        "{ctx}"
                    );
                    assert_eq!(hex.len() % 2, 0);
                    for m in p["messages"].as_array().expect("messages") {
                        let (a, r) = check_message(m, &ctx);
                        assembled += a as u32;
                        retransmitted += r as u32;
                    }
                }
                other => panic!("{ctx}: kind {other:?}"),
            }
        }
    }
    assert!(
        assembled > 0 && retransmitted > 0 && gamespy > 0,
        "the samples exercise every part"
    );
}

#[test]
fn stats_json_follows_the_contract() {
    for name in SAMPLES {
        let j = bcwire_json(&["stats", "--format", "json", &sample(name)]);
        for dir in ["c2s", "s2c"] {
            let d = &j["directions"][dir];
            for key in ["datagrams", "messages", "retransmissions"] {
                assert!(d[key].is_u64(), "{name} {dir}.{key}");
            }
            for map in ["opcodes", "dirty_flags", "dirty_bits"] {
                let m = d[map]
                    .as_object()
                    .unwrap_or_else(|| panic!("{name} {dir}.{map}"));
                for (k, v) in m {
                    assert!(is_hex_key(k), "{name} {dir}.{map} key {k}");
                    assert!(v.as_u64().is_some_and(|n| n > 0), "{name} {dir}.{map}.{k}");
                }
            }
            for k in d["dirty_bits"].as_object().unwrap().keys() {
                let bit = u8::from_str_radix(&k[2..], 16).unwrap();
                assert_eq!(bit.count_ones(), 1, "{k} is a single bit");
            }
        }
    }
}

#[test]
fn info_flows_and_diff_json_are_objects_with_a_schema_version() {
    let s = sample("sample.pcapng");
    for args in [
        vec!["info", "--format", "json", s.as_str()],
        vec!["flows", "--format", "json", s.as_str()],
    ] {
        let j = bcwire_json(&args);
        assert_eq!(j["schema_version"], 2, "{args:?}");
        let sessions = if args[0] == "info" {
            &j["files"][0]["sessions"]
        } else {
            &j["sessions"]
        };
        assert!(sessions.is_array(), "{args:?}");
    }
    let out = bcwire(&["diff", "--format", "json", &s, &s]);
    assert_eq!(out.status.code(), Some(0), "a capture equals itself");
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["schema_version"], 2);
    assert_eq!(j["same"], true);
    // Two different sessions: exit 1, with divergences and named field differences.
    let other = sample("duel-sll2.pcap");
    let out = bcwire(&["diff", "--format", "json", &s, &other]);
    assert_eq!(out.status.code(), Some(1));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["same"], false);
    assert!(!j["divergences"].as_array().unwrap().is_empty());
    let diffs = j["field_differences"].as_array().unwrap();
    assert!(diffs
        .iter()
        .all(|d| d["differences"].is_array() && d["a_frame"].is_u64()));
    // Trouble is 2, like diff(1).
    assert_eq!(
        bcwire(&["diff", &s, "/nonexistent.pcap"]).status.code(),
        Some(2)
    );
}
