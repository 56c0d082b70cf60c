//! Shared helpers for integration tests: locating the shared real-peer captures and
//! running the built binary.
#![allow(dead_code)]

pub mod built;
pub mod rng;

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
    match &found {
        // CI always has them: a conformance test must not pass by skipping there.
        None if std::env::var_os("BCWIRE_REQUIRE_SHARED").is_some() => panic!(
            "the shared real-peer captures are required (BCWIRE_REQUIRE_SHARED is set) \
             but were not found in $BCWIRE_SHARED, <crate>/../shared or /work/shared"
        ),
        None => eprintln!("note: shared real-peer captures not found; skipping"),
        Some(_) => record_conformance_test(),
    }
    found
}

/// Appends the test's path ("module::test") to `$BCWIRE_CONFORMANCE_LOG`, so that `.ci/run` can
/// say how many tests ran against the real captures.
fn record_conformance_test() {
    let Some(log) = std::env::var_os("BCWIRE_CONFORMANCE_LOG") else {
        return;
    };
    let test = std::thread::current().name().unwrap_or("?").to_string();
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        use std::io::Write;
        let _ = writeln!(f, "{test}");
    }
}

/// Whether a third-party tool a test checks against is there (`kind`: browser, duckdb,
/// tshark). Where `.ci/run` installed it, `BCWIRE_REQUIRE_<KIND>` is set and a missing
/// tool fails the test instead of skipping it; by hand it skips with a note saying how to
/// install it. A test that goes on is appended to `$BCWIRE_TOOL_LOG` as "kind test", so
/// `.ci/run` can say how many of each kind ran.
pub fn tool_available(kind: &str, available: bool, install: &str) -> bool {
    let var = format!("BCWIRE_REQUIRE_{}", kind.to_ascii_uppercase());
    if !available {
        if std::env::var_os(&var).is_some() {
            panic!("{kind} is required ({var} is set) but not usable; install: {install}");
        }
        eprintln!("note: {kind} not usable (install: {install}); test skipped");
        return false;
    }
    if let Some(log) = std::env::var_os("BCWIRE_TOOL_LOG") {
        let test = std::thread::current().name().unwrap_or("?").to_string();
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            use std::io::Write;
            let _ = writeln!(f, "{kind} {test}");
        }
    }
    true
}

/// Whether tshark is there (and editcap, which comes with it); under
/// `BCWIRE_REQUIRE_TSHARK` its absence fails the test.
pub fn tshark_usable() -> bool {
    tool_available(
        "tshark",
        runs("tshark", &["--version"]) && runs("editcap", &["--version"]),
        "Debian: apt-get install -y tshark",
    )
}

/// Runs a tshark command whose output is `-T fields -e frame.number -e FIELD`, and
/// reads it as (frame number, value) pairs in output order.
pub fn tshark_by_frame(cmd: &mut Command) -> Vec<(u64, String)> {
    let out = cmd.output().expect("run tshark");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (n, v) = l.split_once('\t')?;
            Some((n.parse().ok()?, v.to_string()))
        })
        .collect()
}

/// Whether `program` runs with `args` and exits 0.
pub fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A capture shipped in the repository (`captures/NAME`), for tests that need a real
/// session but not the shared conformance set.
pub fn shipped_capture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name)
}

/// A file of the shared set (`rel` under `../shared`), or None where the set is absent
/// or lacks it; under `BCWIRE_REQUIRE_SHARED` a missing file fails the test instead.
pub fn shared_file(rel: &str) -> Option<PathBuf> {
    let p = shared_dir()?.join(rel);
    if p.is_file() {
        return Some(p);
    }
    assert!(
        std::env::var_os("BCWIRE_REQUIRE_SHARED").is_none(),
        "{} is missing from the shared set",
        p.display()
    );
    eprintln!("note: {} not found; skipped", p.display());
    None
}

/// The captures shipped in the repository.
pub const SHIPPED_CAPTURES: [&str; 3] = ["sample.pcapng", "duel-sll2.pcap", "mtu400-null.pcapng"];

/// Every capture a whole-capture check runs on: the shipped ones, then each shared
/// capture in the format `ext` (`pcap` or `pcapng`).
pub fn every_capture(ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SHIPPED_CAPTURES
        .iter()
        .map(|n| shipped_capture(n))
        .collect();
    for (name, folder) in shared_captures() {
        out.push(folder.join(format!("{name}.{ext}")));
    }
    out
}

/// (name, folder) of each shared capture.
pub fn shared_captures() -> Vec<(String, PathBuf)> {
    let Some(dir) = shared_dir() else {
        return Vec::new();
    };
    if std::env::var_os("BCWIRE_REQUIRE_SHARED").is_some() {
        assert!(
            std::fs::read_dir(dir.join("captures/openbc")).is_ok_and(|rd| rd.count() >= 2),
            "the shared set must hold at least two captures"
        );
    }
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

/// Run and take stdout as text; the command must succeed.
pub fn bcwire_stdout(args: &[&str]) -> String {
    let out = bcwire(args);
    assert!(
        out.status.success(),
        "bcwire {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
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
