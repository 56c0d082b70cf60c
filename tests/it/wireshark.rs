//! `bcwire wireshark`: the plugin in tshark shows bcwire's own decode. Every check
//! compares what tshark prints with the plugin against what bcwire prints itself
//! (JSON Lines, `-Y`, `show`), on the shipped captures and the shared real ones.

use crate::common;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn tshark_available() -> bool {
    common::tool_available(
        "tshark",
        common::runs("tshark", &["--version"]),
        "Debian: apt-get install -y tshark",
    )
}

/// The plugin and a prepared copy of `capture` in a folder of their own (also tshark's
/// home, so no installed copy of the plugin loads beside this one).
struct Prepared {
    dir: tempfile::TempDir,
    plugin: PathBuf,
    capture: PathBuf,
    original: PathBuf,
}

fn prepare(capture: &Path) -> Prepared {
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("bcwire.lua");
    let out = common::bcwire(&["wireshark", "plugin"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(&plugin, &out.stdout).unwrap();
    let prepared = dir.path().join("prepared.pcapng");
    let out = common::bcwire(&[
        "wireshark",
        "prepare",
        capture.to_str().unwrap(),
        "-o",
        prepared.to_str().unwrap(),
        "-q",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("prepared.pcapng.bcwire").is_file());
    Prepared {
        dir,
        plugin,
        capture: prepared,
        original: capture.to_path_buf(),
    }
}

impl Prepared {
    /// tshark with the plugin on the prepared copy; its standard output.
    fn tshark(&self, args: &[&str]) -> String {
        tshark_on(&self.plugin, &self.capture, self.dir.path(), args)
    }
}

fn tshark_on(plugin: &Path, capture: &Path, home: &Path, args: &[&str]) -> String {
    let script = format!("lua_script:{}", plugin.display());
    let out = Command::new("tshark")
        .env("HOME", home)
        .env_remove("WIRESHARK_CONFIG_DIR")
        .args(["-X", &script, "-r", capture.to_str().unwrap(), "-n"])
        .args(args)
        .output()
        .expect("run tshark");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tshark {args:?}: {stderr}");
    assert!(!stderr.contains("Lua"), "tshark {args:?}: {stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(!stdout.contains("Lua Error"), "{stdout}");
    stdout
}

/// The captures the tests run on: the shipped ones, and the shared real ones where
/// they are.
fn captures() -> Vec<PathBuf> {
    common::every_capture("pcapng")
}

fn packets(capture: &Path, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["decode", capture.to_str().unwrap(), "--format", "jsonl"];
    args.extend_from_slice(extra);
    let out = common::bcwire(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "packet")
        .collect()
}

/// A number as tshark prints it (`0x0000001c` or `28`).
fn number(text: &str) -> u64 {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
        None => text.parse().unwrap(),
    }
}

/// `-T fields` rows: frame number → the other columns, each a list of occurrences.
fn field_rows(text: &str) -> BTreeMap<u64, Vec<Vec<String>>> {
    let mut rows = BTreeMap::new();
    for line in text.lines() {
        let mut cols = line.split('\t');
        let frame: u64 = cols.next().unwrap().parse().unwrap();
        let rest = cols
            .map(|c| {
                if c.is_empty() {
                    Vec::new()
                } else {
                    c.split(',').map(str::to_string).collect()
                }
            })
            .collect();
        rows.insert(frame, rest);
    }
    rows
}

#[test]
fn fields_in_tshark_equal_the_json_lines() {
    if !tshark_available() {
        return;
    }
    for capture in captures() {
        let p = prepare(&capture);
        let text = p.tshark(&[
            "-Y",
            "bc",
            "-T",
            "fields",
            "-E",
            "occurrence=a",
            "-E",
            "aggregator=,",
            "-e",
            "frame.number",
            "-e",
            "bc.opcode",
            "-e",
            "bc.seq",
            "-e",
            "bc.direction",
            "-e",
            "bc.expert.no_decode",
        ]);
        let rows = field_rows(&text);
        let records = packets(&p.original, &[]);
        assert!(!records.is_empty(), "{}", capture.display());
        let mut seen = BTreeSet::new();
        for r in &records {
            let frame = r["frame"].as_u64().unwrap();
            seen.insert(frame);
            let row = rows
                .get(&frame)
                .unwrap_or_else(|| panic!("{}: frame {frame} not in tshark", capture.display()));
            let messages = r["messages"].as_array().cloned().unwrap_or_default();
            let opcodes: Vec<u64> = messages
                .iter()
                .filter_map(|m| m["opcode"].as_u64().or(m["assembled"]["opcode"].as_u64()))
                .collect();
            let seqs: Vec<u64> = messages.iter().filter_map(|m| m["seq"].as_u64()).collect();
            let got_opcodes: Vec<u64> = row[0].iter().map(|t| number(t)).collect();
            let got_seqs: Vec<u64> = row[1].iter().map(|t| number(t)).collect();
            let ctx = format!("{} frame {frame}", capture.display());
            assert_eq!(got_opcodes, opcodes, "opcodes of {ctx}");
            assert_eq!(got_seqs, seqs, "seqs of {ctx}");
            assert_eq!(row[2], vec![r["direction"].as_str().unwrap()], "{ctx}");
            assert!(row[3].is_empty(), "{ctx}: the plugin found no decode");
        }
        let extra: Vec<&u64> = rows.keys().filter(|f| !seen.contains(f)).collect();
        assert!(
            extra.is_empty(),
            "{}: frames with a bc tree bcwire has no record of: {extra:?}",
            capture.display()
        );
    }
}

/// Frames tshark's `-Y` selects with the plugin, and those bcwire's `-Y` selects.
fn same_frames(p: &Prepared, tshark_filter: &str, bcwire_filter: &str) -> usize {
    let text = p.tshark(&["-Y", tshark_filter, "-T", "fields", "-e", "frame.number"]);
    let wireshark: Vec<u64> = text.lines().map(|l| l.parse().unwrap()).collect();
    let bcwire: Vec<u64> = packets(&p.original, &["-Y", bcwire_filter])
        .iter()
        .map(|r| r["frame"].as_u64().unwrap())
        .collect();
    assert_eq!(
        wireshark,
        bcwire,
        "{}: tshark -Y {tshark_filter:?} against bcwire -Y {bcwire_filter:?}",
        p.original.display()
    );
    bcwire.len()
}

#[test]
fn display_filters_select_the_frames_bcwire_selects() {
    if !tshark_available() {
        return;
    }
    let mut inputs = vec![(common::shipped_capture("sample.pcapng"), "Worf")];
    if let Some(f) =
        common::shared_file("captures/openbc/b2_valentines_replay/b2_valentines_replay.pcapng")
    {
        inputs.push((f, "Kirk"));
    }
    for (capture, player) in inputs {
        let p = prepare(&capture);
        let name = format!("player_name contains \"{player}\"");
        for (shark, own) in [
            ("bc.opcode == 0x1C", "opcode == 0x1C"),
            (&*format!("bc.{name}"), &*name),
            ("bc.flags & 0x20", "flags & 0x20"),
        ] {
            let n = same_frames(&p, shark, own);
            assert!(n > 0, "{}: {own} selects nothing", capture.display());
        }
    }
    // Warnings as expert items select the frames that carry them.
    if let Some(f) = common::shared_file("captures/openbc/a_single_client/a_single_client.pcapng") {
        let p = prepare(&f);
        let n = same_frames(
            &p,
            "bc.expert.layout_mismatch",
            "warnings.code == \"layout_mismatch\"",
        );
        assert!(n > 0);
    }
}

/// `[start..end] name = …` lines of `bcwire show`: the spans of `name`, in order.
fn show_spans(show: &str, name: &str) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for line in show.lines() {
        let t = line.trim_start_matches([' ', '│', '├', '└', '─']);
        let Some(rest) = t.strip_prefix('[') else {
            continue;
        };
        let Some((span, tail)) = rest.split_once("] ") else {
            continue;
        };
        if !tail.starts_with(&format!("{name} = ")) {
            continue;
        }
        let Some((a, b)) = span.split_once("..") else {
            continue;
        };
        let (a, b): (u64, u64) = (a.parse().unwrap(), b.parse().unwrap());
        out.push((a, b - a));
    }
    out
}

/// `pos` and `size` of every PDML field named `name`.
fn pdml_spans(pdml: &str, name: &str) -> Vec<(u64, u64)> {
    let needle = format!("<field name=\"{name}\" ");
    let attr = |line: &str, key: &str| -> u64 {
        let k = format!(" {key}=\"");
        let start = line.find(&k).unwrap() + k.len();
        let end = start + line[start..].find('"').unwrap();
        line[start..end].parse().unwrap()
    };
    pdml.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with(&needle))
        .map(|l| (attr(l, "pos"), attr(l, "size")))
        .collect()
}

#[test]
fn highlighted_bytes_are_the_spans_bcwire_shows() {
    if !tshark_available() {
        return;
    }
    let capture = common::shipped_capture("sample.pcapng");
    let p = prepare(&capture);
    let first = packets(
        &capture,
        &["-Y", "opcode == 0x1C and flags & 0x10", "-c", "1"],
    );
    let frame = first[0]["frame"].as_u64().unwrap().to_string();
    let show = common::bcwire(&["show", capture.to_str().unwrap(), "--frame", &frame]);
    assert!(show.status.success());
    let show = String::from_utf8(show.stdout).unwrap();
    let pdml = p.tshark(&["-Y", &format!("frame.number == {frame}"), "-T", "pdml"]);
    for name in ["flags", "position", "speed"] {
        let want = show_spans(&show, name);
        assert!(!want.is_empty(), "{name} not in {show}");
        assert_eq!(pdml_spans(&pdml, &format!("bc.{name}")), want, "{name}");
    }
}

#[test]
fn verbose_output_has_a_bridge_commander_tree_with_registry_names() {
    if !tshark_available() {
        return;
    }
    let capture = common::shipped_capture("sample.pcapng");
    let p = prepare(&capture);
    let first = packets(&capture, &["-Y", "opcode == 0x1C", "-c", "1"]);
    let frame = first[0]["frame"].as_u64().unwrap().to_string();
    let text = p.tshark(&["-Y", &format!("frame.number == {frame}"), "-V"]);
    assert!(
        text.lines().any(|l| l.starts_with("Bridge Commander, ")),
        "{text}"
    );
    for line in [
        "0x1C StateUpdate",
        "object_id: 0x",
        "game_time: ",
        "flags: 0x",
        "position: (",
    ] {
        assert!(text.contains(line), "{line} not in {text}");
    }

    // Every name of `bcwire list fields` (tshark's own aliases aside) is a bc. field.
    let out = Command::new("tshark")
        .env("HOME", p.dir.path())
        .args([
            "-G",
            "fields",
            "-X",
            &format!("lua_script:{}", p.plugin.display()),
        ])
        .output()
        .expect("run tshark -G");
    assert!(out.status.success());
    let fields = String::from_utf8(out.stdout).unwrap();
    let registered: BTreeSet<&str> = fields
        .lines()
        .filter_map(|l| l.split('\t').nth(2))
        .filter_map(|abbr| abbr.strip_prefix("bc."))
        .collect();
    let listed = common::bcwire_json(&["list", "fields", "--format", "json"]);
    for entry in listed.as_array().unwrap() {
        let name = entry["name"].as_str().unwrap();
        let alias = entry["description"]
            .as_str()
            .unwrap()
            .starts_with("Alias of ");
        assert_eq!(registered.contains(name), !alias, "bc.{name}");
    }
}

#[test]
fn a_capture_without_a_decode_shows_a_note() {
    if !tshark_available() {
        return;
    }
    let capture = common::shipped_capture("sample.pcapng");
    let p = prepare(&capture);
    let text = tshark_on(&p.plugin, &capture, p.dir.path(), &["-c", "5", "-V"]);
    assert!(text.contains("bcwire wireshark prepare"), "{text}");
    // A prepared capture whose decode file is gone says so, too.
    std::fs::remove_file(p.dir.path().join("prepared.pcapng.bcwire")).unwrap();
    let text = p.tshark(&["-c", "5", "-V"]);
    assert!(
        text.contains("cannot read the bcwire decode file"),
        "{text}"
    );
}

#[test]
fn install_writes_the_plugin_it_prints() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("plugins");
    let out = common::bcwire(&["wireshark", "install", "--dir", target.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = common::bcwire(&["wireshark", "plugin"]).stdout;
    assert_eq!(std::fs::read(target.join("bcwire.lua")).unwrap(), printed);
    let text = String::from_utf8(printed).unwrap();
    assert!(text.contains("\"player_name\", \"str\""));
    assert!(text.contains("\"seq_gap\", \"sequence\", \"warn\""));
}

/// The plugin runs under the Lua versions Wireshark embeds (5.1/5.2 up to 4.2, 5.3/5.4
/// after): outside Wireshark, with its API stood in for, over every datagram of the
/// shipped captures.
#[test]
fn the_plugin_runs_on_lua_5_1_and_5_4() {
    let interpreters: Vec<&str> = ["lua5.1", "lua5.4"]
        .into_iter()
        .filter(|l| common::runs(l, &["-v"]))
        .collect();
    if !common::tool_available(
        "lua",
        interpreters.len() == 2,
        "Debian: apt-get install -y lua5.1 lua5.4",
    ) {
        return;
    }
    let stub = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/lua/wireshark_stub.lua");
    for name in ["sample.pcapng", "duel-sll2.pcap"] {
        let p = prepare(&common::shipped_capture(name));
        let decode = p.dir.path().join("prepared.pcapng.bcwire");
        for lua in &interpreters {
            let out = Command::new(lua)
                .arg(&stub)
                .arg(&p.plugin)
                .arg(&decode)
                .output()
                .expect("run lua");
            assert!(
                out.status.success(),
                "{lua} {name}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
