//! `object_ids` (what `--fields …,object_ids`, `--object` and `-Y 'object_ids …'` read)
//! against a list made here from each message's JSON record: every field of its
//! `fields` (or `assembled.fields`) whose registry type is an object id, in record order,
//! each id once. The list must not depend on which field trees the decode built (a CSV
//! of `object_ids` alone builds none for a clean StateUpdate; a `-Y` that reads a field
//! builds them all), `stats --object ID` and `decode --object ID` must count the
//! messages the list names ID in, and where the shared captures' ground truth gives a
//! message's bytes, the object id the protocol reference puts right after the opcode
//! must come first.

use crate::common;
use bcwire::game::registry::{lookup, FieldType};
use serde_json::Value;
use std::collections::BTreeMap;

/// One row per transport message: (frame, offset in the datagram, object ids); a
/// datagram without messages (GameSpy, undecipherable) is one row without an offset.
type Rows = Vec<(u64, Option<u64>, Vec<u64>)>;

/// Pushes every object id under `value` (the field named `path`), each once; counts in
/// `repeats` the object fields that name an object already pushed.
fn collect_ids(path: &str, value: &Value, out: &mut Vec<u64>, repeats: &mut usize) {
    match value {
        Value::Object(members) => {
            for (name, v) in members {
                let child = if path.is_empty() {
                    name.clone()
                } else {
                    format!("{path}.{name}")
                };
                collect_ids(&child, v, out, repeats);
            }
        }
        // A list's elements are named by the list (a vector's components are floats).
        Value::Array(items) => {
            for item in items {
                collect_ids(path, item, out, repeats);
            }
        }
        Value::Number(n) => {
            let is_object = lookup(path).is_some_and(|f| f.ty == FieldType::ObjectId);
            if let (true, Some(id)) = (is_object, n.as_u64()) {
                if out.contains(&id) {
                    *repeats += 1;
                } else {
                    out.push(id);
                }
            }
        }
        _ => {}
    }
}

/// The rows computed from `decode --format jsonl`, each record's direction, and how many
/// object fields repeated an object their message had named already.
fn from_json(input: &str) -> (Rows, Vec<String>, usize) {
    let out = common::bcwire(&["decode", "--format", "jsonl", input]);
    assert!(out.status.success(), "{input}: decode --format jsonl");
    let (mut rows, mut directions, mut repeats) = (Vec::new(), Vec::new(), 0);
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        if r["type"] != "packet" {
            continue;
        }
        let messages = r["messages"].as_array().map_or(&[][..], |m| &m[..]);
        if messages.is_empty() {
            rows.push((r["frame"].as_u64().unwrap(), None, Vec::new()));
            directions.push(r["direction"].as_str().unwrap().to_string());
        }
        for m in messages {
            let mut ids = Vec::new();
            // Only a game message names objects; a completed fragment set's fields are
            // the assembled message's.
            if m.get("opcode").is_some() || m.get("assembled").is_some() {
                let fields = m.get("fields").or_else(|| m["assembled"].get("fields"));
                collect_ids("", fields.unwrap_or(&Value::Null), &mut ids, &mut repeats);
            }
            rows.push((
                r["frame"].as_u64().unwrap(),
                Some(m["offset"].as_u64().unwrap()),
                ids,
            ));
            directions.push(r["direction"].as_str().unwrap().to_string());
        }
    }
    (rows, directions, repeats)
}

