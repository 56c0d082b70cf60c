//! `decode --format parquet` through the binary, read back with the parquet crate and
//! compared with what `bcwire stats` counts on the same capture.
#![cfg(feature = "parquet")]

use crate::common::*;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, UInt32Type, UInt64Type, UInt8Type};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn read(path: &Path) -> Vec<RecordBatch> {
    let file = std::fs::File::open(path).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("captures/sample.pcapng")
}

/// Per direction: delivered opcode counts and StateUpdate dirty-flag histogram, keyed
/// the way `stats --format json` keys them.
type Counts = BTreeMap<String, (BTreeMap<String, u64>, BTreeMap<String, u64>)>;

fn counts_from_rows(batches: &[RecordBatch]) -> Counts {
    let mut out = Counts::new();
    for b in batches {
        let dir = b.column_by_name("direction").unwrap().as_string::<i32>();
        let op = b
            .column_by_name("opcode")
            .unwrap()
            .as_primitive::<UInt8Type>();
        let flags = b
            .column_by_name("flags")
            .unwrap()
            .as_primitive::<UInt8Type>();
        let retx = b.column_by_name("retransmission").unwrap().as_boolean();
        for i in 0..b.num_rows() {
            if retx.value(i) {
                continue;
            }
            let e = out.entry(dir.value(i).to_string()).or_default();
            *e.0.entry(format!("0x{:02X}", op.value(i))).or_default() += 1;
            if op.value(i) == 0x1C && !flags.is_null(i) {
                *e.1.entry(format!("0x{:02X}", flags.value(i))).or_default() += 1;
            }
        }
    }
    out
}

fn counts_from_stats(stats: &Value) -> Counts {
    let map = |v: &Value| -> BTreeMap<String, u64> {
        v.as_object()
            .unwrap()
            .iter()
            .map(|(k, n)| (k.clone(), n.as_u64().unwrap()))
            .collect()
    };
    stats["directions"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(d, v)| (d.clone(), (map(&v["opcodes"]), map(&v["dirty_flags"]))))
        .filter(|(_, (ops, _))| !ops.is_empty())
        .collect()
}

#[test]
fn rows_read_back_and_agree_with_stats() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sample.parquet");
    let input = sample();
    let run = bcwire(&[
        "decode",
        "--format",
        "parquet",
        "-o",
        out.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let batches = read(&out);
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert!(rows > 1000, "{rows} rows");
    assert!(String::from_utf8_lossy(&run.stdout).contains(&format!("{rows} rows")));

    let stats = bcwire_json(&["stats", "--format", "json", input.to_str().unwrap()]);
    assert_eq!(counts_from_rows(&batches), counts_from_stats(&stats));

    // Typed StateUpdate columns: an absolute update (flag 0x01) has a position, and
    // others do not; every decoded 0x20 block lists one condition per index.
    let mut absolute = 0;
    for b in &batches {
        let op = b
            .column_by_name("opcode")
            .unwrap()
            .as_primitive::<UInt8Type>();
        let flags = b
            .column_by_name("flags")
            .unwrap()
            .as_primitive::<UInt8Type>();
        let x = b
            .column_by_name("pos_x")
            .unwrap()
            .as_primitive::<Float32Type>();
        let obj = b
            .column_by_name("object_id")
            .unwrap()
            .as_primitive::<UInt32Type>();
        let frame = b
            .column_by_name("frame")
            .unwrap()
            .as_primitive::<UInt64Type>();
        let idx = b
            .column_by_name("subsystem_index")
            .unwrap()
            .as_list::<i32>();
        let cond = b
            .column_by_name("subsystem_condition")
            .unwrap()
            .as_list::<i32>();
        for i in 0..b.num_rows() {
            assert!(frame.value(i) >= 1);
            if op.value(i) != 0x1C {
                assert!(flags.is_null(i) && x.is_null(i));
                continue;
            }
            assert!(!obj.is_null(i), "a StateUpdate names its object");
            let absolute_flag = flags.value(i) & 0x01 != 0;
            assert_eq!(!x.is_null(i), absolute_flag, "row {i}");
            absolute += usize::from(absolute_flag);
            if flags.value(i) & 0x20 != 0 && !cond.is_null(i) {
                assert_eq!(idx.value(i).len(), cond.value(i).len());
                assert!(!cond.value(i).is_empty());
            }
        }
    }
    assert!(absolute > 0);
}

#[test]
fn out_dir_writes_one_file_per_input() {
    let dir = tempfile::tempdir().unwrap();
    let caps = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("captures");
    let inputs = ["sample.pcapng", "duel-sll2.pcap", "mtu400-null.pcapng"];
    let paths: Vec<String> = inputs
        .iter()
        .map(|f| caps.join(f).to_string_lossy().into_owned())
        .collect();
    let mut args = vec!["decode", "--format", "parquet", "--out-dir"];
    let out_dir = dir.path().join("rows");
    args.push(out_dir.to_str().unwrap());
    args.extend(paths.iter().map(String::as_str));
    let run = bcwire(&args);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for (f, path) in inputs.iter().zip(&paths) {
        let stem = Path::new(f).file_stem().unwrap().to_string_lossy();
        let batches = read(&out_dir.join(format!("{stem}.parquet")));
        let stats = bcwire_json(&["stats", "--format", "json", path]);
        assert_eq!(counts_from_rows(&batches), counts_from_stats(&stats), "{f}");
    }
}

#[test]
fn real_captures_agree_with_stats() {
    let dir = tempfile::tempdir().unwrap();
    for (name, folder) in shared_captures() {
        let Some(pcap) = std::fs::read_dir(&folder)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        else {
            continue;
        };
        let out = dir.path().join(format!("{name}.parquet"));
        let run = bcwire(&[
            "-q",
            "decode",
            "--format",
            "parquet",
            "-o",
            out.to_str().unwrap(),
            pcap.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{name}");
        let stats = bcwire_json(&["-q", "stats", "--format", "json", pcap.to_str().unwrap()]);
        assert_eq!(
            counts_from_rows(&read(&out)),
            counts_from_stats(&stats),
            "{name}"
        );
    }
}

#[test]
fn parquet_needs_a_destination_and_other_formats_refuse_one() {
    let input = sample();
    let run = bcwire(&["decode", "--format", "parquet", input.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("-o FILE"));
    let run = bcwire(&["decode", "-o", "x.parquet", input.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("--format parquet"));
}
