//! Output for people, pinned: tables, decode lines, detail trees. A change to any of these
//! shows up as a snapshot diff to review (`cargo insta review`).

/// Relative to the crate root, where the commands run, so output does not depend on
/// where the repository is checked out.
const SAMPLE: &str = "captures/sample.pcapng";

fn run(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .output()
        .expect("run bcwire");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn info_table() {
    insta::assert_snapshot!(run(&["--color", "never", "info", SAMPLE]));
}

#[test]
fn stats_tables() {
    insta::assert_snapshot!(run(&["--color", "never", "stats", SAMPLE]));
}

#[test]
fn stats_by_class_with_rates() {
    insta::assert_snapshot!(run(&[
        "--color",
        "never",
        "stats",
        "--by",
        "class",
        "--interval",
        "10s",
        SAMPLE
    ]));
}

#[test]
fn decode_lines() {
    insta::assert_snapshot!(run(&[
        "--color", "never", "decode", "--frames", "1-40", SAMPLE
    ]));
}

#[test]
fn decode_csv() {
    insta::assert_snapshot!(run(&[
        "decode", "--format", "csv", "--frames", "60-70", SAMPLE
    ]));
}

#[test]
fn show_fragmented_checksum_reply() {
    insta::assert_snapshot!(run(&["--color", "never", "show", "--frame", "15", SAMPLE]));
}

#[test]
fn flows_table() {
    insta::assert_snapshot!(run(&["--color", "never", "flows", SAMPLE]));
}

#[test]
fn decode_state_update_lines() {
    insta::assert_snapshot!(run(&[
        "--color",
        "never",
        "decode",
        "--opcode",
        "StateUpdate",
        "--frames",
        "60-90",
        SAMPLE
    ]));
}