/// The rows of `decode --fields frame,offset,object_ids --format csv` with `extra`.
fn from_csv(input: &str, extra: &[&str]) -> Rows {
    let mut args = vec![
        "decode",
        "--fields",
        "frame,offset,object_ids",
        "--format",
        "csv",
    ];
    args.extend_from_slice(extra);
    args.push(input);
    let out = common::bcwire(&args);
    assert!(out.status.success(), "{args:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("frame,offset,object_ids"));
    lines
        .map(|l| {
            let mut cols = l.split(',');
            let frame = cols.next().unwrap().parse::<u64>().unwrap();
            let offset = cols.next().unwrap().parse::<u64>().ok();
            let ids = cols
                .next()
                .unwrap()
                .split(';')
                .filter(|s| !s.is_empty())
                .map(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap())
                .collect();
            (frame, offset, ids)
        })
        .collect()
}

fn inputs() -> Vec<String> {
    common::every_capture("pcapng")
        .iter()
        .map(|p| p.display().to_string())
        .collect()
}

/// The first row that differs, for a readable failure.
fn first_difference(a: &Rows, b: &Rows) -> String {
    match a.iter().zip(b).find(|(x, y)| x != y) {
        Some((x, y)) => format!("{x:?} against {y:?}"),
        None => format!("{} rows against {}", a.len(), b.len()),
    }
}

// Catches: a StateUpdate with a field tree (one that warned, or every one under a -Y
// that reads fields) listing its object twice, from the typed value and from the tree
// (0x3FFFFFFF;0x3FFFFFFF); an event whose source is its destination listing it twice;
// a clean StateUpdate without a tree listing nothing.
#[test]
fn object_ids_are_the_records_object_fields_once_whatever_trees_are_built() {
    let mut repeats = 0;
    for input in inputs() {
        let (want, _, repeated) = from_json(&input);
        assert!(
            want.iter().any(|(_, _, ids)| !ids.is_empty()),
            "{input}: the records name objects"
        );
        let plain = from_csv(&input, &[]);
        assert!(
            plain == want,
            "{input}: object_ids against the records: {}",
            first_difference(&plain, &want)
        );
        // A field-reading expression true of every message: every message gets its tree.
        let trees = from_csv(&input, &["-Y", "game_time or not game_time"]);
        assert!(
            trees == want,
            "{input}: object_ids with whole trees against the records: {}",
            first_difference(&trees, &want)
        );
        repeats += repeated;
    }
    // The captures hold the case a list with repeats gets wrong besides StateUpdates.
    assert!(repeats > 0, "some message names one object in two fields");
}

// Catches: `stats --object` counting another set of messages than `decode --object`
// selects (before object_ids read the trees, stats counted 1,791 messages of
// sample.pcapng where decode selected 1,805), or either counting a message whose
// record does not name the object.
#[test]
fn stats_and_decode_count_the_messages_that_name_an_object() {
    let mut checked = 0;
    for input in inputs() {
        let (rows, directions, _) = from_json(&input);
        // Per object: messages naming it, per direction, and whether a message other
        // than a StateUpdate-like one-object message names it.
        let mut named: BTreeMap<u64, BTreeMap<String, u64>> = BTreeMap::new();
        let mut in_longer_lists: BTreeMap<u64, usize> = BTreeMap::new();
        for ((_, _, ids), dir) in rows.iter().zip(&directions) {
            for id in ids {
                *named
                    .entry(*id)
                    .or_default()
                    .entry(dir.clone())
                    .or_default() += 1;
                if ids.len() > 1 {
                    *in_longer_lists.entry(*id).or_default() += 1;
                }
            }
        }
        // The most named objects, and those named beside another one.
        let mut by_count: Vec<(u64, u64)> = named
            .iter()
            .map(|(id, d)| (*id, d.values().sum()))
            .collect();
        by_count.sort_by_key(|(id, n)| (std::cmp::Reverse(*n), *id));
        let top: Vec<u64> = by_count.iter().take(3).map(|(id, _)| *id).collect();
        let beside = in_longer_lists
            .keys()
            .filter(|id| !top.contains(id))
            .take(3);
        let ids: Vec<u64> = top.iter().chain(beside).copied().collect();
        for id in ids {
            let id_text = format!("0x{id:08X}");
            let want = &named[&id];
            let stats =
                common::bcwire_json(&["stats", "--object", &id_text, "--format", "json", &input]);
            for dir in ["c2s", "s2c"] {
                assert_eq!(
                    stats["directions"][dir]["messages"].as_u64().unwrap_or(0),
                    want.get(dir).copied().unwrap_or(0),
                    "{input}: stats --object {id_text} {dir} messages"
                );
            }
            let selected = from_csv(&input, &["--object", &id_text]);
            assert_eq!(
                selected.len() as u64,
                want.values().sum::<u64>(),
                "{input}: decode --object {id_text} rows"
            );
            assert!(selected.iter().all(|(_, _, ids)| ids.contains(&id)));
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} objects checked");
}

/// Opcodes whose body starts with the object id (protocol reference, opcodes.md §1:
/// DestroyObject, StateUpdate, ObjNotFound, RequestObject, EnterSet, Explosion).
const OBJECT_FIRST: &[u64] = &[0x14, 0x1C, 0x1D, 0x1E, 0x1F, 0x29];

// Catches: object_ids leaving out, or not putting first, the object a message is about,
// read here from the ground truth's bytes rather than from any decoder.
#[test]
fn the_object_after_the_opcode_comes_first() {
    let mut checked = 0;
    for (name, folder) in common::shared_captures() {
        let input = folder.join(format!("{name}.pcapng")).display().to_string();
        let mut rows: BTreeMap<u64, Vec<Vec<u64>>> = BTreeMap::new();
        for (frame, _, ids) in from_csv(&input, &[]) {
            rows.entry(frame).or_default().push(ids);
        }
        for truth in common::ground_truth(&folder, &name) {
            let Some(msgs) = truth["msgs"].as_array() else {
                continue;
            };
            let frame = truth["frame"].as_u64().unwrap();
            let Some(ours) = rows.get(&frame).filter(|r| r.len() == msgs.len()) else {
                continue;
            };
            for (m, ids) in msgs.iter().zip(ours) {
                let opcode = m["opcode"].as_u64();
                let payload = m["payload_hex"].as_str().unwrap_or("");
                if m["fragment"] == true
                    || !opcode.is_some_and(|o| OBJECT_FIRST.contains(&o))
                    || payload.len() < 10
                {
                    continue;
                }
                let byte = |i: usize| u64::from_str_radix(&payload[2 * i..2 * i + 2], 16).unwrap();
                let id = (1..5).rev().fold(0, |acc, i| acc << 8 | byte(i));
                assert_eq!(
                    ids.first(),
                    Some(&id),
                    "{name} frame {frame}: object_ids {ids:?}"
                );
                checked += 1;
            }
        }
    }
    if !common::shared_captures().is_empty() {
        assert!(checked > 100, "{checked} messages checked");
    }
}
