//! Shared helpers for integration tests: locating the shared real-peer captures and
//! running the built binary.
#![allow(dead_code)]

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output};

/// `../shared` relative to the crate, or `$BCWIRE_SHARED`; None (skip) when absent.
pub fn shared_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("BCWIRE_SHARED").map(PathBuf::from),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared")),
        Some(PathBuf::from("/work/shared")),
    ];
    let found = candidates
        .into_iter()
        .flatten()
        .find(|p| p.join("captures/openbc").is_dir());
    if found.is_none() {
        eprintln!("note: shared real-peer captures not found; skipping");
    }
    found
}

/// (name, folder) of each shared capture.
pub fn shared_captures() -> Vec<(String, PathBuf)> {
    let Some(dir) = shared_dir() else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(dir.join("captures/openbc"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The ground-truth frames of a shared capture.
pub fn ground_truth(folder: &std::path::Path, name: &str) -> Vec<serde_json::Value> {
    let f = std::fs::File::open(folder.join(format!("{name}.frames.jsonl.gz"))).unwrap();
    let mut s = String::new();
    flate2::read::GzDecoder::new(f)
        .read_to_string(&mut s)
        .unwrap();
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn summary(folder: &std::path::Path, name: &str) -> serde_json::Value {
    let s = std::fs::read_to_string(folder.join(format!("{name}.summary.json"))).unwrap();
    serde_json::from_str(&s).unwrap()
}

pub fn bcwire(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run bcwire")
}

/// Run and parse stdout as JSON; the command must succeed.
pub fn bcwire_json(args: &[&str]) -> serde_json::Value {
    let out = bcwire(args);
    assert!(
        out.status.success(),
        "bcwire {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}
