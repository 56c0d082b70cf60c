//! `bcwire diff` on a capture against a copy edited with pcap-file: one frame deleted,
//! one datagram duplicated, two frames of a flow swapped, one frame's bytes replaced.
//! The expected divergence (flow, message indices, opcodes), twin counts and frames are
//! worked out here from which frame was edited and that flow's message list, using the
//! alignment rule of docs/json.md ("Flows are aligned message by message ...").

use crate::capture_edit::PcapNg;
use crate::common;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// docs/json.md: fields left out of comparisons unless `--include-volatile`.
const VOLATILE: [&str; 4] = ["game_time", "time", "timestamp", "clock"];

/// (session, client, direction) as the JSON names them.
type Flow = (u64, u64, String);

/// A delivered game message: the frame that delivered it, its opcode, its compared
/// fields, and whether that frame holds nothing else.
#[derive(Debug, Clone)]
struct Msg {
    frame: u64,
    opcode: u64,
    fields: Value,
    alone: bool,
}

fn strip_volatile(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !VOLATILE.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), strip_volatile(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_volatile).collect()),
        v => v.clone(),
    }
}

/// The delivered messages of every flow, in order: a message with an opcode that is not
/// a retransmission, or the message a last fragment completes (`assembled`).
fn flows(capture: &Path) -> BTreeMap<Flow, Vec<Msg>> {
    let out = common::bcwire(&["decode", capture.to_str().unwrap(), "--format", "jsonl"]);
    assert!(out.status.success());
    let mut flows: BTreeMap<Flow, Vec<Msg>> = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let p: Value = serde_json::from_str(line).unwrap();
        if p["type"] != "packet" {
            continue;
        }
        let Some(messages) = p["messages"].as_array() else {
            continue;
        };
        let key = (
            p["session"].as_u64().unwrap(),
            p["client"].as_u64().unwrap(),
            p["direction"].as_str().unwrap().to_string(),
        );
        let alone = messages.len() == 1;
        for m in messages {
            let delivered = if let Some(a) = m.get("assembled") {
                Some((a["opcode"].as_u64().unwrap(), &a["fields"]))
            } else if m["retransmission"] == false {
                m["opcode"].as_u64().map(|op| (op, &m["fields"]))
            } else {
                None
            };
            if let Some((opcode, fields)) = delivered {
                flows.entry(key.clone()).or_default().push(Msg {
                    frame: p["frame"].as_u64().unwrap(),
                    opcode,
                    fields: strip_volatile(fields),
                    alone,
                });
            }
        }
    }
    flows
}

fn same(a: &Msg, b: &Msg) -> bool {
    a.opcode == b.opcode && a.fields == b.fields
}

/// The first message index `k >= from` of `msgs` whose frame carries a StateUpdate
/// alone, as do the next `n` messages' frames, and no two of those `n + 2` messages
/// (from k to k + n + 1) are alike: any edit among them is then seen at once.
fn pick(msgs: &[Msg], from: usize, n: usize) -> usize {
    (from..msgs.len() - n - 2)
        .find(|&k| {
            let run = &msgs[k..=k + n + 1];
            run[..=n].iter().all(|m| m.alone && m.opcode == 0x1C)
                && run
                    .iter()
                    .enumerate()
                    .all(|(i, x)| run[i + 1..].iter().all(|y| !same(x, y)))
        })
        .expect("a run of lone StateUpdates")
}

