//! `stats` over several captures (read on several threads) and over a directory.

use crate::common::*;
use serde_json::{Map, Value};

const SAMPLES: &[&str] = &["sample.pcapng", "duel-sll2.pcap", "mtu400-null.pcapng"];

fn sample(name: &str) -> String {
    format!("{}/captures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Adds numbers and maps of numbers key by key.
pub(crate) fn add(a: &mut Value, b: &Value) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            *x = (x.as_u64().unwrap() + y.as_u64().unwrap()).into();
        }
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in y {
                match x.get_mut(k) {
                    Some(mine) => add(mine, v),
                    None => {
                        x.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (x, y) => assert_eq!(x, y),
    }
}

fn directions(j: &Value) -> Value {
    j["directions"].clone()
}

#[test]
fn several_captures_add_up_to_their_parts() {
    let paths: Vec<String> = SAMPLES.iter().map(|s| sample(s)).collect();
    let mut want = Value::Object(Map::new());
    for p in &paths {
        add(
            &mut want,
            &directions(&bcwire_json(&["stats", "--format", "json", p])),
        );
    }
    let mut args = vec!["stats", "--format", "json"];
    args.extend(paths.iter().map(String::as_str));
    let together = bcwire_json(&args);
    assert_eq!(directions(&together), want);
    // The same files in another order give the same figures (threads finish in any order).
    let mut reversed = vec!["stats", "--format", "json"];
    reversed.extend(paths.iter().rev().map(String::as_str));
    assert_eq!(bcwire_json(&reversed)["directions"], together["directions"]);
}

#[test]
fn a_directory_means_its_capture_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("captures");
    std::fs::create_dir_all(&dir).unwrap();
    for s in SAMPLES {
        std::fs::copy(sample(s), dir.join(s)).unwrap();
    }
    std::fs::write(dir.join("notes.txt"), "not a capture").unwrap();
    let out = bcwire(&["stats", "--format", "json", dir.to_str().unwrap()]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("1 file(s) that are not captures skipped"),
        "{stderr}"
    );
    let from_dir: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut args = vec!["stats", "--format", "json"];
    let paths: Vec<String> = SAMPLES.iter().map(|s| sample(s)).collect();
    args.extend(paths.iter().map(String::as_str));
    assert_eq!(from_dir["directions"], bcwire_json(&args)["directions"]);
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = bcwire(&["stats", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}
