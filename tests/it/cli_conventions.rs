//! Global CLI conventions: stdin input, colour rules, completions, broken pipes.

use crate::common::*;
use std::io::Write;
use std::process::{Command, Stdio};

/// A real session shipped with the repository: these tests need one, not the shared
/// conformance set, so they never skip.
fn sample() -> std::path::PathBuf {
    shipped_capture("sample.pcapng")
}

/// Runs the binary with nothing in its environment that changes colour.
fn bcwire_plain_env(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("FORCE_COLOR")
        .output()
        .expect("run bcwire")
}

#[test]
fn dash_reads_standard_input() {
    let path = sample();
    let bytes = std::fs::read(&path).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(["info", "--format", "json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let from_stdin: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let from_file = bcwire_json(&["info", "--format", "json", path.to_str().unwrap()]);
    let (a, b) = (&from_stdin["files"][0], &from_file["files"][0]);
    assert_eq!(a["frames"], b["frames"]);
    assert!(a["frames"].as_u64().is_some_and(|n| n > 0));
    assert_eq!(a["sessions"], b["sessions"]);
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let path = sample();
    let p = path.to_str().unwrap();
    // Not a terminal: no escapes by default, without NO_COLOR's help.
    let plain = bcwire_plain_env(&["stats", p]);
    assert!(plain.status.success());
    assert!(!plain.stdout.contains(&0x1b));
    let forced = bcwire(&["--color", "always", "stats", p]);
    assert!(forced.stdout.contains(&0x1b));
    let never = bcwire(&["--color", "never", "decode", p]);
    assert!(!never.stdout.contains(&0x1b));
}

#[test]
fn completions_for_common_shells() {
    for shell in ["bash", "zsh", "fish"] {
        let out = bcwire(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("bcwire") && text.contains("decode"),
            "{shell}"
        );
    }
}

#[test]
fn closed_pipe_exits_quietly() {
    let path = sample();
    let p = path.to_str().unwrap();
    let args = ["decode", "--format", "jsonl", p];
    // The whole output is far more than the 64 KiB output buffer plus what a pipe
    // holds, so the writer does meet the closed pipe.
    let full = bcwire(&args);
    assert!(full.stdout.len() > 1 << 20, "{}", full.stdout.len());
    let mut child = Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line, then close our end, like `| head -1`.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    let _ = std::io::Read::read(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked") && !err.contains("error"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    let out = bcwire(&["decode", "--format", "yaml", "x.pcap"]);
    assert_eq!(out.status.code(), Some(2));
    let out = bcwire(&["stats", "--interval", "soon", "/dev/null"]);
    assert_eq!(out.status.code(), Some(2));
}
