//! The Parquet rows queried with DuckDB (the Python package, as docs/scale.md uses it)
//! must give the counts `bcwire stats` gives. Skipped with a message where python3 or
//! its duckdb package is missing (`.ci/run` installs it).
#![cfg(feature = "parquet")]

use crate::common::*;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// The dirty-flag histogram per direction and the delivered opcode counts per
/// direction, as one JSON object shaped like the `stats` JSON.
const QUERY: &str = r#"
import duckdb, json, sys
path = sys.argv[1]
out = {}
for d, op, n in duckdb.sql(f"""
    SELECT direction, printf('0x%02X', opcode), count(*)
    FROM read_parquet('{path}') WHERE NOT retransmission GROUP BY ALL""").fetchall():
    out.setdefault(d, {"opcodes": {}, "dirty_flags": {}})["opcodes"][op] = n
for d, f, n in duckdb.sql(f"""
    SELECT direction, printf('0x%02X', stateupdate.flags), count(*)
    FROM read_parquet('{path}')
    WHERE opcode = 28 AND NOT retransmission AND stateupdate IS NOT NULL GROUP BY ALL""").fetchall():
    out[d]["dirty_flags"][f] = n
print(json.dumps(out))
"#;

fn duckdb_available() -> bool {
    tool_available(
        "duckdb",
        runs("python3", &["-c", "import duckdb"]),
        "python3 -m pip install duckdb",
    )
}

fn check(capture: &std::path::Path) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rows.parquet");
    let run = bcwire(&[
        "-q",
        "decode",
        "--format",
        "parquet",
        "-o",
        out.to_str().unwrap(),
        capture.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let q = Command::new("python3")
        .args(["-c", QUERY, out.to_str().unwrap()])
        .output()
        .expect("run python3");
    assert!(q.status.success(), "{}", String::from_utf8_lossy(&q.stderr));
    let duck: Value = serde_json::from_slice(&q.stdout).unwrap();
    let stats = bcwire_json(&["-q", "stats", "--format", "json", capture.to_str().unwrap()]);
    for (dir, v) in duck.as_object().unwrap() {
        for key in ["opcodes", "dirty_flags"] {
            assert_eq!(
                v[key],
                stats["directions"][dir][key],
                "{} {dir} {key}",
                capture.display()
            );
        }
    }
    assert!(duck["c2s"]["opcodes"]["0x1C"].as_u64().unwrap() > 0);
}

#[test]
fn duckdb_counts_equal_stats() {
    if !duckdb_available() {
        return;
    }
    check(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("captures/sample.pcapng"));
    if let Some(real) =
        shared_file("captures/openbc/b2_valentines_replay/b2_valentines_replay.pcap")
    {
        check(&real);
    }
}
