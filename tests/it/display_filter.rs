//! `-Y`, the display filter, through the binary: each construct selects exactly the
//! messages an independent reading of the full JSON records says it should; errors
//! point at the column; `decode`, `stats`, `show`, `report` and the `-w` cut agree.

use assert_cmd::Command;
use serde_json::Value;
use std::collections::HashMap;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/captures/sample.pcapng");
const DUEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/captures/duel-sll2.pcap");

fn run(args: &[&str]) -> (i32, String, String) {
    let o = Command::cargo_bin("bcwire")
        .expect("binary")
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .expect("run");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Every (packet, message) pair of a full decode.
fn all_messages(file: &str) -> Vec<(Value, Value)> {
    let (code, out, err) = run(&["decode", "--format", "jsonl", file]);
    assert_eq!(code, 0, "{err}");
    let mut v = Vec::new();
    for line in out.lines() {
        let rec: Value = serde_json::from_str(line).unwrap();
        if rec["type"] == "packet" {
            for m in rec["messages"].as_array().cloned().unwrap_or_default() {
                v.push((rec.clone(), m));
            }
        }
    }
    v
}

/// (frame, message offset) of every message `decode -Y expr` keeps.
fn selected(file: &str, expr: &str) -> Vec<(u64, u64)> {
    let (code, out, err) = run(&["decode", "--format", "jsonl", "-Y", expr, file]);
    assert_eq!(code, 0, "-Y {expr}: {err}");
    let mut v = Vec::new();
    for line in out.lines() {
        let rec: Value = serde_json::from_str(line).unwrap();
        if rec["type"] == "packet" {
            // A GameSpy datagram has no messages.
            for m in rec["messages"].as_array().into_iter().flatten() {
                v.push((
                    rec["frame"].as_u64().unwrap(),
                    m["offset"].as_u64().unwrap(),
                ));
            }
        }
    }
    v
}

/// The messages of the full decode for which `pred` holds, as (frame, offset).
fn expected(all: &[(Value, Value)], pred: impl Fn(&Value, &Value) -> bool) -> Vec<(u64, u64)> {
    all.iter()
        .filter(|(p, m)| pred(p, m))
        .map(|(p, m)| (p["frame"].as_u64().unwrap(), m["offset"].as_u64().unwrap()))
        .collect()
}

fn subsystem_condition(m: &Value, key: &str) -> Option<f64> {
    m["fields"]["subsystems"]
        .as_array()?
        .iter()
        .find(|s| s["key"] == key)?["condition_pct"]
        .as_f64()
}

#[test]
fn each_construct_selects_what_the_records_say() {
    let all = all_messages(SAMPLE);
    let op = |m: &Value| m["opcode"].as_u64();
    let flags = |m: &Value| m["fields"]["flags"].as_u64().unwrap_or(0);
    type Pred = Box<dyn Fn(&Value, &Value) -> bool>;
    let cases: Vec<(&str, Pred)> = vec![
        (
            "opcode == StateUpdate and flags & 0x20",
            Box::new(move |_, m| op(m) == Some(0x1C) && flags(m) & 0x20 != 0),
        ),
        (
            "opcode == StateUpdate and flags & 0x20 and subsystems[hull].condition_pct < 50",
            Box::new(move |_, m| {
                op(m) == Some(0x1C)
                    && flags(m) & 0x20 != 0
                    && subsystem_condition(m, "hull").is_some_and(|c| c < 50.0)
            }),
        ),
        (
            "retransmission or warnings.code == \"non_stock\"",
            Box::new(|_, m| {
                m["retransmission"] == true
                    || m["warnings"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|w| w["code"] == "non_stock")
            }),
        ),
        (
            "direction == s2c && !(opcode == 0x1C || opcode == 0x1D)",
            Box::new(move |p, m| {
                p["direction"] == "s2c" && op(m) != Some(0x1C) && op(m) != Some(0x1D)
            }),
        ),
        (
            "not transport_type == 0x32",
            Box::new(|_, m| m["transport_type"] != 0x32),
        ),
        (
            "frame >= 100 and frame < 200 and reliable",
            Box::new(|p, m| {
                let f = p["frame"].as_u64().unwrap();
                (100..200).contains(&f) && m["reliable"] == true
            }),
        ),
        (
            "player_name",
            Box::new(|_, m| m["fields"].get("player_name").is_some()),
        ),
        (
            "name contains \"Fire\"",
            Box::new(|_, m| m["name"].as_str().is_some_and(|n| n.contains("Fire"))),
        ),
        (
            "object contains \"Worf\" and opcode != StateUpdate",
            Box::new(move |_, m| {
                m["object"].as_str().is_some_and(|o| o.contains("Worf")) && op(m) != Some(0x1C)
            }),
        ),
        (
            "ship == \"Kessok Heavy\" and speed > 3",
            Box::new(|_, m| {
                m["object"]
                    .as_str()
                    .is_some_and(|o| o.starts_with("Kessok Heavy"))
                    && m["fields"]["speed"].as_f64().is_some_and(|s| s > 3.0)
            }),
        ),
    ];
    for (expr, pred) in cases {
        let want = expected(&all, pred);
        let got = selected(SAMPLE, expr);
        assert!(!want.is_empty(), "{expr}: the sample holds such messages");
        assert_eq!(got, want, "-Y {expr}");
    }
}

#[test]
fn names_select_the_same_client_as_the_option() {
    for (expr, opts) in [
        ("client == worf", vec!["--client", "Worf"]),
        (
            "client == Worf and direction == s2c",
            vec!["--client", "Worf", "--direction", "s2c"],
        ),
    ] {
        let mut args = vec!["decode", "--format", "jsonl"];
        args.extend(opts.iter().copied());
        args.push(SAMPLE);
        let (_, by_option, _) = run(&args);
        let (_, by_filter, _) = run(&["decode", "--format", "jsonl", "-Y", expr, SAMPLE]);
        let packets = |s: &str| {
            s.lines()
                .filter(|l| l.contains("\"type\":\"packet\""))
                .count()
        };
        assert!(packets(&by_option) > 100);
        assert_eq!(packets(&by_filter), packets(&by_option), "-Y {expr}");
    }
}

#[test]
fn errors_point_at_the_column() {
    for (expr, column, says) in [
        ("opcode == StateUpdat", "1:11", "did you mean StateUpdate?"),
        ("opcode == and", "1:11", "expected"),
        ("flags & ", "1:9", "expected"),
        ("(opcode == 1", "1:1", "expected `)`"),
        ("ship == Galxy", "1:9", "did you mean"),
        ("flags & \"x\"", "1:7", "bit test takes a number"),
    ] {
        let (code, out, err) = run(&["decode", "-Y", expr, SAMPLE]);
        assert_eq!(code, 2, "-Y {expr}");
        assert!(out.is_empty(), "-Y {expr}: nothing decoded");
        assert!(err.contains(column), "-Y {expr}: {err}");
        assert!(err.contains(says), "-Y {expr}: {err}");
        assert!(
            err.contains('^'),
            "-Y {expr}: a caret under the place: {err}"
        );
    }
}

/// The same expression keeps the same messages in `decode`, `stats`, `show` and the
/// capture `-w` writes (read back, it decodes to the same records).
#[test]
fn every_command_applies_the_same_predicate() {
    let dir = tempfile::tempdir().unwrap();
    for (file, expr) in [
        (SAMPLE, "opcode == StateUpdate and flags & 0x20"),
        (SAMPLE, "client == Cady2 and not retransmission"),
        (DUEL, "direction == c2s and opcode"),
        // Object ids are gathered from the field trees (a StateUpdate's from its typed
        // value): a count that builds none must still find them in every message.
        (SAMPLE, "object_ids == 0x3FFFFFFF"),
    ] {
        let kept = selected(file, expr);
        assert!(!kept.is_empty(), "{expr}");
        // stats counts exactly those messages.
        let (code, out, err) = run(&["stats", "--format", "json", "-Y", expr, file]);
        assert_eq!(code, 0, "{err}");
        let s: Value = serde_json::from_str(&out).unwrap();
        let counted = s["directions"]["c2s"]["messages"].as_u64().unwrap()
            + s["directions"]["s2c"]["messages"].as_u64().unwrap();
        assert_eq!(counted as usize, kept.len(), "stats -Y {expr}");
        // show prints one block per kept datagram.
        let (_, shown, _) = run(&["show", "-Y", expr, "--limit", "100000", file]);
        let (_, decoded, _) = run(&["decode", "--format", "jsonl", "-Y", expr, file]);
        let packets = decoded
            .lines()
            .filter(|l| l.contains("\"type\":\"packet\""))
            .count();
        assert_eq!(
            shown.lines().filter(|l| l.starts_with("Frame ")).count(),
            packets,
            "show -Y {expr}"
        );
        // The cut holds those frames, whose records decode as before.
        let cut = dir.path().join("cut.pcapng");
        let cut = cut.to_str().unwrap();
        let (code, _, err) = run(&["decode", "-q", "-Y", expr, "-w", cut, file]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(selected(cut, expr).len(), kept.len(), "-w -Y {expr}");
    }
}

#[test]
fn report_takes_the_filter() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("r.html");
    let page = page.to_str().unwrap();
    let (code, _, err) = run(&["report", "-q", "-Y", "client == Worf", "-o", page, SAMPLE]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains("Worf"));
    let (code, _, err) = run(&["report", "-q", "-Y", "opcode ==", "-o", page, SAMPLE]);
    assert_eq!(code, 2);
    assert!(err.contains("1:10"), "{err}");
}

/// A name that is neither a record fact nor a registered field is an error (exit 2),
/// located, with the nearest name, in `-Y` and `--fields` alike; known names and facts
/// are accepted wherever they stand.
// Catches: a misspelt name running as a filter that silently matches nothing (or a
// column that is silently empty).
#[test]
fn unknown_field_names_are_errors() {
    let (code, out, err) = run(&[
        "decode",
        "-Y",
        "opcode == StateUpdate and flgs & 0x20",
        SAMPLE,
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("no field is named \"flgs\" (did you mean flags?)"),
        "{err}"
    );
    // pest's marker under the name: `^--^` starting at its column.
    assert!(
        err.lines()
            .any(|l| l.find('^') == Some(4 + "opcode == StateUpdate and ".len())),
        "{err}"
    );
    for bad in [
        "frame.time_relativ > 20",
        "opcode.x == 1",
        "port_byts == \"d006\"",
    ] {
        let (code, _, err) = run(&["decode", "-Y", bad, SAMPLE]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("no field is named"), "{bad}: {err}");
    }
    let (code, _, err) = run(&[
        "decode",
        "--format",
        "csv",
        "--fields",
        "frame,flgs",
        SAMPLE,
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did you mean flags?"), "{err}");
    // Names on either side, tshark's aliases, and a bare name found at any depth.
    for good in [
        "udp_length > length",
        "frame.time_relative >= 0",
        "udp.srcport == 22101 or udp.dstport == 22101",
        "power_pct == 100",
        "subsystems.condition_pct < 50",
        "port_bytes == \"d006\"",
    ] {
        let (code, out, err) = run(&["decode", "-Y", good, SAMPLE, "--format", "jsonl"]);
        assert_eq!(code, 0, "{good}: {err}");
        assert!(out.lines().count() > 1, "{good} selects something");
    }
    let (_, _, err) = run(&[
        "decode",
        "-Y",
        "flags & 0x20 and subsystems[hull].condition_pct < 50 or retransmission",
        SAMPLE,
    ]);
    assert!(!err.contains("no decoded field"), "{err}");
}

/// Wireshark 4's operators, each checked against the full decode read in the test.
// Catches: `!=` true where the field is absent (GameSpy datagrams have no peer id, a
// message without a speed has no speed), `in` ranges off by one at their ends, `matches`
// case-sensitive by default, a name on the right read as text, `\x` escapes unread.
#[test]
fn wireshark_operators_select_what_the_records_say() {
    let all = all_messages(SAMPLE);
    let op = |m: &Value| m["opcode"].as_u64();
    let speed = |m: &Value| m["fields"]["speed"].as_f64();
    type Pred = Box<dyn Fn(&Value, &Value) -> bool>;
    let cases: Vec<(&str, Pred)> = vec![
        (
            "peer_id != 2",
            Box::new(|p, _| p["peer_id"].as_u64().is_some_and(|id| id != 2)),
        ),
        (
            "speed != 0",
            Box::new(move |_, m| speed(m).is_some_and(|s| s != 0.0)),
        ),
        (
            "opcode in {0x1C TorpedoFire}",
            Box::new(move |_, m| matches!(op(m), Some(0x1C | 0x19))),
        ),
        (
            "seq in {10..20, 40}",
            Box::new(|_, m| {
                m["seq"]
                    .as_u64()
                    .is_some_and(|s| (10..=20).contains(&s) || s == 40)
            }),
        ),
        (
            "name matches \"^torpedo\"",
            Box::new(|_, m| {
                m["name"]
                    .as_str()
                    .is_some_and(|n| n.to_lowercase().starts_with("torpedo"))
            }),
        ),
        (
            "name matches \"(?-i)^torpedo\"",
            Box::new(|_, m| m["name"].as_str().is_some_and(|n| n.starts_with("torpedo"))),
        ),
        (
            "udp_length > length",
            Box::new(|p, m| p["udp_length"].as_u64() > m["length"].as_u64()),
        ),
        (
            "name == \"\\x53tate\\125pdate\"",
            Box::new(|_, m| m["name"] == "StateUpdate"),
        ),
        // Slices: offset and length, first and last, from the end.
        (
            "name[0:5] == \"Check\"",
            // `name` of a last fragment is the name of the message it completes.
            Box::new(|_, m| {
                m["name"]
                    .as_str()
                    .or(m["assembled"]["name"].as_str())
                    .is_some_and(|n| n.starts_with("Check"))
            }),
        ),
        (
            "name[-6:] == \"Update\"",
            Box::new(|_, m| {
                m["name"]
                    .as_str()
                    .or(m["assembled"]["name"].as_str())
                    .is_some_and(|n| n.ends_with("Update"))
            }),
        ),
        (
            "client_name[1-2] == \"or\"",
            Box::new(|p, _| {
                p["client_name"]
                    .as_str()
                    .is_some_and(|n| n.chars().skip(1).take(2).collect::<String>() == "or")
            }),
        ),
        // Quantifiers: every value, or any.
        (
            "all subsystems.condition_pct == 100",
            Box::new(|_, m| {
                let c: Vec<f64> = m["fields"]["subsystems"]
                    .as_array()
                    .map(|l| {
                        l.iter()
                            .filter_map(|s| s["condition_pct"].as_f64())
                            .collect()
                    })
                    .unwrap_or_default();
                !c.is_empty() && c.iter().all(|x| *x == 100.0)
            }),
        ),
        (
            "any subsystems.condition_pct < 50",
            Box::new(|_, m| {
                m["fields"]["subsystems"].as_array().is_some_and(|l| {
                    l.iter()
                        .filter_map(|s| s["condition_pct"].as_f64())
                        .any(|x| x < 50.0)
                })
            }),
        ),
    ];
    for (expr, pred) in cases {
        let want = expected(&all, pred);
        let got = selected(SAMPLE, expr);
        assert_eq!(got, want, "-Y {expr}");
        if !expr.contains("(?-i)") {
            assert!(
                !want.is_empty(),
                "-Y {expr} selects something in the sample"
            );
        }
    }
}

/// Mistakes are said plainly, at their place; an empty expression is no filter.
// Catches: a grammar error listing expected rules where the cause is a missing `)`, a
// single `=`, an unterminated string or a misspelt player.
#[test]
fn filter_mistakes_are_explained() {
    let cases = [
        ("(frame == 1", "never closed: expected `)`"),
        ("frame == 1)", "closes no `(`"),
        ("opcode = StateUpdate", "did you mean `==`?"),
        ("name == \"abc", "string is never closed"),
        ("client == Wrof", "did you mean Worf?"),
    ];
    for (expr, says) in cases {
        let (code, _, err) = run(&["decode", "-Y", expr, SAMPLE]);
        assert_eq!(code, 2, "{expr}: {err}");
        assert!(err.contains(says), "{expr}: {err}");
    }
    let (code, out, _) = run(&["decode", "--format", "jsonl", "-Y", "", SAMPLE]);
    let (_, all, _) = run(&["decode", "--format", "jsonl", SAMPLE]);
    assert_eq!(code, 0);
    assert_eq!(out, all);
}

/// The records (frame, and each message's offset, or none for a datagram without
/// messages) `decode ARGS` writes as JSON Lines.
fn records(file: &str, args: &[&str]) -> Vec<(u64, Vec<u64>)> {
    let mut all = vec!["decode", "--format", "jsonl"];
    all.extend_from_slice(args);
    all.push(file);
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "{args:?}: {err}");
    out.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "packet")
        .map(|r| {
            let offsets = r["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| m["offset"].as_u64().unwrap())
                .collect();
            (r["frame"].as_u64().unwrap(), offsets)
        })
        .collect()
}

// Each short selection option keeps exactly the records and messages its `-Y` form,
// as bcwire-filter(7) lists it, keeps.
// Catches: a short option and its documented expression parting (GameSpy datagrams
// kept by one and not the other, a time range closed at one end and open at the
// other, an object matched in one field only).
#[test]
fn short_options_select_what_their_expressions_select() {
    let object = "0x3FFFFFFF";
    let cases: &[(&[&str], &str)] = &[
        (&["--opcode", "StateUpdate"], "opcode == StateUpdate"),
        (&["--exclude", "StateUpdate"], "not opcode == StateUpdate"),
        (&["--direction", "s2c"], "direction == s2c"),
        (&["--client", "Worf"], "client == Worf"),
        (&["--ship", "Nebula"], "ship == Nebula"),
        (&["--frames", "100-200"], "frame >= 100 and frame <= 200"),
        (
            &["--time", "10-20"],
            "time_relative >= 10 and time_relative <= 20",
        ),
        (&["--object", object], &format!("object_ids == {object}")),
    ];
    for (short, expr) in cases {
        let a = records(SAMPLE, short);
        let b = records(SAMPLE, &["-Y", expr]);
        assert!(!a.is_empty(), "{short:?} selects something");
        assert_eq!(a, b, "{short:?} against -Y {expr}");
    }
}

// The expressions bcwire-filter(7) lists for the short options are the ones the
// program compiles: each listed option selects what its listed expression selects
// through -Y, on two captures.
// Catches: the manual and the compiled expressions parting (a page written by hand
// while the code changed, a note left inside the expression).
#[test]
fn the_manual_lists_what_the_short_options_compile_to() {
    let (code, page, err) = run(&["man", "filter"]);
    assert_eq!(code, 0, "{err}");
    let section = page
        .split(".SH \"SHORT OPTIONS\"")
        .nth(1)
        .and_then(|s| s.split(".SH").next())
        .expect("a SHORT OPTIONS section");
    let unroff = |s: &str| {
        s.replace("\\fB", "")
            .replace("\\fR", "")
            .replace("\\-", "-")
    };
    let mut rows = Vec::new();
    let lines: Vec<&str> = section.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if *l == ".TP" && i + 2 < lines.len() {
            rows.push((unroff(lines[i + 1]), unroff(lines[i + 2])));
        }
    }
    assert!(rows.len() >= 8, "the page lists the options: {rows:?}");
    let b2 = crate::common::shared_file(
        "captures/openbc/b2_valentines_replay/b2_valentines_replay.pcapng",
    )
    .map(|p| p.display().to_string());
    let mut selected_something = 0;
    for (option, expression) in rows.iter().filter(|(o, _)| !o.starts_with("--client")) {
        // "--ship "Kessok Heavy"": the option, then its value without the quotes.
        let (flag, value) = option.split_once(' ').expect("an option and its value");
        let value = value.trim_matches('"');
        // A note in parentheses follows some expressions.
        let expression = expression.split(" (").next().unwrap();
        for file in [SAMPLE.to_string()].into_iter().chain(b2.clone()) {
            let a = records(&file, &[flag, value]);
            let b = records(&file, &["-Y", expression]);
            assert_eq!(a, b, "{file}: {option} against -Y {expression:?}");
            selected_something += usize::from(!a.is_empty());
        }
    }
    assert!(
        selected_something >= 8,
        "{selected_something} selections were not empty"
    );
}

/// The values a bare name reads in a message's JSON fields, as the manual says it
/// reads them: the field at the top, else a field of that name at any depth.
fn bare_values(fields: &Value, name: &str) -> Vec<Value> {
    fn deep(v: &Value, name: &str, out: &mut Vec<Value>) {
        match v {
            Value::Object(o) => {
                for (k, inner) in o {
                    if k == name {
                        out.push(inner.clone());
                    } else {
                        deep(inner, name, out);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| deep(i, name, out)),
            _ => {}
        }
    }
    if let Some(v) = fields.get(name) {
        return vec![v.clone()];
    }
    let mut out = Vec::new();
    deep(fields, name, &mut out);
    out
}

/// A message's decoded fields in its JSON record: its own, else those of the message
/// it completes.
fn message_fields(m: &Value) -> &Value {
    match m.get("fields") {
        Some(f) => f,
        None => &m["assembled"]["fields"],
    }
}

type Predicate = fn(&Value, &Value) -> bool;

/// The values a dotted path of names reads in a message's JSON fields, as the manual
/// says a path reads them: each name a member of the groups reached so far, a repeated
/// name (a JSON array) or a list of groups standing for each of its elements.
fn path_values(fields: &Value, names: &[&str]) -> Vec<Value> {
    let mut current = vec![fields.clone()];
    for name in names {
        let mut next = Vec::new();
        for v in &current {
            let groups = match v {
                Value::Array(items) => items.iter().collect(),
                v => vec![v],
            };
            for g in groups {
                match g.get(name) {
                    Some(Value::Array(items)) => next.extend(items.iter().cloned()),
                    Some(x) => next.push(x.clone()),
                    None => {}
                }
            }
        }
        current = next;
    }
    current
}

/// Expressions that read decoded fields, each with its meaning read off the full JSON
/// records: a field on either side of a test, a path into a list (by key, by position,
/// by a layout's child key), a bare name found below the top (in a list, in a checksum
/// tree's groups), a path into a nested checksum tree (whose fields carry the top
/// level's registry entries).
const FIELD_READING: [(&str, Predicate); 10] = [
    ("speed > 1", |_, m| {
        bare_values(message_fields(m), "speed")
            .iter()
            .any(|v| v.as_f64().is_some_and(|s| s > 1.0))
    }),
    ("game_time < frame", |p, m| {
        let frame = p["frame"].as_f64().unwrap();
        bare_values(message_fields(m), "game_time")
            .iter()
            .any(|v| v.as_f64().is_some_and(|t| t < frame))
    }),
    ("subsystems[hull].condition_pct < 100", |_, m| {
        subsystem_condition(m, "hull").is_some_and(|c| c < 100.0)
    }),
    // A record's child, named by the ship layout's key (data, not a registered name).
    ("subsystems[*].children_pct.port_impulse < 100", |_, m| {
        m["fields"]["subsystems"].as_array().is_some_and(|list| {
            list.iter().any(|s| {
                s["children_pct"]["port_impulse"]
                    .as_f64()
                    .is_some_and(|c| c < 100.0)
            })
        })
    }),
    ("position.x > 0 and flags & 0x20", |_, m| {
        let f = message_fields(m);
        f["position"][0].as_f64().is_some_and(|x| x > 0.0)
            && f["flags"].as_u64().is_some_and(|b| b & 0x20 != 0)
    }),
    ("score", |_, m| {
        !bare_values(message_fields(m), "score").is_empty()
    }),
    ("name_hash", |_, m| {
        !bare_values(message_fields(m), "name_hash").is_empty()
    }),
    // A list's element by its position.
    ("subsystems[0].condition_pct < 100", |_, m| {
        message_fields(m)["subsystems"][0]["condition_pct"]
            .as_f64()
            .is_some_and(|c| c < 100.0)
    }),
    // A checksum tree nested in a subdirectory's group, down to a repeated name.
    ("subdirs.subdir.files.file.name_hash", |_, m| {
        !path_values(
            message_fields(m),
            &["subdirs", "subdir", "files", "file", "name_hash"],
        )
        .is_empty()
    }),
    ("subdirs.subdir.file_count > 0", |_, m| {
        path_values(message_fields(m), &["subdirs", "subdir", "file_count"])
            .iter()
            .any(|v| v.as_u64().is_some_and(|n| n > 0))
    }),
];

/// A `-Y` expression that reads decoded fields has the decoders build only the
/// top-level fields it names (and those a record printed whole needs). Whatever each
/// command builds, it selects what the full records say: `decode` in JSON and with
/// `--fields`, the counts of `stats`, and the frames a quiet `-w` cuts, which equal
/// those a cut beside the full table writes.
// Catches: a field the expression reads left unbuilt (a bare name's field below the
// top, a field on the right of a test), so a command that builds little selects less
// than one that prints whole records.
#[test]
fn field_reading_filters_select_what_the_full_records_say() {
    let mut files = vec![
        SAMPLE.to_string(),
        DUEL.to_string(),
        concat!(env!("CARGO_MANIFEST_DIR"), "/captures/mtu400-null.pcapng").to_string(),
    ];
    for (name, folder) in crate::common::shared_captures() {
        let path = folder.join(format!("{name}.pcapng"));
        files.push(path.to_str().unwrap().to_string());
    }
    let dir = tempfile::tempdir().unwrap();
    let mut matched = vec![0usize; FIELD_READING.len()];
    for file in &files {
        let all = all_messages(file);
        for (i, (expr, pred)) in FIELD_READING.iter().enumerate() {
            let want = expected(&all, pred);
            matched[i] += want.len();
            assert_eq!(selected(file, expr), want, "decode -Y {expr:?} {file}");
            let (code, out, err) = run(&["stats", "--format", "json", "-Y", expr, file]);
            assert_eq!(code, 0, "{err}");
            let s: Value = serde_json::from_str(&out).unwrap();
            let counted = s["directions"]["c2s"]["messages"].as_u64().unwrap()
                + s["directions"]["s2c"]["messages"].as_u64().unwrap();
            assert_eq!(counted as usize, want.len(), "stats -Y {expr:?} {file}");
            let (code, out, err) = run(&[
                "decode",
                "--format",
                "csv",
                "--fields",
                "frame,speed",
                "-Y",
                expr,
                file,
            ]);
            assert_eq!(code, 0, "{err}");
            let rows: Vec<u64> = out
                .lines()
                .skip(1)
                .map(|l| l.split(',').next().unwrap().parse().unwrap())
                .collect();
            let frames: Vec<u64> = want.iter().map(|(f, _)| *f).collect();
            assert_eq!(rows, frames, "--fields -Y {expr:?} {file}");
            // A quiet cut builds what the expression reads; the cut beside the table,
            // whole trees.
            let lean = dir.path().join("lean.pcapng");
            let full = dir.path().join("full.pcapng");
            let (lean, full) = (lean.to_str().unwrap(), full.to_str().unwrap());
            let (code, _, err) = run(&["decode", "-q", "-Y", expr, "-w", lean, file]);
            assert_eq!(code, 0, "{err}");
            let (code, _, err) = run(&["decode", "-Y", expr, "-w", full, file]);
            assert_eq!(code, 0, "{err}");
            assert_eq!(
                std::fs::read(lean).unwrap(),
                std::fs::read(full).unwrap(),
                "-w -Y {expr:?} {file}"
            );
            // Read back, the cut holds every selected datagram.
            let times: std::collections::BTreeSet<u64> = all_messages(lean)
                .iter()
                .map(|(p, _)| p["time_ns"].as_u64().unwrap())
                .collect();
            for (p, m) in &all {
                if pred(p, m) {
                    assert!(
                        times.contains(&p["time_ns"].as_u64().unwrap()),
                        "-w -Y {expr:?} {file}: frame {} missing",
                        p["frame"]
                    );
                }
            }
        }
    }
    for ((expr, _), n) in FIELD_READING.iter().zip(matched) {
        assert!(n > 0, "{expr:?} selects nothing in any capture");
    }
}

/// The JSON record of every message, by (frame, offset).
fn messages_by_place(all: &[(Value, Value)]) -> HashMap<(u64, u64), &Value> {
    all.iter()
        .map(|(p, m)| {
            let place = (p["frame"].as_u64().unwrap(), m["offset"].as_u64().unwrap());
            (place, m)
        })
        .collect()
}

/// A `-Y` that reads StateUpdate fields has the decode build only those beside the
/// typed values the JSON is written from. On every capture (the shared ones hold
/// StateUpdates that warn, with raw blocks and bytes left over), `decode -Y` keeps
/// exactly the messages the full records say it should and writes each as the full
/// decode writes it, in JSON lines and in a JSON array alike.
// Catches: a StateUpdate written from the few fields the filter read, or a warned one
// written without what its tree shows besides its values.
#[test]
fn field_reading_filters_write_what_the_full_records_say() {
    let su = |m: &Value| m["opcode"].as_u64() == Some(0x1C);
    // Besides FIELD_READING, fields only a StateUpdate that warned shows.
    let warned: [(&str, Predicate); 2] = [
        ("subsystem_block_raw or fits_classes", |_, m| {
            ["subsystem_block_raw", "fits_classes"]
                .iter()
                .any(|k| !bare_values(message_fields(m), k).is_empty())
        }),
        ("trailing or undecoded or power_block_trailing", |_, m| {
            ["trailing", "undecoded", "power_block_trailing"]
                .iter()
                .any(|k| !bare_values(message_fields(m), k).is_empty())
        }),
    ];
    let cases: Vec<(&str, Predicate)> = FIELD_READING.iter().chain(&warned).copied().collect();
    let mut warned_kept = 0;
    for file in crate::common::every_capture("pcapng") {
        let file = file.to_str().unwrap();
        let all = all_messages(file);
        let by_place = messages_by_place(&all);
        for (expr, pred) in &cases {
            let want = expected(&all, pred);
            let (code, out, err) = run(&["decode", "--format", "jsonl", "-Y", expr, file]);
            assert_eq!(code, 0, "-Y {expr}: {err}");
            let records: Vec<Value> = out
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .filter(|r: &Value| r["type"] == "packet")
                .collect();
            let mut got = Vec::new();
            for rec in &records {
                for m in rec["messages"].as_array().into_iter().flatten() {
                    let place = (
                        rec["frame"].as_u64().unwrap(),
                        m["offset"].as_u64().unwrap(),
                    );
                    assert_eq!(
                        Some(&m),
                        by_place.get(&place),
                        "{file} -Y {expr} at {place:?}"
                    );
                    if su(m) && !m["warnings"].as_array().unwrap().is_empty() {
                        warned_kept += 1;
                    }
                    got.push(place);
                }
            }
            assert_eq!(got, want, "{file} -Y {expr}");
            let (code, out, err) = run(&["decode", "--format", "json", "-Y", expr, file]);
            assert_eq!(code, 0, "-Y {expr}: {err}");
            let array: Vec<Value> = serde_json::from_str::<Vec<Value>>(&out)
                .unwrap()
                .into_iter()
                .filter(|r| r["type"] == "packet")
                .collect();
            assert_eq!(array, records, "{file} --format json -Y {expr}");
        }
    }
    if crate::common::shared_dir().is_some() {
        assert!(
            warned_kept > 10,
            "only {warned_kept} warned StateUpdates kept"
        );
    }
}

/// A pcap of one BC datagram per game message, each in a reliable 0x32 message from
/// the server to a client.
fn capture_of(games: &[Vec<u8>]) -> Vec<u8> {
    use bcwire::capture::{link_type, CaptureWriter, Endian, TsResolution};
    use bcwire::net::build::{frame_udp, BuildOptions};
    use bcwire::transport::cipher;
    use bcwire::transport::packet::{emit_packet, DataMessage, MessageBody};
    let server: std::net::SocketAddr = "10.0.0.1:22101".parse().unwrap();
    let client: std::net::SocketAddr = "10.1.0.1:40001".parse().unwrap();
    let mut w = CaptureWriter::pcap(
        Vec::new(),
        link_type::ETHERNET,
        TsResolution::MICRO,
        Endian::Little,
        65_535,
    )
    .unwrap();
    for (i, game) in games.iter().enumerate() {
        let body =
            MessageBody::Data(DataMessage::new(Some(i as u16), false, None, game.len()).unwrap());
        let mut d = emit_packet(1, &[(&body, game.as_slice())]).unwrap();
        cipher::encrypt(&mut d);
        let opts = BuildOptions {
            ip_id: i as u32 + 1,
            ..BuildOptions::default()
        };
        for f in frame_udp(link_type::ETHERNET, server, client, &d, &opts).unwrap() {
            let t = 1_700_000_000_000_000_000 + i as i64 * 10_000_000;
            w.write_frame(0, t, f.len() as u32, &f).unwrap();
        }
    }
    w.into_inner()
}

/// An object creation whose read fails inside `orientation` leaves the members read so
/// far flat at the top of its fields (`w`, `x`, each with its member's entry). Every
/// command, whatever it builds, selects for `w` and `orientation.w` what the full
/// records say: `w` is a field at the top, `orientation` is not.
// Catches: a selective decode that drops the members a failed read left flat, or a
// path that finds them under the group that never closed.
#[test]
fn members_a_failed_read_left_flat_are_found_as_the_records_show_them() {
    // 0x02 ObjCreate: owner slot, the ship class id, object id, species (Akira),
    // position, then `orientation` cut inside its second member.
    let mut create = vec![0x02, 0x00, 0x08, 0x80, 0x00, 0x00];
    create.extend_from_slice(&0x3FFF_FFFFu32.to_le_bytes());
    create.push(1);
    for v in [1.0f32, 2.0, 3.0, 0.5] {
        create.extend_from_slice(&v.to_le_bytes());
    }
    create.extend_from_slice(&[0x00, 0x00]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("flat.pcap");
    std::fs::write(&file, capture_of(&[create])).unwrap();
    let file = file.to_str().unwrap();
    let all = all_messages(file);
    let fields = message_fields(&all[0].1);
    assert_eq!(fields["w"].as_f64(), Some(0.5), "{fields}");
    assert!(fields.get("orientation").is_none(), "{fields}");
    let cases: [(&str, Predicate); 4] = [
        ("w > 0", |_, m| {
            bare_values(message_fields(m), "w")
                .iter()
                .any(|v| v.as_f64().is_some_and(|w| w > 0.0))
        }),
        ("w", |_, m| !bare_values(message_fields(m), "w").is_empty()),
        ("orientation.w", |_, m| {
            !path_values(message_fields(m), &["orientation", "w"]).is_empty()
        }),
        ("position[2] == 3 and w", |_, m| {
            let f = message_fields(m);
            f["position"][2].as_f64() == Some(3.0) && !bare_values(f, "w").is_empty()
        }),
    ];
    for (expr, pred) in cases {
        let want = expected(&all, pred);
        assert_eq!(selected(file, expr), want, "decode -Y {expr:?}");
        let (code, out, err) = run(&["stats", "--format", "json", "-Y", expr, file]);
        assert_eq!(code, 0, "{err}");
        let s: Value = serde_json::from_str(&out).unwrap();
        let counted = s["directions"]["c2s"]["messages"].as_u64().unwrap()
            + s["directions"]["s2c"]["messages"].as_u64().unwrap();
        assert_eq!(counted as usize, want.len(), "stats -Y {expr:?}");
        let (code, out, err) = run(&[
            "decode", "--format", "csv", "--fields", "frame", "-Y", expr, file,
        ]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            out.lines().skip(1).count(),
            want.len(),
            "--fields -Y {expr:?}"
        );
    }
    assert_eq!(selected(file, "w").len(), 1);
    assert!(selected(file, "orientation.w").is_empty());
}