fn diff(a: &Path, b: &Path) -> Value {
    let out = common::bcwire(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A divergence: flow, index, b_index, a_opcode, b_opcode.
type Divergence = (Flow, u64, u64, Option<u64>, Option<u64>);

/// Each divergence of a diff.
fn divergences(d: &Value) -> Vec<Divergence> {
    d["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            let f = &x["flow"];
            (
                (
                    f["session"].as_u64().unwrap(),
                    f["client"].as_u64().unwrap(),
                    f["direction"].as_str().unwrap().to_string(),
                ),
                x["index"].as_u64().unwrap(),
                x["b_index"].as_u64().unwrap(),
                x["a_opcode"].as_u64(),
                x["b_opcode"].as_u64(),
            )
        })
        .collect()
}

/// (direction, opcode, only_in_a, only_in_b) rows.
fn unmatched(d: &Value) -> Vec<(String, u64, u64, u64)> {
    d["unmatched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["direction"].as_str().unwrap().to_string(),
                u["opcode"].as_u64().unwrap(),
                u["only_in_a"].as_u64().unwrap(),
                u["only_in_b"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Opcode rows whose counts differ: (direction, opcode, b − a).
fn opcode_deltas(d: &Value) -> Vec<(String, u64, i64)> {
    d["opcodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["a"] != r["b"])
        .map(|r| {
            (
                r["direction"].as_str().unwrap().to_string(),
                r["opcode"].as_u64().unwrap(),
                r["b"].as_i64().unwrap() - r["a"].as_i64().unwrap(),
            )
        })
        .collect()
}

struct Case {
    _dir: tempfile::TempDir,
    original: std::path::PathBuf,
    edited: std::path::PathBuf,
    flow: Flow,
    msgs: Vec<Msg>,
}

/// The shipped sample, the flow edited (first client, client to host: one StateUpdate per datagram) and its
/// messages; `edit` gets the capture and the flow's messages and changes the copy.
fn case(edit: impl FnOnce(&mut PcapNg, &[Msg])) -> Case {
    let original = common::shipped_capture("sample.pcapng");
    let all = flows(&original);
    let flow: Flow = (0, 0, "c2s".to_string());
    let msgs = all[&flow].clone();
    let mut cap = PcapNg::read(&original);
    edit(&mut cap, &msgs);
    let dir = tempfile::tempdir().unwrap();
    let edited = dir.path().join("edited.pcapng");
    cap.write(&edited);
    Case {
        _dir: dir,
        original,
        edited,
        flow,
        msgs,
    }
}

// Deleting frame F, whose only message is message k of its flow: B lacks one message,
// so the flows part at index k on both sides with A's message extra (b_opcode null),
// A has one StateUpdate without a twin, and the counts differ by that one message.
// Catches: the aligner pairing A's extra with B's next message (a lost datagram read as
// a changed one, as when next_step does not look ahead).
#[test]
fn a_deleted_frame_is_one_message_only_in_a_at_its_index() {
    let mut k = 0;
    let c = case(|cap, msgs| {
        k = pick(msgs, 200, 0);
        cap.delete_frame(msgs[k].frame as usize);
    });
    let d = diff(&c.original, &c.edited);
    assert_eq!(d["same"], false);
    let k = k as u64;
    assert_eq!(
        divergences(&d),
        [(c.flow.clone(), k, k, Some(0x1C), None)],
        "deleted frame {}",
        c.msgs[k as usize].frame
    );
    assert_eq!(unmatched(&d), [("c2s".to_string(), 0x1C, 1, 0)]);
    assert_eq!(opcode_deltas(&d), [("c2s".to_string(), 0x1C, -1)]);
    assert!(d["field_differences"].as_array().unwrap().is_empty());
}

// Duplicating frame F (message k): B has message k twice; the fronts agree up to the
// copy, which is B's extra at index k + 1 on both sides (a_opcode null).
// Catches: the copy paired with A's next message instead of being B's extra (next_step
// not looking ahead).
#[test]
fn a_duplicated_datagram_is_one_message_only_in_b_after_it() {
    let mut k = 0;
    let c = case(|cap, msgs| {
        k = pick(msgs, 300, 1);
        cap.duplicate_frame(msgs[k].frame as usize);
    });
    let d = diff(&c.original, &c.edited);
    let k = k as u64;
    assert_eq!(
        divergences(&d),
        [(c.flow.clone(), k + 1, k + 1, None, Some(0x1C))],
        "duplicated frame {}",
        c.msgs[k as usize].frame
    );
    assert_eq!(unmatched(&d), [("c2s".to_string(), 0x1C, 0, 1)]);
    assert_eq!(opcode_deltas(&d), [("c2s".to_string(), 0x1C, 1)]);
}

// Swapping frames F1 and F2 (messages k and k + 1 of one flow): at index k either side
// could be taken as one extra message (a tie), and A's goes first; every message still
// has its twin, and the counts are equal.
// Catches: B's side tried first on a tie (divergence with a_opcode null), and a swap
// taken for two changed messages (next_step not looking ahead).
#[test]
fn two_swapped_frames_diverge_at_the_first_with_every_twin_found() {
    let mut k = 0;
    let c = case(|cap, msgs| {
        k = pick(msgs, 400, 1);
        cap.swap_frames(msgs[k].frame as usize, msgs[k + 1].frame as usize);
    });
    let d = diff(&c.original, &c.edited);
    let k = k as u64;
    assert_eq!(
        divergences(&d),
        [(c.flow.clone(), k, k, Some(0x1C), None)],
        "swapped frames {} and {}",
        c.msgs[k as usize].frame,
        c.msgs[k as usize + 1].frame
    );
    assert!(unmatched(&d).is_empty(), "{:?}", unmatched(&d));
    assert!(opcode_deltas(&d).is_empty(), "{:?}", opcode_deltas(&d));
    assert!(d["field_differences"].as_array().unwrap().is_empty());
}

// Replacing frame F's bytes (message k) with those of frame G, a StateUpdate of the
// same flow far beyond the look-ahead window, and deleting an earlier GameSpy frame:
// the two messages stand for each other at index k, and their fields are compared,
// named with frame F in A and F − 1 in B.
// Catches: the frames of the pair taken from the wrong side (A's frame from B's
// fetch and the other way round).
#[test]
fn a_replaced_message_is_a_pair_named_by_its_frame() {
    let (mut k, mut j) = (0, 0);
    let sample = common::shipped_capture("sample.pcapng");
    let out = common::bcwire(&["decode", sample.to_str().unwrap(), "--format", "jsonl"]);
    let gamespy = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["kind"] == "gamespy")
        .and_then(|r| r["frame"].as_u64())
        .expect("a GameSpy frame");
    let c = case(|cap, msgs| {
        // Both unlike any other message of the flow, so that neither can be taken
        // for a message the other side has further on.
        let unique = |i: usize| {
            msgs[i].alone
                && msgs[i].opcode == 0x1C
                && msgs.iter().filter(|m| same(m, &msgs[i])).count() == 1
        };
        k = (250..msgs.len()).find(|&i| unique(i)).unwrap();
        j = (k + 100..msgs.len()).find(|&i| unique(i)).unwrap();
        cap.replace_frame_data(msgs[k].frame as usize, msgs[j].frame as usize);
        // A GameSpy datagram (no game message) deleted before it: B's frames are
        // numbered one lower from there on, so the two sides' frames tell apart.
        cap.delete_frame(gamespy as usize);
    });
    let d = diff(&c.original, &c.edited);
    let k64 = k as u64;
    assert_eq!(
        divergences(&d),
        [(c.flow.clone(), k64, k64, Some(0x1C), Some(0x1C))]
    );
    let fd = d["field_differences"].as_array().unwrap();
    assert_eq!(fd.len(), 1, "{fd:?}");
    let f = c.msgs[k].frame;
    assert!(gamespy < f);
    assert_eq!(
        (
            fd[0]["index"].as_u64(),
            fd[0]["b_index"].as_u64(),
            fd[0]["opcode"].as_u64(),
            fd[0]["a_frame"].as_u64(),
            fd[0]["b_frame"].as_u64()
        ),
        (Some(k64), Some(k64), Some(0x1C), Some(f), Some(f - 1))
    );
    assert!(!fd[0]["differences"].as_array().unwrap().is_empty());
    // A's message k has no twin in B, and B holds G's message twice.
    assert_eq!(unmatched(&d), [("c2s".to_string(), 0x1C, 1, 1)]);
    let _ = j;
}

/// `diff full one-client` pairs the client by player name, whatever its number in each
/// capture: the other players' flows are only in A and the client's flow is the same.
// Catches: flows paired by client number (B's Worf, client 0 there, was compared with
// A's Cady2 and reported as twenty blocks of field differences).
#[test]
fn flows_are_paired_by_player_name() {
    let dir = tempfile::tempdir().unwrap();
    let full = crate::common::shipped_capture("sample.pcapng");
    let worf = dir.path().join("worf.pcapng");
    let cut = crate::common::bcwire(&[
        "-q",
        "decode",
        full.to_str().unwrap(),
        "--client",
        "Worf",
        "-w",
        worf.to_str().unwrap(),
    ]);
    assert!(
        cut.status.success(),
        "{}",
        String::from_utf8_lossy(&cut.stderr)
    );
    let out = crate::common::bcwire(&[
        "diff",
        "--format",
        "json",
        full.to_str().unwrap(),
        worf.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "other players only in A: different"
    );
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pairs = d["pairing"].as_array().unwrap();
    let worf_pair = pairs
        .iter()
        .find(|p| p["a_player"] == "Worf")
        .expect("Worf is paired");
    assert_eq!(worf_pair["b_player"], "Worf");
    assert_eq!(worf_pair["by"], "name");
    assert_eq!(worf_pair["b_client"], 0, "Worf is B's only client");
    let only_a: Vec<&str> = d["flows_only_in_a"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["player"].as_str().unwrap())
        .collect();
    assert_eq!(only_a, ["Cady2", "Cady2", "Picard", "Picard"]);
    assert!(d["flows_only_in_b"].as_array().unwrap().is_empty());
    assert!(
        d["field_differences"].as_array().unwrap().is_empty(),
        "Worf's flow is the same in both"
    );
    assert!(d["divergences"].as_array().unwrap().is_empty());
}
