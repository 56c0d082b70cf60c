//! One count per fact: the warnings and non-stock warnings per direction that `info`
//! (per client), `stats` (per direction) and the JSON Lines records (every warning a
//! record shows: the datagram's, each transport message's with its game message's,
//! and a completed message's) give are the same numbers; so are the datagrams,
//! transport messages and retransmissions of `info`, `flows` and `stats`, and the
//! capture's own ground truth where it states them.

use crate::common;
use serde_json::Value;
use std::collections::BTreeMap;

/// (warnings, non_stock) per direction, counted from the full JSON Lines.
fn from_records(input: &str) -> BTreeMap<String, (u64, u64)> {
    let out = common::bcwire(&["decode", "--format", "jsonl", input]);
    assert!(out.status.success());
    let mut counts = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        if r["type"] != "packet" || r["kind"] != "game" {
            continue;
        }
        let e: &mut (u64, u64) = counts
            .entry(r["direction"].as_str().unwrap().to_string())
            .or_default();
        let mut add = |ws: &Value| {
            for w in ws.as_array().into_iter().flatten() {
                e.0 += 1;
                e.1 += u64::from(w["code"] == "non_stock");
            }
        };
        add(&r["warnings"]);
        for m in r["messages"].as_array().into_iter().flatten() {
            add(&m["warnings"]);
            add(&m["assembled"]["warnings"]);
        }
    }
    counts
}

// Catches: `info` counting a game message's warnings nowhere (183 non-stock c2s in
// b2_valentines_replay where the records show 192), `stats` skipping a retransmitted
// copy's.
#[test]
fn info_stats_and_records_count_warnings_alike() {
    let mut inputs = vec![common::shipped_capture("sample.pcapng")];
    for (name, folder) in common::shared_captures() {
        inputs.push(folder.join(format!("{name}.pcapng")));
    }
    let mut nonzero = 0;
    for input in &inputs {
        let input = input.to_str().unwrap();
        let want = from_records(input);
        let stats = common::bcwire_json(&["stats", "--format", "json", input]);
        let info = common::bcwire_json(&["info", "--format", "json", input]);
        for (dir, (warnings, non_stock)) in &want {
            let d = &stats["directions"][dir];
            assert_eq!(
                d["warnings"].as_u64(),
                Some(*warnings),
                "{input} {dir}: stats warnings"
            );
            assert_eq!(
                d["non_stock"].as_u64(),
                Some(*non_stock),
                "{input} {dir}: stats non_stock"
            );
            let clients = info["files"][0]["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|s| s["clients"].as_array().unwrap().iter());
            let (w, n) = clients.fold((0, 0), |(w, n), c| {
                (
                    w + c[dir]["warnings"].as_u64().unwrap(),
                    n + c[dir]["non_stock"].as_u64().unwrap(),
                )
            });
            assert_eq!((w, n), (*warnings, *non_stock), "{input} {dir}: info");
            nonzero += usize::from(*non_stock > 0);
        }
    }
    if common::shared_dir().is_some() {
        assert!(nonzero > 0, "some input has non-stock warnings");
    }
}

/// Datagrams, transport messages and retransmissions of one direction.
type Traffic = [u64; 3];

/// Per direction, summed over every client of every session of a `flows` or `info`
/// document's sessions.
fn per_client_traffic(sessions: &Value, dir: &str) -> Traffic {
    let mut t = [0; 3];
    for c in sessions
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["clients"].as_array().unwrap())
    {
        let d = &c[dir];
        for (n, key) in t.iter_mut().zip(["packets", "messages", "retransmissions"]) {
            *n += d[key].as_u64().unwrap();
        }
    }
    t
}

// Catches: a second counter of any of these drifting from the one the summary keeps
// (`stats` once counted records on its own, `info` and `flows` counted on the way).
#[test]
fn info_flows_stats_and_ground_truth_count_traffic_alike() {
    let captures = common::shared_captures();
    for (name, folder) in &captures {
        let input = folder.join(format!("{name}.pcapng"));
        let input = input.to_str().unwrap();
        let truth: Value = serde_json::from_slice(
            &std::fs::read(folder.join(format!("{name}.summary.json"))).unwrap(),
        )
        .unwrap();
        let info = common::bcwire_json(&["info", "--format", "json", input]);
        let flows = common::bcwire_json(&["flows", "--format", "json", input]);
        let stats = common::bcwire_json(&["stats", "--format", "json", input]);
        for dir in ["c2s", "s2c"] {
            let s = &stats["directions"][dir];
            let from_stats: Traffic = [
                s["datagrams"].as_u64().unwrap(),
                s["messages"].as_u64().unwrap(),
                s["retransmissions"].as_u64().unwrap(),
            ];
            let from_info = per_client_traffic(&info["files"][0]["sessions"], dir);
            let from_flows = per_client_traffic(&flows["sessions"], dir);
            assert_eq!(from_info, from_stats, "{name} {dir}: info vs stats");
            assert_eq!(from_flows, from_stats, "{name} {dir}: flows vs stats");
            // The ground truth names directions in capitals.
            let up = dir.to_uppercase();
            let frames = truth["frames_by_direction"][&up].as_u64();
            assert_eq!(frames, Some(from_stats[0]), "{name} {dir}: datagrams");
            let messages: u64 = truth["transport_msg_types"][&up]
                .as_object()
                .unwrap()
                .values()
                .map(|n| n.as_u64().unwrap())
                .sum();
            assert_eq!(messages, from_stats[1], "{name} {dir}: transport messages");
            // Identical reliable messages sent again: retransmissions.
            let repeats = truth["identical_reliable_repeats_heuristic"][&up].as_u64();
            assert_eq!(
                repeats,
                Some(from_stats[2]),
                "{name} {dir}: retransmissions"
            );
        }
    }
    if common::shared_dir().is_some() {
        assert!(captures.len() >= 2, "both shared captures compared");
    }
}
