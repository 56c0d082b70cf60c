//! Boundary cases checked against what the test works out itself: one reliable frame
//! deleted from a real capture (the ground truth says which sequence numbers are
//! there), and `-Y` comparisons at values the capture holds, counted from the full
//! decode output.

use crate::capture_edit::PcapNg;
use crate::common;
use serde_json::Value;
use std::collections::BTreeMap;

/// Every warning code anywhere in a record, with the record's frame.
fn warnings(v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            if let (Some(code), Some(msg)) = (m.get("code"), m.get("message")) {
                if let (Some(c), Some(t)) = (code.as_str(), msg.as_str()) {
                    out.push((c.to_string(), t.to_string()));
                }
            }
            m.values().for_each(|x| warnings(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| warnings(x, out)),
        _ => {}
    }
}

fn jsonl(args: &[&str]) -> Vec<Value> {
    let out = common::bcwire(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

// The ground truth lists each client's reliable data messages (transport type 0x32)
// with their sequence numbers. Deleting the frame of sequence number s, when s − 1 and
// s + 1 come in frames of their own and s is never sent again, leaves exactly one gap
// of exactly one number, reported on the message numbered s + 1.
// Catches: a one-number gap taken as in order (reliability.rs's in-order test
// accepting top + 2).
#[test]
fn one_deleted_reliable_frame_is_one_gap_of_one() {
    let Some(folder) = common::shared_dir() else {
        return;
    };
    let name = "b2_valentines_replay";
    let folder = folder.join("captures/openbc").join(name);
    let truth = common::ground_truth(&folder, name);
    // Per (client port, direction): (frame, seq, messages in the frame).
    type Stream = Vec<(u64, u64, usize)>;
    let mut streams: BTreeMap<(u64, String), Stream> = BTreeMap::new();
    for f in &truth {
        let msgs = f["msgs"].as_array().map(Vec::as_slice).unwrap_or_default();
        for m in msgs {
            if m["type"] == 50 && m["reliable"] == true {
                streams
                    .entry((
                        f["client_port"].as_u64().unwrap(),
                        f["dir"].as_str().unwrap().to_string(),
                    ))
                    .or_default()
                    .push((
                        f["frame"].as_u64().unwrap(),
                        m["seq"].as_u64().unwrap(),
                        msgs.len(),
                    ));
            }
        }
    }
    let (port, frame, seq, next_frame) = streams
        .iter()
        .filter(|((_, dir), _)| dir == "C2S")
        .find_map(|((port, _), s)| {
            (1..s.len().saturating_sub(1)).find_map(|i| {
                let (p, x, n) = (s[i - 1], s[i], s[i + 1]);
                let alone = p.2 == 1 && x.2 == 1 && n.2 == 1;
                let consecutive = p.1 + 1 == x.1 && x.1 + 1 == n.1;
                let once = s.iter().filter(|m| m.1 == x.1).count() == 1;
                (alone && consecutive && once).then_some((*port, x.0, x.1, n.0))
            })
        })
        .expect("a reliable client message between its neighbours");

    let dir = tempfile::tempdir().unwrap();
    let edited = dir.path().join("edited.pcapng");
    let mut cap = PcapNg::read(&folder.join(format!("{name}.pcapng")));
    cap.delete_frame(frame as usize);
    cap.write(&edited);
    let edited = edited.to_str().unwrap();

    let mut gaps = Vec::new();
    for r in jsonl(&["decode", edited, "--format", "jsonl"]) {
        if r["type"] != "packet" {
            continue;
        }
        let mut w = Vec::new();
        warnings(&r, &mut w);
        for (code, text) in w {
            if code == "seq_gap" {
                gaps.push((r["frame"].as_u64().unwrap(), text));
            }
        }
    }
    // Frames after the deleted one move up by one.
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    assert_eq!(gaps[0].0, next_frame - 1, "{gaps:?}");
    let want = format!("{} follows {}: 1 number(s) never seen", seq + 1, seq - 1);
    assert!(gaps[0].1.contains(&want), "{:?} lacks {want:?}", gaps[0].1);

    // `info`: that client's c2s has one gap of one number, every other flow none.
    let info = common::bcwire_json(&["info", edited, "--format", "json"]);
    let mut seen = 0;
    for s in info["files"][0]["sessions"].as_array().unwrap() {
        for c in s["clients"].as_array().unwrap() {
            let ours = c["addr"].as_str().unwrap().ends_with(&format!(":{port}"));
            for d in ["c2s", "s2c"] {
                let want = if ours && d == "c2s" { 1 } else { 0 };
                assert_eq!(c[d]["seq_gaps"], want, "{} {d}", c["addr"]);
                assert_eq!(c[d]["seq_missing"], want, "{} {d}", c["addr"]);
                seen += usize::from(ours && d == "c2s");
            }
        }
    }
    assert_eq!(seen, 1);
}

/// (packet records, messages) of a `decode --format jsonl` run.
fn count(records: &[Value]) -> (usize, usize) {
    let packets: Vec<&Value> = records.iter().filter(|r| r["type"] == "packet").collect();
    let messages = packets
        .iter()
        .map(|p| p["messages"].as_array().map_or(0, Vec::len))
        .sum();
    (packets.len(), messages)
}

// `frame < 200` and `frame <= 200` where frame 200 exists: the second keeps exactly the
// record of frame 200 and its messages more, as counted in the unfiltered output.
// Catches: `<=` evaluated as `<` (or `<` as `<=`) for numbers.
#[test]
fn frame_less_than_and_at_most_differ_by_that_frame() {
    let sample = common::shipped_capture("sample.pcapng");
    let s = sample.to_str().unwrap();
    let all = jsonl(&["decode", s, "--format", "jsonl"]);
    let f200 = all
        .iter()
        .find(|r| r["type"] == "packet" && r["frame"] == 200)
        .expect("frame 200");
    let f200_msgs = f200["messages"].as_array().map_or(0, Vec::len);
    let before = all
        .iter()
        .filter(|r| r["type"] == "packet" && r["frame"].as_u64().unwrap() < 200)
        .count();
    let lt = count(&jsonl(&[
        "decode",
        s,
        "--format",
        "jsonl",
        "-Y",
        "frame < 200",
    ]));
    let le = count(&jsonl(&[
        "decode",
        s,
        "--format",
        "jsonl",
        "-Y",
        "frame <= 200",
    ]));
    assert_eq!(lt.0, before);
    assert_eq!(le.0, lt.0 + 1);
    assert_eq!(le.1, lt.1 + f200_msgs);
}

// `subsystems[hull].condition_pct < V` and `<= V` for a V that hull records of the
// capture carry: the counts are those of the unfiltered output's messages whose hull
// value is below V and at most V, and differ by the messages at exactly V.
// Catches: `<=` evaluated as `<` on decoded float fields.
#[test]
fn hull_condition_less_than_and_at_most_a_value_present() {
    let sample = common::shipped_capture("sample.pcapng");
    let s = sample.to_str().unwrap();
    let mut hulls: Vec<f64> = Vec::new();
    for r in jsonl(&["decode", s, "--format", "jsonl"]) {
        for m in r["messages"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let subs = m["fields"]["subsystems"].as_array();
            for sub in subs.map(Vec::as_slice).unwrap_or_default() {
                if sub["key"] == "hull" {
                    if let Some(v) = sub["condition_pct"].as_f64() {
                        hulls.push(v);
                    }
                }
            }
        }
    }
    // The most frequent value below full health.
    let mut freq: BTreeMap<String, usize> = BTreeMap::new();
    for v in hulls.iter().filter(|v| **v < 100.0) {
        *freq.entry(v.to_string()).or_default() += 1;
    }
    let (value, at) = freq.iter().max_by_key(|(_, n)| **n).expect("damaged hulls");
    let v: f64 = value.parse().unwrap();
    let below = hulls.iter().filter(|h| **h < v).count();
    assert!(*at > 0 && below > 0);
    let lt = count(&jsonl(&[
        "decode",
        s,
        "--format",
        "jsonl",
        "-Y",
        &format!("subsystems[hull].condition_pct < {value}"),
    ]));
    let le = count(&jsonl(&[
        "decode",
        s,
        "--format",
        "jsonl",
        "-Y",
        &format!("subsystems[hull].condition_pct <= {value}"),
    ]));
    assert_eq!(lt.1, below, "< {value}");
    assert_eq!(le.1, below + at, "<= {value}");
}
