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
        let su = b.column_by_name("stateupdate").unwrap().as_struct();
        let flags = su
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
            if op.value(i) == 0x1C && !su.is_null(i) {
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
        let su = b.column_by_name("stateupdate").unwrap().as_struct();
        let flags = su
            .column_by_name("flags")
            .unwrap()
            .as_primitive::<UInt8Type>();
        let position = su.column_by_name("position").unwrap().as_struct();
        let x = position
            .column_by_name("x")
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
        let records = su.column_by_name("subsystems").unwrap().as_list::<i32>();
        for i in 0..b.num_rows() {
            assert!(frame.value(i) >= 1);
            if op.value(i) != 0x1C {
                assert!(su.is_null(i));
                continue;
            }
            assert!(!su.is_null(i) && !flags.is_null(i));
            assert!(!obj.is_null(i), "a StateUpdate names its object");
            let absolute_flag = flags.value(i) & 0x01 != 0;
            assert_eq!(!position.is_null(i), absolute_flag, "row {i}");
            if absolute_flag {
                assert!(x.value(i).is_finite());
            }
            absolute += usize::from(absolute_flag);
            if flags.value(i) & 0x20 != 0 && !records.is_null(i) {
                assert!(!records.value(i).is_empty());
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

/// Every column path (struct members joined with `.`, list items unmarked).
fn column_paths(fields: &arrow_schema::Fields, prefix: &str, out: &mut Vec<String>) {
    for f in fields {
        let path = if prefix.is_empty() {
            f.name().clone()
        } else {
            format!("{prefix}.{}", f.name())
        };
        out.push(path.clone());
        match f.data_type() {
            arrow_schema::DataType::Struct(inner) => column_paths(inner, &path, out),
            arrow_schema::DataType::List(item) => {
                if let arrow_schema::DataType::Struct(inner) = item.data_type() {
                    column_paths(inner, &path, out);
                }
            }
            _ => {}
        }
    }
}

/// A Parquet value as JSON, for comparing with `--fields` JSON Lines.
fn cell(col: &dyn Array, i: usize) -> Value {
    use arrow_schema::DataType as D;
    if col.is_null(i) {
        return Value::Null;
    }
    match col.data_type() {
        D::UInt8 => col.as_primitive::<UInt8Type>().value(i).into(),
        D::UInt16 => col
            .as_primitive::<arrow_array::types::UInt16Type>()
            .value(i)
            .into(),
        D::UInt32 => col.as_primitive::<UInt32Type>().value(i).into(),
        D::UInt64 => col.as_primitive::<UInt64Type>().value(i).into(),
        D::Int64 => col
            .as_primitive::<arrow_array::types::Int64Type>()
            .value(i)
            .into(),
        D::Float32 => f64::from(col.as_primitive::<Float32Type>().value(i)).into(),
        D::Float64 => col
            .as_primitive::<arrow_array::types::Float64Type>()
            .value(i)
            .into(),
        D::Boolean => col.as_boolean().value(i).into(),
        D::Utf8 => col.as_string::<i32>().value(i).into(),
        other => panic!("no comparison for {other:?}"),
    }
}

/// The column at a dotted path, with the struct nulls above it folded in.
fn column_at(b: &RecordBatch, path: &str) -> (arrow_array::ArrayRef, Vec<bool>) {
    let mut parts = path.split('.');
    let mut col = b.column_by_name(parts.next().unwrap()).unwrap().clone();
    let mut valid: Vec<bool> = (0..b.num_rows()).map(|i| !col.is_null(i)).collect();
    for p in parts {
        col = col.as_struct().column_by_name(p).unwrap().clone();
        for (i, v) in valid.iter_mut().enumerate() {
            *v &= !col.is_null(i);
        }
    }
    (col, valid)
}

// Catches: a Parquet column named otherwise than `-Y` and `--fields` name the value
// (the old `ts_ns`, `player`, `pos_x`), or named alike with another meaning (the old
// `length`, the game message's where the registry's is the transport message's).
#[test]
fn columns_carry_registry_names_and_the_values_fields_gives() {
    use bcwire::game::qualified::lookup_qualified;
    use bcwire::game::registry::lookup;
    use bcwire::pipeline::facts;
    let mut paths = Vec::new();
    column_paths(bcwire::report::parquet::schema().fields(), "", &mut paths);
    let row_keys = ["msg_index", "reassembled", "relay_of"];
    for p in &paths {
        let known = facts::lookup(p).is_some()
            || lookup(p).is_some()
            || lookup_qualified(p).is_some()
            // A qualifier names the struct of its message's fields.
            || bcwire::game::qualified::Scope::parse(p).is_some()
            // A list of records whose members are facts (`warnings.code`).
            || facts::names().any(|n| n.strip_prefix(p.as_str()).is_some_and(|r| r.starts_with('.')))
            || row_keys.contains(&p.as_str());
        assert!(
            known,
            "Parquet column {p} is not a name `bcwire list fields` gives"
        );
    }

    // The scalar columns against `--fields` of the same names, message by message.
    let compared = [
        "frame",
        "time_ns",
        "time_relative",
        "session",
        "client",
        "client_port",
        "client_name",
        "direction",
        "peer_id",
        "reliable",
        "seq",
        "retransmission",
        "opcode",
        "name",
        "length",
        "game_length",
        "object_id",
        "ship",
        "stateupdate.game_time",
        "stateupdate.flags",
        "stateupdate.position.x",
        "stateupdate.delta.z",
        "stateupdate.speed",
        "stateupdate.cloak",
        "stateupdate.subsystems_start_index",
    ];
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rows.parquet");
    let input = sample();
    let input = input.to_str().unwrap();
    let run = bcwire(&[
        "-q",
        "decode",
        "--format",
        "parquet",
        "-o",
        out.to_str().unwrap(),
        input,
    ]);
    assert!(run.status.success());
    // Parquet has a row per game message (own or completed); --fields a line per
    // transport message: keep those with a game message.
    let sel = bcwire(&[
        "decode",
        "--format",
        "jsonl",
        "-Y",
        "opcode",
        "--fields",
        &compared.join(","),
        input,
    ]);
    assert!(
        sel.status.success(),
        "{}",
        String::from_utf8_lossy(&sel.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(sel.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut row = 0usize;
    for b in read(&out) {
        let cols: Vec<_> = compared.iter().map(|n| column_at(&b, n)).collect();
        for i in 0..b.num_rows() {
            let line = &lines[row];
            for (name, (col, valid)) in compared.iter().zip(&cols) {
                let got = if valid[i] {
                    cell(col.as_ref(), i)
                } else {
                    Value::Null
                };
                let want = &line[*name];
                let same = match (got.as_f64(), want.as_f64()) {
                    // Parquet keeps f32 where the decoder has f32; time_relative is f64.
                    (Some(a), Some(b)) => (a - b).abs() <= 1e-6 * b.abs().max(1.0),
                    _ => got == *want,
                };
                assert!(
                    same,
                    "row {row} ({}): {name} Parquet {got} --fields {want}",
                    line["frame"]
                );
            }
            row += 1;
        }
    }
    assert_eq!(row, lines.len());
    assert!(row > 1000);
}
