//! `decode` and `stats` over a directory of several captures (shipped, shared and
//! synthetic), which are read at once on every core: the output must be what each
//! capture gives on its own, in input order. The oracle is one `bcwire` run per file,
//! whose records the directory's output must hold, in the order of its sorted paths,
//! each naming its file.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// A directory of captures, two of them large synthetic ones (the first input among
/// them, so that the ones after it are read ahead while it is written), and their
/// paths in the order `bcwire` reads them (sorted).
fn mixed_directory(tmp: &Path) -> (String, Vec<String>) {
    let dir = tmp.join("captures");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["sample.pcapng", "duel-sll2.pcap", "mtu400-null.pcapng"] {
        std::fs::copy(shipped_capture(name), dir.join(name)).unwrap();
    }
    if let Some(shared) = shared_dir() {
        for name in ["a_single_client", "b2_valentines_replay"] {
            let from = shared.join(format!("captures/openbc/{name}/{name}.pcap"));
            std::fs::copy(from, dir.join(format!("{name}.pcap"))).unwrap();
        }
    }
    for (name, seed) in [("0_synth.pcapng", "3"), ("z_synth.pcapng", "4")] {
        let out = dir.join(name);
        let run = bcwire(&[
            "synth",
            "--players",
            "3",
            "--packets",
            "12000",
            "--seed",
            seed,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .collect();
    files.sort();
    (dir.to_string_lossy().into_owned(), files)
}

/// A record without its `file` key, after checking the key names `path` (when there).
fn without_file(mut v: Value, path: &str) -> Value {
    if let Some(f) = v.as_object_mut().and_then(|o| o.remove("file")) {
        assert_eq!(f, path, "a record names another file");
    }
    v
}

#[test]
fn decode_of_a_directory_is_its_files_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, files) = mixed_directory(tmp.path());

    // JSON Lines: every record of every file, in order, naming its file.
    let got: Vec<Value> = bcwire_stdout(&["decode", "--format", "jsonl", &dir])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut want = Vec::new();
    let mut paths = Vec::new();
    for f in &files {
        for l in bcwire_stdout(&["decode", "--format", "jsonl", f]).lines() {
            want.push(without_file(serde_json::from_str(l).unwrap(), f));
            paths.push(f.clone());
        }
    }
    assert_eq!(got.len(), want.len(), "JSON Lines records");
    for (k, (g, p)) in got.into_iter().zip(&paths).enumerate() {
        assert!(
            without_file(g, p) == want[k],
            "JSON Lines record {k} of {p}"
        );
    }

    // One JSON array holding the files' arrays one after the other.
    let all: Value =
        serde_json::from_str(&bcwire_stdout(&["decode", "--format", "json", &dir])).unwrap();
    let all = all.as_array().unwrap();
    let mut k = 0;
    for f in &files {
        let one: Value =
            serde_json::from_str(&bcwire_stdout(&["decode", "--format", "json", f])).unwrap();
        for rec in one.as_array().unwrap() {
            assert!(
                without_file(all[k].clone(), f) == without_file(rec.clone(), f),
                "JSON record {k} of {f}"
            );
            k += 1;
        }
    }
    assert_eq!(k, all.len(), "JSON records");

    // CSV: one header, then each file's rows with its path in front.
    let csv = bcwire_stdout(&["decode", "--format", "csv", &dir]);
    let mut lines = csv.lines();
    let mut want = String::new();
    for (i, f) in files.iter().enumerate() {
        let one = bcwire_stdout(&["decode", "--format", "csv", f]);
        let mut rows = one.lines();
        let header = rows.next().unwrap();
        if i == 0 {
            assert_eq!(lines.next(), Some(format!("file,{header}").as_str()));
        }
        for r in rows {
            want.push_str(&format!("{f},{r}\n"));
        }
    }
    let got: String = lines.map(|l| format!("{l}\n")).collect();
    assert!(got == want, "CSV rows differ from the files' own, in order");

    // The table: each file's heading, then its lines.
    let table = bcwire_stdout(&["decode", &dir]);
    let want: String = files
        .iter()
        .map(|f| format!("{f}\n{}", bcwire_stdout(&["decode", f])))
        .collect();
    assert!(
        table == want,
        "the table differs from the files' own, in order"
    );
}

#[test]
fn stats_of_a_directory_adds_up_its_files() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, files) = mixed_directory(tmp.path());
    let mut want = Value::Object(Default::default());
    for f in &files {
        crate::stats_many::add(
            &mut want,
            &bcwire_json(&["stats", "--format", "json", f])["directions"],
        );
    }
    let got = bcwire_json(&["stats", "--format", "json", &dir]);
    assert_eq!(got["directions"], want);
}
